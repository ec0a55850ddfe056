// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Numbers with units as options and configuration files spell them: the
 * forms that parse, and the ones strtod/strtoull would take that must not
 * (nan and inf, which made every duration option 2^63 ns; a sign after
 * blanks, which made " -1" the largest number; hex floats), and sizes whose
 * unit would wrap past 2^64.
 */
#include "test.h"
#include "lib/units.h"

static void test_durations(void)
{
	static const struct { const char *s; uint64_t ns; } good[] = {
		{ "10s", 10000000000ull }, { "500ms", 500000000ull }, { "2m", 120000000000ull },
		{ "1h", 3600000000000ull }, { "250us", 250000ull }, { "3", 3000000000ull },
		{ "1.5s", 1500000000ull }, { ".5s", 500000000ull }, { "7ns", 7 },
		{ "0", 0 }, { "1e3ms", 1000000000ull },
	};
	static const char *const bad[] = {
		"", "-1s", " -1s", " 5s", "+5s", "nan", "NaN", "nans", "inf", "infinity",
		"-nan", "0x10s", "0X1p4", "5 s", "5sec", "s", ".", "1e400", "1e10h",
	};
	uint64_t ns;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ns = 12345;
		if (ASSERT_OK(parse_duration(good[i].s, &ns), good[i].s))
			ASSERT_EQ(ns, good[i].ns, good[i].s);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ns = 12345;
		if (!ASSERT_NEQ(parse_duration(bad[i], &ns), 0, bad[i]))
			fprintf(stderr, "  '%s' parsed as %llu ns\n", bad[i], (unsigned long long)ns);
		ASSERT_EQ(ns, 12345, "a refused duration leaves the output alone");
	}
	ASSERT_EQ(parse_duration("1e10h", &ns), -ERANGE, "past 10^18 ns is -ERANGE");
	ASSERT_NEQ(parse_duration(NULL, &ns), 0, "NULL");
}

static void test_uints(void)
{
	static const char *const bad[] = { "", "-1", " -1", "\t-1", "+1", " 1", "1x", "0x10",
					   "18446744073709551616" };
	uint64_t v = 0;

	if (ASSERT_OK(parse_uint("18446744073709551615", &v), "largest"))
		ASSERT_TRUE(v == UINT64_MAX, "largest value");
	if (ASSERT_OK(parse_uint("0", &v), "zero"))
		ASSERT_EQ(v, 0, "zero");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		ASSERT_NEQ(parse_uint(bad[i], &v), 0, bad[i]);
		ASSERT_EQ(v, 7, "a refused number leaves the output alone");
	}
}

static void test_sizes(void)
{
	static const char *const bad[] = { "", " -1", "-1", "+1", "1T", "64 M",
					   "17179869184G", "18446744073709551615k" };
	uint64_t b = 0;

	if (ASSERT_OK(parse_size("64M", &b), "64M"))
		ASSERT_EQ(b, 64ull << 20, "64M");
	if (ASSERT_OK(parse_size("8k", &b), "8k"))
		ASSERT_EQ(b, 8192, "8k");
	if (ASSERT_OK(parse_size("4096", &b), "4096"))
		ASSERT_EQ(b, 4096, "4096");
	if (ASSERT_OK(parse_size("17179869183G", &b), "the largest G that fits"))
		ASSERT_TRUE(b == 17179869183ull << 30, "17179869183G");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		b = 7;
		ASSERT_NEQ(parse_size(bad[i], &b), 0, bad[i]);
		ASSERT_EQ(b, 7, "a refused size leaves the output alone");
	}
}

int main(void)
{
	test_durations();
	test_uints();
	test_sizes();
	return test_exit();
}
