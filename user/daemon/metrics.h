/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's metrics: per process and device core, kept from the spans
 * the collector keeps (its observer) and rendered in Prometheus' text
 * exposition format (docs/metrics.md lists every metric). Nothing of a
 * trace's contents is exported: numbers, the process's pid and command,
 * its container and pod, the device core.
 *
 * A step is one execution of the process's dominant program (the one it
 * runs most) on its first device core, as XProf counts steps; step time is
 * the time between the starts of consecutive steps. A device core's idle
 * time is the time between one execution's end and the next one's start,
 * when the next was enqueued only after the core ran dry: the core waited
 * for the host (for an input-bound trainer, for its input).
 */
#ifndef ACCELTRACE_METRICS_H
#define ACCELTRACE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/types.h>

#include "acceltrace/events.h"

struct capture;
struct capture_span;
struct devmem_book;
struct metrics;

/* The gauges' ratios are over this many recent seconds. */
#define METRICS_RATIO_SECONDS 10

struct metrics_opts {
	size_t sz;
	/* Each step seen: the rules' input. NULL: none. */
	void (*on_step)(void *ctx, uint32_t pid, uint64_t step_ns, uint64_t at_ns);
	void *ctx;
	/* Read labels (command, cgroup) from /proc; off in unit tests. */
	bool no_proc_labels;
};
#define metrics_opts__last_field no_proc_labels

/* Numbers the daemon owns, rendered beside the per-process ones. */
struct metrics_counter {
	const char *label;	/* the label value (a loss's reason, ...) */
	uint64_t value;
};

struct metrics_globals {
	const struct metrics_counter *losses;	/* acceltrace_lost_events_total */
	size_t n_losses;
	uint64_t captures_written;
	uint64_t captures_failed;
	uint64_t captures_over_quota;	/* acceltrace_captures_total{result="over_quota"} */
	uint64_t flight_recorder_spans;
	double flight_recorder_seconds;
	bool detail_active;		/* acceltrace_detail_active */
	double detail_seconds;		/* acceltrace_detail_seconds_total */
	bool cpu_idle;			/* acceltrace_daemon_cpu_idle */
	uint64_t cpu_starved;		/* acceltrace_daemon_cpu_starved_total */
	uint64_t pjrt_tables_refused;	/* acceltrace_pjrt_tables_refused_total */
	/* The device-memory timelines: how many, and their bytes. */
	uint64_t memory_timelines;
	uint64_t memory_timeline_bytes;
};

/* What the stall rule needs of one process. */
struct metrics_activity {
	uint32_t pid;
	uint64_t first_seen_ns;
	uint64_t last_enqueue_ns;	/* end of the latest Execute call */
	uint64_t last_completion_ns;	/* end of the latest device execution */
	/* Since when a completion would have been seen: its first sight when
	 * its device is traced, else when detail last came on; 0: it would
	 * not be now (sampled mode between slices). */
	uint64_t completions_watched_ns;
};

struct metrics *metrics__new(const struct metrics_opts *opts);
void metrics__free(struct metrics *m);

/* The collector's observer callbacks (collect/collector.h). */
void metrics__span(void *m, const struct capture *cap, const struct capture_span *s);
/* The process exited: it is no longer reported. */
void metrics__process_exit(struct metrics *m, uint32_t pid);
/* Forgets processes no longer alive whose exit went unseen; @now_ns is
 * CLOCK_MONOTONIC. Returns how many went. */
size_t metrics__prune(struct metrics *m, uint64_t now_ns);

/*
 * Detail (the completion probes) turned on or off at @now_ns. A process
 * whose device work is estimated from those probes starts its steps and
 * its cores' idle time afresh at each change: a gap between two sampled
 * slices is neither one long step nor input wait.
 */
void metrics__detail(struct metrics *m, bool on, uint64_t now_ns);
/* The kernel's aggregates of a process (enum agg_counter), as just read. */
void metrics__set_aggregates(struct metrics *m, uint32_t pid, const uint64_t v[AGG_MAX]);
/* Its reads as the kernel accounts them (procfs_io_reads), as just read. */
void metrics__set_reads(struct metrics *m, uint32_t pid, uint64_t calls, uint64_t bytes);

/*
 * Device memory from the daemon's timelines (devmem/devmem_book.h): each
 * reported process's allocators' bytes in use and peak, as last sampled;
 * replaces what was set before. Processes the metrics do not report, and
 * exited ones, are left out; past METRICS_MAX_MEM allocators a process's
 * others are too (the labels' cardinality stays bounded).
 */
#define METRICS_MAX_MEM 16
void metrics__set_device_memory(struct metrics *m, const struct devmem_book *b);

size_t metrics__num_processes(const struct metrics *m);
/* The i-th process's activity; false past the end. */
bool metrics__activity(const struct metrics *m, size_t i, struct metrics_activity *a);

/* The whole exposition, at @now_ns; -errno when @out failed. */
int metrics__render(const struct metrics *m, const struct metrics_globals *g,
		    uint64_t now_ns, FILE *out);

/* Tests: step count, step time sum, and ratios of one process. */
bool metrics__process_steps(const struct metrics *m, uint32_t pid, uint64_t *count,
			    uint64_t *sum_ns);
/* A process's totals since first seen, for a summary over an interval
 * (the ProfilerService's Monitor: two of these, subtracted). */
#define METRICS_MONITOR_CORES 16
struct metrics_monitor {
	uint32_t pid;
	char command[64];
	uint64_t steps, step_sum_ns;
	size_t n_cores;
	struct {
		unsigned int core;
		uint64_t busy_ns, idle_ns, executions;
	} core[METRICS_MONITOR_CORES];	/* the first used ones */
};
/* The i-th process's totals; false past the last. */
bool metrics__monitor(const struct metrics *m, size_t i, struct metrics_monitor *out);
double metrics__input_wait_ratio(const struct metrics *m, uint32_t pid, uint64_t now_ns);

#endif /* ACCELTRACE_METRICS_H */
