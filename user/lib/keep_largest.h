/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The few largest of a stream, in a small array kept largest first: a
 * report's longest-running ops, the threads that waited longest. (For the
 * k smallest of many values, lib/smallest_k.h's heap.)
 */
#ifndef ACCELTRACE_KEEP_LARGEST_H
#define ACCELTRACE_KEEP_LARGEST_H

#include <stddef.h>
#include <stdint.h>

/*
 * Offers @x (@size bytes) to @v, which holds @n elements of at most @cap,
 * largest @key first: it goes in its place, the smallest dropping out when
 * @v is full (and @x itself when no larger than all of them). Returns the
 * new count.
 */
size_t keep_largest(void *v, size_t n, size_t cap, size_t size, const void *x,
		    int64_t (*key)(const void *));

#endif /* ACCELTRACE_KEEP_LARGEST_H */
