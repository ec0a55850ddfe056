// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The pair-keyed hash map against a brute-force model under random churn. */
#include "test.h"
#include "lib/hashmap.h"

#define N 20000

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int drop_odd(uint64_t a, uint64_t b, void *value, void *ctx)
{
	(void)b;
	(void)value;
	(*(int *)ctx)++;
	return a & 1;
}

int main(void)
{
	static uint64_t ka[N], kb[N];
	static bool present[N];
	struct hashmap *h = hashmap__new();
	size_t live = 0;
	int visited = 0, bad = 0;

	if (!ASSERT_OK_PTR(h, "new"))
		return test_exit();
	for (int i = 0; i < N; i++) {
		ka[i] = next() % 5000;	/* collide on a, differ on b */
		kb[i] = next();
	}
	for (int round = 0; round < 200000; round++) {
		int i = next() % N;

		if (next() % 3) {
			void *old;

			hashmap__put(h, ka[i], kb[i], &present[i], &old);
			if (!present[i])
				live++;
			if ((old != NULL) != present[i])
				bad++;
			present[i] = true;
		} else if (next() % 2) {
			/* Removed only where it holds this value: a wrong
			 * one (every other time) leaves the entry. */
			bool match = next() % 2;

			hashmap__remove_if(h, ka[i], kb[i], match ? (void *)&present[i] : (void *)&bad);
			if (!match)
				continue;
			if (present[i])
				live--;
			present[i] = false;
		} else {
			void *v = hashmap__remove(h, ka[i], kb[i]);

			if ((v != NULL) != present[i])
				bad++;
			if (present[i])
				live--;
			present[i] = false;
		}
	}
	ASSERT_EQ(bad, 0, "put/remove agree with the model");
	ASSERT_EQ(hashmap__count(h), live, "count");
	for (int i = 0; i < N; i++)
		if ((hashmap__get(h, ka[i], kb[i]) != NULL) != present[i])
			bad++;
	ASSERT_EQ(bad, 0, "every key found or absent as the model says");

	hashmap__filter(h, drop_odd, &visited);
	ASSERT_EQ(visited, (int)live, "filter visits every entry exactly once");
	for (int i = 0; i < N; i++) {
		bool want = present[i] && !(ka[i] & 1);

		if ((hashmap__get(h, ka[i], kb[i]) != NULL) != want)
			bad++;
	}
	ASSERT_EQ(bad, 0, "filter removed exactly the odd keys");
	hashmap__free(h, NULL);
	return test_exit();
}
