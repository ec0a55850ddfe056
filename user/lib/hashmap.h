/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A hash map from a pair of 64-bit keys ((pid, pointer), say) to a pointer.
 * Open addressing with linear probing and backward-shift deletion, so it
 * stays fast under the collector's steady insert/remove churn.
 */
#ifndef ACCELTRACE_HASHMAP_H
#define ACCELTRACE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

struct hashmap;

/* NULL and errno on allocation failure. */
struct hashmap *hashmap__new(void);
/* Calls free_value (if not NULL) on every value; accepts NULL. */
void hashmap__free(struct hashmap *h, void (*free_value)(void *));

/* Inserts or replaces; returns the value replaced (or NULL) via *old. */
int hashmap__put(struct hashmap *h, uint64_t a, uint64_t b, void *value,
		 void **old);
void *hashmap__get(const struct hashmap *h, uint64_t a, uint64_t b);
/* Removes and returns the value, or NULL. */
void *hashmap__remove(struct hashmap *h, uint64_t a, uint64_t b);
/* Removes the entry only where it holds @value (a key since reused by a
 * newer value stays): one probe instead of a get and a remove. */
void hashmap__remove_if(struct hashmap *h, uint64_t a, uint64_t b, const void *value);
size_t hashmap__count(const struct hashmap *h);

/*
 * Calls fn once for every entry present when it starts; fn returning
 * nonzero removes the entry (its value is the caller's to free). fn must not
 * insert or remove entries itself.
 */
void hashmap__filter(struct hashmap *h,
		     int (*fn)(uint64_t a, uint64_t b, void *value, void *ctx),
		     void *ctx);

#endif /* ACCELTRACE_HASHMAP_H */
