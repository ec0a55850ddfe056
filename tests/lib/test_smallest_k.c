// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The k smallest of a stream (what `record --steps` finds step N + 1 with):
 * checked against sorting, on values in order, reversed, shuffled and with
 * repeats, for k from 1 to past the stream's length.
 */
#include <stdlib.h>

#include "test.h"
#include "lib/smallest_k.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Offers @v[0..n) with k = @k and compares with the sorted answer. */
static bool agrees(const uint64_t *v, size_t n, size_t k)
{
	struct smallest_k s = {};
	uint64_t *sorted = malloc(n * sizeof(*sorted));
	bool ok = true;

	if (!sorted)
		return false;
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	smallest_k__reset(&s, k);
	for (size_t i = 0; i < n; i++) {
		if (smallest_k__add(&s, v[i]))
			ok = false;
		/* Full exactly once k values came, and then the k-th smallest
		 * of those so far is the top. */
		if (smallest_k__full(&s) != (i + 1 >= k))
			ok = false;
		if (smallest_k__full(&s)) {
			uint64_t *part = malloc((i + 1) * sizeof(*part));

			memcpy(part, v, (i + 1) * sizeof(*v));
			qsort(part, i + 1, sizeof(*part), cmp_u64);
			ok &= smallest_k__top(&s) == part[k - 1];
			free(part);
		}
	}
	if (k <= n)
		ok &= smallest_k__top(&s) == sorted[k - 1] && s.n == k;
	else
		ok &= !smallest_k__full(&s) && s.n == n;
	smallest_k__free(&s);
	free(sorted);
	return ok;
}

int main(void)
{
	enum { N = 300 };
	uint64_t up[N], down[N], mixed[N], repeats[N];
	struct smallest_k s = {};

	srand(7);
	for (size_t i = 0; i < N; i++) {
		up[i] = 1000 + i;
		down[i] = 1000 + N - i;
		mixed[i] = 1000 + i;
		repeats[i] = rand() % 10;
	}
	/* Nearly in order, as ring shards deliver: neighbours swapped. */
	for (size_t i = 0; i + 1 < N; i += 3) {
		uint64_t t = mixed[i];

		mixed[i] = mixed[i + 1];
		mixed[i + 1] = t;
	}
	static const size_t ks[] = { 1, 2, 3, 4, 5, 7, 8, 16, 17, 57, 150, 299, N, N + 1, N + 5 };

	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		size_t k = ks[i];
		char what[64];

		snprintf(what, sizeof(what), "in order, k=%zu", k);
		ASSERT_TRUE(agrees(up, N, k), what);
		snprintf(what, sizeof(what), "reversed, k=%zu", k);
		ASSERT_TRUE(agrees(down, N, k), what);
		snprintf(what, sizeof(what), "neighbours swapped, k=%zu", k);
		ASSERT_TRUE(agrees(mixed, N, k), what);
		snprintf(what, sizeof(what), "repeats, k=%zu", k);
		ASSERT_TRUE(agrees(repeats, N, k), what);
	}

	/* k = 0 keeps nothing and is never full; reset starts afresh. */
	smallest_k__reset(&s, 0);
	ASSERT_OK(smallest_k__add(&s, 5), "k=0: add");
	ASSERT_TRUE(!smallest_k__full(&s) && !smallest_k__top(&s), "k=0: nothing kept");
	smallest_k__reset(&s, 2);
	smallest_k__add(&s, 9);
	smallest_k__add(&s, 4);
	smallest_k__add(&s, 6);
	ASSERT_EQ(smallest_k__top(&s), 6, "2nd smallest of 9, 4, 6");
	smallest_k__reset(&s, 1);
	ASSERT_TRUE(!smallest_k__full(&s), "reset: empty");
	smallest_k__add(&s, 8);
	ASSERT_EQ(smallest_k__top(&s), 8, "after reset, only new values");
	smallest_k__free(&s);
	return test_exit();
}
