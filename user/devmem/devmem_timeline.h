/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One allocator's bytes in use over time, in bounded memory: a ring of
 * points per tier, each tier coarser and reaching further back than the
 * last (by default 1 s points for 10 minutes, 10 s for 3 hours, 1 min for
 * a day, 10 min for 30 days; beyond that the oldest points go). A point
 * keeps the last, least and most bytes in use over its span and the peak
 * so far, so a coarse point still shows a spike that came and went.
 */
#ifndef ACCELTRACE_DEVMEM_TIMELINE_H
#define ACCELTRACE_DEVMEM_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "capture/capture_memory.h"

struct devmem_tier {
	uint64_t resolution_ns;
	uint32_t points;	/* how many the tier keeps */
};

#define DEVMEM_MAX_TIERS 6

struct devmem_timeline;

/* @tiers finest first, each coarser (a multiple of the last); NULL: the
 * defaults. NULL and errno on failure (-EINVAL for tiers out of order). */
struct devmem_timeline *devmem_timeline__new(const struct devmem_tier *tiers, size_t n);
/* 0 where @tiers can make a timeline (1 to DEVMEM_MAX_TIERS, finest first,
 * each coarser than the last and a multiple of it, points bounded), else
 * -EINVAL. */
int devmem_timeline__check_tiers(const struct devmem_tier *tiers, size_t n);
void devmem_timeline__free(struct devmem_timeline *t);
/* A sample: bytes in use at @ts_ns (non-decreasing), and the peak so far. */
void devmem_timeline__add(struct devmem_timeline *t, uint64_t ts_ns, uint64_t in_use,
			  uint64_t peak);
/* Points from @since_ns on, oldest first, coarse then fine, none
 * overlapping; at most @max. Returns how many were written. */
size_t devmem_timeline__points(const struct devmem_timeline *t, uint64_t since_ns,
			       struct capture_mem_point *out, size_t max);
size_t devmem_timeline__max_points(const struct devmem_timeline *t);
/* Bytes it holds: the finest tier's from creation, a coarser tier's once
 * the process is old enough to reach it (a short-lived process costs the
 * finest tier only); never more than max_bytes, whatever the age. */
size_t devmem_timeline__bytes(const struct devmem_timeline *t);
size_t devmem_timeline__max_bytes(const struct devmem_timeline *t);
/* The resolution of points @age_ns old (0: older than it keeps). */
uint64_t devmem_timeline__resolution_at(const struct devmem_timeline *t, uint64_t age_ns);
/* The tiers in use (the defaults when created with NULL). */
size_t devmem_timeline__tiers(const struct devmem_timeline *t, struct devmem_tier *out,
			      size_t max);

#endif /* ACCELTRACE_DEVMEM_TIMELINE_H */
