// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Thread lines' names and name histories (see thread_names.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "lib/json_writer.h"
#include "output/thread_names.h"

const struct capture_thread_name *thread_history(const struct capture *c,
						 const struct capture_track *tr,
						 size_t *n, uint64_t *more)
{
	const struct capture_thread_name *h;
	int i = capture__find_thread(c, tr->pid, tr->tid);

	*n = 0;
	*more = 0;
	if (i < 0)
		return NULL;
	h = capture__thread_names(c, i, n, more);
	return h && *n + *more > 1 ? h : NULL;
}

__attribute__((format(printf, 4, 5)))
static void label_add(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*len >= size - 1)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (r > 0)
		*len = *len + r < size - 1 ? *len + r : size - 1;
}

/* The kept history less a last entry that is the name itself; +n: renames
 * past the kept ones. */
const char *thread_line_label(const struct capture *c, const char *name,
			      uint32_t pid, bool multi,
			      const struct capture_thread_name *h, size_t n,
			      uint64_t more, char *buf, size_t size)
{
	const char *sep = " (";
	size_t len = 0;

	if (!multi && !h)
		return NULL;
	label_add(buf, size, &len, "%s", name);
	if (multi) {
		label_add(buf, size, &len, " (pid %u", pid);
		sep = ", ";
	}
	if (h) {
		const char *latest = name;
		size_t shown = n;

		if (!more && n && !strcmp(capture__string(c, h[n - 1].name), latest))
			shown--;
		for (size_t i = 0; i < shown; i++) {
			label_add(buf, size, &len, "%s%s%s", sep, i ? "" : "was ",
				  capture__string(c, h[i].name));
			sep = ", ";
		}
		if (more)
			label_add(buf, size, &len, "%s+%" PRIu64 " more", sep, more);
	}
	label_add(buf, size, &len, ")");
	return buf;
}

int name_histories__add(struct name_histories *nh, const struct capture *c,
			uint64_t window_start_ns, const struct capture_track *tr,
			const struct capture_thread_name *h, size_t n, uint64_t more)
{
	if (!nh->jw) {
		nh->f = open_memstream(&nh->buf, &nh->len);
		if (!nh->f)
			return -ENOMEM;
		nh->jw = jw_new(nh->f, false);
		if (!nh->jw)
			return -ENOMEM;
		jw_start_array(nh->jw);
	}
	jw_start_object(nh->jw);
	jw_uint_field(nh->jw, "pid", tr->pid);
	jw_uint_field(nh->jw, "tid", tr->tid);
	jw_name(nh->jw, "names");
	jw_start_array(nh->jw);
	for (size_t i = 0; i < n; i++) {
		jw_start_object(nh->jw);
		jw_string_field(nh->jw, "name", capture__string(c, h[i].name));
		/* When it took the name, from the window start; absent: unknown. */
		if (h[i].ts_ns)
			jw_int_field(nh->jw, "ns", (int64_t)(h[i].ts_ns - window_start_ns));
		jw_end_object(nh->jw);
	}
	jw_end_array(nh->jw);
	jw_uint_field(nh->jw, "more", more);
	jw_end_object(nh->jw);
	return ferror(nh->f) ? -ENOMEM : 0;
}

int name_histories__finish(struct name_histories *nh, char **json)
{
	bool added = nh->jw != NULL;
	int err = 0;

	*json = NULL;
	if (nh->jw) {
		jw_end_array(nh->jw);
		jw_free(nh->jw);
	}
	if (nh->f && (ferror(nh->f) | fclose(nh->f)))
		err = -ENOMEM;
	if (!err && added)
		*json = nh->buf;
	else
		free(nh->buf);
	memset(nh, 0, sizeof(*nh));
	return err;
}
