// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The UTF-8 sanitiser: every valid character of every length passes
 * unchanged (all of U+0000..U+10FFFF but the surrogates, encoded here);
 * what is not UTF-8 (a stray byte, an overlong form, a surrogate, past
 * U+10FFFF, a sequence cut short) becomes U+FFFD a byte at a time; control
 * characters kept or replaced as asked; NUL always replaced; the output
 * bounded and never cut inside a character; and the result, whatever 64 KiB
 * of random bytes went in, valid by the sanitiser's own check.
 */
#include "test.h"
#include "lib/utf8.h"

#define R UTF8_REPLACEMENT

static size_t encode(unsigned int cp, char *out)
{
	if (cp < 0x80) {
		out[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = 0xc0 | cp >> 6;
		out[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = 0xe0 | cp >> 12;
		out[1] = 0x80 | ((cp >> 6) & 0x3f);
		out[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	out[0] = 0xf0 | cp >> 18;
	out[1] = 0x80 | ((cp >> 12) & 0x3f);
	out[2] = 0x80 | ((cp >> 6) & 0x3f);
	out[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* @in (of @len bytes) sanitised with @flags equals @want. */
static bool sanitised_is(const char *in, size_t len, unsigned int flags, const char *want,
			 const char *what)
{
	char out[256];
	size_t n = utf8_sanitize(in, len, out, sizeof(out), flags);

	return ASSERT_STREQ(out, want, what) &&
	       ASSERT_EQ(n, strlen(want), "length returned") &&
	       ASSERT_EQ(utf8_sanitized_len(in, len, flags), strlen(want), "length needed") &&
	       ASSERT_EQ(utf8_is_clean(in, len, flags), !strcmp(in, want) && strlen(in) == len,
			 "clean exactly when unchanged");
}

static void test_every_character(void)
{
	unsigned int bad = 0;
	char buf[4], out[8];

	for (unsigned int cp = 1; cp <= 0x10ffff; cp++) {
		size_t n;

		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		n = encode(cp, buf);
		if (utf8_char_len(buf, n) != n ||
		    utf8_sanitize(buf, n, out, sizeof(out), UTF8_KEEP_CONTROLS) != n ||
		    memcmp(out, buf, n))
			bad++;
	}
	ASSERT_EQ(bad, 0, "every scalar value passes unchanged");
	for (unsigned int cp = 0xd800; cp <= 0xdfff; cp++) {
		encode(cp, buf);
		if (utf8_char_len(buf, 3))
			bad++;
	}
	ASSERT_EQ(bad, 0, "no surrogate is a character");
}

static void test_invalid(void)
{
	sanitised_is("pt_data_worker", 14, UTF8_REPLACE_CONTROLS, "pt_data_worker", "ASCII");
	sanitised_is("na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82", 18,
		     UTF8_REPLACE_CONTROLS, "na\xc3\xafve \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x99\x82",
		     "2-, 3- and 4-byte characters");
	sanitised_is("\xff", 1, 0, R, "a byte 0xff");
	sanitised_is("a\xffz", 3, 0, "a" R "z", "inside a name");
	sanitised_is("\x80\xbf", 2, 0, R R, "stray continuation bytes");
	sanitised_is("\xc0\xaf", 2, 0, R R, "overlong '/' (2 bytes)");
	sanitised_is("\xe0\x80\xaf", 3, 0, R R R, "overlong '/' (3 bytes)");
	sanitised_is("\xed\xa0\x80", 3, 0, R R R, "a surrogate");
	sanitised_is("\xf4\x90\x80\x80", 4, 0, R R R R, "past U+10FFFF");
	sanitised_is("\xf5\x80", 2, 0, R R, "lead byte 0xf5");
	sanitised_is("x\xe6\x97", 3, 0, "x" R R, "a character cut short at the end");
	sanitised_is("\xe6\x97x", 3, 0, R R "x", "a character cut short by the next");
}

static void test_controls(void)
{
	sanitised_is("a\nb\tc", 5, UTF8_KEEP_CONTROLS, "a\nb\tc", "kept");
	sanitised_is("a\nb\x1b[31m", 8, UTF8_REPLACE_CONTROLS, "a" R "b" R "[31m",
		     "C0 replaced (a terminal escape)");
	sanitised_is("\x7f\xc2\x85\xc2\xa0", 5, UTF8_REPLACE_CONTROLS, R R "\xc2\xa0",
		     "DEL and C1 replaced, U+00A0 kept");
	sanitised_is("a\0b", 3, UTF8_KEEP_CONTROLS, "a" R "b", "NUL always replaced");
}

static void test_bounded(void)
{
	char out[8];

	ASSERT_EQ(utf8_sanitize("\xe6\x97\xa5\xe6\x9c\xac", 6, out, 6, 0), 3,
		  "the second character does not fit");
	ASSERT_STREQ(out, "\xe6\x97\xa5", "cut between characters");
	ASSERT_EQ(utf8_sanitize("ab\xff", 3, out, 5, 0), 2, "U+FFFD does not fit");
	ASSERT_STREQ(out, "ab", "cut before it");
	ASSERT_EQ(utf8_sanitize("abc", 3, out, 1, 0), 0, "room for the NUL only");
	ASSERT_STREQ(out, "", "empty");
}

static void test_random(void)
{
	static char in[65536], out[3 * sizeof(in) + 1];
	size_t n;

	srand(22);
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = rand();
	n = utf8_sanitize(in, sizeof(in), out, sizeof(out), UTF8_REPLACE_CONTROLS);
	ASSERT_EQ(n, utf8_sanitized_len(in, sizeof(in), UTF8_REPLACE_CONTROLS), "all of it");
	ASSERT_TRUE(utf8_is_clean(out, n, UTF8_REPLACE_CONTROLS), "the result is clean");
	ASSERT_FALSE(utf8_is_clean(in, sizeof(in), UTF8_KEEP_CONTROLS), "the input was not");
}

int main(void)
{
	test_every_character();
	test_invalid();
	test_controls();
	test_bounded();
	test_random();
	return test_exit();
}
