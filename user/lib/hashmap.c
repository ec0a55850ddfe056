// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "lib/hashmap.h"

struct slot {
	uint64_t a, b;
	void *value;
	bool used;
};

struct hashmap {
	struct slot *slots;
	size_t cap;		/* power of two */
	size_t count;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	/* splitmix64 finalizer over both halves */
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct hashmap *hashmap__new(void)
{
	struct hashmap *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->cap = 64;
	h->slots = calloc(h->cap, sizeof(*h->slots));
	if (!h->slots) {
		free(h);
		return NULL;
	}
	return h;
}

void hashmap__free(struct hashmap *h, void (*free_value)(void *))
{
	if (!h)
		return;
	for (size_t i = 0; free_value && i < h->cap; i++)
		if (h->slots[i].used)
			free_value(h->slots[i].value);
	free(h->slots);
	free(h);
}

static struct slot *find(const struct hashmap *h, uint64_t a, uint64_t b)
{
	size_t mask = h->cap - 1, i = mix(a, b) & mask;

	while (h->slots[i].used) {
		if (h->slots[i].a == a && h->slots[i].b == b)
			return &h->slots[i];
		i = (i + 1) & mask;
	}
	return NULL;
}

static int grow(struct hashmap *h)
{
	struct slot *old = h->slots;
	size_t old_cap = h->cap;

	h->slots = calloc(old_cap * 2, sizeof(*h->slots));
	if (!h->slots) {
		h->slots = old;
		return -ENOMEM;
	}
	h->cap = old_cap * 2;
	h->count = 0;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].used)
			hashmap__put(h, old[i].a, old[i].b, old[i].value, NULL);
	free(old);
	return 0;
}

int hashmap__put(struct hashmap *h, uint64_t a, uint64_t b, void *value,
		 void **old)
{
	struct slot *s = find(h, a, b);
	size_t mask, i;

	if (old)
		*old = NULL;
	if (s) {
		if (old)
			*old = s->value;
		s->value = value;
		return 0;
	}
	/* Keep the load under 3/4 so probes stay short. */
	if ((h->count + 1) * 4 > h->cap * 3 && grow(h))
		return -ENOMEM;
	mask = h->cap - 1;
	i = mix(a, b) & mask;
	while (h->slots[i].used)
		i = (i + 1) & mask;
	h->slots[i] = (struct slot){ .a = a, .b = b, .value = value, .used = true };
	h->count++;
	return 0;
}

void *hashmap__get(const struct hashmap *h, uint64_t a, uint64_t b)
{
	struct slot *s = find(h, a, b);

	return s ? s->value : NULL;
}

/* Backward-shift deletion: no tombstones, lookups stay exact. */
static void remove_slot(struct hashmap *h, size_t i)
{
	size_t mask = h->cap - 1, j = i;

	h->slots[i].used = false;
	h->count--;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!h->slots[j].used)
			return;
		home = mix(h->slots[j].a, h->slots[j].b) & mask;
		/* Move j back to i if its home is not in (i, j]. */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && (home <= i && home > j))) {
			h->slots[i] = h->slots[j];
			h->slots[j].used = false;
			i = j;
		}
	}
}

void *hashmap__remove(struct hashmap *h, uint64_t a, uint64_t b)
{
	struct slot *s = find(h, a, b);
	void *v;

	if (!s)
		return NULL;
	v = s->value;
	remove_slot(h, s - h->slots);
	return v;
}

void hashmap__remove_if(struct hashmap *h, uint64_t a, uint64_t b, const void *value)
{
	struct slot *s = find(h, a, b);

	if (s && s->value == value)
		remove_slot(h, s - h->slots);
}

size_t hashmap__count(const struct hashmap *h)
{
	return h->count;
}

void hashmap__filter(struct hashmap *h,
		     int (*fn)(uint64_t a, uint64_t b, void *value, void *ctx),
		     void *ctx)
{
	size_t mask = h->cap - 1, start = 0, n;

	/*
	 * Scan from just past an empty slot (the load stays under 3/4, so
	 * there is one) once around. A removal shifts entries of the same
	 * cluster back into the hole, never past it: they come from slots not
	 * visited yet and land on the slot being visited or later, so the slot
	 * is looked at again and every entry is seen exactly once.
	 */
	while (h->slots[start].used)
		start++;
	for (n = 1; n < h->cap; ) {
		size_t i = (start + n) & mask;
		struct slot *s = &h->slots[i];

		if (s->used && fn(s->a, s->b, s->value, ctx)) {
			remove_slot(h, i);
			continue;
		}
		n++;
	}
}
