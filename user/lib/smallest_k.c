// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The k smallest values of a stream: a bounded max-heap. */
#include <errno.h>
#include <stdlib.h>

#include "lib/smallest_k.h"
#include "lib/array.h"

void smallest_k__reset(struct smallest_k *s, size_t k)
{
	s->n = 0;
	s->k = k;
}

static void swap(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

static void sift_up(uint64_t *v, size_t i)
{
	while (i > 0 && v[(i - 1) / 2] < v[i]) {
		swap(&v[(i - 1) / 2], &v[i]);
		i = (i - 1) / 2;
	}
}

static void sift_down(uint64_t *v, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, big = i;

		if (l < n && v[l] > v[big])
			big = l;
		if (r < n && v[r] > v[big])
			big = r;
		if (big == i)
			return;
		swap(&v[big], &v[i]);
		i = big;
	}
}

int smallest_k__add(struct smallest_k *s, uint64_t x)
{
	if (!s->k)
		return 0;
	if (s->n == s->k) {
		/* Full: @x replaces the largest kept if it is smaller. */
		if (x < s->v[0]) {
			s->v[0] = x;
			sift_down(s->v, s->n, 0);
		}
		return 0;
	}
	if (ARRAY_GROW(s->v, s->cap, s->n + 1))
		return -ENOMEM;
	s->v[s->n] = x;
	sift_up(s->v, s->n);
	s->n++;
	return 0;
}

bool smallest_k__full(const struct smallest_k *s)
{
	return s->k && s->n == s->k;
}

uint64_t smallest_k__top(const struct smallest_k *s)
{
	return s->n ? s->v[0] : 0;
}

void smallest_k__free(struct smallest_k *s)
{
	free(s->v);
	s->v = NULL;
	s->n = s->cap = s->k = 0;
}
