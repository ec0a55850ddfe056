/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The k smallest values of a stream, kept in a bounded max-heap: the k-th
 * smallest is its top, memory is at most k values, and a value that cannot
 * be among the k costs one comparison.
 *
 * `record --steps N` finds where step N + 1 began with it: executions come
 * from per-CPU ring shards drained in turn, not in the order they started,
 * so the (N + 1)-th to arrive need not be the (N + 1)-th to start.
 *
 * A zeroed struct holds nothing and keeps nothing; set its k with
 * smallest_k__reset().
 */
#ifndef ACCELTRACE_SMALLEST_K_H
#define ACCELTRACE_SMALLEST_K_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct smallest_k {
	uint64_t *v;		/* max-heap: v[0] is the largest kept */
	size_t n;		/* values kept, <= k */
	size_t cap;		/* allocated: grows (doubling) with n */
	size_t k;
};

/* Empties @s and makes it keep the @k smallest values from now on. */
void smallest_k__reset(struct smallest_k *s, size_t k);
/* Offers @x: 0, or -ENOMEM (then @s is unchanged). */
int smallest_k__add(struct smallest_k *s, uint64_t x);
/* Whether k values have been offered (so the k-th smallest is known). */
bool smallest_k__full(const struct smallest_k *s);
/* The largest value kept: the k-th smallest offered once full; 0 when empty. */
uint64_t smallest_k__top(const struct smallest_k *s);
void smallest_k__free(struct smallest_k *s);

#endif /* ACCELTRACE_SMALLEST_K_H */
