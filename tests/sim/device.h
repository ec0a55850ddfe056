/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The simulated device: N cores that run programs in submission order, each
 * op taking its duration in real time, infeed ops waiting for host data,
 * outfeed ops handing data to the host, all-reduce ops joining the cores.
 * Its clock is a devclock; it writes one devtrace buffer per core as it goes
 * and raises a per-core "interrupt" (the complete callback) when a core
 * finishes an execution, never before the execution's end time.
 *
 * It stands for hardware, so it runs on its own thread (named
 * "tpu_device_sim") inside the process that created it.
 */
#ifndef ACCELTRACE_SIM_DEVICE_H
#define ACCELTRACE_SIM_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "devclock.h"
#include "sim_program.h"

struct simdev;

/* One execution of a program on a set of cores. The submitter owns it; the
 * device fills the times and calls complete() once per core. */
struct simdev_exec {
	struct sim_program *prog;
	uint64_t correlation_id;	/* the launch id, see docs/devtrace.md */
	uint64_t launch_id;
	uint32_t core_mask;
	uint64_t t_submit;		/* set by simdev__submit() */
	uint64_t t_start[SIM_MAX_CORES];
	uint64_t t_end[SIM_MAX_CORES];
	int status;			/* 0, or -ECANCELED when cut short */
	struct simdev_exec *next;	/* device queue link */
};

typedef void (*simdev_complete_fn)(void *ctx, struct simdev_exec *e, int core);

/* What the device ran, reported whether or not trace buffers are written:
 * one op on one core at its end, one execution on one core at its end. */
enum simdev_tap_kind {
	SIMDEV_TAP_OP,
	SIMDEV_TAP_MODULE,
};

struct simdev_tap_event {
	enum simdev_tap_kind kind;
	int core;
	uint64_t launch_id;
	const char *module;
	const char *name;		/* the op's; the module's for a module */
	int category;			/* ops: enum devtrace_category */
	uint64_t t_start, t_end;	/* CLOCK_MONOTONIC ns; a cut's end is the cut */
	uint64_t flops, bytes;		/* ops */
	bool cancelled;
};

typedef void (*simdev_tap_fn)(void *ctx, const struct simdev_tap_event *ev);

struct simdev_opts {
	int cores;
	struct devclock clock;
	const char *trace_dir;		/* NULL: no trace buffers */
	uint64_t trace_records;		/* ring slots per core */
	uint32_t owner_pid;
	uint64_t sync_interval_ns;	/* clock-sync cadence; 0 means 10 ms */
	bool truth_ops;			/* write "op" ground-truth records */
	size_t feed_depth;		/* infeed/outfeed queue entries per core */
	simdev_complete_fn complete;	/* runs on the device thread */
	void *ctx;
	simdev_tap_fn tap;		/* NULL: none; runs on the device thread */
	void *tap_ctx;
};

/* Starts the device thread. NULL and errno on failure. */
struct simdev *simdev__new(const struct simdev_opts *opts);
/* Cancels what is queued or running (each gets complete() with status
 * -ECANCELED), wakes blocked feeders and stops the thread; accepts NULL. */
void simdev__free(struct simdev *d);
/* Cancels like simdev__free() but keeps the object; later calls fail. */
void simdev__shutdown(struct simdev *d);

/* Registers the program's names in every core's trace buffer. */
int simdev__load(struct simdev *d, struct sim_program *p);
/* Queues an execution; returns 0 or -ECANCELED after shutdown. */
int simdev__submit(struct simdev *d, struct simdev_exec *e);
/* Host -> device infeed queue of `core`: blocks while it is full.
 * Returns 0, -ECANCELED after shutdown, or -EINVAL. */
int simdev__infeed(struct simdev *d, int core, const void *data, size_t bytes);
/* Device -> host outfeed queue of `core`: blocks until the device produced
 * an entry, copies at most `cap` bytes and stores the entry's size. */
int simdev__outfeed(struct simdev *d, int core, void *data, size_t cap, size_t *len);

const struct devclock *simdev__clock(const struct simdev *d);
int simdev__cores(const struct simdev *d);

#endif /* ACCELTRACE_SIM_DEVICE_H */
