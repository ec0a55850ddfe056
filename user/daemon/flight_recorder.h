/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The flight recorder: the recorder (session/recorder.h) watching the whole
 * host with its window kept open, whose start is moved forward as time
 * passes so that it holds the last N seconds (and at most the span budget:
 * past it the least useful kinds go first, and the capture says so). A
 * capture takes [from, stop] of it: closed at stop, written in XProf's
 * layout, and a fresh window opened at once.
 *
 * After a capture the recorder holds only what came since: its memory is
 * the capture just written.
 */
#ifndef ACCELTRACE_FLIGHT_RECORDER_H
#define ACCELTRACE_FLIGHT_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "acceltrace/events.h"

struct cgroup_scope;
struct collector_observer;
struct devmem_book;
struct devmem_tier;
struct flight_recorder;
struct xspace_written;

struct flight_recorder_opts {
	size_t sz;
	uint64_t keep_ns;		/* the last N seconds */
	uint64_t max_events;		/* span budget */
	uint64_t grace_ns;		/* after a capture's stop */
	const struct collector_observer *observer;
	/* --cgroup: only processes inside this cgroup's subtree (NULL: all). */
	const struct cgroup_scope *scope;
	/* The device-memory timelines' tiers (NULL: the defaults); they are
	 * sampled once a second and every capture carries its processes'. */
	const struct devmem_tier *mem_tiers;
	size_t n_mem_tiers;
};
#define flight_recorder_opts__last_field n_mem_tiers

/* Attaches the probes (whole host, or one cgroup) and opens the window: NULL and errno,
 * the reason logged. */
struct flight_recorder *flight_recorder__start(const struct flight_recorder_opts *opts);
/* One tick of the recorder; moves the start forward now and then. */
int flight_recorder__poll(struct flight_recorder *fr);
void flight_recorder__set_keep(struct flight_recorder *fr, uint64_t keep_ns);
/* A capture of [from_ns, stop_ns] is pending: the start does not move past
 * @from_ns, and what is read past @stop_ns is kept for the next window,
 * which opens there (0, 0: none pending any more); capture ends the hold. */
void flight_recorder__hold(struct flight_recorder *fr, uint64_t from_ns, uint64_t stop_ns);
/* Where a capture goes. */
struct flight_recorder_dest {
	/* <logdir>/plugins/profile/<session>/<host>.xplane.pb, host the
	 * machine's: when root_fd is -1 */
	const char *logdir;
	/* else <root>/<session>/<host>.xplane.pb in the directory root_fd,
	 * opened by the caller (a ProfilerService repository_root); host
	 * NULL: the machine's */
	int root_fd;
	const char *root;
	const char *host;
	/* Why it is taken, written into the capture (NULL: not said). */
	const char *reason;
	/* The process it is about (trigger --pid), said in it; 0: none. */
	uint32_t focus_pid;
};

/*
 * Writes [from_ns, stop_ns] (CLOCK_MONOTONIC; from_ns no earlier than the
 * recorder reaches) where @dest says, never over another capture, the path
 * and span count into @out. Waits up to the grace for spans open at stop.
 * Then a new window opens. 0 or -errno (the reason logged).
 */
int flight_recorder__capture(struct flight_recorder *fr, uint64_t from_ns, uint64_t stop_ns,
			     const struct flight_recorder_dest *dest, const char *session,
			     struct xspace_written *out);
/* Detail on or off (recorder__set_detail): probes changed, or -errno. */
int flight_recorder__set_detail(struct flight_recorder *fr, bool on);
/* A traced process's in-kernel aggregates (enum agg_counter): 0 or -errno
 * (-ENOENT: none yet, or it is gone). */
int flight_recorder__aggregates(const struct flight_recorder *fr, uint32_t pid,
				uint64_t out[AGG_MAX]);
/* PJRT API tables refused so far (runtime_attach__refusals). */
uint64_t flight_recorder__pjrt_refusals(const struct flight_recorder *fr);
/* Whether it traces @pid's device work (recorder__traces). */
bool flight_recorder__traces(const struct flight_recorder *fr, pid_t pid);
/* Every watched process's device-memory timelines. */
const struct devmem_book *flight_recorder__mem_book(const struct flight_recorder *fr);
/* Where its window begins now (CLOCK_MONOTONIC), and spans it holds. */
uint64_t flight_recorder__start_ns(const struct flight_recorder *fr);
uint64_t flight_recorder__spans(const struct flight_recorder *fr);
/* Records the ring buffers turned away so far (their losses when full). */
uint64_t flight_recorder__ring_lost(const struct flight_recorder *fr);
/* The probe session's losses so far, by name: fills up to @max. */
size_t flight_recorder__losses(const struct flight_recorder *fr, const char **names,
			       uint64_t *values, size_t max);
/* Detaches every probe and frees. */
void flight_recorder__free(struct flight_recorder *fr);

#endif /* ACCELTRACE_FLIGHT_RECORDER_H */
