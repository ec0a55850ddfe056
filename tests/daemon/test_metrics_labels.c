// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Label values the traced process chooses: this process names itself
 * with a byte 0xff, a quote, a backslash and an escape character
 * (prctl PR_SET_NAME, as any trainer may) and is traced: its command
 * label is valid UTF-8, escaped as the exposition format says, and the
 * whole text stays valid UTF-8 (one bad label fails every scrape).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "test.h"
#include "capture/capture.h"
#include "daemon/metrics.h"
#include "lib/utf8.h"

int main(void)
{
	struct capture_opts copts = { .sz = sizeof(copts) };
	struct metrics_opts mo = { .sz = sizeof(mo) };
	struct capture *c = capture__new(&copts);
	struct metrics *m = metrics__new(&mo);
	struct capture_span s = { .start_ns = 1000, .end_ns = 2000, .kind = SPAN_EXECUTE };
	char old_name[17] = "", *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!ASSERT_OK_PTR(c, "capture") || !ASSERT_OK_PTR(m, "metrics"))
		return test_exit();
	prctl(PR_GET_NAME, old_name);
	ASSERT_OK(prctl(PR_SET_NAME, "w\xff\"\\\x1bk"), "named with 0xff");
	s.track = capture__host_track(c, getpid(), getpid());
	metrics__span(m, c, &s);
	prctl(PR_SET_NAME, old_name);
	f = open_memstream(&text, &len);
	if (ASSERT_OK_PTR(f, "memstream")) {
		ASSERT_OK(metrics__render(m, NULL, 3000, f), "render");
		fclose(f);
	}
	if (ASSERT_OK_PTR(text, "text")) {
		ASSERT_STRCONTAINS(text, "command=\"w\xef\xbf\xbd\\\"\\\\\xef\xbf\xbdk\"",
				   "0xff and ESC as U+FFFD; quote and backslash escaped");
		ASSERT_TRUE(utf8_is_clean(text, len, UTF8_KEEP_CONTROLS), "the text is UTF-8");
	}
	free(text);
	metrics__free(m);
	capture__free(c);
	return test_exit();
}
