/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The acceltrace.memory_timelines plane stat (docs/capture-format.md,
 * "Device memory"): {"version": 1, "allocators": [{"allocator_name",
 * "pid", "device_ordinal", "layer", "points": [[t_ns, span_ns, in_use,
 * min, max, peak], ...]}]}. A strict parser for that form only; keys it
 * does not know are skipped (a later version may add some). Internal to
 * reader/ (xspace_memory.c).
 */
#ifndef ACCELTRACE_MEMORY_TIMELINES_H
#define ACCELTRACE_MEMORY_TIMELINES_H

#include <stddef.h>

#include "reader/xspace_memory.h"

struct memory_timelines {
	struct xs_mem_allocator *allocs;	/* events NULL; names malloc'd */
	size_t n_allocs;
};

/*
 * Parses json[0..len). 0, or -EINVAL with where and what in err (the
 * result is then empty), -E2BIG past XS_MEM_MAX_ALLOCATORS or
 * XS_MEM_MAX_POINTS, -ENOMEM.
 */
int memory_timelines_parse(const char *json, size_t len, struct memory_timelines *out,
			   char *err, size_t errlen);
void memory_timelines_free(struct memory_timelines *t);

#endif /* ACCELTRACE_MEMORY_TIMELINES_H */
