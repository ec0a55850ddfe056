// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Numbers with units, as options and configuration files spell them. The
 * strings may come from a configuration file or a control-socket client, so
 * only plain decimal spellings are taken: strtoull and strtod alone would
 * also take blanks and a sign (" -1" is 2^64 - 1), hex, "inf" and "nan"
 * (whose conversion to an integer is undefined: 2^63 ns on x86).
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/units.h"

/* Starts with a digit (or ".5"): no blank, sign, "inf" or "nan". */
static bool plain_decimal_start(const char *s)
{
	return (s[0] >= '0' && s[0] <= '9') || (s[0] == '.' && s[1] >= '0' && s[1] <= '9');
}

/* No "0x": strtoull(.., 10) stops at the x, strtod reads a hex float. */
static bool has_hex_prefix(const char *s)
{
	return s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

int parse_uint(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !plain_decimal_start(s) || s[0] == '.')
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

	if (!s || !plain_decimal_start(s) || has_hex_prefix(s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE && isinf(v))
		return -ERANGE;
	if (errno || end == s || !isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			/* Checked before the cast: a double past 2^64 has no
			 * uint64_t value. */
			if (!(v * units[i].scale <= 1e18))
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

	if (!s || !plain_decimal_start(s) || s[0] == '.')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			if (v > UINT64_MAX / units[i].scale)
				return -ERANGE;
			*bytes = v * units[i].scale;
			return 0;
		}
	return -EINVAL;
}
