/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recorder: one tracing run, driven by `acceltrace record` (and the
 * daemon). It owns the probes, the collector and the targets, and takes
 * windows: each armed at the targets' first device activity, opened (after
 * --delay), closed by --duration, --steps, an interruption or the targets'
 * exit, given --grace, drained and finalized into a capture of its own.
 *
 * Lifecycle: recorder__new() -> recorder__attach() -> windows, either
 * recorder__run() or, one at a time, [recorder__next_window()] ->
 * recorder__arm() -> recorder__run_window() -> read recorder__capture() ->
 * recorder__detach() -> [recorder__wait_command()] -> recorder__free();
 * or, kept open (the daemon), recorder__open() -> recorder__poll() and
 * recorder__forget_before() -> recorder__close() -> recorder__renew() ->
 * recorder__open() ...
 *
 * It installs no signal handlers and prints no summaries: the caller counts
 * interruptions (opts.interrupts) and writes and reports each capture. It
 * logs why a window failed.
 */
#ifndef ACCELTRACE_RECORDER_H
#define ACCELTRACE_RECORDER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct capture;
struct cgroup_scope;
struct collector;
struct collector_observer;
struct devmem_book;
struct devmem_tier;
struct probe_session;
struct recorder;
struct runtime_attach;
struct recorder_progress;

/*
 * Told where a run stands (record's progress line): at every phase change
 * and once per loop tick (every few ms) within a phase, so the callee
 * limits its own rate. It may read the recorder; it must not drive it.
 */
typedef void (*recorder_progress_fn)(void *ctx, const struct recorder_progress *p);

/* The window keeps a start time per step: --steps is at most this. */
#define RECORDER_MAX_STEPS 10000000ull

/*
 * Arrays and strings are borrowed: they must outlive the recorder. Zero
 * means the default throughout.
 */
struct recorder_opts {
	size_t sz;			/* sizeof(struct recorder_opts), for growth */
	/* Targets: exactly one of pids, whole_host, command. */
	const pid_t *pids;		/* --pid, repeatable */
	size_t n_pids;
	bool children;			/* --children */
	bool whole_host;		/* -a */
	char *const *command;		/* -- CMD ARGS (NULL-terminated) */
	/* Probes. */
	const char *const *libraries;	/* --library: probed from the start */
	size_t n_libraries;
	bool sched;			/* --sched: off-CPU spans */
	uint64_t ring_bytes;		/* per ring-buffer shard (0: 8 MiB) */
	/* Windows. */
	uint64_t duration_ns;		/* 0: until steps, interruption or exit */
	uint64_t steps;			/* --steps N: N whole device steps */
	uint64_t delay_ns;		/* open this long after the arming activity */
	uint64_t grace_ns;		/* after the stop, wait for open spans */
	/* 0: 30 s, and then --duration, when shorter, bounds the wait of a
	 * --pid target that maps no runtime (recorder__arm). */
	uint64_t arm_timeout_ns;
	/*
	 * --from-start: arm at the first device activity of any kind
	 * (transfers of start-up included), not at the first execution of a
	 * compiled program.
	 */
	bool from_start;
	/* --now: open as soon as the probes are in place (2 s at most),
	 * whatever the targets are doing. */
	bool now;
	uint64_t windows;		/* 0: 1 */
	uint64_t interval_ns;		/* between windows */
	/* Captures. */
	uint64_t max_spans;		/* the event budget (0: the capture's) */
	const char *session;		/* NULL: local time; "_wN" with windows > 1 */
	/*
	 * Interruptions so far (the caller's signal handler counts them);
	 * NULL: never. A first ends the window and the capture is finished;
	 * a second, before the capture is finalized, aborts it.
	 */
	const volatile sig_atomic_t *interrupts;
	/*
	 * Device trace buffers (docs/devtrace.md) named by --devtrace, read
	 * besides those found mapped or open in the targets.
	 */
	const char *const *devtrace_paths;
	size_t n_devtrace_paths;
	/* Told of every span kept and every process exit (the daemon). */
	const struct collector_observer *observer;
	/*
	 * Device detail from the in-process agents (docs/agent.md) from the
	 * attach to the last window's close (record); otherwise only while
	 * recorder__set_detail has detail on (the daemon's slices).
	 */
	bool device_detail;
	/* --no-agent: agents neither looked for nor asked, nor missed. */
	bool no_agents;
	/* Told where the run stands (NULL: nobody); not for kept-open windows. */
	recorder_progress_fn progress;
	void *progress_ctx;
	/* With whole_host: only processes inside this cgroup's subtree, in
	 * the kernel and in /proc scans (the daemon's --cgroup; NULL: all). */
	const struct cgroup_scope *scope;
	/* The process's CPU priority while a window runs (recorder__run_window;
	 * session/cpu_priority.h); 0: left as it is (the daemon sets its own
	 * in its loop). */
	enum recorder_cpu {
		RECORDER_CPU_AS_IS = 0,
		RECORDER_CPU_IDLE,	/* SCHED_IDLE while it keeps up (record's default) */
		RECORDER_CPU_NORMAL,
	} cpu_priority;
	/* Device memory (devmem/devmem_book.h): the kernel's per-process
	 * aggregates sampled this often into each allocator's timeline from
	 * the attach on (0: 100 ms), with these tiers (NULL: the timeline's
	 * defaults); every capture carries its processes' timelines. */
	uint64_t mem_sample_ns;
	const struct devmem_tier *mem_tiers;
	size_t n_mem_tiers;
};
#define recorder_opts__last_field n_mem_tiers

enum recorder_phase {
	RECORDER_ATTACHING,	/* probes loading and being placed */
	RECORDER_ARMING,	/* placed: waiting for the first execution */
	RECORDER_DELAY,		/* armed: --delay before the window opens */
	RECORDER_OPEN,		/* the window is open */
	RECORDER_CLOSING,	/* stopped: grace, drain, finish */
	RECORDER_BETWEEN,	/* --interval before the next window */
};

/* What recorder_progress_fn is told. Times are CLOCK_MONOTONIC ns. */
struct recorder_progress {
	enum recorder_phase phase;
	bool changed;			/* the first call of this phase */
	uint64_t now_ns;
	uint64_t phase_ns;		/* when this phase began */
	/* ARMING: when it gives up; OPEN: when the window ends (0: at
	 * --steps, Ctrl-C or the targets' exit); DELAY: when it opens. */
	uint64_t deadline_ns;
	/* ARMING: --duration bounds the wait while no target maps a runtime. */
	bool bounded_by_duration;
	uint64_t window_start_ns;	/* DELAY, OPEN, CLOSING */
	uint64_t arm_wait_ns;		/* OPEN: how long arming waited */
	uint32_t window, windows;	/* from 1 */
	uint64_t steps;			/* --steps N, or 0 */
	/* The targets and what was placed in them (all 0 while ATTACHING). */
	size_t processes, libraries, probes, devtrace_buffers;
	pid_t first_pid;		/* a target's pid, for naming it */
	/* ARMING: no target maps a runtime library or holds a device node. */
	bool no_runtime;
	uint64_t spans;			/* kept in the window's capture so far */
	uint64_t lost;			/* records lost in the kernel since attach */
};

/* What the loop did so far, for tests and diagnostics. */
struct recorder_stats {
	uint64_t drains;	/* ticks that read the rings and devtrace buffers */
	uint64_t rescans;	/* targets rescanned (/proc), quick or full */
	uint64_t full_rescans;	/* of which full: agents and devtrace looked for */
};

/* Checks and copies @opts, starts nothing. NULL and errno on failure. */
struct recorder *recorder__new(const struct recorder_opts *opts);
/*
 * Checks the kernel's features, loads and attaches the probes, the
 * collector and the targets (a command is launched here). Says why when it
 * fails; the recorder is then only good for detach, wait and free.
 */
int recorder__attach(struct recorder *r);
/*
 * Every window the options ask for, each handed to @on_window once
 * finalized (the i-th, from 1); an error from it ends the run. Stops early,
 * and successfully, when interrupted or the targets exited between windows.
 */
typedef int (*recorder_window_fn)(void *ctx, struct recorder *r, uint32_t window);
int recorder__run(struct recorder *r, recorder_window_fn on_window, void *ctx);

/*
 * One window at a time. next_window: a fresh capture for a window after
 * the first, once --interval has passed; -EINTR when interrupted, -ESRCH
 * when the targets exited meanwhile. arm: waits for the first device
 * activity (-ETIMEDOUT, -ESRCH, -EINTR: said why); a --pid target that
 * maps no accelerator runtime and holds no device node is said at once,
 * and the wait for one to be loaded is then bounded by --duration when
 * that is shorter than the default arm timeout (unless the caller set
 * one, or a library is named to be loaded: --library, TPU_LIBRARY_PATH).
 * run_window: opens,
 * closes, drains and finalizes the window's capture; -EINTR when aborted.
 */
int recorder__next_window(struct recorder *r);
int recorder__arm(struct recorder *r);
int recorder__run_window(struct recorder *r);
/* True once interrupted or the targets exited: no window to take after this. */
bool recorder__done(const struct recorder *r);

/*
 * A window kept open for ever (the daemon): opened at once without arming,
 * its start moved forward as time passes, closed on demand, then a fresh
 * capture opened again. poll: one tick (the ring buffers read for a few
 * ms, the targets rescanned now and then). open: the current capture's
 * window opens at @start_ns. forget_before: it now begins at @start_ns,
 * what ended earlier is dropped (returns how many spans). close: ends it
 * at @stop_ns (spans ending within --grace keep their true end), drains,
 * finishes and finalizes the capture. renew: a fresh capture named
 * @session (NULL: local time) replaces the finalized one; open it again.
 * plan_stop: the window will close at @stop_ns and the next open there, so
 * what is read past it before the close waits for that next window
 * (collector__plan_stop). A close only drains: the rings and devtrace
 * buffers are read through its grace, the targets are not rescanned and
 * nothing is attached (the next poll does that).
 */
int recorder__poll(struct recorder *r);
int recorder__open(struct recorder *r, uint64_t start_ns);
uint64_t recorder__forget_before(struct recorder *r, uint64_t start_ns);
int recorder__close(struct recorder *r, uint64_t stop_ns);
void recorder__plan_stop(struct recorder *r, uint64_t stop_ns);
int recorder__renew(struct recorder *r, const char *session);

void recorder__stats(const struct recorder *r, struct recorder_stats *st);

/* The current window's capture, finalized once run_window returned 0. */
struct capture *recorder__capture(const struct recorder *r);
/* Whether @pid is a target that maps an accelerator runtime or holds a
 * device node (what a trigger about one process asks of the daemon). */
bool recorder__traces(const struct recorder *r, pid_t pid);
/* The current window, from 1. */
uint32_t recorder__window(const struct recorder *r);
/* When the probes were in place (CLOCK_MONOTONIC ns). */
uint64_t recorder__probes_attached_ns(const struct recorder *r);
/* How long the last arming waited for the activity that armed it. */
uint64_t recorder__arm_wait_ns(const struct recorder *r);
/* What was attached and what it saw, for summaries; NULL after detach. */
const struct collector *recorder__collector(const struct recorder *r);
/*
 * Detail on or off (the daemon's sampled mode; probe_session__set_detail
 * and runtime_attach__set_detail say what each means). Turning it off
 * consumes what the rings hold and tells the collector that pending
 * completions will not come. Returns how many probes were attached or
 * detached, or -errno.
 */
int recorder__set_detail(struct recorder *r, bool on);
struct probe_session *recorder__probe_session(const struct recorder *r);
/* The device-memory timelines (NULL before the attach). */
const struct devmem_book *recorder__mem_book(const struct recorder *r);
struct runtime_attach *recorder__runtime_attach(const struct recorder *r);

/* Detaches every probe: nothing of acceltrace stays in the kernel. The
 * capture and the targets stay. */
void recorder__detach(struct recorder *r);
/* With a command: waits for it to exit (its wait status through *status);
 * -ENOENT when none was launched. */
int recorder__wait_command(struct recorder *r, int *status);
void recorder__free(struct recorder *r);

#endif /* ACCELTRACE_RECORDER_H */
