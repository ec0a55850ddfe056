/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `acceltrace report`: what XProf's Overview Page and Input Pipeline
 * Analyzer say (reference/xprof-contract.md §5.2), computed from a generic
 * XSpace of any producer. What the capture cannot tell is not guessed: it
 * is listed in `missing`, and the figure is unknown (NaN).
 */
#ifndef ACCELTRACE_REPORT_H
#define ACCELTRACE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reader/xspace_reader.h"

#define REPORT_TOP_OPS 10
#define REPORT_MAX_NOTES 32

/* XProf's thresholds (kModeratelyInfeedBoundThresholdInPercent, kHighly...). */
#define REPORT_MODERATELY_INPUT_BOUND_PCT 5.0
#define REPORT_HIGHLY_INPUT_BOUND_PCT 20.0

/* One step on the reference device: from its start to the next step's. */
struct report_step {
	int64_t start_ps, time_ps;
	int64_t step_num;	/* the capture's step number (step_num), or -1 */
	int64_t input_ps;	/* the device waited for input */
	int64_t compute_ps;	/* the device computed */
	int64_t other_ps;	/* the rest: idle for other reasons */
};

struct report_op {
	const char *name, *category;	/* category "" when unknown */
	uint64_t count;
	int64_t self_ps;
	double flops;		/* per occurrence; < 0 when unknown */
	double self_time_pct, flops_per_s;	/* flops_per_s < 0 when unknown */
};

/* Host input work, as XProf's input-pipeline categories. */
enum report_input_kind {
	INPUT_READ_ON_DEMAND,	/* reading on the step loop's thread */
	INPUT_READ_AHEAD,	/* reading on other threads (prefetch) */
	INPUT_PREPROCESS,
	INPUT_ENQUEUE,		/* host to device transfers, infeed */
	INPUT_KINDS,
};

struct report_input_op {
	const char *thread, *name;
	int64_t thread_id;	/* the line's id: the thread id on a host plane */
	bool thread_name_repeats;	/* another thread has the same name */
	enum report_input_kind kind;
	uint64_t count;
	int64_t total_ps, self_ps;
};

/* Device memory: the largest live allocations at an allocator's peak. */
#define REPORT_MEM_LARGEST 8
/* A leak: growth with a fit this good (R^2) and this share of the peak. */
#define REPORT_MEM_LEAK_MIN_R2 0.8
#define REPORT_MEM_LEAK_MIN_SHARE 0.005
#define REPORT_MEM_LEAK_MIN_POINTS 4
/* A rate an hour from a timeline shorter than this would be an
 * extrapolation past what it saw (4 points in 5 s made MiB an hour). */
#define REPORT_MEM_RATE_MIN_SPAN_NS (600 * 1000000000ll)

struct report_mem_alloc {
	uint64_t addr;
	int64_t bytes;
	int64_t time_ps;	/* when it was made (the XSpace's time) */
	const char *api, *shapes, *data_type;	/* "" when unknown */
};

/* A least-squares line through in-use bytes, and whether it is a leak. */
struct report_mem_fit {
	size_t points;
	double slope;		/* bytes per step, or per hour; NaN: too few points */
	double r2;		/* NaN when the bytes never change */
	bool leak;
};

/* One allocator: one process's memory of one layer on one device. */
struct report_mem_device {
	char allocator_name[128], layer[64];
	int64_t pid, device_ordinal;	/* -1 when unknown */
	bool reserved_not_tensors;	/* the cuda_reserved layer */

	/* The window: -1 for what the capture cannot tell. */
	int64_t peak_bytes, peak_time_ps, peak_step;
	int64_t in_use_start_bytes, in_use_end_bytes;
	struct report_mem_fit growth;	/* in use at each step's end */
	struct report_mem_alloc largest[REPORT_MEM_LARGEST];
	size_t n_largest;
	int64_t peak_unattributed_bytes;	/* at the peak, made before the window */
	uint64_t allocs, frees, alloc_bytes, free_bytes, frees_unknown_size;
	/* Allocations the kernel's live table had no room for, and their
	 * bytes: in use (and growth) short by up to these from the first. */
	uint64_t untracked, untracked_bytes;
	/* Churn per step, over the steps the window's events fall in (NaN: no steps). */
	size_t churn_steps;
	double allocs_per_step, frees_per_step, alloc_bytes_per_step, free_bytes_per_step;

	/* The timeline since the process started (none: points 0). */
	size_t timeline_points;
	int64_t timeline_start_ps, timeline_end_ps;	/* XSpace times */
	int64_t timeline_first_bytes, timeline_last_bytes, timeline_peak_bytes;
	int64_t timeline_finest_ns, timeline_coarsest_ns;
	struct report_mem_fit timeline_growth;	/* bytes per hour */
	bool timeline_too_short;	/* under REPORT_MEM_RATE_MIN_SPAN_NS: no rate */
};

/* What was still running on a device when the window ended. */
#define REPORT_MAX_RUNNING 8
/* Stuck: still in one thing at the stop for a second or more, and for ten
 * steps' time or more (or with no step time to compare). */
#define REPORT_STUCK_MIN_PS 1000000000000ll
#define REPORT_STUCK_STEPS 10

struct report_running {
	const char *plane;	/* the device plane */
	const char *name;	/* its innermost open event: the op, else the module */
	const char *program;	/* the open module around it, "" when none */
	int64_t running_ps;	/* from its true start to the window's stop */
};

/* A thread's waits in the window (scheduler spans), when no step says
 * what the job did. */
#define REPORT_MAX_WAITING 6

struct report_thread_wait {
	const char *thread;
	int64_t thread_id;
	uint64_t waits;		/* off-CPU spans */
	int64_t off_cpu_ps;
	double off_cpu_pct;	/* of the window */
	const char *how;	/* "blocked" or "preempted": most of the time */
};

struct report {
	/* Whose: the process this report is of (report_build_process), or
	 * pid -1 for the whole capture; the capture's processes. */
	int64_t pid;
	const char *process_name;	/* "" when unknown */
	char container[72], pod[72];	/* "" when none or unknown */
	/* Processes with no device whose threads this report holds (its
	 * DataLoader workers): how many, the first few pids. */
	size_t n_children;
	int64_t children[8];
	size_t n_processes;		/* processes with a device in the capture */

	/* What the capture did not keep (report_complete.c): spans its budget
	 * dropped of the device's timeline and of the host's launches and
	 * input work, and records lost on the way. verdict_withheld: the
	 * figures would be those of what was left, not of the job; else a
	 * non-empty incomplete_why qualifies the verdict. */
	uint64_t dropped_device, dropped_input, lost_records;
	bool verdict_withheld;
	char incomplete_why[256];

	/* Why the capture was taken (a daemon's rule or trigger), "" unknown;
	 * controls replaced, as any file may hold anything. */
	char capture_reason[512];
	/* The process it was taken for (trigger --pid, a rule's), 0: none. */
	int64_t focus_pid;

	/* Run environment. */
	const char *host, *producer, *device_type;
	size_t n_device_planes;
	int64_t span_ps;	/* first event's start to last event's end */
	int64_t span_start_ps;	/* the first event's start */
	int64_t window_ps;	/* the window the producer recorded, or -1 */

	/* Steps. */
	const char *step_source;	/* how steps were found */
	char step_program[256];	/* the program whose executions are steps, or "" */
	const char *step_device;	/* the plane steps are measured on */
	size_t n_steps;			/* steps found */
	struct report_step *steps;	/* complete steps (a next step follows) */
	size_t n_complete;
	double avg_ms, stddev_ms, min_ms, max_ms;

	/* Overview. NaN when unknown. */
	double input_bound_pct, device_idle_pct, host_idle_pct;
	double compute_pct, other_pct;
	int64_t input_device_ops_ps;	/* infeed/outfeed ops, H2D copies on the device */
	int64_t input_idle_ps;		/* the device idle while input arrived */
	struct report_op top_ops[REPORT_TOP_OPS];
	size_t n_top_ops;
	const char *recommendation;	/* static text, filled by report_recommend */
	char recommendation_buf[512];

	/* Input pipeline. */
	int64_t input_kind_ps[INPUT_KINDS];
	struct report_input_op *input_ops;
	size_t n_input_ops;
	const char *loop_thread;	/* the thread that launches the steps, or "" */
	int64_t loop_thread_id;
	bool loop_thread_name_repeats;

	/* Device memory, per allocator; none when the capture has no memory. */
	struct report_mem_device *mem;
	size_t n_mem;

	/* Still running at the stop, longest first; stuck: the first says
	 * the device is stuck in it (it leads the text and the advice). */
	struct report_running running[REPORT_MAX_RUNNING];
	size_t n_running;
	bool stuck;

	/* With no step time (or a stuck device): the threads that waited
	 * longest, off CPU, longest first (empty without scheduler spans). */
	struct report_thread_wait waiting[REPORT_MAX_WAITING];
	size_t n_waiting;

	/* What the capture lost, and what it cannot tell. */
	char *losses[REPORT_MAX_NOTES];
	size_t n_losses;
	char *missing[REPORT_MAX_NOTES];
	size_t n_missing;
};

/* Fills r from xs (which must outlive r). 0, or -ENOMEM. */
int report_build(const struct xs_space *xs, struct report *r);
/*
 * The report of one process of @xs (reader/xspace_processes.h): its
 * devices, its threads and its device memory only. 0, -ENOMEM, or -ESRCH
 * when @xs holds no such process.
 */
int report_build_process(const struct xs_space *xs, int64_t pid, struct report *r);
void report_free(struct report *r);
/* The process the capture was taken for (the Task Environment's
 * acceltrace.focus_pid: a daemon's trigger --pid, a rule's process), or 0;
 * a file of several processes reports it first. */
int64_t report_focus_pid(const struct xs_space *xs);

/* How the text is laid out. */
struct report_text_opts {
	size_t max_steps;	/* step rows shown; SIZE_MAX for every one */
	size_t width;		/* columns a line may take; 0: names in full */
	/* Device memory in full (largest at the peak, churn, timelines);
	 * else two lines an allocator. */
	bool memory_detail;
};
#define REPORT_DEFAULT_STEP_ROWS 20

/*
 * Renderers: the terminal text (with charts) and the JSON object (every
 * step in steps.list, names in full).
 */
void report_print_text(const struct report *r, const char *file,
		       const struct report_text_opts *o, FILE *out);
struct json_writer;
/* host: the host XProf names by the file (<host>.xplane.pb). */
void report_print_json(const struct report *r, const char *file, const char *host,
		       struct json_writer *jw);
const char *report_input_kind_name(enum report_input_kind k);

/*
 * @name made to fit @width columns (UTF-8 characters) for a table: as it
 * is when it fits; else C++ argument lists become "(...)", then template
 * arguments become "<...>" from the innermost out, and what still does not
 * fit is cut at a word boundary (_ : < , space ...) and ends with "...".
 * Never cut inside a character. Returns @name itself or @buf.
 */
const char *report_fit_name(const char *name, size_t width, char *buf, size_t size);
/*
 * The same for a thread's label, whose end tells threads of one name apart
 * ("pjrt_async_work_runner/1391642173629522130", "python3 (pid 9, tid 12)"):
 * its first third and its end around a "...".
 */
const char *report_fit_ends(const char *name, size_t width, char *buf, size_t size);
/* The columns (UTF-8 characters) @s takes. */
size_t report_text_cols(const char *s);

#endif /* ACCELTRACE_REPORT_H */
