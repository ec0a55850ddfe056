// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The simulated device engine: one thread that runs executions in order,
 * across their cores, in real time.
 *
 * An execution's ops are scheduled core by core (all-reduce joins them,
 * infeed waits for data, outfeed waits for queue space). Records are written
 * to the devtrace buffers no earlier than SLACK_NS before their time, so a
 * reader never sees the end of an op that has not ended yet, and completion
 * is raised only once an execution's end time has passed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>

#include <linux/types.h>

#include <acceltrace/devtrace.h>

#include "device.h"
#include "devtrace_writer.h"
#include "simtruth.h"

#define SLACK_NS	500000ull	/* how far ahead of now records may be written */
#define IDLE_SYNC_NS	1000000000ull	/* clock sync at least this often */
#define DEFAULT_SYNC_NS	10000000ull

struct feed_entry {
	struct feed_entry *next;
	uint64_t t_arrive;
	size_t bytes;
	unsigned char data[];
};

struct feed_queue {
	struct feed_entry *head, *tail;
	size_t count;
};

struct simdev {
	struct simdev_opts o;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t dev_cond;	/* the device thread waits here */
	pthread_cond_t host_cond;	/* feeders wait here */
	bool stop;
	/* What the device thread waits for, so others wake it only then. */
	bool wants_work;
	int wants_infeed;		/* core + 1, or 0 */
	int wants_space;		/* core + 1, or 0 */
	struct simdev_exec *head, *tail;
	struct feed_queue infeed[SIM_MAX_CORES];
	struct feed_queue outfeed[SIM_MAX_CORES];
	struct devtrace_writer *tw[SIM_MAX_CORES];
	uint64_t last_host[SIM_MAX_CORES];	/* time of the last record per core */
	uint64_t core_free[SIM_MAX_CORES];	/* end of the core's last execution */
	/* No record of the core will be earlier than this: a clock sync at
	 * `now` may be written only if now <= frontier (records stay in time
	 * order, and each sync pair is taken at its own instant). */
	uint64_t frontier[SIM_MAX_CORES];
	uint64_t last_sync[SIM_MAX_CORES];
};

static bool stopped(struct simdev *d)
{
	return __atomic_load_n(&d->stop, __ATOMIC_ACQUIRE);
}

static void abs_timespec(uint64_t ns, struct timespec *ts)
{
	ts->tv_sec = (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
}

/* Waits on `cond` until woken or `deadline`; called with d->lock held. */
static void timed_wait(struct simdev *d, pthread_cond_t *cond, uint64_t deadline)
{
	struct timespec ts;

	abs_timespec(deadline, &ts);
	pthread_cond_timedwait(cond, &d->lock, &ts);
}

/* ---------------------------------------------------------------- records */

static void write_record(struct simdev *d, int core, uint64_t host_t,
			 struct devtrace_record *rec)
{
	rec->ts = devclock_to_device(&d->o.clock, host_t);
	devtrace_writer__emit(d->tw[core], rec);
	d->last_host[core] = host_t;
}

static void emit_sync(struct simdev *d, int core, uint64_t host_t)
{
	struct devtrace_record rec = {
		.kind = DEVTRACE_CLOCK_SYNC,
		.name_id = DEVTRACE_NO_NAME,
	};

	if (!d->tw[core])
		return;
	if (host_t < d->last_host[core])
		host_t = d->last_host[core];
	rec.arg = host_t;
	write_record(d, core, host_t, &rec);
	d->last_sync[core] = host_t;
}

static void emit(struct simdev *d, int core, uint64_t host_t,
		 struct devtrace_record *rec)
{
	if (!d->tw[core])
		return;
	/* Per core, records go out in time order; never let one step back. */
	if (host_t < d->last_host[core])
		host_t = d->last_host[core];
	if (host_t - d->last_sync[core] >= d->o.sync_interval_ns)
		emit_sync(d, core, host_t);
	write_record(d, core, host_t, rec);
}

static void emit_span(struct simdev *d, int core, uint64_t host_t, int kind,
		      const struct simdev_exec *e, uint32_t name_id, uint64_t step,
		      uint64_t arg, int flags)
{
	struct devtrace_record rec = {
		.kind = (__u16)kind,
		.flags = (__u8)flags,
		.name_id = name_id,
		.correlation_id = e->correlation_id,
		.step = step,
		.arg = arg,
	};

	emit(d, core, host_t, &rec);
}

static void emit_op(struct simdev *d, int core, uint64_t host_t, int kind,
		    const struct simdev_exec *e, int k, uint64_t step,
		    uint64_t bytes, int flags)
{
	const struct sim_op *op = &e->prog->ops[k];
	struct devtrace_record rec = {
		.kind = (__u16)kind,
		.category = (__u8)op->category,
		.flags = (__u8)flags,
		.name_id = op->name_id[core],
		.correlation_id = e->correlation_id,
		.step = step,
		.arg = (uint64_t)k,
	};

	if (kind == DEVTRACE_OP_END) {
		rec.flops = op->flops;
		rec.bytes = bytes;
	}
	emit(d, core, host_t, &rec);
}

/* Periodic clock syncs during long waits, on the cores whose next record
 * is not earlier than now (a core held back behind another's infeed wait
 * gets its pairs when it moves on; all cores share the device clock). */
static void sync_cores(struct simdev *d, uint32_t mask, uint64_t now)
{
	int c;

	for (c = 0; c < d->o.cores; c++)
		if ((mask & (1u << c)) && now - d->last_sync[c] >= IDLE_SYNC_NS &&
		    now <= d->frontier[c] && now >= d->last_host[c])
			emit_sync(d, c, now);
}

/*
 * Sleeps until host time `t` - `slack`, writing clock syncs for the cores in
 * `mask` during long waits. Returns -ECANCELED when the device is stopped.
 */
static int pace(struct simdev *d, uint64_t t, uint64_t slack, uint32_t mask)
{
	for (;;) {
		uint64_t now = truth_now(), wake;

		if (stopped(d))
			return -ECANCELED;
		if (now + slack >= t)
			return 0;
		wake = t - slack;
		if (wake - now > IDLE_SYNC_NS)
			wake = now + IDLE_SYNC_NS;
		pthread_mutex_lock(&d->lock);
		if (!d->stop)
			timed_wait(d, &d->dev_cond, wake);
		pthread_mutex_unlock(&d->lock);
		sync_cores(d, mask, truth_now());
	}
}

/* ---------------------------------------------------------------- tap */

static void tap_op(struct simdev *d, const struct simdev_exec *e, int core, int k,
		   uint64_t t0, uint64_t t1, uint64_t bytes, bool cancelled)
{
	const struct sim_op *op = &e->prog->ops[k];
	struct simdev_tap_event ev = {
		.kind = SIMDEV_TAP_OP,
		.core = core,
		.launch_id = e->launch_id,
		.module = e->prog->module,
		.name = op->name,
		.category = op->category,
		.t_start = t0,
		.t_end = t1,
		.flops = op->flops,
		.bytes = bytes,
		.cancelled = cancelled,
	};

	if (d->o.tap)
		d->o.tap(d->o.tap_ctx, &ev);
}

static void tap_module(struct simdev *d, const struct simdev_exec *e, int core,
		       bool cancelled)
{
	struct simdev_tap_event ev = {
		.kind = SIMDEV_TAP_MODULE,
		.core = core,
		.launch_id = e->launch_id,
		.module = e->prog->module,
		.name = e->prog->module,
		.t_start = e->t_start[core],
		.t_end = e->t_end[core],
		.cancelled = cancelled,
	};

	if (d->o.tap)
		d->o.tap(d->o.tap_ctx, &ev);
}

/* ---------------------------------------------------------------- truth */

static void truth_op(struct simdev *d, const struct simdev_exec *e, int core,
		     int k, uint64_t step, uint64_t t0, uint64_t t1,
		     uint64_t bytes, uint64_t wait_ns, bool cancelled)
{
	const struct sim_op *op = &e->prog->ops[k];
	struct truth_line l;

	if (!d->o.truth_ops || !truth_enabled())
		return;
	tl_begin_dev(&l, "op");
	tl_u64(&l, "core", (uint64_t)core);
	tl_u64(&l, "launch_id", e->launch_id);
	tl_str(&l, "module", e->prog->module);
	tl_str(&l, "name", op->name);
	tl_str(&l, "category", sim_category_name(op->category));
	tl_u64(&l, "step", step);
	tl_u64(&l, "t_start", t0);
	tl_u64(&l, "t_end", t1);
	tl_u64(&l, "flops", op->flops);
	tl_u64(&l, "bytes", bytes);
	if (op->category == DEVTRACE_CAT_INFEED)
		tl_u64(&l, "wait_ns", wait_ns);
	if (cancelled)
		tl_bool(&l, "cancelled", true);
	truth_commit(&l);
}

static void truth_device_execution(const struct simdev_exec *e, int core,
				   uint64_t step, bool cancelled)
{
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin_dev(&l, "device_execution");
	tl_u64(&l, "launch_id", e->launch_id);
	tl_u64(&l, "core", (uint64_t)core);
	tl_str(&l, "module", e->prog->module);
	tl_u64(&l, "step", step);
	tl_u64(&l, "t_start", e->t_start[core]);
	tl_u64(&l, "t_end", e->t_end[core]);
	if (cancelled)
		tl_bool(&l, "cancelled", true);
	truth_commit(&l);
}

/* ---------------------------------------------------------------- feeds */

static struct feed_entry *queue_pop(struct feed_queue *q)
{
	struct feed_entry *e = q->head;

	if (e) {
		q->head = e->next;
		if (!q->head)
			q->tail = NULL;
		q->count--;
	}
	return e;
}

static void queue_push(struct feed_queue *q, struct feed_entry *e)
{
	e->next = NULL;
	if (q->tail)
		q->tail->next = e;
	else
		q->head = e;
	q->tail = e;
	q->count++;
}

/* The next infeed entry of `core`; with `block`, waits for one (writing
 * clock syncs meanwhile). NULL when there is none or the device stopped. */
static struct feed_entry *take_infeed(struct simdev *d, int core, uint32_t mask,
				      bool block)
{
	struct feed_entry *ent;

	pthread_mutex_lock(&d->lock);
	while (block && !d->infeed[core].head && !d->stop) {
		d->wants_infeed = core + 1;
		timed_wait(d, &d->dev_cond, truth_now() + IDLE_SYNC_NS);
		d->wants_infeed = 0;
		if (!d->infeed[core].head) {
			pthread_mutex_unlock(&d->lock);
			sync_cores(d, mask, truth_now());
			pthread_mutex_lock(&d->lock);
		}
	}
	ent = d->stop ? NULL : queue_pop(&d->infeed[core]);
	if (ent)
		pthread_cond_broadcast(&d->host_cond);
	pthread_mutex_unlock(&d->lock);
	return ent;
}

/* The outfeed op of `core` hands over `bytes`, waiting for queue space;
 * returns the time it could, or 0 when stopped. */
static uint64_t give_outfeed(struct simdev *d, int core, size_t bytes,
			     uint64_t t_ready, uint32_t mask)
{
	struct feed_entry *ent = calloc(1, sizeof(*ent) + bytes);
	uint64_t t = 0;

	if (!ent)
		return t_ready;
	ent->bytes = bytes;
	memset(ent->data, 0xa5, bytes);
	pthread_mutex_lock(&d->lock);
	while (d->outfeed[core].count >= d->o.feed_depth && !d->stop) {
		d->wants_space = core + 1;
		timed_wait(d, &d->dev_cond, truth_now() + IDLE_SYNC_NS);
		d->wants_space = 0;
		if (d->outfeed[core].count >= d->o.feed_depth) {
			pthread_mutex_unlock(&d->lock);
			sync_cores(d, mask, truth_now());
			pthread_mutex_lock(&d->lock);
		}
	}
	if (!d->stop) {
		t = truth_now();
		if (t < t_ready)
			t = t_ready;
		ent->t_arrive = t;
		queue_push(&d->outfeed[core], ent);
		ent = NULL;
		pthread_cond_broadcast(&d->host_cond);
	}
	pthread_mutex_unlock(&d->lock);
	free(ent);
	return t;
}

/* ---------------------------------------------------------------- engine */

static void run_exec(struct simdev *d, struct simdev_exec *e)
{
	const struct sim_program *p = e->prog;
	uint64_t t[SIM_MAX_CORES], begin[SIM_MAX_CORES], end[SIM_MAX_CORES];
	uint64_t bytes[SIM_MAX_CORES], wait_ns[SIM_MAX_CORES], step[SIM_MAX_CORES];
	int cores[SIM_MAX_CORES], nc = 0, i, j, k, c, err = 0;
	uint32_t mask = e->core_mask, ended;
	uint64_t t0, m;

	for (c = 0; c < d->o.cores; c++)
		if (mask & (1u << c))
			cores[nc++] = c;
	for (i = 0; i < nc; i++) {
		/*
		 * A core starts when the work arrived or when it finished the
		 * previous execution, whichever is later: back to back when
		 * fed, however late this thread woke up. All-reduce keeps the
		 * cores of one execution together from there.
		 */
		c = cores[i];
		t0 = e->t_submit > d->core_free[c] ? e->t_submit : d->core_free[c];
		/* Never before a clock sync written while the device was idle. */
		if (t0 < d->last_host[c])
			t0 = d->last_host[c];
		t[c] = e->t_start[c] = t0;
		d->frontier[c] = t0;
		step[c] = ++e->prog->exec_count[c];
		emit_span(d, c, t0, DEVTRACE_MODULE_BEGIN, e, p->module_name_id[c],
			  step[c], (uint64_t)p->nops, 0);
		emit_span(d, c, t0, DEVTRACE_STEP_BEGIN, e, DEVTRACE_NO_NAME,
			  step[c], 0, 0);
	}

	for (k = 0; k < p->nops && !err; k++) {
		const struct sim_op *op = &p->ops[k];

		m = 0;
		for (i = 0; i < nc; i++) {
			c = cores[i];
			begin[c] = t[c];
			d->frontier[c] = begin[c];
			bytes[c] = op->bytes;
			wait_ns[c] = 0;
			if (begin[c] > m)
				m = begin[c];
		}
		err = pace(d, m, SLACK_NS, mask);
		if (err)
			break;
		for (i = 0; i < nc; i++)
			emit_op(d, cores[i], begin[cores[i]], DEVTRACE_OP_BEGIN, e, k,
				step[cores[i]], 0, 0);

		for (i = 0; i < nc && !err; i++) {
			c = cores[i];
			switch (op->category) {
			case DEVTRACE_CAT_INFEED: {
				uint64_t s = begin[c];
				bool wait_open = false;
				struct feed_entry *ent = take_infeed(d, c, mask, false);

				if (!ent) {
					/* Readers see the wait while it lasts. */
					emit_span(d, c, s, DEVTRACE_INFEED_WAIT_BEGIN, e,
						  op->name_id[c], step[c], 0, 0);
					wait_open = true;
					d->frontier[c] = UINT64_MAX;	/* next: the arrival */
					ent = take_infeed(d, c, mask, true);
					d->frontier[c] = begin[c];
				}
				if (!ent) {
					err = -ECANCELED;
					break;
				}
				if (ent->t_arrive > s) {
					if (!wait_open)
						emit_span(d, c, s, DEVTRACE_INFEED_WAIT_BEGIN,
							  e, op->name_id[c], step[c], 0, 0);
					wait_open = true;
					wait_ns[c] = ent->t_arrive - s;
					s = ent->t_arrive;
				}
				if (wait_open) {
					struct devtrace_record rec = {
						.kind = DEVTRACE_INFEED_WAIT_END,
						.name_id = op->name_id[c],
						.correlation_id = e->correlation_id,
						.step = step[c],
						.bytes = ent->bytes,
					};

					emit(d, c, s, &rec);
				}
				bytes[c] = ent->bytes;
				end[c] = s + op->duration_ns;
				d->frontier[c] = end[c];
				free(ent);
				break;
			}
			case DEVTRACE_CAT_ALL_REDUCE:
				end[c] = m + op->duration_ns;
				d->frontier[c] = end[c];
				break;
			default:
				end[c] = begin[c] + op->duration_ns;
				d->frontier[c] = end[c];
				break;
			}
		}

		if (!err && op->category == DEVTRACE_CAT_OUTFEED) {
			/* The host must not get the data before the op is done. */
			for (i = 0; i < nc && !err; i++) {
				uint64_t got;

				c = cores[i];
				err = pace(d, end[c], 0, mask);
				if (err)
					break;
				got = give_outfeed(d, c, (size_t)op->bytes, end[c], mask);
				if (!got)
					err = -ECANCELED;
				else
					end[c] = d->frontier[c] = got;
			}
		}

		/* Ends in time order, each no earlier than SLACK_NS before it. */
		ended = 0;
		for (j = 0; j < nc && !err; j++) {
			int first = -1;

			for (i = 0; i < nc; i++) {
				c = cores[i];
				if (!(ended & (1u << c)) && (first < 0 || end[c] < end[first]))
					first = c;
			}
			c = first;
			err = pace(d, end[c], SLACK_NS, mask);
			if (err)
				break;
			emit_op(d, c, end[c], DEVTRACE_OP_END, e, k, step[c], bytes[c], 0);
			truth_op(d, e, c, k, step[c], begin[c], end[c], bytes[c],
				 wait_ns[c], false);
			tap_op(d, e, c, k, begin[c], end[c], bytes[c], false);
			t[c] = end[c];
			ended |= 1u << c;
		}
		if (err) {
			/* Close the ops still open at the moment of the cut. */
			uint64_t now = truth_now();

			for (i = 0; i < nc; i++) {
				c = cores[i];
				if (ended & (1u << c))
					continue;
				emit_op(d, c, now, DEVTRACE_OP_END, e, k, step[c], 0,
					DEVTRACE_RF_CANCELLED);
				truth_op(d, e, c, k, step[c], begin[c], now, 0,
					 wait_ns[c], true);
				tap_op(d, e, c, k, begin[c], now, 0, true);
				t[c] = now;
			}
		}
	}
	if (err) {
		uint64_t now = truth_now();

		for (i = 0; i < nc; i++)
			if (t[cores[i]] < now)
				t[cores[i]] = now;
	}

	for (i = 0; i < nc; i++) {
		int flags = err ? DEVTRACE_RF_CANCELLED : 0;

		c = cores[i];
		e->t_end[c] = t[c];
		d->core_free[c] = t[c];
		d->frontier[c] = UINT64_MAX;	/* the next start clamps to last_host */
		emit_span(d, c, t[c], DEVTRACE_STEP_END, e, DEVTRACE_NO_NAME,
			  step[c], 0, flags);
		emit_span(d, c, t[c], DEVTRACE_MODULE_END, e, p->module_name_id[c],
			  step[c], (uint64_t)p->nops, flags);
		truth_device_execution(e, c, step[c], err != 0);
		tap_module(d, e, c, err != 0);
	}
	e->status = err;

	/* Interrupts, per core, once its end has passed. */
	for (j = 0; j < nc; j++) {
		int first = -1;

		for (i = 0; i < nc; i++) {
			c = cores[i];
			if (mask & (1u << c) && (first < 0 || t[c] < t[first]))
				first = c;
		}
		c = first;
		mask &= ~(1u << c);
		if (!err)
			pace(d, t[c], 0, mask | (1u << c));
		d->o.complete(d->o.ctx, e, c);
	}
}

static void cancel_exec(struct simdev *d, struct simdev_exec *e)
{
	int c;

	e->status = -ECANCELED;
	for (c = 0; c < d->o.cores; c++) {
		if (!(e->core_mask & (1u << c)))
			continue;
		e->t_start[c] = e->t_end[c] = truth_now();
		d->o.complete(d->o.ctx, e, c);
	}
}

static void *engine_main(void *arg)
{
	struct simdev *d = arg;
	struct simdev_exec *e;
	struct truth_line l;

	prctl(PR_SET_NAME, "tpu_device_sim");
	/* Op ends are timed to the microsecond; the default 50 us slack is not. */
	prctl(PR_SET_TIMERSLACK, 1UL);
	if (truth_enabled()) {
		tl_begin(&l, "thread_start");
		tl_str(&l, "name", "tpu_device_sim");
		tl_str(&l, "role", "device");
		tl_u64(&l, "t", truth_now());
		truth_commit(&l);
	}

	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->head && !d->stop) {
			d->wants_work = true;
			timed_wait(d, &d->dev_cond, truth_now() + IDLE_SYNC_NS);
			d->wants_work = false;
			if (!d->head && !d->stop) {
				pthread_mutex_unlock(&d->lock);
				sync_cores(d, ~0u, truth_now());
				pthread_mutex_lock(&d->lock);
			}
		}
		e = d->head;
		if (!e)
			break;
		d->head = e->next;
		if (!d->head)
			d->tail = NULL;
		pthread_mutex_unlock(&d->lock);
		if (stopped(d))
			cancel_exec(d, e);
		else
			run_exec(d, e);
		pthread_mutex_lock(&d->lock);
	}
	pthread_mutex_unlock(&d->lock);

	if (truth_enabled()) {
		tl_begin(&l, "thread_end");
		tl_str(&l, "name", "tpu_device_sim");
		tl_u64(&l, "t", truth_now());
		truth_commit(&l);
	}
	return NULL;
}

/* ---------------------------------------------------------------- api */

static int open_trace_buffers(struct simdev *d)
{
	char path[4096];
	int c, err;

	if (mkdir(d->o.trace_dir, 0755) && errno != EEXIST)
		return -errno;
	for (c = 0; c < d->o.cores; c++) {
		uint64_t now = truth_now();
		struct devtrace_writer_opts wo = {
			.path = path,
			.core = (__u32)c,
			.num_cores = (__u32)d->o.cores,
			.owner_pid = d->o.owner_pid,
			.record_capacity = d->o.trace_records,
			.clock_rate_hz = d->o.clock.rate_hz,
			.sync_host_ns = now,
			.sync_device_ts = devclock_to_device(&d->o.clock, now),
			.device_kind = "TPU v4",
		};

		snprintf(path, sizeof(path), "%s/core%d.devtrace", d->o.trace_dir, c);
		d->tw[c] = devtrace_writer__new(&wo);
		if (!d->tw[c]) {
			err = -errno;
			fprintf(stderr, "libtpu(sim): cannot create %s: %s\n", path,
				strerror(errno));
			return err;
		}
		d->last_host[c] = now;
		emit_sync(d, c, now);
	}
	return 0;
}

struct simdev *simdev__new(const struct simdev_opts *opts)
{
	struct simdev *d;
	pthread_condattr_t ca;
	int c, err;

	if (opts->cores < 1 || opts->cores > SIM_MAX_CORES || !opts->complete) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->o = *opts;
	if (!d->o.sync_interval_ns)
		d->o.sync_interval_ns = DEFAULT_SYNC_NS;
	if (!d->o.feed_depth)
		d->o.feed_depth = 8;
	if (!d->o.trace_records)
		d->o.trace_records = 65536;
	for (c = 0; c < SIM_MAX_CORES; c++)
		d->frontier[c] = UINT64_MAX;
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->dev_cond, &ca);
	pthread_cond_init(&d->host_cond, &ca);
	pthread_condattr_destroy(&ca);

	if (d->o.trace_dir) {
		err = open_trace_buffers(d);
		if (err)
			goto fail;
	}
	err = -pthread_create(&d->thread, NULL, engine_main, d);
	if (err)
		goto fail;
	d->started = true;
	return d;
fail:
	simdev__free(d);
	errno = -err;
	return NULL;
}

void simdev__shutdown(struct simdev *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	__atomic_store_n(&d->stop, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&d->dev_cond);
	pthread_cond_broadcast(&d->host_cond);
	pthread_mutex_unlock(&d->lock);
	if (d->started) {
		pthread_join(d->thread, NULL);
		d->started = false;
	}
}

void simdev__free(struct simdev *d)
{
	struct feed_entry *ent;
	int c;

	if (!d)
		return;
	simdev__shutdown(d);
	for (c = 0; c < SIM_MAX_CORES; c++) {
		while ((ent = queue_pop(&d->infeed[c])))
			free(ent);
		while ((ent = queue_pop(&d->outfeed[c])))
			free(ent);
		devtrace_writer__free(d->tw[c]);
	}
	pthread_cond_destroy(&d->dev_cond);
	pthread_cond_destroy(&d->host_cond);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

int simdev__load(struct simdev *d, struct sim_program *p)
{
	int c, k;

	for (c = 0; c < d->o.cores; c++) {
		p->module_name_id[c] = DEVTRACE_NO_NAME;
		for (k = 0; k < p->nops; k++)
			p->ops[k].name_id[c] = DEVTRACE_NO_NAME;
		if (!d->tw[c])
			continue;
		p->module_name_id[c] = devtrace_writer__name(d->tw[c],
				DEVTRACE_NAME_MODULE, p->module);
		for (k = 0; k < p->nops; k++)
			p->ops[k].name_id[c] = devtrace_writer__name(d->tw[c],
					DEVTRACE_NAME_OP, p->ops[k].name);
	}
	return 0;
}

int simdev__submit(struct simdev *d, struct simdev_exec *e)
{
	int err = 0;

	e->next = NULL;
	e->status = 0;
	e->t_submit = truth_now();
	pthread_mutex_lock(&d->lock);
	if (d->stop) {
		err = -ECANCELED;
	} else {
		if (d->tail)
			d->tail->next = e;
		else
			d->head = e;
		d->tail = e;
		if (d->wants_work)
			pthread_cond_signal(&d->dev_cond);
	}
	pthread_mutex_unlock(&d->lock);
	return err;
}

int simdev__infeed(struct simdev *d, int core, const void *data, size_t bytes)
{
	struct feed_entry *ent;
	int err = 0;

	if (core < 0 || core >= d->o.cores)
		return -EINVAL;
	ent = malloc(sizeof(*ent) + bytes);
	if (!ent)
		return -ENOMEM;
	ent->bytes = bytes;
	memcpy(ent->data, data, bytes);
	pthread_mutex_lock(&d->lock);
	while (d->infeed[core].count >= d->o.feed_depth && !d->stop)
		pthread_cond_wait(&d->host_cond, &d->lock);
	if (d->stop) {
		err = -ECANCELED;
	} else {
		ent->t_arrive = truth_now();
		queue_push(&d->infeed[core], ent);
		ent = NULL;
		if (d->wants_infeed == core + 1)
			pthread_cond_signal(&d->dev_cond);
	}
	pthread_mutex_unlock(&d->lock);
	free(ent);
	return err;
}

int simdev__outfeed(struct simdev *d, int core, void *data, size_t cap, size_t *len)
{
	struct feed_entry *ent;

	if (core < 0 || core >= d->o.cores)
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	while (!d->outfeed[core].head && !d->stop)
		pthread_cond_wait(&d->host_cond, &d->lock);
	ent = d->stop ? NULL : queue_pop(&d->outfeed[core]);
	if (ent && d->wants_space == core + 1)
		pthread_cond_signal(&d->dev_cond);
	pthread_mutex_unlock(&d->lock);
	if (!ent)
		return -ECANCELED;
	memcpy(data, ent->data, ent->bytes < cap ? ent->bytes : cap);
	*len = ent->bytes;
	free(ent);
	return 0;
}

const struct devclock *simdev__clock(const struct simdev *d)
{
	return &d->o.clock;
}

int simdev__cores(const struct simdev *d)
{
	return d->o.cores;
}
