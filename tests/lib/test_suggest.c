// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * "Did you mean": the edit distance (a swap counts one), and which known
 * words are offered for a mistyped one: prefixes first, then the closest
 * within a bound that grows with the word, nothing for a word far from all.
 */
#include <stdint.h>
#include <string.h>

#include "test.h"
#include "lib/suggest.h"

static void test_distance(void)
{
	char longw[SUGGEST_MAX_LEN + 2];

	ASSERT_EQ(suggest_distance("report", "report"), 0, "equal");
	ASSERT_EQ(suggest_distance("reprot", "report"), 1, "a swap counts one");
	ASSERT_EQ(suggest_distance("durration", "duration"), 1, "an insertion");
	ASSERT_EQ(suggest_distance("recrd", "record"), 1, "a deletion");
	ASSERT_EQ(suggest_distance("recxrd", "record"), 1, "a substitution");
	ASSERT_EQ(suggest_distance("", "abc"), 3, "from empty");
	ASSERT_EQ(suggest_distance("abc", ""), 3, "to empty");
	ASSERT_EQ(suggest_distance("kitten", "sitting"), 3, "kitten/sitting");
	ASSERT_EQ(suggest_distance("ca", "abc"), 3, "no swap after an edit (OSA)");
	memset(longw, 'a', sizeof(longw) - 1);
	longw[sizeof(longw) - 1] = 0;
	ASSERT_EQ(suggest_distance(longw, "a"), SIZE_MAX, "too long is far");
}

static void test_closest(void)
{
	static const char *const cmds[] = { "record", "report", "convert", "probes",
					     "doctor", "daemon", "trigger", "help" };
	static const char *const opts[] = { "duration", "delay", "pid", "logdir",
					     "steps", "session" };
	const char *out[4];
	size_t n;

	n = suggest_closest("reprot", cmds, 8, out, 4);
	if (ASSERT_EQ(n, 1, "reprot: one"))
		ASSERT_STREQ(out[0], "report", "reprot -> report");
	n = suggest_closest("recod", cmds, 8, out, 4);
	if (ASSERT_EQ(n, 1, "recod: one"))
		ASSERT_STREQ(out[0], "record", "recod -> record");
	n = suggest_closest("durration", opts, 6, out, 4);
	if (ASSERT_EQ(n, 1, "durration: one"))
		ASSERT_STREQ(out[0], "duration", "durration -> duration");
	n = suggest_closest("d", opts, 6, out, 4);
	ASSERT_EQ(n, 2, "an ambiguous prefix offers each word it starts");
	n = suggest_closest("se", opts, 6, out, 4);
	if (ASSERT_EQ(n, 1, "se: the one word it starts"))
		ASSERT_STREQ(out[0], "session", "se -> session");
	n = suggest_closest("frobnicate", cmds, 8, out, 4);
	ASSERT_EQ(n, 0, "nothing close");
	n = suggest_closest("xyz", cmds, 8, out, 4);
	ASSERT_EQ(n, 0, "a short word allows one edit only");
	n = suggest_closest("", cmds, 8, out, 4);
	ASSERT_EQ(n, 0, "empty word");
	n = suggest_closest("report", cmds, 8, out, 4);
	ASSERT_EQ(n, 0, "a known word is not offered to itself");
	n = suggest_closest("deamon", cmds, 8, out, 1);
	if (ASSERT_EQ(n, 1, "max_out bounds the list"))
		ASSERT_STREQ(out[0], "daemon", "deamon -> daemon");
}

int main(void)
{
	test_distance();
	test_closest();
	return test_exit();
}
