// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/u64_map.h"

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

uint32_t u64_map__get(const struct u64_map *m, uint64_t key)
{
	if (!m->cap)
		return U64_MAP_NONE;
	for (size_t i = mix64(key) & (m->cap - 1); m->vals[i] != U64_MAP_NONE;
	     i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->vals[i];
	}
	return U64_MAP_NONE;
}

static void insert_slot(struct u64_map *m, uint64_t key, uint32_t val)
{
	size_t i = mix64(key) & (m->cap - 1);

	while (m->vals[i] != U64_MAP_NONE && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (m->vals[i] == U64_MAP_NONE)
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
}

int u64_map__put(struct u64_map *m, uint64_t key, uint32_t val)
{
	/* Keep the load at most 1/2: probes stay short. */
	if ((m->n + 1) * 2 > m->cap) {
		struct u64_map bigger = { .cap = m->cap ? m->cap * 2 : 16 };

		bigger.keys = malloc(bigger.cap * sizeof(*bigger.keys));
		bigger.vals = malloc(bigger.cap * sizeof(*bigger.vals));
		if (!bigger.keys || !bigger.vals) {
			free(bigger.keys);
			free(bigger.vals);
			return -ENOMEM;
		}
		memset(bigger.vals, 0xff, bigger.cap * sizeof(*bigger.vals));
		for (size_t i = 0; i < m->cap; i++)
			if (m->vals[i] != U64_MAP_NONE)
				insert_slot(&bigger, m->keys[i], m->vals[i]);
		free(m->keys);
		free(m->vals);
		*m = bigger;
	}
	insert_slot(m, key, val);
	return 0;
}

void u64_map__clear(struct u64_map *m)
{
	if (m->cap)
		memset(m->vals, 0xff, m->cap * sizeof(*m->vals));
	m->n = 0;
}

void u64_map__free(struct u64_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
