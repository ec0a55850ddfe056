/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The collector's own state, shared by its files and nobody else:
 *   collector.c         lifecycle, the record switch, span plumbing
 *   collect_runtime.c   runtime calls; Execute -> completion correlation
 *   collect_syscalls.c  file reads, ioctls, device opens, eventfds, code mapped
 *   collect_cuda.c      CUDA's two layers, each launch counted once
 *   collect_tasks.c     threads and processes, scheduling, interrupts
 *   collect_window.c    the window: open, close, open spans at stop, finish
 *   collect_programs.c  Compile programs named after the drain, in a budget
 *   collect_devtrace.c  the device's own timeline from its devtrace buffers
 *   collect_devtrace_match.c  its executions joined to the host's Executes
 *   collect_devmem.c    device-memory calls into allocation and free events
 */
#ifndef ACCELTRACE_COLLECTOR_INTERNAL_H
#define ACCELTRACE_COLLECTOR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "acceltrace/events.h"
#include "analyze/steps.h"
#include "capture/capture.h"
#include "collect/collector.h"
#include "collect/control.h"
#include "lib/hashmap.h"
#include "lib/smallest_k.h"

#define PREARM_MAX 65536
/* Device executions remembered for step detection: as many as the default
 * capture budget keeps spans (40 bytes each). */
#define MAX_STEP_CANDIDATES 1000000

/* An execution in flight this long, launched before the watch for
 * activity began, arms the window at once (collect_window.c,
 * collect_devtrace.c): the device is busy with it, and the next launch
 * may not come until it ends. */
#define LONG_EXECUTION_NS (1000 * 1000000ull)

/* One Execute call: its per-device work completes one device at a time. */
struct launch {
	uint64_t launch_id;
	uint64_t enqueue_end;
	char module[64];	/* a string: captures (windows) come and go */
	uint32_t pending;	/* devices not complete yet */
	/* @module interned in the capture of generation @module_gen (0: not
	 * yet), so that each device's completion does not hash it again. */
	uint32_t module_id, module_gen;
};

/*
 * What acceltrace follows a PJRT_Event for. Only executions for now: a
 * transfer's done event is often destroyed without being awaited (JAX and
 * the simulator do), so following those would only pile up owners; DMA
 * completion will come from the device's own trace buffers.
 */
enum owner_kind { OWN_EXEC };

/* What a PJRT_Event stands for, from the call that returned it. */
struct owner {
	enum owner_kind kind;
	uint32_t pid;
	uint32_t device;	/* OWN_EXEC: index within the execution */
	struct launch *launch;
	uint64_t event;		/* the PJRT_Event pointer */
	uint64_t user_arg;	/* set when OnReady registered a callback */
	uint64_t issued_ns;
};

/* Per (pid, device): when the device last finished, for runtime-view starts. */
struct device_state {
	uint64_t last_end;
	/* The latest issue time of work whose completion was seen: work
	 * issued before it completed too (a device runs in order). */
	uint64_t done_issued;
	uint32_t index;		/* capture device index */
	uint32_t gen;		/* of the capture @index belongs to */
};

struct eventfd_info {
	int64_t interrupt;
	const char *device;	/* the node pattern's description (static) */
};

struct off_cpu {
	uint64_t since;
	int64_t state;
};

/*
 * CUDA's two layers, per thread (collect_runtime.c): a driver call made
 * inside a runtime call (cudaLaunchKernel reaching an exported
 * cuLaunchKernel) is the same work seen twice. Records come at return,
 * inner ones first, so a thread's driver spans are held until a runtime
 * call that could enclose them returns (or more arrive); the runtime calls
 * just seen are remembered for records that come out of order (another
 * ring-buffer shard).
 */
#define CUDA_NEST_HELD 4	/* driver spans held per thread */
#define CUDA_NEST_RECENT 16	/* runtime calls remembered per thread */

/* A thread's CUDA calls, for counting each launch once (collect_cuda.c). */
struct cuda_nest {
	uint32_t pid, tid;
	uint32_t gen;		/* the capture the held spans' names are in */
	uint32_t n_held;
	uint32_t n_recent, recent_head;
	uint64_t recent_start[CUDA_NEST_RECENT], recent_end[CUDA_NEST_RECENT];
	struct capture_span held[CUDA_NEST_HELD];
};

/* Records carried past a window's stop, at most (~20 MB). */
#define MAX_CARRIED 65536

/* A ring-buffer record kept as it came, to be handled later. */
struct raw_record {
	size_t size;
	char data[];
};

/*
 * Program naming, off the ring-draining path (collect_programs.c): a
 * Compile's program is read from the target after the drain, a bounded
 * number of bytes per poll, and the process's later runtime records wait
 * for its name (its Compile's return, the Executes of what it compiled),
 * so they are handled as if it had been named at once.
 */
#define MAX_PENDING_NAMINGS 64
#define MAX_HELD_RECORDS 4096		/* ~1 MB of records, all processes */
#define NAMING_BYTES_PER_POLL (8u << 20)

struct program_naming {
	uint32_t pid, tid;
	uint64_t addr, size;
};

/* A process's runtime records, held while one of its programs is named. */
struct held_records {
	uint32_t namings;		/* its namings still pending */
	struct raw_record **recs;
	size_t n, cap;
};

/*
 * Per-record lookups answered from small direct-mapped caches, valid for
 * one capture (gen): a runtime record's probe name and stat keys (static
 * strings, by address) and its thread's track. A miss takes the full
 * path, which interns, names the thread and creates the track.
 */
#define STATIC_NAME_SLOTS 64
#define HOST_TRACK_SLOTS 64

struct static_name_slot {
	const char *s;
	uint32_t id, gen;
};

struct host_track_slot {
	uint32_t pid, tid, gen;
	int track;
};

struct collector {
	struct capture *cap;
	uint32_t cap_gen;		/* bumped with each new capture (window) */
	struct session_reads reads;	/* the probe session: open calls, losses */
	/* The session's loss counters when the last window finished: each
	 * window reports the losses since (the first: since the probes were
	 * attached), none twice. */
	uint64_t losses_reported[LOSS_KIND_MAX];
	uint64_t rt_skipped_reported, k_skipped_reported;
	struct control_lookups ctl;	/* questions for the control lane */
	/* Control records for the record loop to take (collector__take_control). */
	struct control_record *control;
	size_t n_control, control_cap;
	bool sched_switch;
	struct collector_stats st;

	/* window */
	bool window_open, closing;
	/* The stop is known ahead (collector__plan_stop): the next window
	 * opens there, and records past it are carried from now on. */
	bool stop_planned;
	uint64_t start_ns, stop_ns;
	struct capture_span *prearm;	/* ring of spans before the window */
	size_t prearm_head, prearm_len;

	/* completions: OnReady registrations processed (callbacks probed) */
	uint64_t onready_seen;
	/* From when completions could be seen: earlier work may have completed
	 * unseen, so it is never reported as still running. */
	uint64_t completions_probed_ns;
	/* activity, for arming and --steps */
	bool arm_on_any_activity;
	const struct collector_observer *observer;	/* NULL: none */
	uint64_t watch_after, first_activity;
	uint32_t watches;		/* collector__watch_activity calls */
	bool early_start;		/* collector__start_at_first_run */
	/* --steps N: the N + 1 earliest starts of the window's executions. */
	uint64_t steps;
	struct smallest_k step_starts;

	/* correlation */
	struct hashmap *owners;		/* (pid, event) -> owner */
	struct hashmap *user_args;	/* (pid, user_arg) -> owner */
	struct hashmap *executables;	/* (pid, executable) -> char[64] name */
	struct hashmap *compiling;	/* (pid, tid) -> the name of the program
					 * the thread's Compile is compiling */
	struct hashmap *program_runs;	/* (pid, program) -> first start, arming */
	struct hashmap *devices;	/* (pid, device) -> device_state */
	struct hashmap *dev_fds;	/* (pid, fd) -> device_node_pattern */
	struct hashmap *eventfds;	/* (pid, fd) -> eventfd_info */
	struct hashmap *files;		/* (dev, ino) -> path id (as pointer) */
	struct hashmap *threads;	/* (pid, tid) -> seen marker */
	struct hashmap *processes;	/* (pid, 0) -> seen marker */
	struct hashmap *off_cpu;	/* (pid, tid) -> off_cpu */
	struct hashmap *exited;		/* (pid, 0) -> exit marker */
	/* The window's device executions: the candidates for steps. */
	/* Records past a closing (or planned) window's stop, for the next
	 * window (collector.c, carry()). */
	struct raw_record **carried;
	size_t n_carried, cap_carried;
	bool replaying;
	/* A new capture is set and the carried records (ring and devtrace)
	 * wait: replayed before the next record read, or into the window if
	 * it opens first (collect_replay_pending). */
	bool replay_pending;
	/* Compile programs waiting to be named, oldest first (a ring), and
	 * the runtime records of their processes held meanwhile
	 * (collect_programs.c). */
	struct program_naming namings[MAX_PENDING_NAMINGS];
	size_t namings_head, n_namings;
	struct hashmap *held;		/* (pid, 0) -> held_records */
	size_t n_held;			/* records held, all processes */
	struct step_candidate *execs;
	size_t n_execs, cap_execs;

	/* CUDA: driver calls held per thread until a runtime call says
	 * whether they were made inside it (counted in st.cuda_nested) */
	struct hashmap *cuda_threads;	/* (pid, tid) -> cuda_nest */

	/* device trace buffers (collect_devtrace.c); NULL until one is added */
	struct collect_devtrace *devtrace;
	/* device memory (collect_devmem.c); NULL until a memory call comes */
	struct collect_devmem *devmem;

	struct static_name_slot static_names[STATIC_NAME_SLOTS];
	struct host_track_slot host_tracks[HOST_TRACK_SLOTS];

	/* interned names */
	uint32_t k_launch_id, k_num_devices, k_module, k_bytes, k_requested,
		 k_offset, k_file, k_fd, k_ret, k_value, k_interrupt, k_cmd,
		 k_kind, k_device, k_type, k_dims, k_state,
		 k_issued_before, k_irq;
};

/* ---- collector.c: plumbing every record family uses ------------------ */

void collect_init_span(struct capture_span *s, int track, enum span_kind kind,
		       uint32_t name, uint64_t start, uint64_t end);
/* Keeps @s when it overlaps the window; holds it until the window opens. */
void collect_keep_span(struct collector *c, struct capture_span *s);
/* The track of a traced thread, naming it (and its process) on first use. */
int collect_host_track(struct collector *c, uint32_t pid, uint32_t tid);
/* capture__intern_static(), cached per capture: @s must be static. */
uint32_t collect_intern_static(struct collector *c, const char *s);
void collect_ensure_process(struct collector *c, uint32_t pid);
/* What device activity at @t is, for arming: an execution of a program
 * (Execute, a kernel or graph launch, a submit ioctl) or anything else
 * (a transfer, a feed), which arms only with arm_on_any_activity. */
enum activity { ACT_EXECUTION, ACT_OTHER };
void collect_note_activity(struct collector *c, uint64_t t, enum activity what);
/* Queues a control record for the record loop's next take
 * (collector__take_control): nothing is acted on from here. */
void collect_queue_control(struct collector *c, const struct control_record *rec);
/* The same, for the kinds a pid, an fd and one value say whole. */
void collect_control(struct collector *c, enum control_kind kind, uint32_t pid,
		     uint32_t fd, uint64_t value);
/*
 * A call from the kernel's open-call table, as a record ending at @end_ns:
 * still open at the window's stop, or ended by its process's exit. 0, or
 * -EINVAL for an entry of an unknown size or type.
 */
int collect_replay_open_call(struct collector *c, const void *data, size_t size,
			      uint64_t end_ns, bool still_open);
/* hashmap__put, with a failure counted as lost state (see finish). */
int collect_put(struct collector *c, struct hashmap *h, uint64_t a, uint64_t b,
		void *value, void **old);
/* An allocation failed: what it was for is lost, and counted. */
void collect_out_of_memory(struct collector *c);

/* ---- collect_runtime.c ------------------------------------------------ */

void collect_runtime(struct collector *c, const struct ev_rt_call *r);
void collect_free_owner(void *owner);
/* At stop: device work still running is ended there, marked. */
void collect_runtime_close_open(struct collector *c);
/* The process exited: its device work in flight ends with it, marked. */
void collect_runtime_process_exit(struct collector *c, uint32_t pid, uint64_t ts);
/* An execution that started in the window: a step, for --steps. */
void collect_count_window_execution(struct collector *c, uint64_t start_ns);

/* ---- collect_programs.c ----------------------------------------------- */

/* Compile's entry: its program queued to be named after the drain. */
void collect_programs_queue(struct collector *c, const struct ev_rt_call *r);
/* True when @data (a record of a process with a naming pending) is held,
 * to be handled once the name is known. */
bool collect_programs_hold(struct collector *c, const void *data, size_t size);
/* Names every pending program of @pid now (it exits, or too much is
 * held), and handles its held records. */
void collect_programs_flush_pid(struct collector *c, uint32_t pid);
/* Names every pending program now (the window finishes). */
void collect_programs_flush(struct collector *c);
void collect_programs_free(struct collector *c);
/* A record as it came from the ring: held, carried or handled now. */
void collect_record_in(struct collector *c, const void *data, size_t size);

/* ---- collect_devmem.c ------------------------------------------------- */

struct rt_pack_entry;
/* A runtime call whose probe has a memory effect (entry->mem.op): its
 * allocation or free, kept when in the window. */
void collect_devmem(struct collector *c, const struct ev_rt_call *r,
		    const struct rt_pack_entry *entry);
/* The window opened at @start_ns: events held before it that fall in it
 * are kept. */
void collect_devmem_window_opened(struct collector *c, uint64_t start_ns);
/* A new capture: events held for a window are in the old one's strings. */
void collect_devmem_new_capture(struct collector *c);
/* @pid exited: its device handles, peaks and threads' devices go. */
void collect_devmem_process_exit(struct collector *c, uint32_t pid);
/* What device memory could not keep, as the capture's losses. */
void collect_devmem_count_losses(struct collector *c);
void collect_devmem_free(struct collector *c);

/* ---- collect_devtrace.c ----------------------------------------------- */

/* Whether device @ordinal of @pid has a devtrace buffer: its modules and
 * steps then come from there, not from the runtime's view. */
bool collect_devtrace_covers(const struct collector *c, uint32_t pid, uint32_t ordinal);
/* The window now begins at @start_ns: buffers of owners that exited
 * before it are let go. */
void collect_devtrace_forget_before(struct collector *c, uint64_t start_ns);
/* A device execution has been running for over a second (a long op the
 * probes attached to mid-way): the device is busy without new launches. */
bool collect_devtrace_long_execution(struct collector *c);
/* @pid exited at @ts: its cores' work in flight ends there, marked. */
void collect_devtrace_process_exit(struct collector *c, uint32_t pid, uint64_t ts);
/* At finish: a last read, what runs at stop drawn to it, losses counted. */
void collect_devtrace_finish(struct collector *c);
/* Replays the device records read past the last window's planned stop. */
void collect_devtrace_replay_carried(struct collector *c);
void collect_devtrace_free(struct collector *c);

/* ---- collect_cuda.c --------------------------------------------------- */

/* A named u64 stat on @s (the key a static string). */
void collect_span_stat(struct collector *c, struct capture_span *s, const char *key,
		       uint64_t v);
/* A launch's grid, threads per block and stream. */
void collect_cuda_launch_stats(struct collector *c, struct capture_span *s,
			       uint64_t gx, uint64_t gy, uint64_t gz, uint64_t block,
			       uint64_t stream);
void collect_cudart_launch(struct collector *c, const struct ev_rt_call *r,
			   struct capture_span *s);
void collect_cudart_memcpy(struct collector *c, const struct ev_rt_call *r,
			   const struct rt_pack_entry *entry, struct capture_span *s);
/* A driver call's span: nested, or held; true when it took the span. */
bool collect_cuda_driver_span(struct collector *c, const struct ev_rt_call *r,
			      struct capture_span *s);
/* A runtime call returned: the driver spans it encloses are nested. */
void collect_cuda_runtime_call(struct collector *c, const struct ev_rt_call *r);
/* Keeps the driver spans still held: every thread's (at stop), or a
 * process's, whose state then goes (at its exit). */
void collect_cuda_flush_all(struct collector *c);
void collect_cuda_process_exit(struct collector *c, uint32_t pid);

/* ---- collect_syscalls.c ----------------------------------------------- */

void collect_syscall(struct collector *c, const struct ev_syscall *r);
void collect_dev_open(struct collector *c, const struct ev_dev_open *r);
void collect_mapped(struct collector *c, const struct ev_mapped *r);

/* ---- collect_tasks.c -------------------------------------------------- */

void collect_task(struct collector *c, const struct ev_task *r);
void collect_switch(struct collector *c, const struct ev_sched_switch *r);
void collect_irq(struct collector *c, const struct ev_irq *r);

/* ---- collect_window.c ------------------------------------------------- */

/* A device execution kept in the window: a candidate for steps. */
void collect_remember_execution(struct collector *c, const struct capture_span *s);
/* Replays the records carried past the last window's stop (collector.c),
 * once the next capture is set. */
void collect_replay_carried(struct collector *c);
/* Replays them, ring and devtrace, where a set capture left them waiting
 * (c->replay_pending: its callers test it, on the record path). */
void collect_replay_pending(struct collector *c);

#endif /* ACCELTRACE_COLLECTOR_INTERNAL_H */
