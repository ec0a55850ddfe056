// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Published names found again by hash (name_index.h). */
#include <errno.h>
#include <stdlib.h>

#include "agent/name_index.h"

int name_index__init(struct name_index *x, uint32_t names)
{
	uint32_t slots = 2;

	while (slots < 2 * names && slots < (1u << 30))
		slots <<= 1;
	x->slots = calloc(slots, sizeof(*x->slots));
	if (!x->slots)
		return -ENOMEM;
	x->mask = slots - 1;
	x->used = 0;
	return 0;
}

void name_index__free(struct name_index *x)
{
	free(x->slots);
	x->slots = NULL;
}

uint64_t name_index__hash(int kind, const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)kind;	/* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h ? h : 1;
}

struct name_slot *name_index__slot(struct name_index *x, uint64_t hash, bool *found)
{
	uint32_t i = (uint32_t)hash & x->mask;

	while (x->slots[i].hash) {
		if (x->slots[i].hash == hash) {
			*found = true;
			return &x->slots[i];
		}
		i = (i + 1) & x->mask;
	}
	*found = false;
	return x->used >= (x->mask + 1) / 2 ? NULL : &x->slots[i];
}

void name_index__filled(struct name_index *x)
{
	x->used++;
}
