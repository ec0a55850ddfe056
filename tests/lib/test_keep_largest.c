// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * lib/keep_largest.c: a stream offered to a small array keeps its largest,
 * largest first, against a sort of the whole stream; ties keep the first
 * offered; a value no larger than all when full is dropped; cap 0 keeps
 * nothing.
 */
#include <stdlib.h>

#include "test.h"
#include "lib/keep_largest.h"

struct item {
	int64_t v;
	int id;
};

static int64_t key(const void *x)
{
	return ((const struct item *)x)->v;
}

static int desc(const void *a, const void *b)
{
	int64_t x = key(a), y = key(b);

	return x < y ? 1 : x > y ? -1 : ((const struct item *)a)->id - ((const struct item *)b)->id;
}

int main(void)
{
	struct item all[200], kept[8], one = { 5, 0 };
	size_t n = 0;
	bool same = true;

	srand(7);
	for (int i = 0; i < 200; i++) {
		all[i] = (struct item){ rand() % 50, i };
		n = keep_largest(kept, n, 8, sizeof(kept[0]), &all[i], key);
	}
	qsort(all, 200, sizeof(all[0]), desc);
	ASSERT_EQ(n, 8, "full");
	for (size_t i = 0; i < n; i++)
		same &= kept[i].v == all[i].v && kept[i].id == all[i].id;
	ASSERT_TRUE(same, "the 8 largest, largest first, ties in the order offered");
	n = keep_largest(kept, 0, 0, sizeof(kept[0]), &one, key);
	ASSERT_EQ(n, 0, "no room: nothing kept");
	n = keep_largest(kept, 0, 2, sizeof(kept[0]), &one, key);
	ASSERT_EQ(n, 1, "one kept");
	return test_exit();
}
