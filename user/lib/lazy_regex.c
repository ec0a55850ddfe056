// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Regular expressions compiled once, on first use. */
#include <stddef.h>

#include "lib/lazy_regex.h"

bool lazy_regex__match(struct lazy_regex *lr, const char *pattern, const char *s)
{
	if (!lr->state)
		lr->state = regcomp(&lr->re, pattern, REG_EXTENDED | REG_NOSUB) ? -1 : 1;
	return lr->state > 0 && !regexec(&lr->re, s, 0, NULL, 0);
}
