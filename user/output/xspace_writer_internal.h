/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the XSpace writer's two halves share: the writer's state, and the
 * stats an event carries (xspace_events.c: args, correlation, step groups,
 * clipping, flags, and which of them go to the event's metadata), beside
 * the planes and lines they are written into (xspace_writer.c).
 */
#ifndef ACCELTRACE_XSPACE_WRITER_INTERNAL_H
#define ACCELTRACE_XSPACE_WRITER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "lib/u64_map.h"
#include "output/pb_wire.h"
#include "output/step_groups.h"
#include "output/track_layout.h"
#include "output/xspace_stats.h"
#include "xplane.pb-c.h"

typedef Tensorflow__Profiler__XEvent XEvent;
typedef Tensorflow__Profiler__XStat XStat;
typedef Tensorflow__Profiler__XLine XLine;
typedef Tensorflow__Profiler__XEventMetadata XEventMetadata;
typedef Tensorflow__Profiler__XStatMetadata XStatMetadata;

/* An int64 stat, and a stat whose value is another stat's name (ref). */
static inline void xw_stat_int(XStat *st, uint32_t id, int64_t v)
{
	tensorflow__profiler__xstat__init(st);
	st->metadata_id = id;
	st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	st->int64_value = v;
}

static inline void xw_stat_ref(XStat *st, uint32_t id, uint32_t ref)
{
	tensorflow__profiler__xstat__init(st);
	st->metadata_id = id;
	st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE;
	st->ref_value = ref;
}

/* Field numbers of XSpace and XPlane (xplane.proto). */
#define XSPACE_PLANES 1
#define XSPACE_WARNINGS 3
#define XSPACE_HOSTNAMES 4
#define XPLANE_ID 1
#define XPLANE_NAME 2
#define XPLANE_LINES 3
#define XPLANE_EVENT_METADATA 4
#define XPLANE_STAT_METADATA 5
#define XPLANE_STATS 6

/* A track's extra lines (for overlaps) add k << 32 to its line id. */
#define EXTRA_LINE_SHIFT 32

#define STAT_TRUE_START "acceltrace.true_start_ns"
#define STAT_TRUE_END "acceltrace.true_end_ns"
#define STAT_CLIPPED "acceltrace.clipped"

/* Span flags written as stats (xspace_events.c, flag_stats). */
#define NUM_FLAG_STATS 6

/* Stats an event can carry: args, correlation id, clipping (3), flags. */
#define MAX_EVENT_STATS (CAPTURE_MAX_ARGS + 1 + 3 + NUM_FLAG_STATS)

struct event_md {
	const char *name;
	uint32_t nargs;		/* constant stats (device planes) */
	struct capture_arg args[CAPTURE_MAX_ARGS];
};

/* One thread's memory events (xspace_memory.c): mem_order[first, first + n). */
struct mem_group {
	uint32_t pid, tid;
	size_t first, n;
	bool written;		/* on its thread's row already */
};

struct xw {
	const struct capture *c;
	struct pb_out o;
	uint64_t ws, we;	/* the window */

	/* Per plane. */
	bool device_plane;
	struct xspace_stats stats;
	struct u64_map ev_by_key;	/* name key -> event metadata index */
	struct event_md *ev;
	size_t nev, ev_cap;
	uint32_t st_corr, st_true_start, st_true_end, st_clipped;
	uint32_t st_group, st_step_num;
	uint32_t k_launch_id;		/* the capture's "launch_id" key, or 0 */
	struct step_groups groups;	/* correlation id -> step number */
	uint32_t st_flags[NUM_FLAG_STATS];

	/* Per track, reused: grown to the largest track. */
	struct track_layout *layout;
	XEvent *events;
	size_t events_cap;
	XEvent **event_ptrs;
	size_t event_ptrs_cap;
	XStat *stat_buf;
	size_t stat_buf_cap;
	XStat **stat_ptrs;
	size_t stat_ptrs_cap;

	/* Device index -> its track per kind (streams are not among them). */
	uint32_t (*dev_tracks)[TRACK_KIND__COUNT];
	/* Stream tracks by (device, stream id); the next one to write. */
	uint32_t *streams;
	size_t nstreams, nstreams_cap, next_stream;

	/* Rows the last write_track() wrote (0: none). */
	size_t last_rows;

	/* Device memory: events by (pid, tid, time), grouped by thread. */
	size_t *mem_order;
	struct mem_group *mem_groups;
	size_t nmem_groups;

	/* Totals. */
	uint64_t outside;	/* spans wholly outside the window */
	uint64_t mem_outside;	/* memory events outside it (xspace_memory.c) */
	uint64_t events_written;
};

/* A fixed stat name's id for this plane, cached in *slot; 0 out of memory. */
uint32_t xw_fixed_stat(struct xw *w, uint32_t *slot, const char *name);
/* The event metadata index for @s's name (and constant args on device
 * planes); *is_new when just made. -ENOMEM. */
int xw_event_md_index(struct xw *w, const struct capture_span *s, bool *is_new);
/* @a as a stat; false when its key or string is unknown. */
bool xw_arg_to_stat(struct xw *w, const struct capture_arg *a, XStat *st);
/* True when one of sp[0..n) has metadata id @id. */
bool xw_has_stat(XStat **sp, size_t n, int64_t id);
/* An event's stats into st[] (pointers in sp[]): the count, or -ENOMEM. */
int xw_event_stats(struct xw *w, const struct capture_span *s, struct event_md *md,
		   bool md_new, XStat *st, XStat **sp);
/* The most stats xw_event_stats() can give @s. */
size_t xw_max_stats(const struct xw *w, const struct capture_span *s);

#endif /* ACCELTRACE_XSPACE_WRITER_INTERNAL_H */
