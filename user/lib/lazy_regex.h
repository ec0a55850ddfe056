/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An extended regular expression compiled on first use and kept. The
 * library and device-node tables are matched against every object a traced
 * process maps, on every rescan; regcomp costs a hundred times regexec, so
 * compiling per call made it the collector's largest CPU cost.
 *
 * A zeroed struct is ready; acceltrace matches from one thread.
 */
#ifndef ACCELTRACE_LAZY_REGEX_H
#define ACCELTRACE_LAZY_REGEX_H

#include <regex.h>
#include <stdbool.h>

struct lazy_regex {
	regex_t re;
	int state;		/* 0 not compiled yet, 1 compiled, -1 invalid */
};

/* Whether @s matches @pattern (REG_EXTENDED); an invalid pattern matches
 * nothing. @pattern must be the same on every call with the same @lr. */
bool lazy_regex__match(struct lazy_regex *lr, const char *pattern, const char *s);

#endif /* ACCELTRACE_LAZY_REGEX_H */
