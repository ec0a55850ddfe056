/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Device memory as a capture holds it (docs/capture-format.md, "Device
 * memory"): per allocator (one process, one device, one layer), the
 * window's MemoryAllocation / MemoryDeallocation events in time order, and
 * its memory timeline since the process started, from the /host:CPU plane
 * stat acceltrace.memory_timelines. The report and the exporters read
 * this, never the events themselves.
 */
#ifndef ACCELTRACE_XSPACE_MEMORY_H
#define ACCELTRACE_XSPACE_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/xspace_reader.h"

/* Bounds on what a hostile file may make us hold. */
#define XS_MEM_MAX_ALLOCATORS 4096
#define XS_MEM_MAX_POINTS (1u << 22)	/* over all allocators */

struct xs_mem_event {
	int64_t time_ps;	/* the XSpace's time */
	bool is_free;
	bool size_unknown;	/* acceltrace.size_unknown: made before the probes */
	bool untracked;		/* acceltrace.untracked: not in in_use (the live table full) */
	int64_t in_use;		/* bytes_allocated: the allocator's, after the event */
	int64_t size;		/* allocation_bytes, else requested_bytes; 0: unknown */
	uint64_t addr;
	int64_t group_id;	/* the step; -1 when the event has none */
	const char *api, *shapes, *data_type;	/* "" when absent */
	size_t seq;		/* the allocator's events in the file's order */
};

/* One timeline point: [t_ns, t_ns + span_ns) from the window's start. */
struct xs_mem_point {
	int64_t t_ns, span_ns;
	int64_t in_use;		/* at the point's end */
	int64_t min, max, peak;
};

struct xs_mem_allocator {
	const char *name;	/* allocator_name */
	const char *layer;	/* "pjrt_buffers", "cuda_reserved", ... or "" */
	int64_t pid, device_ordinal;	/* -1 when unknown */
	struct xs_mem_event *events;	/* the window's, by time */
	size_t n_events;
	struct xs_mem_point *points;	/* the timeline, oldest first */
	size_t n_points;
};

struct xs_memory {
	struct xs_mem_allocator *allocs;	/* by (pid, name) */
	size_t n_allocs;
	int64_t events_dropped;	/* acceltrace.memory_events_dropped */
	/* Why the timelines stat was not read ("" when it was, or is absent). */
	char timeline_error[160];
	void *priv;		/* names copied out of the JSON */
};

/*
 * Fills m from xs (which must outlive m). A malformed timelines stat is
 * not an error: its timelines are left out and timeline_error says why.
 * 0, or -ENOMEM / -E2BIG (more allocators than XS_MEM_MAX_ALLOCATORS).
 */
int xs_memory_read(const struct xs_space *xs, struct xs_memory *m);
void xs_memory_free(struct xs_memory *m);

/* Whether a /host:CPU line is a memory counter line ("Device memory: ..."),
 * and whether an event is an allocation or a free. */
bool xs_line_is_memory_counter(const struct xs_line *l);
bool xs_event_is_memory(const struct xs_event *e);

#endif /* ACCELTRACE_XSPACE_MEMORY_H */
