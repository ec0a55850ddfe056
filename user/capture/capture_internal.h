/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The capture model's insides, shared by its files only: capture.c (the
 * model, its lifecycle and its readers), threads.c (processes, threads and
 * their names), spans.c (adding, dropping and sorting spans) and budget.c
 * (the event budget), capture_memory.c (device memory: allocations, frees
 * and allocator timelines). Nothing outside
 * user/capture/ includes this.
 */
#ifndef ACCELTRACE_CAPTURE_INTERNAL_H
#define ACCELTRACE_CAPTURE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"
#include "capture/capture_memory.h"
#include "lib/u64_map.h"

struct strtab;

/* (pid, tid), (pid, core) or (device, stream) as one u64_map key. */
static inline uint64_t pair_key(uint32_t hi, uint32_t lo)
{
	return (uint64_t)hi << 32 | lo;
}

struct track_store {
	struct capture_track info;
	struct capture_span *spans;
	size_t n;
	size_t cap;
	/* A bit per span kind the track may hold (set as spans come, exact
	 * after a prune): the budget's passes skip tracks it need not read. */
	uint32_t kinds;
};

_Static_assert(SPAN_KIND__COUNT <= 32, "track_store.kinds: a bit per span kind");

/* A thread's name history, beside c->threads (same index). */
struct thread_names {
	struct capture_thread_name *v;
	size_t n, cap;
	uint64_t more;		/* renames not kept in v */
};

struct loss {
	uint32_t name;
	uint64_t n;
	bool of_events;		/* the window's events lost (capture__count_event_loss) */
};

/* One allocator's timeline (capture_memory.c). */
struct mem_timeline {
	struct capture_mem_allocator alloc;
	struct capture_mem_point *points;
	size_t n;
};

struct capture {
	char *hostname;
	char *session;
	uint64_t max_spans;
	uint64_t total_kept;		/* sum of kept[] */
	bool finalized;

	uint64_t win_start, win_stop;
	bool window_set;
	int64_t realtime_offset;
	uint64_t probes_attached;
	uint32_t reason;		/* interned; 0: none given */
	uint32_t focus_pid;		/* the process it is about; 0: none */

	struct strtab *strs;		/* interned strings, id 0 is "" */
	uint64_t strings_lost;		/* interning that failed */
	struct u64_map static_strs;	/* address of a static string -> id */

	struct track_store *tracks;
	size_t ntracks, tracks_cap;
	struct u64_map host_tracks;	/* pid << 32 | tid -> track id */

	struct capture_device *devices;
	uint32_t (*device_tracks)[TRACK_KIND__COUNT];
	size_t ndevices, devices_cap, device_tracks_cap;
	struct u64_map device_idx;	/* pid << 32 | core -> index */
	struct u64_map stream_tracks;	/* device << 32 | stream -> track id */

	struct capture_process *procs;
	size_t nprocs, procs_cap;
	struct u64_map proc_idx;	/* pid -> index */

	struct capture_thread *threads;
	size_t nthreads, threads_cap;
	struct u64_map thread_idx;	/* pid << 32 | tid -> index */
	struct thread_names *thread_names;	/* by thread index */
	size_t thread_names_cap;
	uint64_t thread_names_lost;	/* renames not kept: no memory */

	uint32_t *warnings;	/* interned */
	size_t nwarnings, warnings_cap;
	struct u64_map warning_set;
	uint64_t warnings_suppressed;

	struct loss *losses;
	size_t nlosses, losses_cap;

	uint64_t kept[SPAN_KIND__COUNT];
	uint64_t dropped[SPAN_KIND__COUNT];
	/*
	 * After a prune the kept spans fill the budget exactly, all of them
	 * more useful than a kind it dropped entirely, and at least as long
	 * as the partly dropped kind's threshold: later spans below that line
	 * would go at the next prune, so they are refused on arrival.
	 */
	bool refuse_kind[SPAN_KIND__COUNT];
	uint64_t refuse_shorter[SPAN_KIND__COUNT];
	/* Kept spans whose duration is refuse_shorter[kind] exactly, the
	 * shortest the kind keeps: when a prune cuts no more of the kind than
	 * these, its cut is known without reading the spans. */
	uint64_t at_bar[SPAN_KIND__COUNT];

	/* Device memory (capture_memory.c): the window's allocations and
	 * frees, at most max_spans of them, and per-allocator timelines. */
	struct capture_mem_event *mem_events;
	size_t nmem_events, mem_events_cap;
	uint64_t mem_dropped;
	struct mem_timeline *mem_timelines;
	size_t nmem_timelines, mem_timelines_cap;
};

static inline uint64_t span_dur(const struct capture_span *s)
{
	return s->end_ns - s->start_ns;
}

/* budget.c: drops spans down to the budget; with final, says what went. */
int capture_budget_apply(struct capture *c, bool final);
/* spans.c: sorts a track's spans (start asc, end desc), stable. */
int capture_sort_track(struct track_store *t);
/* After spans were removed from @t: gives back what its array holds far
 * beyond them (all of it once empty). */
void capture_track_shrink(struct track_store *t);
/* capture_memory.c: sorts the memory events by time (finalize); frees
 * what the memory model holds (capture__free). */
int capture_mem_finalize(struct capture *c);
/* The memory events after @stop_ns, or before @start_ns, go (capture__drop_
 * after/before, which count spans only); how many. */
uint64_t capture_mem_drop_after(struct capture *c, uint64_t stop_ns);
uint64_t capture_mem_drop_before(struct capture *c, uint64_t start_ns);
void capture_mem_free(struct capture *c);
/* capture.c: keeps a warning once; out of memory, counts it suppressed. */
void capture_add_warning(struct capture *c, const char *msg);

/* threads.c: the process or thread, created on first use; NULL (ENOMEM). */
struct capture_process *capture_get_process(struct capture *c, uint32_t pid);
struct capture_thread *capture_get_thread(struct capture *c, uint32_t pid,
					  uint32_t tid);

#endif /* ACCELTRACE_CAPTURE_INTERNAL_H */
