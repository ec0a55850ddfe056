/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The capture model: the one place that knows what a process, a thread, a
 * device core, a span and a step are. The collector fills it; writers
 * (XSpace, Perfetto, JSON) and the report read it and never reach back into
 * probes.
 *
 * Time is CLOCK_MONOTONIC nanoseconds everywhere. A span keeps its true start
 * and end (as far as acceltrace knows them); a writer whose format cannot show
 * times outside the window clips there and says so with the span's flags.
 *
 * Lifecycle: capture__new() -> fill (add_* / set_*) -> capture__finalize()
 * -> read (tracks, spans, ...) -> capture__free(). Adding after finalize
 * fails with -EBUSY; reading spans before it fails with -EAGAIN.
 */
#ifndef ACCELTRACE_CAPTURE_H
#define ACCELTRACE_CAPTURE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct capture;

#define CAPTURE_DEFAULT_MAX_SPANS 1000000ULL

struct capture_opts {
	size_t sz;		/* sizeof(struct capture_opts), for growth */
	const char *hostname;	/* NULL: gethostname() */
	/* NULL or "": local time as %Y_%m_%d_%H_%M_%S */
	const char *session;
	/*
	 * Event budget: at most this many spans are kept (0: 1,000,000
	 * (CAPTURE_DEFAULT_MAX_SPANS), the
	 * trace viewer's default cap). Over budget, finalize drops the least
	 * useful kinds first (see span_kind_priority) and adds a warning saying
	 * how many of which kind went. Device memory events have a budget of
	 * their own of the same size (capture_memory.c).
	 */
	uint64_t max_spans;
	/*
	 * Which window of a run this capture is: 0 for a run of one window;
	 * N >= 1 appends "_w<N>" to the session name (given or default), so
	 * each window of a multi-window run gets its own session directory.
	 */
	uint32_t window;
};
#define capture_opts__last_field window

/* What a track is a timeline of. */
enum track_kind {
	TRACK_HOST_THREAD,	/* one thread of a traced process */
	TRACK_DEVICE_STEPS,	/* a device core's steps */
	TRACK_DEVICE_MODULES,	/* a device core's program executions */
	TRACK_DEVICE_OPS,	/* a device core's ops (from its trace buffer) */
	/*
	 * One stream of a GPU (a CUDA stream): its kernels, copies and
	 * memsets, complete spans that may overlap another stream's. Keyed by
	 * (device, stream id): capture__stream_track, not capture__device_track.
	 */
	TRACK_DEVICE_STREAM,
	TRACK_KIND__COUNT,
};

/* What a span is: drives names in writers, categories in the report. */
enum span_kind {
	/* Host side, on the calling thread's track. */
	SPAN_EXECUTE,		/* PJRT LoadedExecutable_Execute call (enqueue) */
	SPAN_H2D,		/* BufferFromHostBuffer call */
	SPAN_D2H,		/* Buffer_ToHostBuffer call */
	SPAN_INFEED,		/* TPU C API infeed transfer call */
	SPAN_OUTFEED,		/* TPU C API outfeed call (blocks until data) */
	SPAN_COMPILE,		/* Client_Compile call */
	SPAN_AWAIT,		/* Event_Await: host blocked on a device event */
	SPAN_CALLBACK,		/* an Event_OnReady callback running */
	SPAN_FILE_READ,		/* read/pread64/readv/preadv by a traced thread */
	SPAN_IOCTL,		/* ioctl on a device node */
	SPAN_DEVICE_WAIT,	/* read/poll of a completion eventfd */
	SPAN_HOST_OTHER,	/* any other host span (annotations, ...) */
	/* Device side, on device tracks. */
	SPAN_DEVICE_STEP,
	SPAN_DEVICE_MODULE,	/* one execution of a program on one core */
	SPAN_DEVICE_OP,
	SPAN_DEVICE_TRANSFER,	/* H2D/D2H DMA in flight (call to done event) */
	/* Instants (start == end). */
	SPAN_INSTANT_COMPLETION,	/* a device event became ready */
	SPAN_INSTANT_INTERRUPT,		/* device interrupt / eventfd signal */
	SPAN_INSTANT_THREAD,		/* thread created, renamed or exited */
	SPAN_KIND__COUNT,
};

/* Span flags: how much of a span acceltrace actually saw. */
enum span_flags {
	/* It began before the probes existed: start_ns is when they attached. */
	SPAN_F_BEGAN_BEFORE_PROBES = 1u << 0,
	/* Still open when the window (and grace) ended: end_ns is the stop. */
	SPAN_F_OPEN_AT_STOP = 1u << 1,
	/* Ended after the window's stop, within --grace: end_ns is true. */
	SPAN_F_ENDED_IN_GRACE = 1u << 2,
	/* Closed because its process exited: end_ns is the exit. */
	SPAN_F_TARGET_EXITED = 1u << 3,
	/* Times inferred (device work seen from the runtime, not the device). */
	SPAN_F_ESTIMATED = 1u << 4,
	/* The call returned an error. */
	SPAN_F_ERROR = 1u << 5,
};

enum capture_arg_type {
	ARG_U64,
	ARG_I64,
	ARG_DOUBLE,
	ARG_STR,		/* value.str is an interned string id */
};

/* A named value attached to a span; key is an interned string id. */
struct capture_arg {
	uint32_t key;
	uint32_t type;		/* enum capture_arg_type */
	union {
		uint64_t u;
		int64_t i;
		double d;
		uint32_t str;
	} value;
};

#define CAPTURE_MAX_ARGS 6

struct capture_span {
	uint64_t start_ns;
	uint64_t end_ns;	/* == start_ns for instants */
	/* Host launch <-> device work: the PJRT launch id or run id; 0: none. */
	uint64_t correlation_id;
	uint32_t track;
	uint32_t name;		/* interned string id */
	uint16_t kind;		/* enum span_kind */
	uint16_t flags;		/* enum span_flags */
	uint32_t nargs;
	struct capture_arg args[CAPTURE_MAX_ARGS];
};

struct capture_track {
	uint32_t id;
	uint32_t kind;		/* enum track_kind */
	uint32_t pid;		/* owning process (device tracks too) */
	/* Host threads: the tid; TRACK_DEVICE_STREAM: the stream id (the
	 * runtime's, e.g. CUPTI's streamId); 0 on other device tracks. */
	uint32_t tid;
	uint32_t device;	/* device index; host tracks: UINT32_MAX */
	/* Interned: the thread's name; 0 on device tracks (a writer names
	 * those by kind, in its own format's words). */
	uint32_t name;
};

struct capture_device {
	uint32_t index;		/* global, dense from 0 */
	uint32_t pid;		/* process that drives it */
	uint32_t core;		/* the runtime's core/device ordinal */
	uint32_t type;		/* interned, e.g. "TPU v4"; 0 ("") unknown */
	uint32_t platform;	/* interned "GPU", "TPU"; 0 ("") unknown */
	uint32_t vendor;	/* interned, e.g. "Nvidia"; 0 ("") unknown */
	double peak_tflops;	/* 0 when unknown */
	double peak_hbm_gbps;	/* 0 when unknown */
};

struct capture_process {
	uint32_t pid;
	uint32_t name;		/* interned: comm or argv[0] basename */
	uint64_t exit_ns;	/* 0 while alive */
	/* Where it came from (capture__set_process_origin); 0: unknown. */
	uint32_t ppid;
	uint32_t container, pod;	/* interned ids; 0 (""): none */
};

struct capture_thread {
	uint32_t pid;
	uint32_t tid;
	uint32_t name;		/* interned: the latest name seen */
	uint64_t start_ns;	/* 0: existed before the probes */
	uint64_t exit_ns;	/* 0: still alive at stop */
};

/*
 * One entry of a thread's name history (capture__thread_names): the name
 * it took at ts_ns. The first entry is the name it had when created or
 * first seen; ts_ns 0 means unknown (it had the name before the probes, or
 * the caller did not say when).
 */
struct capture_thread_name {
	uint64_t ts_ns;
	uint32_t name;		/* interned, never 0 */
};

/* Names a thread's history keeps; later renames are only counted. */
#define CAPTURE_MAX_THREAD_NAMES 16

/* NULL and errno on failure. */
struct capture *capture__new(const struct capture_opts *opts);
void capture__free(struct capture *c);

/* ---- filling (collector) -------------------------------------------- */

/*
 * Interns a string; returns its id (never 0 for a non-empty string; 0 is "").
 * What is kept is valid UTF-8 without control characters: a byte that
 * begins no character, and a control character, become U+FFFD
 * (lib/utf8.h), so every name the model holds, whoever gave it, can be
 * written where UTF-8 is required.
 * Out of memory, returns 0 with errno ENOMEM (the value reads as "") and
 * finalize warns that names were lost. Interning stays allowed after finalize.
 */
uint32_t capture__intern(struct capture *c, const char *s);
uint32_t capture__intern_len(struct capture *c, const char *s, size_t len);
/*
 * The same for a string in static storage (a literal, a probe pack's or a
 * decoder table's name): its id is remembered by address, so the names
 * spans carry by the hundred thousand a second are not hashed each time.
 */
uint32_t capture__intern_static(struct capture *c, const char *s);

/*
 * The window, and realtime-minus-monotonic at its start (for wall clock;
 * capture__new measures a default). Without a window, finalize uses the
 * spans' extent. -EINVAL when stop < start.
 */
int capture__set_window(struct capture *c, uint64_t start_ns, uint64_t stop_ns);
void capture__set_realtime_offset(struct capture *c, int64_t realtime_minus_mono_ns);
/*
 * Renames the session (NULL or "": local time now), for a capture whose
 * name is known only when it is taken (the daemon's triggers); -ENOMEM
 * keeps the old name.
 */
int capture__set_session(struct capture *c, const char *session);
/* When the probes began to see events: earlier starts are unknown. */
void capture__set_probes_attached(struct capture *c, uint64_t mono_ns);
/*
 * Why the capture was taken ("rule: device stall: pid 7 ..."), for its
 * report to lead with; interned (sanitized) as names are. -ENOMEM keeps
 * the old reason.
 */
int capture__set_reason(struct capture *c, const char *why);
/* The process the capture is about (a daemon's trigger --pid); 0: none. */
void capture__set_focus_pid(struct capture *c, uint32_t pid);

/*
 * Names given to set_process, set_thread and device are interned; one that
 * cannot be (out of memory) leaves the old name, and finalize's warning
 * counts it with the other lost names.
 */
int capture__set_process(struct capture *c, uint32_t pid, const char *name);
int capture__process_exited(struct capture *c, uint32_t pid, uint64_t ts_ns);
/*
 * Where a process came from: its parent (a DataLoader worker's is the
 * trainer), and its container and Kubernetes pod ("" or NULL: none), so
 * that a report of the trainer counts its workers and names its container.
 */
int capture__set_process_origin(struct capture *c, uint32_t pid, uint32_t ppid,
				const char *container, const char *pod);
/*
 * Creates or names a thread; start_ns 0 when unknown. The first name goes
 * into the thread's name history at start_ns; a later name other than the
 * latest is appended at time 0, unknown (capture__rename_thread says when).
 */
int capture__set_thread(struct capture *c, uint32_t pid, uint32_t tid,
			const char *name, uint64_t start_ns);
/*
 * The thread took @name at @ts_ns (creating the thread, named so, if it is
 * new; its start stays unknown). A name equal to the latest adds nothing.
 * The history keeps the first CAPTURE_MAX_THREAD_NAMES names and counts the
 * renames after them; one that finds no memory to be kept still becomes
 * the latest name, is counted with them, and finalize warns. A thread is
 * not a track: renaming one creates none (capture__host_track does).
 */
int capture__rename_thread(struct capture *c, uint32_t pid, uint32_t tid,
			   const char *name, uint64_t ts_ns);
int capture__thread_exited(struct capture *c, uint32_t pid, uint32_t tid,
			   uint64_t ts_ns);

/*
 * Returns the device index (>= 0) for (pid, core), creating it, or -errno.
 * A NULL or "" type, or a peak <= 0, leaves what is known (a new device's
 * type is 0, unknown: writers decide what their format needs then).
 */
int capture__device(struct capture *c, uint32_t pid, uint32_t core,
		    const char *type, double peak_tflops, double peak_hbm_gbps);

/*
 * The platform of device @index ("GPU", "TPU": the runtime's word for its
 * devices) and its vendor; NULL or "" leaves what is known. 0 or -errno.
 */
int capture__device_platform(struct capture *c, uint32_t index,
			     const char *platform, const char *vendor);

/*
 * Track ids (>= 0), created on first use, or -errno: -ENOENT for an
 * unknown device, -EBUSY for a new track after finalize, -ENOMEM.
 * capture__device_track takes the kinds a device has one of (steps,
 * modules, ops) and refuses the others with -EINVAL: host threads, and
 * streams, which are one track per (device, stream) from
 * capture__stream_track.
 */
int capture__host_track(struct capture *c, uint32_t pid, uint32_t tid);
int capture__device_track(struct capture *c, uint32_t device,
			  enum track_kind kind);
/*
 * The TRACK_DEVICE_STREAM track of stream @stream of @device. Its spans are
 * SPAN_DEVICE_OP: kernels, and copies and memsets named as CUPTI names them
 * ("MemcpyH2D", "MemcpyD2H", "MemcpyD2D", "MemcpyP2P", "Memset"), each with
 * the runtime's correlation id.
 */
int capture__stream_track(struct capture *c, uint32_t device, uint32_t stream);

/*
 * Copies the span. -ENOENT for an unknown track, -EBUSY after finalize,
 * -EINVAL for end < start, an unknown kind or arg type, or nargs too big,
 * -ENOMEM when it could not be stored. A span refused by the budget counts
 * as dropped (returns 0). A prune that runs out of memory is retried at the
 * next span; the span itself is kept (returns 0).
 */
int capture__add_span(struct capture *c, const struct capture_span *s);
/*
 * Removes the spans that begin after @stop_ns, and the device memory
 * events after it (capture_memory.h), for a window whose stop was placed
 * before records already taken (`--steps` ends where step N + 1 began,
 * seen in a batch with later work); returns how many spans went. Not a
 * loss: they are outside the window.
 */
uint64_t capture__drop_after(struct capture *c, uint64_t stop_ns);
/*
 * Removes the spans that ended before @start_ns, and the memory events
 * before it, for a window whose start moves forward (the daemon's flight
 * recorder keeps its last N seconds); returns how many spans went. Not a
 * loss either: they are outside the window.
 */
uint64_t capture__drop_before(struct capture *c, uint64_t start_ns);
/* Appends an arg (key interned by the caller); -E2BIG when full. */
int capture_span__add_u64(struct capture_span *s, uint32_t key, uint64_t v);
int capture_span__add_i64(struct capture_span *s, uint32_t key, int64_t v);
int capture_span__add_double(struct capture_span *s, uint32_t key, double v);
int capture_span__add_str(struct capture_span *s, uint32_t key, uint32_t str);

/*
 * A loss or problem the capture must carry (XSpace warnings, report).
 * Identical messages are kept once; after finalize they go to the log only.
 */
__attribute__((format(printf, 2, 3)))
void capture__warn(struct capture *c, const char *fmt, ...);
/*
 * Counters of loss, by name ("ring buffer drops", ...), added up. Out of
 * memory, a warning is counted in finalize's "more warnings not kept" and a
 * loss goes to the log instead.
 */
void capture__count_loss(struct capture *c, const char *what, uint64_t n);
/*
 * The same, for a loss of the window's events themselves (records a full
 * ring turned away, device trace records overwritten before they were
 * read, records malformed), which the figures of a report rest on; not
 * for losses at the window's edges or of bookkeeping (spans before the
 * window, a free's device guessed).
 */
void capture__count_event_loss(struct capture *c, const char *what, uint64_t n);

/*
 * Applies the event budget, sorts every track's spans by start ascending
 * then end descending (outer before inner), and freezes the model. Out of
 * memory, returns -ENOMEM with the model still open: it can be called again.
 */
int capture__finalize(struct capture *c);
bool capture__is_finalized(const struct capture *c);

/* ---- reading (writers, report) -------------------------------------- */

/* NULL for an id that was never returned by capture__intern. */
const char *capture__string(const struct capture *c, uint32_t id);
/* The id of string @s if the capture holds it, else 0 (the empty string). */
uint32_t capture__string_id(const struct capture *c, const char *s);
/* Ids run from 0 to capture__num_strings() - 1 (for tables indexed by id). */
size_t capture__num_strings(const struct capture *c);
const char *capture__hostname(const struct capture *c);
const char *capture__session(const struct capture *c);
void capture__window(const struct capture *c, uint64_t *start_ns, uint64_t *stop_ns);
int64_t capture__realtime_offset(const struct capture *c);
uint64_t capture__probes_attached(const struct capture *c);
/* "" when no reason was given. */
const char *capture__reason(const struct capture *c);
uint32_t capture__focus_pid(const struct capture *c);

size_t capture__num_tracks(const struct capture *c);
const struct capture_track *capture__track(const struct capture *c, uint32_t id);
/*
 * Sorted spans of one track; n set to their count. NULL before finalize
 * (errno EAGAIN) or for an unknown track (ENOENT); never NULL otherwise.
 */
const struct capture_span *capture__track_spans(const struct capture *c,
						uint32_t track, size_t *n);
/*
 * Calls @fn with every span held, before finalize too (then unsorted, in
 * the order kept), track by track; @fn returning nonzero stops the walk
 * and is returned. @fn must not add or drop spans.
 */
int capture__for_each_span(const struct capture *c,
			   int (*fn)(const struct capture_span *s, void *ctx), void *ctx);
/*
 * Joins host spans to the device work they launched after the fact (a
 * runtime that says which call queued which kernel only later): @fn is
 * called with each host-thread span that has no correlation id yet, and
 * a nonzero return becomes its correlation_id. Returns how many were
 * joined; -EBUSY after finalize.
 */
long capture__join_host_spans(struct capture *c,
			      uint64_t (*fn)(const struct capture_span *s,
					     const struct capture_track *t, void *ctx),
			      void *ctx);

size_t capture__num_devices(const struct capture *c);
const struct capture_device *capture__device_info(const struct capture *c,
						  uint32_t index);
size_t capture__num_processes(const struct capture *c);
const struct capture_process *capture__process(const struct capture *c, size_t i);
size_t capture__num_threads(const struct capture *c);
const struct capture_thread *capture__thread(const struct capture *c, size_t i);
/* The index (for capture__thread) of thread (pid, tid), or -ENOENT. */
int capture__find_thread(const struct capture *c, uint32_t pid, uint32_t tid);
/*
 * Thread i's name history, oldest first (see struct capture_thread_name);
 * *n set to its entries (at most CAPTURE_MAX_THREAD_NAMES), *more (may be
 * NULL) to the renames not kept: past the first CAPTURE_MAX_THREAD_NAMES
 * names, or out of memory. The latest name is always capture_thread.name,
 * the last entry only while *more is 0. NULL with *n 0 for a thread never
 * named, or an unknown index (errno ENOENT).
 */
const struct capture_thread_name *capture__thread_names(const struct capture *c,
							size_t i, size_t *n,
							uint64_t *more);

size_t capture__num_warnings(const struct capture *c);
const char *capture__warning(const struct capture *c, size_t i);
size_t capture__num_losses(const struct capture *c);
/* The i-th loss counter: its name, and the total through *n. */
const char *capture__loss(const struct capture *c, size_t i, uint64_t *n);
/* Whether the i-th counts the window's events (capture__count_event_loss). */
bool capture__loss_of_events(const struct capture *c, size_t i);

/* Total spans kept, and dropped by the budget, per kind. */
uint64_t capture__span_count(const struct capture *c, enum span_kind kind);
/* Spans the capture holds, of every kind. */
uint64_t capture__spans_kept(const struct capture *c);
uint64_t capture__spans_dropped(const struct capture *c, enum span_kind kind);

const char *span_kind_name(enum span_kind kind);
/* Lower = dropped first when over budget. */
int span_kind_priority(enum span_kind kind);

#endif /* ACCELTRACE_CAPTURE_H */
