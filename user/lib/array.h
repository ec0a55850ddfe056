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

/*
 * qsort and bsearch for arrays that may be empty: an empty array often has
 * no storage (NULL), and libc's are declared nonnull, so passing NULL is
 * undefined even with a count of 0 (UBSan stops there).
 */
void array_sort(void *base, size_t n, size_t elem, int (*cmp)(const void *, const void *));
void *array_bsearch(const void *key, const void *base, size_t n, size_t elem,
		    int (*cmp)(const void *, const void *));

#endif /* ACCELTRACE_ARRAY_H */
