// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The few largest of a stream, largest first (keep_largest.h). */
#include <string.h>

#include "lib/keep_largest.h"

size_t keep_largest(void *v, size_t n, size_t cap, size_t size, const void *x,
		    int64_t (*key)(const void *))
{
	char *a = v;
	int64_t k = key(x);
	size_t i = n;

	if (!cap)
		return 0;
	if (n == cap) {
		if (k <= key(a + (n - 1) * size))
			return n;
		i--;		/* the smallest goes */
	} else {
		n++;
	}
	while (i > 0 && key(a + (i - 1) * size) < k)
		i--;
	/* Those after its place move down one, over the dropped smallest. */
	memmove(a + (i + 1) * size, a + i * size, (n - 1 - i) * size);
	memcpy(a + i * size, x, size);
	return n;
}
