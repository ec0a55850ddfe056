// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Interval sets: device busy time, input time, host activity. */
#include <errno.h>
#include <stdlib.h>

#include "lib/array.h"
#include "report/report_internal.h"

int iv_add(struct intervals *s, int64_t a, int64_t b)
{
	if (b <= a)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct interval *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct interval){ a, b };
	return 0;
}

static int cmp_iv(const void *x, const void *y)
{
	const struct interval *a = x, *b = y;

	return a->a < b->a ? -1 : a->a > b->a;
}

void iv_merge(struct intervals *s)
{
	size_t out = 0;

	if (!s->n)
		return;
	array_sort(s->v, s->n, sizeof(*s->v), cmp_iv);
	for (size_t i = 1; i < s->n; i++) {
		if (s->v[i].a <= s->v[out].b) {
			if (s->v[i].b > s->v[out].b)
				s->v[out].b = s->v[i].b;
		} else {
			s->v[++out] = s->v[i];
		}
	}
	s->n = out + 1;
}

int64_t iv_covered(const struct intervals *s, int64_t a, int64_t b)
{
	size_t lo = 0, hi = s->n;
	int64_t total = 0;

	/* The first interval ending after a. */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->v[mid].b <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < s->n && s->v[i].a < b; i++) {
		int64_t x = s->v[i].a > a ? s->v[i].a : a;
		int64_t y = s->v[i].b < b ? s->v[i].b : b;

		if (y > x)
			total += y - x;
	}
	return total;
}

void iv_free(struct intervals *s)
{
	free(s->v);
	*s = (struct intervals){ 0 };
}
