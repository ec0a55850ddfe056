// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device's own timeline: records of the devtrace buffers handed to the
 * collector (collector__add_devtrace) become spans on the device tracks:
 *
 *   MODULE_BEGIN..END  -> XLA Modules  (correlation_id = the launch id)
 *   OP_BEGIN..END      -> XLA Ops      (hlo_category, flops, bytes_accessed,
 *                                       program_id, launch_id)
 *
 * STEP records are not drawn: the device marks every execution of every
 * program as a step, training or not, while XProf's Steps are the training
 * steps. The window's steps are the executions of the dominant program
 * (analyze/steps.h), chosen among these modules as among the runtime's, and
 * the writer numbers them (step_num, group_id) by launch, for the host's
 * Execute, the module and its ops alike.
 *   INFEED_WAIT_*      -> XLA Ops, nested in its infeed op: the device
 *                         waiting for host data (hlo_category "infeed")
 *
 * Device ticks become host CLOCK_MONOTONIC through one clock fit per
 * (device_id, run_id), fed by every core's pairs. A span is made when it
 * ends; what is still open when the window closes is made then with its
 * true start (read from the ring, also when it began before acceltrace
 * attached) and marked open at stop. Devices with a devtrace buffer get
 * their modules and steps from it only: the runtime's estimate of them is
 * not added (collect_devtrace_covers).
 *
 * A buffer found in a process (not named by the user) is let go once its
 * owner has exited, it was read to the end and the window no longer
 * reaches back to the exit: closed, and forgotten where it was found, so
 * that a daemon's buffers and their staging room do not grow with every
 * process the host ever ran, and a later process mapping the same file is
 * read afresh.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "devtrace"
#include "lib/clock.h"
#include "collect/collector_internal.h"
#include "collect/collect_devtrace_internal.h"
#include "devtrace/devtrace_clock.h"
#include "devtrace/devtrace_format.h"
#include "devtrace/devtrace_reader.h"
#include "discover/devtrace_buffers.h"
#include "lib/array.h"
#include "lib/hashmap.h"
#include "lib/log.h"

/* Per record-loop tick: batches of at most this many records a buffer. */
#define TICK_BATCHES 2
#define TICK_BATCH_RECORDS 4096
/* At an exit or the finish: a whole ring's worth (16 x 4096), a few times. */
#define CATCH_UP_BATCHES 16
#define CATCH_UP_POLLS 4
/* Records past a planned stop, kept for the next window, at most (16 MB). */
#define MAX_CARRIED_RECORDS 262144

static struct dt_core *core_of(struct collect_devtrace *d, int buf)
{
	if (ARRAY_GROW(d->cores, d->cores_cap, (size_t)buf + 1))
		return NULL;
	while (d->ncores <= (size_t)buf)
		memset(&d->cores[d->ncores++], 0, sizeof(d->cores[0]));
	return &d->cores[buf];
}

/* The fit of @h's (device, run); a new one, in a let-go one's slot if
 * any, for a run not seen yet. The index, or -errno. */
static int clock_of(struct collect_devtrace *d, const struct devtrace_header *h)
{
	size_t i, slot = d->nclocks;

	for (i = 0; i < d->nclocks; i++) {
		if (!d->clocks[i].clock)
			slot = slot < d->nclocks ? slot : i;
		else if (d->clocks[i].device_id == h->device_id &&
			 d->clocks[i].run_id == h->run_id)
			return (int)i;
	}
	if (slot == d->nclocks && ARRAY_GROW(d->clocks, d->clocks_cap, d->nclocks + 1))
		return -ENOMEM;
	d->clocks[slot].clock = devtrace_clock__new(h->clock_rate_hz);
	if (!d->clocks[slot].clock)
		return -errno;
	d->clocks[slot].device_id = h->device_id;
	d->clocks[slot].run_id = h->run_id;
	if (slot == d->nclocks)
		d->nclocks++;
	return (int)slot;
}

/* Frees fit @i once no core's run uses it. */
static void release_clock(struct collect_devtrace *d, int i)
{
	if (i < 0)
		return;
	for (size_t j = 0; j < d->ncores; j++)
		if (d->cores[j].known && d->cores[j].clock == i)
			return;
	devtrace_clock__free(d->clocks[i].clock);
	d->clocks[i].clock = NULL;
}

static void drop_carried_of(struct collect_devtrace *d, int buf)
{
	size_t w = 0;

	for (size_t i = 0; i < d->n_carried; i++) {
		if (d->carried[i].buf == buf) {
			d->carried_dropped++;
			continue;
		}
		d->carried[w++] = d->carried[i];
	}
	d->n_carried = w;
}

static int drop_name(uint64_t buf, uint64_t id, void *value, void *ctx)
{
	(void)buf;
	(void)id;
	(void)value;
	(void)ctx;
	return 1;
}

static void forget_names(struct collect_devtrace *d)
{
	if (d->names)
		hashmap__filter(d->names, drop_name, NULL);
}

static void on_run(void *ctx, int buf, const struct devtrace_header *h)
{
	struct collect_devtrace *d = ctx;
	struct dt_core *k = core_of(d, buf);
	struct dt_found found;
	int old_clock;

	if (!k) {
		collect_out_of_memory(d->c);
		return;
	}
	/* A new run (the owner restarted): what was carried of the old one
	 * would be read with the new clock. */
	if (k->carrying)
		drop_carried_of(d, buf);
	found = k->found;
	old_clock = k->known ? k->clock : -1;
	forget_names(d);	/* a new run's names start over */
	memset(k, 0, sizeof(*k));
	k->found = found;
	release_clock(d, old_clock);
	k->known = true;
	/* A container's process names itself by its namespace's pid: the
	 * process the buffer was found in is the one it means. */
	k->pid = h->owner_pid;
	if (found.host_pid && found.ns_pid && h->owner_pid == found.ns_pid &&
	    found.ns_pid != found.host_pid) {
		k->pid = found.host_pid;
		k->ns_tids = true;
	}
	k->device_id = h->device_id;
	k->run_id = h->run_id;
	/* The runtime's device ordinal: cores of device 0, then device 1... */
	k->ordinal = h->device_id * (h->num_cores ? h->num_cores : 1) + h->core;
	memcpy(k->kind, h->device_kind, sizeof(k->kind) - 1);
	/* The writer's word: only letters kept ("GPU", "TPU"). */
	for (size_t i = 0; i < sizeof(h->platform) && i + 1 < sizeof(k->platform); i++) {
		char ch = h->platform[i];

		if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z')))
			break;
		k->platform[i] = ch;
	}
	k->streams = h->flags & DEVTRACE_F_STREAMS;
	k->dev_index = -1;
	k->clock = clock_of(d, h);
	if (k->clock < 0) {
		collect_out_of_memory(d->c);
		return;
	}
	devtrace_clock__add_pair(d->clocks[k->clock].clock, h->sync_device_ts, h->sync_host_ns);
	log_debug("%s: device %u core %u of pid %u (%s)",
		  devtrace_reader__label(d->reader, buf), h->device_id, h->core,
		  h->owner_pid, k->kind);
}

static uint64_t host_ns(struct collect_devtrace *d, const struct dt_core *k, uint64_t ts)
{
	if (k->clock < 0)
		return 0;
	return devtrace_clock__to_host(d->clocks[k->clock].clock, ts, NULL);
}

uint64_t host_ns_of(struct collect_devtrace *d, const struct dt_core *k, uint64_t ts)
{
	return host_ns(d, k, ts);
}

static double bound_at(struct collect_devtrace *d, const struct dt_core *k, uint64_t ts)
{
	double bound = INFINITY;

	if (k->clock >= 0)
		devtrace_clock__to_host(d->clocks[k->clock].clock, ts, &bound);
	return bound;
}

uint32_t collect_devtrace_name(struct collect_devtrace *d, int buf, uint32_t id,
			       const char *fallback)
{
	char text[DEVTRACE_LONG_NAME_MAX + 1];
	uintptr_t hit;
	uint32_t s;

	if (d->names_gen != d->c->cap_gen) {
		forget_names(d);	/* ids of the previous window's capture */
		d->names_gen = d->c->cap_gen;
	}
	if (d->names && id != DEVTRACE_NO_NAME &&
	    (hit = (uintptr_t)hashmap__get(d->names, (uint64_t)buf, id)))
		return (uint32_t)hit;
	/* A name not read yet is not kept: it may be there at the next read. */
	if (!devtrace_reader__long_name(d->reader, buf, id, text, sizeof(text)))
		return fallback ? capture__intern(d->c->cap, fallback) : 0;
	s = capture__intern(d->c->cap, text);
	if (s && d->names)
		hashmap__put(d->names, (uint64_t)buf, id, (void *)(uintptr_t)s, NULL);
	return s;
}

/*
 * @start and @end of a span of @kind (0 module, 1 op, 2 wait) that began at
 * device tick @ts0 and ended at @ts1 (UINT64_MAX: open at the stop): no
 * earlier than the previous span of its kind that ended by @ts0, and an op
 * around the wait just made. See dt_core.prev_end_ts.
 */
static void snap_to_neighbours(struct dt_core *k, int kind, uint64_t ts0, uint64_t ts1,
			       uint64_t *start, uint64_t *end)
{
	if (k->prev_end_ns[kind] && ts0 >= k->prev_end_ts[kind] &&
	    *start < k->prev_end_ns[kind])
		*start = k->prev_end_ns[kind];
	/* A wait shares the ops' line: no earlier than the op before its own. */
	if (kind == 2 && k->prev_end_ns[1] && ts0 >= k->prev_end_ts[1] &&
	    *start < k->prev_end_ns[1])
		*start = k->prev_end_ns[1];
	if (kind == 1 && k->prev_end_ns[2] && k->prev_end_ts[2] <= ts1 &&
	    k->prev_end_ts[2] >= ts0) {
		/* The wait inside this op (made first: it ended first). */
		if (k->wait_start_ns && k->wait_start_ns < *start)
			*start = k->wait_start_ns;
		if (k->prev_end_ns[2] > *end)
			*end = k->prev_end_ns[2];
	}
	if (*end < *start)
		*end = *start;
	if (ts1 != UINT64_MAX) {
		k->prev_end_ts[kind] = ts1;
		k->prev_end_ns[kind] = *end;
	}
	if (kind == 2)
		k->wait_start_ns = *start;
}

/* Emits the span @o opened, ending at host time @end (0: no clock yet). */
static void emit(struct collect_devtrace *d, int buf, struct dt_core *k, struct dt_open *o,
		 enum track_kind tk, enum span_kind sk, uint64_t end, uint16_t flags,
		 const struct devtrace_record *end_rec, bool infeed_wait)
{
	struct collector *c = d->c;
	struct capture_span s;
	uint64_t start = host_ns(d, k, o->ts);
	double bound;
	int dev, track;
	uint32_t name;

	o->active = false;
	if (!start || !end) {
		d->no_clock++;
		return;
	}
	snap_to_neighbours(k, sk == SPAN_DEVICE_MODULE ? 0 : infeed_wait ? 2 : 1, o->ts,
			   end_rec ? end_rec->ts : UINT64_MAX, &start, &end);
	/* History the ring held at attach: a window opens after the probes
	 * attached, so what ended before cannot be in it. */
	if (!c->window_open && end < capture__probes_attached(c->cap))
		return;
	bound = bound_at(d, k, o->ts);
	if (bound > d->worst_bound_ns)
		d->worst_bound_ns = bound;
	dev = capture__device(c->cap, k->pid, k->ordinal, k->kind, 0, 0);
	track = dev < 0 ? dev : capture__device_track(c->cap, dev, tk);
	if (track < 0) {
		collect_out_of_memory(c);
		return;
	}
	if (sk == SPAN_DEVICE_MODULE) {
		name = capture__intern(c->cap, k->module[0] ? k->module : "module");
	} else {
		name = collect_devtrace_name(d, buf, o->name_id, infeed_wait ? "infeed" : "op");
	}
	collect_init_span(&s, track, sk, name, start, end);
	s.flags = flags;
	/* One correlation per execution and core, so XProf links (flows)
	 * the host Execute to the module only, not to each op. */
	if (sk == SPAN_DEVICE_MODULE)
		s.correlation_id = o->corr;
	if (end_rec && (end_rec->flags & DEVTRACE_RF_CANCELLED))
		s.flags |= SPAN_F_ERROR;
	switch (sk) {
	case SPAN_DEVICE_MODULE:
		collect_span_stat(c, &s, "launch_id", o->corr);
		collect_span_stat(c, &s, "program_id", o->name_id);
		break;
	default: {
		const char *cat = infeed_wait ? "infeed" : devtrace_category_name(o->category);

		if (cat)
			capture_span__add_str(&s, collect_intern_static(c, "hlo_category"),
					      collect_intern_static(c, cat));
		collect_span_stat(c, &s, "program_id", k->module_open.name_id);
		if (end_rec && !infeed_wait) {
			collect_span_stat(c, &s, "flops", end_rec->flops);
			collect_span_stat(c, &s, "bytes_accessed", end_rec->bytes);
		}
		if (infeed_wait)
			collect_span_stat(c, &s, "acceltrace.infeed_wait", 1);
	}
	}
	/* Modules: the clock fit's error bound at their start, so
	 * the capture says how far its device times can be trusted; ops
	 * (out of room for both): their execution. */
	if (sk == SPAN_DEVICE_OP)
		collect_span_stat(c, &s, "launch_id", o->corr);
	else
		capture_span__add_double(&s, collect_intern_static(c, "acceltrace.clock_bound_ns"),
					 bound);
	d->spans++;
	collect_keep_span(c, &s);
}

static void open_span(struct dt_open *o, const struct devtrace_record *r)
{
	o->active = true;
	o->ts = r->ts;
	o->name_id = r->name_id;
	o->category = r->category;
	o->corr = r->correlation_id;
	o->step = r->step;
}

/*
 * With the window's stop planned (the next opening there), a record past
 * it is the next window's: kept as read and replayed once its capture is
 * set, like the ring buffers' records (collector.c, carry()). Spans running at the
 * stop are drawn to it, open, and go on in the next window.
 */
static bool carry(struct collect_devtrace *d, int buf, struct dt_core *k,
		  const struct devtrace_record *r)
{
	struct collector *c = d->c;
	uint64_t t;

	if (d->replaying || !c->stop_planned)
		return false;
	/* A whole span (a GPU kernel) comes in no ts order: each is the next
	 * window's if it began past the stop, and says nothing of the
	 * records after it. */
	if (DEVTRACE_KIND_IS_SPAN(r->kind)) {
		t = host_ns(d, k, r->ts);
		if (!t || t <= c->stop_ns)
			return false;
	} else if (!k->carrying) {
		t = host_ns(d, k, r->ts);
		if (!t || t <= c->stop_ns)
			return false;
		k->carrying = true;
	}
	if (d->n_carried >= MAX_CARRIED_RECORDS) {
		d->carried_dropped++;
		return true;
	}
	if (ARRAY_GROW(d->carried, d->cap_carried, d->n_carried + 1)) {
		d->carried_dropped++;
		collect_out_of_memory(c);
		return true;
	}
	d->carried[d->n_carried].buf = buf;
	d->carried[d->n_carried++].r = *r;
	return true;
}

static int on_record(void *ctx, int buf, const struct devtrace_record *r)
{
	struct collect_devtrace *d = ctx;
	struct dt_core *k = (size_t)buf < d->ncores ? &d->cores[buf] : NULL;
	const char *name;

	if (!k || !k->known || k->clock < 0)
		return 0;
	/* Records carried past the last window's stop come first. */
	if (d->c->replay_pending)
		collect_replay_pending(d->c);
	if (carry(d, buf, k, r))
		return 0;
	switch (r->kind) {
	case DEVTRACE_CLOCK_SYNC:
		devtrace_clock__add_pair(d->clocks[k->clock].clock, r->ts, r->arg);
		break;
	case DEVTRACE_MODULE_BEGIN:
		open_span(&k->module_open, r);
		name = devtrace_reader__name(d->reader, buf, r->name_id, NULL);
		snprintf(k->module, sizeof(k->module), "%s", name ? name : "");
		break;
	case DEVTRACE_STEP_BEGIN:
	case DEVTRACE_STEP_END:
		break;		/* steps are chosen at the window's end */
	case DEVTRACE_OP_BEGIN:
		open_span(&k->op_open, r);
		break;
	case DEVTRACE_INFEED_WAIT_BEGIN:
		open_span(&k->wait_open, r);
		break;
	case DEVTRACE_MODULE_END:
	case DEVTRACE_OP_END:
	case DEVTRACE_INFEED_WAIT_END: {
		static const struct {
			enum track_kind tk;
			enum span_kind sk;
		} map[] = {
			[DEVTRACE_MODULE_END] = { TRACK_DEVICE_MODULES, SPAN_DEVICE_MODULE },
			[DEVTRACE_OP_END] = { TRACK_DEVICE_OPS, SPAN_DEVICE_OP },
			[DEVTRACE_INFEED_WAIT_END] = { TRACK_DEVICE_OPS, SPAN_DEVICE_OP },
		};
		struct dt_open *o = r->kind == DEVTRACE_MODULE_END ? &k->module_open :
				    r->kind == DEVTRACE_OP_END ? &k->op_open : &k->wait_open;

		/* An end whose begin was overwritten before it was read (or
		 * lay before the ring's oldest record): counted, not drawn. */
		if (!o->active || o->corr != r->correlation_id) {
			d->unmatched_ends++;
			o->active = false;
			break;
		}
		emit(d, buf, k, o, map[r->kind].tk, map[r->kind].sk, host_ns(d, k, r->ts), 0, r,
		     r->kind == DEVTRACE_INFEED_WAIT_END);
		break;
	}
	case DEVTRACE_KERNEL:
	case DEVTRACE_TRANSFER:
	case DEVTRACE_LAUNCH:
		collect_gpu_stream_record(d, buf, k, r);
		break;
	default:
		break;	/* DMA_*: not drawn yet */
	}
	return 0;
}

int collector__add_devtrace(struct collector *c, int fd, const char *label,
			    struct devtrace_seen *seen)
{
	struct collect_devtrace *d = c->devtrace;
	struct dt_found found = { .seen = seen };
	struct dt_core *k;
	struct stat st;
	int i;

	if (!d) {
		struct devtrace_reader_ops ops = { .on_run = on_run, .on_record = on_record };
		struct devtrace_reader_opts ropts = { .sz = sizeof(ropts),
						      .max_batch_records = TICK_BATCH_RECORDS };

		d = calloc(1, sizeof(*d));
		if (!d) {
			close(fd);
			return -ENOMEM;
		}
		d->c = c;
		d->names = hashmap__new();	/* without it names are read each time */
		ops.ctx = d;
		d->reader = devtrace_reader__new(&ropts, &ops);
		if (!d->reader) {
			int err = -errno;

			free(d);
			close(fd);
			return err;
		}
		log_debug("devtrace buffers read with %s",
			  devtrace_io__engine_name(devtrace_reader__engine(d->reader)));
		c->devtrace = d;
	}
	if (seen) {
		if (fstat(fd, &st)) {
			i = -errno;
			close(fd);
			return i;
		}
		found.dev = st.st_dev;
		found.ino = st.st_ino;
	}
	i = devtrace_reader__add(d->reader, fd, label);
	if (i < 0)
		return i;
	/* A let-go buffer's index may come back: its core starts afresh. */
	k = core_of(d, i);
	if (!k) {
		devtrace_reader__remove(d->reader, i);
		return -ENOMEM;
	}
	memset(k, 0, sizeof(*k));
	k->found = found;
	return i;
}

void collector__devtrace_found_in(struct collector *c, int buf, uint32_t pid, uint32_t ns_pid)
{
	struct collect_devtrace *d = c->devtrace;

	if (!d || buf < 0 || (size_t)buf >= d->ncores)
		return;
	d->cores[buf].found.host_pid = pid;
	d->cores[buf].found.ns_pid = ns_pid;
	/* Its run may have been seen already (read at once when added). */
	if (d->cores[buf].known && d->cores[buf].pid == ns_pid && ns_pid != pid) {
		d->cores[buf].pid = pid;
		d->cores[buf].ns_tids = true;
	}
}

void collector__set_ns_tids(struct collector *c, collector_ns_tids_fn fn, void *ctx)
{
	if (!c->devtrace)
		return;
	c->devtrace->ns_tids = fn;
	c->devtrace->ns_tids_ctx = ctx;
}

/*
 * An execution that has run for over LONG_EXECUTION_NS when the watch for
 * activity began (a ten-minute op, attached to mid-way) is that activity:
 * the window arms at once instead of waiting for a next launch that will
 * not come until it ends. Shorter ones arm nothing, so start-up's one-off
 * programs still do not open the window (collect_note_activity).
 */
static bool long_execution_at(struct collect_devtrace *d, uint64_t t)
{
	for (size_t i = 0; i < d->ncores; i++) {
		struct dt_core *k = &d->cores[i];
		uint64_t began;

		if (!k->known || !k->module_open.active)
			continue;
		began = host_ns(d, k, k->module_open.ts);
		if (began && began < t && t - began > LONG_EXECUTION_NS)
			return true;
	}
	return false;
}

static void note_long_execution(struct collect_devtrace *d)
{
	struct collector *c = d->c;

	if (c->watch_after && !c->first_activity && long_execution_at(d, c->watch_after))
		collect_note_activity(c, c->watch_after, ACT_EXECUTION);
}

bool collect_devtrace_long_execution(struct collector *c)
{
	if (!c->devtrace)
		return false;
	return long_execution_at(c->devtrace, mono_ns());
}

/*
 * Up to @polls polls of at most @batches batches each, fewer once caught
 * up. Always bounded: a busy writer (another process's, with -a) would
 * otherwise never let "caught up" come.
 */
static long poll_batches(struct collector *c, int batches, int polls)
{
	long n, total = 0;

	if (!c->devtrace || !c->cap)
		return 0;
	do {
		n = devtrace_reader__poll(c->devtrace->reader, batches);
		if (n < 0) {
			log_warn("reading the devtrace buffers failed: %s", strerror(-n));
			return n;
		}
		total += n;
	} while (n > 0 && --polls > 0);
	note_long_execution(c->devtrace);
	return total;
}

long collector__poll_devtrace(struct collector *c)
{
	/* A tick of the record loop reads a bounded amount (the history a
	 * ring holds at attach takes a few ticks), so the ring buffers and
	 * the attach controller are never kept waiting long. */
	return poll_batches(c, TICK_BATCHES, 1);
}

bool collect_devtrace_covers(const struct collector *c, uint32_t pid, uint32_t ordinal)
{
	const struct collect_devtrace *d = c->devtrace;

	/* A GPU's stream buffer says nothing of programs: the runtime's
	 * estimate of them stays. */
	for (size_t i = 0; d && i < d->ncores; i++)
		if (d->cores[i].known && !d->cores[i].streams && d->cores[i].pid == pid &&
		    d->cores[i].ordinal == ordinal)
			return true;
	return false;
}

/*
 * Ends core @i's open spans at host time @end (those begun by then), with
 * @flags; @keep: they still run (a later window draws them again).
 */
static void end_open_spans(struct collect_devtrace *d, size_t i, uint64_t end, uint16_t flags,
			   bool keep)
{
	struct dt_core *k = &d->cores[i];
	struct {
		struct dt_open *o;
		enum track_kind tk;
		enum span_kind sk;
		bool wait;
	} opens[] = {
		{ &k->module_open, TRACK_DEVICE_MODULES, SPAN_DEVICE_MODULE, false },
		{ &k->op_open, TRACK_DEVICE_OPS, SPAN_DEVICE_OP, false },
		{ &k->wait_open, TRACK_DEVICE_OPS, SPAN_DEVICE_OP, true },
	};

	if (!k->known || k->clock < 0)
		return;
	for (size_t j = 0; j < sizeof(opens) / sizeof(opens[0]); j++) {
		struct dt_open saved = *opens[j].o;

		if (!saved.active || host_ns(d, k, saved.ts) > end)
			continue;
		emit(d, (int)i, k, opens[j].o, opens[j].tk, opens[j].sk, end, flags, NULL,
		     opens[j].wait);
		if (keep)
			*opens[j].o = saved;
		if (flags & SPAN_F_OPEN_AT_STOP)
			d->c->st.open_at_stop++;
	}
}

/* At stop: what is still running is drawn to the stop with its true start. */
static void close_open(struct collect_devtrace *d)
{
	for (size_t i = 0; i < d->ncores; i++)
		end_open_spans(d, i, d->c->stop_ns, SPAN_F_OPEN_AT_STOP, true);
}

/* The owner exited: its cores' work in flight ends with it, marked. The
 * buffer is read first, so what the device finished before is whole. */
void collect_devtrace_process_exit(struct collector *c, uint32_t pid, uint64_t ts)
{
	struct collect_devtrace *d = c->devtrace;

	if (!d)
		return;
	poll_batches(c, CATCH_UP_BATCHES, 1);
	for (size_t i = 0; i < d->ncores; i++) {
		if (!d->cores[i].known || d->cores[i].pid != pid)
			continue;
		end_open_spans(d, i, ts, SPAN_F_TARGET_EXITED, false);
		d->cores[i].exited_ns = ts ? ts : 1;
	}
}

/*
 * Lets go of the found buffers whose owner exited before @before_ns (the
 * window holds nothing of theirs then: the exit ended all their spans) and
 * that were read to the end. Their fit goes with the last core using it.
 */
static void release_exited(struct collect_devtrace *d, uint64_t before_ns)
{
	for (size_t i = 0; i < d->ncores; i++) {
		struct dt_core *k = &d->cores[i];
		int clock = k->clock;

		if (!k->known || !k->found.seen || !k->exited_ns || k->exited_ns >= before_ns ||
		    k->carrying || !devtrace_reader__caught_up(d->reader, (int)i))
			continue;
		log_debug("%s: pid %u exited: closed", devtrace_reader__label(d->reader, (int)i),
			  k->pid);
		devtrace_seen__forget(k->found.seen, k->found.dev, k->found.ino);
		devtrace_reader__remove(d->reader, (int)i);
		memset(k, 0, sizeof(*k));
		release_clock(d, clock);
	}
}

void collect_devtrace_forget_before(struct collector *c, uint64_t start_ns)
{
	if (!c->devtrace)
		return;
	release_exited(c->devtrace, start_ns);
	collect_gpu_forget_before(c->devtrace, start_ns);
}

void collect_devtrace_replay_carried(struct collector *c)
{
	struct collect_devtrace *d = c->devtrace;

	if (!d)
		return;
	d->replaying = true;
	for (size_t i = 0; i < d->n_carried; i++)
		on_record(d, d->carried[i].buf, &d->carried[i].r);
	d->replaying = false;
	d->n_carried = 0;
	for (size_t i = 0; i < d->ncores; i++)
		d->cores[i].carrying = false;
}

void collect_devtrace_finish(struct collector *c)
{
	struct collect_devtrace *d = c->devtrace;

	if (!d)
		return;
	poll_batches(c, CATCH_UP_BATCHES, CATCH_UP_POLLS);
	close_open(d);
	collect_gpu_join_launches(d);
	collect_devtrace_report_matching(d);
	collect_devtrace_note_losses(c);
	/* The next window opens at the stop. */
	release_exited(d, c->stop_ns);
}

void collect_devtrace_free(struct collector *c)
{
	struct collect_devtrace *d = c->devtrace;

	if (!d)
		return;
	devtrace_reader__free(d->reader);
	for (size_t i = 0; i < d->nclocks; i++)
		devtrace_clock__free(d->clocks[i].clock);
	free(d->clocks);
	free(d->cores);
	free(d->carried);
	collect_gpu_free(d);
	hashmap__free(d->names, NULL);
	free(d);
	c->devtrace = NULL;
}
