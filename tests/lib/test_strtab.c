// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The string table: id 0 is "", ids dense from 1 in the order first seen,
 * the same string the same id (by content, with embedded NULs and lengths
 * that are prefixes of one another), pointers stable while it grows, find
 * without adding, clear for reuse, and out of memory (every allocation
 * failing in turn) returning 0 with errno ENOMEM and the table unchanged.
 */
#include "test.h"
#include "alloc_fail.h"
#include "lib/strtab.h"

static void test_basics(void)
{
	struct strtab *t = strtab__new();
	uint32_t a, b, ab;

	if (!ASSERT_OK_PTR(t, "new"))
		return;
	ASSERT_EQ(strtab__count(t), 1, "just the empty string");
	ASSERT_STREQ(strtab__str(t, 0), "", "id 0 is \"\"");
	ASSERT_EQ(strtab__intern(t, "", 0), 0, "\"\" is id 0");
	ASSERT_EQ(strtab__intern(t, NULL, 5), 0, "NULL is id 0");
	a = strtab__intern(t, "a", 1);
	b = strtab__intern(t, "b", 1);
	ab = strtab__intern(t, "ab", 2);
	ASSERT_EQ(a, 1, "first id 1");
	ASSERT_EQ(b, 2, "dense");
	ASSERT_EQ(ab, 3, "a prefix is another string");
	ASSERT_EQ(strtab__intern(t, "abc", 2), ab, "by length, not NUL");
	ASSERT_EQ(strtab__intern(t, "a", 1), a, "same string, same id");
	ASSERT_EQ(strtab__find(t, "b", 1), b, "find present");
	ASSERT_EQ(strtab__find(t, "c", 1), 0, "find absent");
	ASSERT_EQ(strtab__count(t), 4, "count");
	ASSERT_EQ(strtab__len(t, ab), 2, "len");
	ASSERT_TRUE(strtab__str(t, 4) == NULL, "unknown id is NULL");
	ASSERT_EQ(strtab__len(t, 99), 0, "unknown id len 0");
	{
		uint32_t z = strtab__intern(t, "x\0y", 3);

		ASSERT_NEQ(z, strtab__intern(t, "x\0z", 3), "embedded NUL compared");
		ASSERT_EQ(strtab__len(t, z), 3, "embedded NUL kept");
	}
	ASSERT_EQ(strtab__hash("a", 1), 0xe40c292c, "FNV-1a of \"a\"");

	strtab__clear(t);
	ASSERT_EQ(strtab__count(t), 1, "cleared");
	ASSERT_EQ(strtab__find(t, "a", 1), 0, "gone after clear");
	ASSERT_EQ(strtab__intern(t, "b", 1), 1, "ids start again from 1");
	strtab__free(t);
	strtab__free(NULL);
}

static void test_growth(void)
{
	struct strtab *t = strtab__new();
	static const char *first[20000];
	char buf[64], big[100000];
	bool ok = true;

	if (!ASSERT_OK_PTR(t, "new"))
		return;
	for (int i = 0; i < 20000; i++) {
		uint32_t id;

		snprintf(buf, sizeof(buf), "name-%d", i);
		id = strtab__intern(t, buf, strlen(buf));
		if (id != (uint32_t)i + 1)
			ok = false;
		first[i] = strtab__str(t, id);
	}
	ASSERT_TRUE(ok, "20000 ids dense");
	/* A string longer than a chunk gets its own. */
	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ASSERT_EQ(strtab__intern(t, big, sizeof(big) - 1), 20001, "long string");
	ASSERT_EQ(strlen(strtab__str(t, 20001)), sizeof(big) - 1, "long string kept");
	for (int i = 0; i < 20000 && ok; i++) {
		snprintf(buf, sizeof(buf), "name-%d", i);
		if (strtab__intern(t, buf, strlen(buf)) != (uint32_t)i + 1 ||
		    strtab__str(t, i + 1) != first[i] || strcmp(first[i], buf))
			ok = false;
	}
	ASSERT_TRUE(ok, "lookups after growth; pointers never moved");
	strtab__free(t);
}

/* Every allocation fails in turn: 0 and ENOMEM, nothing half added. */
static void test_alloc_failure(void)
{
	struct strtab *t = NULL;
	char buf[32];
	long n;

	for (n = 0; n < 10000; n++) {
		unsigned long failed;
		bool ok = true;

		alloc_fail_at(n, false);
		t = strtab__new();
		if (!t) {
			failed = alloc_fail_off();
			if (!ASSERT_TRUE(failed && errno == ENOMEM, "new: NULL and ENOMEM"))
				break;
			continue;
		}
		for (int i = 0; i < 200; i++) {
			uint32_t id;

			snprintf(buf, sizeof(buf), "s%d", i);
			errno = 0;
			id = strtab__intern(t, buf, strlen(buf));
			if (!id) {
				if (errno != ENOMEM || strtab__count(t) != (size_t)i + 1 ||
				    strtab__find(t, buf, strlen(buf)))
					ok = false;
				/* Retried with memory, it gets the next id. */
				alloc_fail_off();
				id = strtab__intern(t, buf, strlen(buf));
			}
			if (id != (uint32_t)i + 1)
				ok = false;
		}
		failed = alloc_fail_off();
		ASSERT_TRUE(ok, "intern under failure: 0 + ENOMEM, then the next id");
		for (int i = 0; i < 200 && ok; i++) {
			snprintf(buf, sizeof(buf), "s%d", i);
			ok = strtab__find(t, buf, strlen(buf)) == (uint32_t)i + 1 &&
			     !strcmp(strtab__str(t, i + 1), buf);
		}
		ASSERT_TRUE(ok, "table intact");
		strtab__free(t);
		if (!failed)
			break;
	}
	ASSERT_LE(n, 9999, "an attempt ran without failure");
}

int main(void)
{
	test_basics();
	test_growth();
	test_alloc_failure();
	return test_exit();
}
