// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Numbers with units, as options and configuration files spell them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/units.h"

int parse_uint(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	char *end;
	double v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			if (v * units[i].scale > 1e18)
				return -ERANGE;
			*ns = (uint64_t)(v * units[i].scale + 0.5);
			return 0;
		}
	}
	return -EINVAL;
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const struct { const char *unit; uint64_t scale; } units[] = {
		{ "", 1 }, { "k", 1ull << 10 }, { "K", 1ull << 10 },
		{ "m", 1ull << 20 }, { "M", 1ull << 20 },
		{ "g", 1ull << 30 }, { "G", 1ull << 30 },
	};
	unsigned long long v;
	char *end;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			*bytes = v * units[i].scale;
			return 0;
		}
	return -EINVAL;
}
