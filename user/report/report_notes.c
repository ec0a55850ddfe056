// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report's sentences: what the capture lost, what it cannot tell. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/report_internal.h"

static int note(char **list, size_t *n, const char *fmt, va_list ap)
{
	char *s;

	if (*n >= REPORT_MAX_NOTES)
		return 0;
	if (vasprintf(&s, fmt, ap) < 0)
		return -ENOMEM;
	list[(*n)++] = s;
	return 0;
}

int report_lost(struct report *r, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = note(r->losses, &r->n_losses, fmt, ap);
	va_end(ap);
	return ret;
}

int report_missing(struct report *r, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = note(r->missing, &r->n_missing, fmt, ap);
	va_end(ap);
	return ret;
}
