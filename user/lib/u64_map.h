/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small open-addressing map from a 64-bit key to a 32-bit id, embedded by
 * value in the structures that use it (a zeroed struct is an empty map): the
 * capture model's track and index lookups and the XSpace writer's metadata
 * tables, which run once per span and want no allocation per entry.
 */
#ifndef ACCELTRACE_U64_MAP_H
#define ACCELTRACE_U64_MAP_H

#include <stddef.h>
#include <stdint.h>

#define U64_MAP_NONE UINT32_MAX	/* "absent"; never stored as a value */

struct u64_map {
	uint64_t *keys;
	uint32_t *vals;		/* U64_MAP_NONE marks an empty slot */
	size_t cap;		/* 0 or a power of two */
	size_t n;
};

/* The value for @key, or U64_MAP_NONE. */
uint32_t u64_map__get(const struct u64_map *m, uint64_t key);
/* Inserts or replaces; 0 or -ENOMEM. */
int u64_map__put(struct u64_map *m, uint64_t key, uint32_t val);
/* Empties the map, keeping its storage. */
void u64_map__clear(struct u64_map *m);
/* Frees the storage; the map is empty (and usable) after. */
void u64_map__free(struct u64_map *m);

#endif /* ACCELTRACE_U64_MAP_H */
