/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The state collect_devtrace.c keeps per devtrace buffer (a core's run),
 * per clock fit and for the whole reader, shared with
 * collect_devtrace_match.c, which joins the device's executions to their
 * host Execute at a window's finish.
 */
#ifndef ACCELTRACE_COLLECT_DEVTRACE_INTERNAL_H
#define ACCELTRACE_COLLECT_DEVTRACE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "acceltrace/devtrace.h"
#include "collect/collector.h"
#include "devtrace/devtrace_reader.h"

struct collector;
struct devtrace_clock;
struct devtrace_seen;
struct hashmap;

/* A span begun and not ended yet. */
struct dt_open {
	bool active;
	uint64_t ts;
	uint32_t name_id;
	uint8_t category;
	uint64_t corr, step;
};

/* Where a buffer was found: forgotten there when it is let go. */
struct dt_found {
	struct devtrace_seen *seen;	/* NULL: named by the user, kept */
	dev_t dev;
	ino_t ino;
	/* The host process it was found in, and that process's own pid in
	 * its PID namespace (0: not said). */
	uint32_t host_pid, ns_pid;
};

struct dt_core {
	struct dt_found found;	/* the buffer's, kept across its runs */
	bool known;
	/* A GPU's per-stream buffer (DEVTRACE_F_STREAMS): its programs and
	 * steps are the host runtime's to say, not this buffer's. */
	bool streams;
	uint32_t pid, ordinal, device_id;
	/* pid is a container's process: its threads are named by the
	 * container's ids in LAUNCH records. */
	bool ns_tids;
	uint64_t run_id;
	int clock;		/* index into collect_devtrace.clocks */
	char kind[32];
	char platform[8];	/* "GPU", "TPU", or "" */
	/* The capture's device index for this core, and which capture. */
	const struct capture *dev_cap;
	int dev_index;
	char module[DEVTRACE_NAME_MAX + 1];
	struct dt_open module_open, op_open, wait_open;
	/*
	 * The last span made per kind (module, op, wait): its end, in device
	 * ticks and host ns, and for a wait its start. A span's ends are
	 * converted when it ends, with the fit of that moment, so one tick
	 * converts to host times a nanosecond or so apart across a refit;
	 * spans that touch on the device must touch in the capture, not
	 * overlap (an overlap puts one on a line of its own), and a wait
	 * must stay inside its op.
	 */
	uint64_t prev_end_ts[3], prev_end_ns[3];
	uint64_t wait_start_ns;
	/* A record past the planned stop was carried: so are all after it,
	 * so that the next window sees this core's records in order. */
	bool carrying;
	uint64_t exited_ns;	/* when this run's owner exited (0: running) */
};

/* A record read past a planned stop, for the next window. */
struct dt_carried {
	int buf;
	struct devtrace_record r;
};

/* A host call that queued GPU work (a LAUNCH record), for the join. */
struct dt_launch {
	uint32_t pid, tid;
	bool ns_tid;		/* tid is its PID namespace's, not the host's */
	int buf;		/* the buffer (core) it came from */
	/* Device ticks as read; host ns once the window finishes, converted
	 * with the fit of that moment (the first pairs of a run fit worse). */
	uint64_t start, end;
	uint64_t corr;
	uint32_t api;		/* the call's name, interned in the capture */
	/* The innermost host span around it so far (pass 1 of the join). */
	uint64_t best_len, best_start;
	uint32_t best_track;
};

struct gpu_launches {
	struct dt_launch *v;
	size_t n, cap;
	uint64_t work;		/* kernels and copies drawn this window */
	uint64_t launches_dropped, said_dropped;
};

struct dt_clock {
	uint32_t device_id;
	uint64_t run_id;
	struct devtrace_clock *clock;
};

struct collect_devtrace {
	struct devtrace_reader *reader;
	struct dt_core *cores;
	size_t ncores, cores_cap;
	struct dt_clock *clocks;
	size_t nclocks, clocks_cap;
	double worst_bound_ns;
	uint64_t spans, unmatched_ends, no_clock;
	/* What earlier windows' captures already stated. */
	struct devtrace_buffer_stats said;
	uint64_t said_unmatched_ends;
	struct dt_carried *carried;
	size_t n_carried, cap_carried;
	uint64_t carried_dropped, said_carried_dropped;
	bool replaying;
	struct gpu_launches gpu;
	/* (buffer, name id) -> the name interned in the capture of
	 * generation names_gen: read and interned once, not per span. */
	struct hashmap *names;
	uint32_t names_gen;
	collector_ns_tids_fn ns_tids;
	void *ns_tids_ctx;
	struct collector *c;
};

/* Name @id of buffer @buf (MORE entries included) interned in the current
 * capture, cached; @fallback (may be NULL: 0) when it has none. */
uint32_t collect_devtrace_name(struct collect_devtrace *d, int buf, uint32_t id,
			       const char *fallback);
/* Device ticks of core @k as host CLOCK_MONOTONIC ns (0: no clock yet). */
uint64_t host_ns_of(struct collect_devtrace *d, const struct dt_core *k, uint64_t ts);

/* collect_gpu_streams.c: KERNEL, TRANSFER and LAUNCH records. */
void collect_gpu_stream_record(struct collect_devtrace *d, int buf, struct dt_core *k,
			       const struct devtrace_record *r);
/* At finish: host launches given their GPU work's correlation id. */
void collect_gpu_join_launches(struct collect_devtrace *d);
void collect_gpu_forget_before(struct collect_devtrace *d, uint64_t start_ns);
void collect_gpu_free(struct collect_devtrace *d);

/* At finish: each device execution joined to its host Execute, per core,
 * among the capture's spans; the unmatched warned of. */
void collect_devtrace_report_matching(struct collect_devtrace *d);
/* A converted time whose bound exceeds this is warned about. */
#define CLOCK_BOUND_WARN_NS 10000.0
/* collect_devtrace_losses.c: the window's losses, put-aside buffers and clock
 * fits, into its capture and the log; each said once a window. */
void collect_devtrace_note_losses(struct collector *c);

#endif /* ACCELTRACE_COLLECT_DEVTRACE_INTERNAL_H */
