/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The metrics' insides, shared by metrics.c (keeping them) and
 * metrics_render.c (the text exposition) only.
 */
#ifndef ACCELTRACE_METRICS_INTERNAL_H
#define ACCELTRACE_METRICS_INTERNAL_H

#include "capture/capture.h"
#include "daemon/metrics.h"
#include "devmem/devmem_names.h"
#include "lib/hashmap.h"

#define METRICS_MAX_CORES 64
#define METRICS_MAX_PROGRAMS 8
/* Upper bounds of acceltrace_step_seconds' buckets, in seconds (+Inf last). */
#define METRICS_STEP_BUCKETS 16
extern const double metrics_step_bounds[METRICS_STEP_BUCKETS];

/* One second of a core's recent history, for the ratio gauges. */
struct ratio_slot {
	uint64_t second;	/* CLOCK_MONOTONIC seconds; 0: unused */
	uint64_t busy_ns;
	uint64_t idle_ns;
};

struct core_metrics {
	bool used;
	uint64_t busy_ns;	/* totals since first seen */
	uint64_t idle_ns;
	uint64_t executions;
	uint64_t last_end;	/* the previous execution's end; 0: none yet */
	struct ratio_slot slots[METRICS_RATIO_SECONDS];
};

struct program_runs {
	uint64_t hash;		/* of the program's name */
	uint64_t runs;
};

struct proc_metrics {
	uint32_t pid;
	char command[64];
	char container[80];
	char pod[80];
	uint64_t first_seen_ns;
	uint64_t executions;	/* Execute calls (enqueues) */
	uint64_t last_enqueue_ns;
	uint64_t last_completion_ns;
	/* Steps. */
	struct program_runs programs[METRICS_MAX_PROGRAMS];
	uint64_t dominant;	/* hash of the dominant program; 0: none yet */
	uint32_t step_core;	/* the lowest core seen */
	bool has_step_core;
	uint64_t last_step_start;
	uint64_t step_buckets[METRICS_STEP_BUCKETS];
	uint64_t step_count;
	uint64_t step_sum_ns;
	/*
	 * Its device work comes from the device's own trace buffers (seen
	 * always), not estimated from completion probes (seen only while
	 * detail is on): in sampled mode only these have continuous steps.
	 */
	bool device_traced;
	struct core_metrics cores[METRICS_MAX_CORES];
	/* The kernel's aggregates (enum agg_counter), as last read. */
	bool has_aggregates;
	uint64_t aggregates[AGG_MAX];
	/* Its reads as the kernel accounts them (/proc/PID/io), as last read. */
	bool has_reads;
	uint64_t read_calls, read_bytes;
	/* Device memory per allocator (metrics__set_device_memory). */
	struct mem_series {
		uint32_t device;
		char allocator[DEVMEM_ALLOCATOR_NAME_MAX];	/* "GPU_0_cuda_reserved" */
		uint64_t in_use, peak, untracked_bytes;
	} mem[METRICS_MAX_MEM];
	uint32_t n_mem;
};

struct metrics {
	struct metrics_opts o;
	struct proc_metrics **procs;	/* in order of first activity */
	size_t n, cap;
	/* Each span finds its process: by pid in a hash map, the one found
	 * last first (spans come in runs). */
	struct hashmap *by_pid;		/* (pid, 0) -> proc_metrics */
	struct proc_metrics *last_hit;
	uint64_t events[SPAN_KIND__COUNT];	/* spans seen, by kind */
	uint64_t processes_exited;
	uint64_t last_prune_ns;
	/* Completion probes on since (CLOCK_MONOTONIC); 0: off. */
	uint64_t detail_since_ns;
};

/* Ratios of one core over the recent seconds before @now_ns; false when
 * it did nothing then. */
bool metrics_core_ratio(const struct core_metrics *cm, uint64_t now_ns,
			uint64_t *busy_ns, uint64_t *idle_ns);

#endif /* ACCELTRACE_METRICS_INTERNAL_H */
