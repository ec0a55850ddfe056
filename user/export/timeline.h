/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One timeline for every exported format: an XSpace (reader/) as tracks
 * (a thread per host line, a device per device plane with a child track
 * per line) and slices with absolute times, clipped spans at their true
 * times, flows from each launch to the device work it started (same
 * correlation id), and a counter per device memory allocator under its
 * process (its allocation and free events are not slices: XProf hides
 * them too). The Perfetto and Chrome JSON writers both walk this, so
 * they hold the same spans at the same times.
 */
#ifndef ACCELTRACE_TIMELINE_H
#define ACCELTRACE_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/xspace_reader.h"

/* The clock slice times are on (Perfetto's BuiltinClock ids). */
enum timeline_clock {
	TIMELINE_CLOCK_REALTIME = 1,
	TIMELINE_CLOCK_MONOTONIC = 3,
};

enum timeline_track_kind {
	TRACK_PROCESS,		/* a host process (no slices of its own) */
	TRACK_THREAD,		/* a host thread's first line */
	TRACK_ROW,		/* a further line of a thread (overlapping spans) */
	TRACK_DEVICE,		/* a device plane (no slices of its own) */
	TRACK_DEVICE_LINE,	/* a line of a device plane */
	TRACK_COUNTER,		/* device memory in use, under its process */
};

struct timeline_track {
	enum timeline_track_kind kind;
	uint64_t uuid, parent_uuid;	/* parent 0: none */
	const char *name;	/* a process: its main thread's name, or "" */
	int64_t pid, tid;	/* host tracks; tid is the line's thread */
	uint32_t json_pid, json_tid;	/* small ids for Chrome JSON */
	const struct xs_line *line;	/* NULL for process and device tracks */
	uint32_t host;		/* the host's index (0 for one host) */
};

struct timeline_slice {
	uint32_t track;		/* index into tracks */
	const struct xs_event *ev;
	uint64_t start_ns, end_ns;	/* absolute, true times when clipped */
	uint64_t *flows_out;	/* flow ids started here (a launch) */
	uint32_t n_flows_out;
	uint64_t flow_in;	/* flow id ended here, 0 if none */
};

/*
 * An allocator's bytes in use (docs/capture-format.md, "Device memory"):
 * its timeline since the process started, then every allocation and free
 * in the window; absolute times, non-decreasing.
 */
struct timeline_counter {
	uint32_t track;		/* index into tracks */
	uint64_t *ts_ns;
	int64_t *bytes;
	size_t n;
};

struct timeline {
	enum timeline_clock clock;
	bool clock_known;	/* false: times are the XSpace's, from 0 */
	uint64_t realtime_at_zero;	/* REALTIME ns at the XSpace's time 0, if known */
	uint64_t clock_at_zero;	/* the clock's ns at the XSpace's time 0 */
	struct timeline_track *tracks;
	size_t n_tracks;
	struct timeline_slice *slices;	/* by track, then (start asc, end desc) */
	size_t n_slices;
	size_t n_flows;
	uint64_t *flow_store;
	struct timeline_counter *counters;	/* by track */
	size_t n_counters;
	/* Several hosts: each one's clock reading at its XSpace's time 0. */
	size_t n_hosts;
	uint64_t *host_zero;	/* NULL for one host: clock_at_zero */
	bool *host_known;
	char **names;		/* names made here (host-prefixed), freed with t */
	size_t n_names, names_cap;
};

/* 0, or -ENOMEM. */
int timeline_build(const struct xs_space *xs, struct timeline *t);
/*
 * Several hosts' captures (one session) in one timeline: every track of
 * host i named after hosts[i] ("h1: python3", "h1 /device:TPU:0"), pids
 * and tids that another host already uses remapped to unused ones, flows
 * only within a host, and slices on CLOCK_REALTIME from each capture's
 * wall-clock start (profile_start_time); a capture without one starts at
 * the earliest known start (or 0), unaligned. 0, or -ENOMEM.
 */
int timeline_build_hosts(const struct xs_space *const *xs, const char *const *hosts,
			 size_t n, struct timeline *t);
void timeline_free(struct timeline *t);

/* The counter's points for allocator a, times from zero_ns (timeline_memory.c). */
struct xs_mem_allocator;
int timeline_counter_points(const struct xs_mem_allocator *a, uint64_t zero_ns,
			    struct timeline_counter *c);

#endif /* ACCELTRACE_TIMELINE_H */
