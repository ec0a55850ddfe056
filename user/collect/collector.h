/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The collector: turns ring-buffer records into the capture model. It joins
 * what the probes see separately — an Execute call, the completion events it
 * returns, the callbacks OnReady registers for them, the callback running —
 * into host spans and device work, decodes ioctls, names threads, and keeps
 * the window's promise: every span that overlaps it, with its true times.
 *
 * Window lifecycle: records flow from the start (correlation needs them);
 * spans are held until collector__open_window(), then kept when they overlap
 * [start, stop]; collector__begin_close() sets stop (records still arriving
 * within --grace keep their true end); collector__finish() adds what is still
 * open at stop, the steps, and the loss counts.
 */
#ifndef ACCELTRACE_COLLECTOR_H
#define ACCELTRACE_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "acceltrace/events.h"
#include "discover/probe_packs.h"

struct capture;
struct capture_span;
struct collector;
struct control_lookups;
struct control_record;
struct devtrace_seen;
struct session_reads;

/*
 * Told of every span the open window keeps (the budget's choice aside) and
 * of every traced process's exit, as they come: the daemon's metrics and
 * rules. Called on the collector's thread; must not call back into it.
 */
struct collector_observer {
	void (*span)(void *ctx, const struct capture *cap, const struct capture_span *s);
	/* @exit_code as the kernel's task exit_code: signal in the low 7 bits. */
	void (*process_exit)(void *ctx, uint32_t pid, int32_t exit_code, uint64_t ts_ns);
	void *ctx;
};

struct collector_opts {
	size_t sz;
	struct capture *capture;
	bool sched_switch;		/* turn on/off-CPU records into spans */
	uint64_t steps;			/* --steps: find where step N + 1 begins */
	/*
	 * What arms a window: by default the first execution of a program
	 * that runs again (a step: start-up's one-off programs do not arm),
	 * a CUDA kernel or graph launch, or a submit ioctl; not the transfers
	 * and feeds of start-up. With this (--from-start), any device
	 * activity, transfers and one-off programs included.
	 */
	bool arm_on_any_activity;
	/* NULL: none. Borrowed: must outlive the collector. */
	const struct collector_observer *observer;
};
#define collector_opts__last_field observer

struct collector_stats {
	uint64_t records[EV_TYPE_MAX];
	uint64_t rt_calls[RT_EV__COUNT];
	uint64_t rt_faults[RT_EV__COUNT];	/* calls with an unreadable argument */
	uint64_t bad_records;		/* too short, or unknown type */
	uint64_t unknown_probes;	/* probe id no attached probe has */
	uint64_t spans_refused;		/* the capture model refused them */
	uint64_t spans_outside;		/* ended before or began after the window */
	uint64_t prearm_dropped;	/* the pre-window buffer overflowed */
	uint64_t executions;		/* Execute calls and CUDA launches, each
				 * counted once (all, window or not) */
	uint64_t device_executions;	/* completed per-device executions kept */
	uint64_t completions;		/* callbacks matched to their work */
	uint64_t unmatched_completions;	/* callbacks for work issued before us */
	uint64_t unobserved_completions;	/* work whose completion went unseen */
	uint64_t open_at_stop;		/* spans closed at stop, marked */
	uint64_t ended_in_grace;
	uint64_t target_exits;
	uint64_t steps_unexamined;	/* device executions past the step list's cap */
	uint64_t steps_lost;		/* execution starts --steps could not keep */
	uint64_t out_of_memory;		/* state lost to a failed allocation */
	/* Control records not queued: the queue was full (CONTROL_QUEUE_MAX)
	 * or out of memory. What they asked for waits for a rescan. */
	uint64_t control_dropped;
	/* CUDA driver calls made inside a runtime call on their thread:
	 * counted once, at the runtime (cudart reaching libcuda). */
	uint64_t cuda_nested;
	/* Compile programs read from the target at the call's entry, and
	 * those of them that named no module (or could not be read). */
	uint64_t programs_read;
	uint64_t programs_unnamed;
	/* Programs past a naming bound (mlir_bytecode.h): named "unnamed
	 * program (N bytes, past the naming bounds)". */
	uint64_t programs_too_large;
	/* Records past a closing window's stop that the next window could
	 * not be handed (over MAX_CARRIED, or out of memory). */
	uint64_t carried_dropped;
	/* The daemon's sampled mode: executions that returned while detail
	 * was off (their completions go unrecorded), and work still waiting
	 * for a completion when a detail slice ended, forgotten. */
	uint64_t executions_without_detail;
	uint64_t completions_without_detail;
	/* Device memory (collect_devmem.c): allocations and frees kept in
	 * windows, those outside them, those held before a window opened
	 * that its buffer could not keep, and PJRT_Device handles past the
	 * per-process bound (their calls filed under device 0, guessed). */
	uint64_t mem_events;
	uint64_t mem_outside;
	uint64_t mem_prearm_dropped;
	uint64_t mem_handles_unnamed;
};

struct collector *collector__new(const struct collector_opts *opts);
/*
 * What it reads of the probe session, its open-call tables and loss
 * counters, and what it asks the attach controller (what a runtime probe
 * id stands for, a process's platform and memory): questions only
 * (collect/control.h). Either may be NULL (tests feed records without
 * them). The session needs the collector as its record callback first,
 * hence this step.
 */
void collector__connect(struct collector *c, const struct session_reads *reads,
			const struct control_lookups *lookups);

/*
 * The control records queued since the last take (a GetPjrtApi return, a
 * callback registered, a device opened, exec/fork/exit, ...), oldest
 * first, in *@n; the queue is empty after. The records stay valid until
 * the next record is handed to the collector. The record loop takes them
 * after each poll and gives them to the attach controller.
 */
const struct control_record *collector__take_control(struct collector *c, size_t *n);
void collector__free(struct collector *c);

/*
 * A devtrace buffer (docs/devtrace.md) to read from now on: the collector
 * owns @fd, also on failure; @label (its path) names it in messages. Its
 * records become the device planes' Steps, XLA Modules and XLA Ops. @seen:
 * where a buffer found in a process was recorded; once its owner has
 * exited, the buffer read to the end and the window past the exit, it is
 * closed and forgotten there. NULL (a path the user named): read to the
 * end of the session. The buffer's index, or -errno.
 */
int collector__add_devtrace(struct collector *c, int fd, const char *label,
			    struct devtrace_seen *seen);
/*
 * Buffer @buf (collector__add_devtrace's index) was found in host process
 * @pid, which is @ns_pid in its own PID namespace (a container's): a
 * header whose owner_pid is @ns_pid names @pid, and the thread ids of its
 * LAUNCH records are the namespace's, mapped to the host's through
 * @ns_tids at a window's finish (NULL: left as they are).
 */
void collector__devtrace_found_in(struct collector *c, int buf, uint32_t pid, uint32_t ns_pid);
/* How a namespace's thread ids map to the host's: @fn(@ctx, pid, each)
 * calls each(each_ctx, host tid, ns tid) for every thread of pid. */
typedef int (*collector_ns_tids_fn)(void *ctx, uint32_t pid,
				    void (*each)(void *each_ctx, pid_t tid, pid_t ns_tid),
				    void *each_ctx);
void collector__set_ns_tids(struct collector *c, collector_ns_tids_fn fn, void *ctx);
/* Reads some of what the devtrace buffers hold that is new (a bounded
 * amount, for one tick of the record loop; finish reads the rest): records
 * read, or -errno. */
long collector__poll_devtrace(struct collector *c);

/*
 * Names the Compile programs the records read since the last call asked
 * for, reading them from their processes (up to NAMING_BYTES_PER_POLL,
 * the rest next time), after the ring drain: naming stays off the path
 * that drains the rings. Records that wait for a name are handled then.
 * The number named.
 */
size_t collector__name_programs(struct collector *c);

/* The probe_record_fn for probe_session: one record. */
int collector__record(void *ctx, const void *data, size_t size);

/*
 * True once completions can be seen: an OnReady registration was processed
 * (its callback is probed synchronously then), or the target has executed
 * for a while without ever registering one (it awaits instead). Arming
 * waits for this, so no window opens before its completions are visible.
 */
bool collector__completions_probed(const struct collector *c);
/*
 * The first activity that arms a window (see arm_on_any_activity) since
 * collector__watch_activity, by a traced process; 0 when none yet. It
 * begins at or after the watch's start, except in the first watch with
 * collector__start_at_first_run on: a step whose program first ran before
 * it (seen, so after the probes were in place, while the completion
 * callback was being probed) arms at that first run.
 */
uint64_t collector__first_activity(const struct collector *c);
/* On when the targets' runtime loads after the attach (late, or a
 * command's): every execution of it is seen from its first. */
void collector__start_at_first_run(struct collector *c, bool on);
void collector__watch_activity(struct collector *c, uint64_t after_ns);
/*
 * Seen from the host: an execution the probes saw launched before the
 * watch began, whose completion can be seen and has not come for over a
 * second at @now_ns (nothing issued after it on its device completed
 * either), keeps the device busy: the watch's start becomes the first
 * activity, as a device trace buffer showing the same arms at once.
 */
void collector__note_busy_device(struct collector *c, uint64_t now_ns);
/*
 * With opts.steps N: when the window's step N + 1 began (the start of its
 * (N + 1)-th earliest execution), or 0 until it has been seen. `--steps N`
 * ends the window just before it: N whole steps, each with the host work
 * that led to the next.
 */
uint64_t collector__window_steps_end(const struct collector *c);

/* Switches the capture a new window fills (several windows in one run),
 * and hands it what the last window read past its stop, before any later
 * record; -ENOMEM when the collector's per-capture state cannot be made. */
int collector__set_capture(struct collector *c, struct capture *capture);
int collector__open_window(struct collector *c, uint64_t start_ns);
void collector__begin_close(struct collector *c, uint64_t stop_ns);
/*
 * The open window will stop at @stop_ns and the next open there (the
 * daemon's flight recorder, whose trigger says when). Records past it that
 * are read before the close, and device records too, are kept for the next
 * window rather than drawn in this one and dropped at its close. 0: none
 * planned any more.
 */
void collector__plan_stop(struct collector *c, uint64_t stop_ns);
/* True when nothing acceltrace saw begin is still open (grace may end). */
bool collector__all_closed(struct collector *c);
int collector__finish(struct collector *c);
/*
 * The open window now begins at @start_ns (later than before): what ended
 * earlier is forgotten, spans and step candidates alike, so that a window
 * kept open for ever (the daemon's flight recorder) holds only its last
 * stretch. Returns how many spans went.
 */
uint64_t collector__forget_before(struct collector *c, uint64_t start_ns);
/*
 * Detail was turned off and what was recorded before has been consumed:
 * work still waiting for its completion will not see it (the completion
 * probes are off), so it is forgotten now, not held until a window's stop
 * and drawn there as open. Counted in completions_without_detail.
 */
void collector__detail_ended(struct collector *c);

/*
 * A device as a memory aggregate names it (an ordinal, or with
 * MEM_F_DEVICE_HANDLE a PJRT_Device handle of that process) as its ordinal
 * and platform ("GPU", "TPU"; NULL while no runtime said); false while the
 * collector does not know the device.
 * A devmem_resolve_fn (devmem/devmem_book.h), @ctx the collector.
 */
struct at_mem_agg_key;
bool collector__mem_device(void *ctx, const struct at_mem_agg_key *key, uint32_t *ordinal,
			   const char **platform);

const struct collector_stats *collector__stats(const struct collector *c);

#endif /* ACCELTRACE_COLLECTOR_H */
