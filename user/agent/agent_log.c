// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agent's messages, each problem said once (agent_log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "acceltrace/agent_control.h"
#include "agent/agent_log.h"

static struct agent_control *page;
static unsigned int said;	/* a bit per enum agent_problem */

void agent_log_set_page(struct agent_control *p)
{
	page = p;
}

void agent_say(enum agent_problem p, const char *fmt, ...)
{
	char msg[AGENT_MESSAGE_MAX];
	unsigned int bit = 1u << p;
	va_list ap;

	if (__atomic_fetch_or(&said, bit, __ATOMIC_RELAXED) & bit)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "acceltrace-agent: %s\n", msg);
	if (page) {
		/* Readers take the message as it is when they read: a torn
		 * one is a garbled line, never a crash (they bound it). */
		memcpy(page->message, msg, sizeof(page->message));
		page->message[sizeof(page->message) - 1] = '\0';
	}
}

void agent_debug(const char *fmt, ...)
{
	static int on = -1;
	va_list ap;

	if (on < 0) {
		const char *e = getenv("ACCELTRACE_AGENT_DEBUG");

		on = e && e[0] == '1';
	}
	if (!on)
		return;
	va_start(ap, fmt);
	fputs("acceltrace-agent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
