// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/array.h"

int array_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t new_cap;
	void *p;

	if (need <= *cap)
		return 0;
	/* A count read from outside must not wrap the byte size. */
	if (!elem || need > SIZE_MAX / 2 / elem)
		return -ENOMEM;
	new_cap = *cap ? *cap : 16;
	while (new_cap < need)
		new_cap *= 2;
	p = realloc(*arr, new_cap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = new_cap;
	return 0;
}

void array_sort(void *base, size_t n, size_t elem, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, elem, cmp);
}

void *array_bsearch(const void *key, const void *base, size_t n, size_t elem,
		    int (*cmp)(const void *, const void *))
{
	return n ? bsearch(key, base, n, elem, cmp) : NULL;
}
