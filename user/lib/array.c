// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>

#include "lib/array.h"

int array_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t new_cap;
	void *p;

	if (need <= *cap)
		return 0;
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
