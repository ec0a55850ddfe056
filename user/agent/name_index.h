/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The names a devtrace buffer published, found again by a hash of the
 * runtime's text (kind included), so each name is published once. An open
 * addressing table kept at most half full; a name the table has no room
 * for is not indexed (the caller publishes nothing more: the buffer's own
 * table would be as full). Not locked: its buffer's writer lock covers it.
 */
#ifndef ACCELTRACE_AGENT_NAME_INDEX_H
#define ACCELTRACE_AGENT_NAME_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct name_slot {
	uint64_t hash;		/* 0: empty */
	uint32_t id;
};

struct name_index {
	struct name_slot *slots;
	uint32_t mask;		/* slots - 1, a power of two */
	uint32_t used;
};

/* Room for @names names (rounded up to a power of two, doubled). */
int name_index__init(struct name_index *x, uint32_t names);
void name_index__free(struct name_index *x);
uint64_t name_index__hash(int kind, const char *s, size_t len);
/*
 * The slot of @hash: found (its id is the name's) or the empty one to
 * fill (set hash and id, then call name_index__filled); NULL when the
 * table is half full and the name is not in it.
 */
struct name_slot *name_index__slot(struct name_index *x, uint64_t hash, bool *found);
void name_index__filled(struct name_index *x);

#endif /* ACCELTRACE_AGENT_NAME_INDEX_H */
