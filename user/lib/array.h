/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Growable arrays: capacity doubles, so appending is amortized O(1). */
#ifndef ACCELTRACE_ARRAY_H
#define ACCELTRACE_ARRAY_H

#include <stddef.h>

/* Makes *arr hold at least @need elements of @elem bytes; 0 or -ENOMEM
 * (then *arr and *cap are unchanged). */
int array_grow(void **arr, size_t *cap, size_t need, size_t elem);

#define ARRAY_GROW(arr, cap, need) \
	array_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

#endif /* ACCELTRACE_ARRAY_H */
