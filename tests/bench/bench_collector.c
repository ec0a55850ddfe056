// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The collector's throughput: the highest rate of 64-byte records it
 * sustains on one core with zero drops.
 *
 * A synthetic producer (tests/bench/bench.bpf.c `produce`, run through
 * BPF_PROG_TEST_RUN on CPU 0, paced to a target rate) writes sched_switch
 * records, 56 bytes plus the ring's 8-byte header, into an 8 MiB ring (the
 * size of one of acceltrace's shards) with acceltrace's wakeup rule (a
 * forced wakeup once an eighth of the ring is full). The consumer, on CPU 1,
 * is acceltrace's: the ring polled with a 5 ms timeout as `record` does,
 * each record handed to collector__record(). Three consumers:
 *
 *   floor   a callback that only counts;
 *   drain   no window open: the collector pairs off/on-CPU records into
 *           spans held in its pre-window buffer (bounded, so memory stays
 *           flat);
 *   window  a window open from the trial's start, so spans go into the
 *           capture (capture__add_span, its event budget) and runtime calls
 *           are correlated: each ring record stands for the next record of
 *           a PJRT step (see struct mix), which the collector is handed
 *           instead, stamped with the ring record's time.
 *
 * For each consumer, a search finds the highest rate with zero drops in
 * short trials (a trial that drops is run once more before its rate counts
 * as too high), repeated BENCH_COLLECTOR_REPS times (default 3); then the
 * drain consumer holds 95% of its median rate for BENCH_HOLD_S seconds
 * (default 60), reported per 5-second window, and the window consumer 95%
 * of its own for up to 10 of those seconds, after which its window is
 * finished and finalized and the correlation checked.
 */
#include <pthread.h>
#include <stdbool.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bench.skel.h"
#include "capture/capture.h"
#include "collect/collector.h"
#include "attach/attach_control.h"
#include "discover/probe_packs.h"
#include "lib/log.h"

#define BATCH 256
#define RING_BYTES (8u << 20)
#define WINDOW_HOLD_MAX_S 10

enum consumer_mode { MODE_FLOOR, MODE_DRAIN, MODE_WINDOW };

static const char *const mode_names[] = {
	[MODE_FLOOR] = "count-only consumer",
	[MODE_DRAIN] = "collector, no window (drain)",
	[MODE_WINDOW] = "collector, window open (PJRT step mix)",
};

/* ---------------------------------------------------------------- probes */

/*
 * The collector asks its lookups what a runtime record's probe id stands
 * for, and queues control records (a callback registered, ...). There is
 * no runtime here: probe ids index real pack entries, and the queue is
 * taken after each poll as the record loop takes it, its records dropped
 * (the controller's work is not the collector's).
 */
enum bench_probe { PROBE_EXECUTE, PROBE_ON_READY, PROBE_CALLBACK, PROBE_H2D,
		   PROBE_D2H, N_PROBES };

static const struct rt_pack_entry *bench_entries[N_PROBES];

static const struct rt_pack_entry *bench_probe_entry(void *ctx, int probe_id)
{
	return probe_id >= 0 && probe_id < N_PROBES ? bench_entries[probe_id] : NULL;
}

static const struct control_lookups bench_ops = {
	.probe_entry = bench_probe_entry,
};

/* The PJRT pack's entries for the kinds the mix uses; -ENOENT if absent. */
static int bench_probes_init(void)
{
	static const enum rt_event_kind kinds[N_PROBES] = {
		[PROBE_EXECUTE] = RT_EV_EXECUTE, [PROBE_ON_READY] = RT_EV_ON_READY,
		[PROBE_H2D] = RT_EV_H2D, [PROBE_D2H] = RT_EV_D2H,
	};

	bench_entries[PROBE_CALLBACK] = rt_pack_callback_entry();
	for (int p = 0; p < N_PROBES; p++) {
		for (size_t i = 0; i < rt_pack_count() && !bench_entries[p]; i++) {
			const struct rt_pack *pack = rt_pack_get(i);

			for (size_t j = 0; pack->pjrt && j < pack->n_entries; j++)
				if (pack->entries[j].event == kinds[p]) {
					bench_entries[p] = &pack->entries[j];
					break;
				}
		}
		if (!bench_entries[p])
			return -ENOENT;
	}
	return 0;
}

/* ---------------------------------------------------------------- the mix */

/*
 * One training step of a PJRT trainer on MIX_DEVICES cores, as acceltrace's
 * probes report it: an input transfer, the Execute (its launch id and one
 * completion event per core, read at return), an OnReady registration per
 * event, the callbacks running on the runtime's thread, an output transfer,
 * and the host thread going off CPU and back. Every Execute's per-core work
 * is matched to its callback (a device span each), the launch freed with
 * the last; 13 records make 12 spans (and the steps found at finish).
 */
#define MIX_DEVICES 4
#define MIX_PID 999
#define MIX_TID 1000		/* the training loop */
#define MIX_CB_TID 1001		/* the runtime's completion thread */
#define MIX_LEN (5 + 2 * MIX_DEVICES + 2)

struct mix {
	uint64_t n;			/* records handed out */
	union {
		struct ev_header h;
		struct ev_rt_call rt;
		struct ev_sched_switch sw;
	} rec;
};

/* Fills m->rec with record @k of the stream, ending at @t. */
static size_t mix_next(struct mix *m, uint64_t t)
{
	uint64_t step = m->n / MIX_LEN, i = m->n % MIX_LEN;
	struct ev_rt_call *rt = &m->rec.rt;
	/* Event pointers and callback arguments, new for every step. */
	uint64_t ev0 = 0x7f0000000000ull + step * 0x100, ua0 = 0x7e0000000000ull + step * 0x100;

	m->n++;
	memset(&m->rec, 0, sizeof(m->rec));
	m->rec.h.pid = MIX_PID;
	m->rec.h.tid = MIX_TID;
	m->rec.h.start_ns = t > 2000 ? t - 2000 : t;
	m->rec.h.end_ns = t;
	if (i >= MIX_LEN - 2) {		/* the loop's thread off CPU, back on */
		struct ev_sched_switch *sw = &m->rec.sw;

		sw->h.type = EV_SCHED_SWITCH;
		sw->h.start_ns = t;
		if (i == MIX_LEN - 2) {
			sw->prev_tid = MIX_TID;
			sw->prev_pid = MIX_PID;
			sw->prev_state = 1;
		} else {
			sw->next_tid = MIX_TID;
			sw->next_pid = MIX_PID;
		}
		return sizeof(*sw);
	}
	rt->h.type = EV_RT_CALL;
	/* A full struct, which unpacks to itself (the kernel's are packed). */
	rt->n_vals = AT_MAX_FETCH_OPS;
	if (i == 0) {
		rt->probe_id = PROBE_H2D;
		rt->vals[V_H2D_TYPE] = 11;	/* F32 */
		rt->vals[V_H2D_NUM_DIMS] = 2;
		rt->vals[V_H2D_DIM0] = 128;
		rt->vals[V_H2D_DIM0 + 1] = 1024;
	} else if (i == 1) {
		rt->probe_id = PROBE_EXECUTE;
		rt->vals[V_EXEC_EXECUTABLE] = 0x5000;
		rt->vals[V_EXEC_LAUNCH_ID] = step + 1;
		rt->vals[V_EXEC_NUM_DEVICES] = MIX_DEVICES;
		rt->vals[V_EXEC_EVENTS] = 0x6000;
		for (int d = 0; d < MIX_DEVICES; d++)
			rt->vals[V_EXEC_EVENT0 + d] = ev0 + d * 8;
	} else if (i < 2 + MIX_DEVICES) {
		uint64_t d = i - 2;

		rt->probe_id = PROBE_ON_READY;
		rt->vals[V_ONREADY_EVENT] = ev0 + d * 8;
		rt->vals[V_ONREADY_CALLBACK] = 0x7000;
		rt->vals[V_ONREADY_USER_ARG] = ua0 + d * 8;
	} else if (i < 2 + 2 * MIX_DEVICES) {
		uint64_t d = i - 2 - MIX_DEVICES;

		rt->probe_id = PROBE_CALLBACK;
		rt->h.tid = MIX_CB_TID;
		rt->vals[V_CB_USER_ARG] = ua0 + d * 8;
	} else {
		rt->probe_id = PROBE_D2H;
		rt->vals[V_D2H_DST] = 0x8000;
		rt->vals[V_D2H_DST_SIZE] = 4096;
	}
	return sizeof(*rt);
}

struct consumer {
	struct ring_buffer *rb;
	struct collector *col;		/* its control queue taken after each poll */
	volatile bool stop;
	volatile uint64_t seen;		/* records consumed (count mode) */
	uint64_t cpu_ns;		/* consumer thread CPU time at stop */
};

static int count_only(void *ctx, void *data, size_t size)
{
	struct consumer *c = ctx;

	c->seen++;
	return 0;
}

struct collector_ctx {
	struct consumer *cons;
	struct collector *col;
	struct mix mix;
};

static int to_collector(void *ctx, void *data, size_t size)
{
	struct collector_ctx *cc = ctx;

	cc->cons->seen++;
	return collector__record(cc->col, data, size);
}

/* The ring record stands for the mix's next one, at the same time. */
static int mix_to_collector(void *ctx, void *data, size_t size)
{
	struct collector_ctx *cc = ctx;
	const struct ev_header *h = data;

	cc->cons->seen++;
	size = mix_next(&cc->mix, h->start_ns);
	return collector__record(cc->col, &cc->mix.rec, size);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* What the record loop hands the attach controller after a poll. */
static void take_control(struct consumer *c)
{
	size_t n;

	if (c->col)
		(void)collector__take_control(c->col, &n);
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	uint64_t cpu0;

	if (bench_ncpus() > 1)
		bench_pin(1);
	cpu0 = thread_cpu_ns();
	while (!c->stop) {
		ring_buffer__poll(c->rb, 5);
		take_control(c);
	}
	ring_buffer__consume(c->rb);
	take_control(c);
	c->cpu_ns = thread_cpu_ns() - cpu0;
	return NULL;
}

struct trial {
	double offered;		/* records/s the producer managed */
	double consumed;	/* records/s the consumer took */
	uint64_t drops;
	double consumer_cpu;	/* fraction of one core */
	double ns_per_record;	/* consumer CPU time per record */
	/* MODE_WINDOW with @finish: the window finished and finalized. */
	int finish_err;
	uint64_t records, spans_kept, spans_added, executions, completions, unmatched;
};

/*
 * Produces at @rate records/s for @secs seconds; @window_s > 0 also
 * reports the consumed rate per window into @per_window. MODE_WINDOW with
 * @finish: the window is then closed, finished and finalized (not timed).
 */
static int run_trial(struct bench *skel, enum consumer_mode mode, double rate,
		     double secs, struct trial *t, struct bench_metric *per_window,
		     double window_s, bool finish)
{
	LIBBPF_OPTS(bpf_test_run_opts, topts);
	int prog_fd = bpf_program__fd(skel->progs.produce);
	struct consumer cons = {};
	struct collector_ctx cc = { .cons = &cons };
	struct collector_opts copts = { .sz = sizeof(copts), .sched_switch = true };
	struct capture_opts capopts = { .sz = sizeof(capopts) };
	struct capture *cap = NULL;
	uint64_t emitted0 = skel->bss->prod_emitted, drops0 = skel->bss->prod_drops;
	uint64_t t0, next, end, win_start, win_seen = 0;
	ring_buffer_sample_fn fn = mode == MODE_FLOOR ? count_only :
				   mode == MODE_DRAIN ? to_collector : mix_to_collector;
	void *fn_ctx = mode == MODE_FLOOR ? (void *)&cons : (void *)&cc;
	pthread_t th;
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (mode != MODE_FLOOR) {
		cap = capture__new(&capopts);
		copts.capture = cap;
		cc.col = cap ? collector__new(&copts) : NULL;
		if (!cc.col) {
			capture__free(cap);
			return -ENOMEM;
		}
	}
	cons.col = cc.col;
	if (mode == MODE_WINDOW) {
		/* Probe ids mean pack entries; the window opens now. */
		collector__connect(cc.col, NULL, &bench_ops);
		err = collector__open_window(cc.col, bench_now_ns());
		if (err)
			goto out;
	}
	cons.rb = ring_buffer__new(bpf_map__fd(skel->maps.prod_ring), fn, fn_ctx, NULL);
	if (!cons.rb) {
		err = -errno;
		goto out;
	}
	/* Whatever an earlier trial left in the ring goes first. */
	ring_buffer__consume(cons.rb);
	cons.seen = 0;
	pthread_create(&th, NULL, consumer_main, &cons);

	skel->bss->prod_batch = BATCH;
	t0 = bench_now_ns();
	next = t0;
	end = t0 + (uint64_t)(secs * 1e9);
	win_start = t0;
	while (next < end) {
		uint64_t now;

		err = bpf_prog_test_run_opts(prog_fd, &topts);
		if (err) {
			err = -errno;
			break;
		}
		next += (uint64_t)(BATCH * 1e9 / rate);
		/* Behind schedule: do not burst to catch up. */
		now = bench_now_ns();
		if (now > next + 1000000)
			next = now;
		while ((now = bench_now_ns()) < next)
			;
		if (per_window && now - win_start >= window_s * 1e9) {
			uint64_t seen = cons.seen;

			bench_add(per_window, (seen - win_seen) / ((now - win_start) / 1e9) / 1e6);
			win_seen = seen;
			win_start = now;
		}
	}
	secs = (bench_now_ns() - t0) / 1e9;
	/* Let the consumer catch up, then stop it. */
	usleep(50 * 1000);
	cons.stop = true;
	pthread_join(th, NULL);
	t->offered = (skel->bss->prod_emitted - emitted0 +
		      skel->bss->prod_drops - drops0) / secs;
	t->drops = skel->bss->prod_drops - drops0;
	t->consumed = cons.seen / secs;
	t->consumer_cpu = cons.cpu_ns / 1e9 / secs;
	t->ns_per_record = cons.seen ? (double)cons.cpu_ns / cons.seen : 0;
	if (mode == MODE_WINDOW && finish) {
		const struct collector_stats *st = collector__stats(cc.col);

		/* Spans the timed records added: kept, or dropped by the
		 * event budget since (finish adds the steps, untimed). */
		t->records = cc.mix.n;
		t->spans_added = capture__spans_kept(cap);
		for (int k = 0; k < SPAN_KIND__COUNT; k++)
			t->spans_added += capture__spans_dropped(cap, k);
		collector__begin_close(cc.col, bench_now_ns());
		t->finish_err = collector__finish(cc.col);
		if (!t->finish_err)
			t->finish_err = capture__finalize(cap);
		t->spans_kept = capture__spans_kept(cap);
		t->executions = st->executions;
		t->completions = st->completions;
		t->unmatched = st->unmatched_completions;
	}
out:
	ring_buffer__free(cons.rb);
	collector__free(cc.col);
	capture__free(cap);
	return err;
}

/*
 * A trial at @rate that drops is run once more before the rate counts as
 * too high: other work on the machine can hold the consumer off its CPU
 * for longer than the ring lasts, which is interference, not throughput.
 */
static int trial_twice(struct bench *skel, enum consumer_mode mode, double rate,
		       double trial_s, struct trial *t)
{
	int err = run_trial(skel, mode, rate, trial_s, t, NULL, 0, false);

	if (!err && t->drops)
		err = run_trial(skel, mode, rate, trial_s, t, NULL, 0, false);
	return err;
}

static void trial_log(double rate, const struct trial *t)
{
	if (getenv("BENCH_VERBOSE"))
		fprintf(stderr, "  trial %.2f M/s: offered %.2f, consumed %.2f, drops %llu, consumer CPU %.0f%%\n",
			rate / 1e6, t->offered / 1e6, t->consumed / 1e6,
			(unsigned long long)t->drops, t->consumer_cpu * 100);
}

/* The highest rate (M records/s) with zero drops, searched in short trials. */
static int search(struct bench *skel, enum consumer_mode mode, double trial_s,
		  double *best, bool *producer_bound)
{
	double good = 0, bad = 0, rate = 1e6;
	struct trial t;
	int err;

	/* Double until a trial drops or the producer cannot keep up. */
	for (;;) {
		err = trial_twice(skel, mode, rate, trial_s, &t);
		if (err)
			return err;
		trial_log(rate, &t);
		if (t.drops || t.offered < 0.95 * rate) {
			bad = rate;
			break;
		}
		good = rate;
		rate *= 2;
		if (rate > 256e6)
			break;
	}
	/* Then halve the interval a few times. */
	for (int i = 0; i < 5 && bad > 0; i++) {
		rate = (good + bad) / 2;
		err = trial_twice(skel, mode, rate, trial_s, &t);
		if (err)
			return err;
		if (!t.drops && t.offered >= 0.95 * rate)
			good = t.offered < rate ? t.offered : rate;
		else
			bad = rate;
		trial_log(rate, &t);
	}
	*best = good / 1e6;
	*producer_bound = bad && t.offered < 0.95 * rate && !t.drops;
	fprintf(stderr, "bench_collector: %s: %.2f M records/s with zero drops%s\n",
		mode_names[mode], *best, *producer_bound ? " (producer-bound)" : "");
	return 0;
}

static double median(const struct bench_metric *m)
{
	double s[BENCH_MAX_REPS];
	int n = m->n;

	if (!n)
		return 0;
	memcpy(s, m->v, n * sizeof(double));
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
			double x = s[j];

			s[j] = s[j - 1];
			s[j - 1] = x;
		}
	return s[n / 2];
}

int main(int argc, char **argv)
{
	int reps = bench_env("BENCH_COLLECTOR_REPS", bench_env("BENCH_REPS", 3));
	double trial_s = bench_env("BENCH_TRIAL_MS", 1000) / 1000.0;
	double hold_s = bench_env("BENCH_HOLD_S", 60);
	double win_hold_s = hold_s < WINDOW_HOLD_MAX_S ? hold_s : WINDOW_HOLD_MAX_S;
	struct bench_metric m_floor = { "col.floor.max_rate", "Mrec/s" },
			    m_col = { "col.collector.max_rate", "Mrec/s" },
			    m_hold = { "col.collector.hold_rate", "Mrec/s" },
			    m_win = { "col.window.max_rate", "Mrec/s" },
			    m_win_hold = { "col.window.hold_rate", "Mrec/s" },
			    m_prod = { "col.producer.max_rate", "Mrec/s" };
	struct bench *skel;
	struct trial t, tw;
	double best, hold_rate, win_rate;
	bool bound, col_bound = false, win_bound = false;
	int err = 0;

	if (geteuid() != 0) {
		fprintf(stderr, "bench_collector: needs root (loads BPF programs)\n");
		return 77;
	}
	log_set_verbosity(LOG_WARN);
	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	if (bench_probes_init()) {
		fprintf(stderr, "bench_collector: no PJRT pack entries for the step mix\n");
		return 1;
	}
	skel = bench__open();
	if (!skel)
		return 1;
	bpf_map__set_max_entries(skel->maps.prod_ring, RING_BYTES);
	if (bench__load(skel)) {
		fprintf(stderr, "bench_collector: loading the producer failed\n");
		bench__destroy(skel);
		return 1;
	}
	skel->bss->prod_threads = 64;
	skel->bss->prod_wakeup_bytes = RING_BYTES / 8;
	bench_pin(0);

	/* The producer alone (count-only consumer, far above any target). */
	err = run_trial(skel, MODE_FLOOR, 1e9, trial_s, &t, NULL, 0, false);
	if (err)
		goto out;
	fprintf(stderr, "bench_collector: producer flat out: %.2f M records/s offered\n",
		t.offered / 1e6);

	/* Each repetition measures every consumer, so they share conditions. */
	for (int r = 0; r < reps && !err; r++) {
		err = run_trial(skel, MODE_FLOOR, 1e9, trial_s / 2, &t, NULL, 0, false);
		if (!err)
			bench_add(&m_prod, t.offered / 1e6);
		if (!err)
			err = search(skel, MODE_FLOOR, trial_s, &best, &bound);
		if (!err)
			bench_add(&m_floor, best);
		if (!err)
			err = search(skel, MODE_DRAIN, trial_s, &best, &bound);
		if (!err)
			bench_add(&m_col, best);
		col_bound |= bound;
		if (!err)
			err = search(skel, MODE_WINDOW, trial_s, &best, &bound);
		if (!err)
			bench_add(&m_win, best);
		win_bound |= bound;
	}
	if (err)
		goto out;

	/* Hold each median collector rate, a little under it. */
	hold_rate = median(&m_col) * 0.95e6;
	err = run_trial(skel, MODE_DRAIN, hold_rate, hold_s, &t, &m_hold,
			hold_s >= 10 ? 5 : hold_s / 2, false);
	if (err)
		goto out;
	fprintf(stderr, "bench_collector: drain: held %.2f M records/s for %.0f s: consumed %.2f M/s, %llu drops, consumer CPU %.0f%%\n",
		hold_rate / 1e6, hold_s, t.consumed / 1e6, (unsigned long long)t.drops,
		t.consumer_cpu * 100);
	win_rate = median(&m_win) * 0.95e6;
	err = run_trial(skel, MODE_WINDOW, win_rate, win_hold_s, &tw, &m_win_hold,
			win_hold_s >= 10 ? 5 : win_hold_s / 2, true);
	if (err)
		goto out;
	fprintf(stderr, "bench_collector: window: held %.2f M records/s for %.0f s: consumed %.2f M/s, %llu drops, consumer CPU %.0f%%; "
		"%llu records, %llu executions, %llu completions matched, %llu unmatched, %llu spans added, %llu kept\n",
		win_rate / 1e6, win_hold_s, tw.consumed / 1e6, (unsigned long long)tw.drops,
		tw.consumer_cpu * 100, (unsigned long long)tw.records,
		(unsigned long long)tw.executions, (unsigned long long)tw.completions,
		(unsigned long long)tw.unmatched, (unsigned long long)tw.spans_added,
		(unsigned long long)tw.spans_kept);
	/* The window must have done the work it is timed for. */
	if (tw.finish_err || !tw.spans_kept || !tw.executions || tw.unmatched ||
	    tw.completions + MIX_DEVICES * 2 < tw.executions * MIX_DEVICES) {
		fprintf(stderr, "bench_collector: the window's capture is not what the mix makes (finish: %s)\n",
			strerror(-tw.finish_err));
		err = -EPROTO;
		goto out;
	}
	bench_print(&m_prod);
	bench_print(&m_floor);
	bench_print(&m_col);
	bench_print(&m_hold);
	printf("BENCH col.collector.hold_target Mrec/s %.3f\n", hold_rate / 1e6);
	printf("BENCH col.collector.hold_seconds s %.0f\n", hold_s);
	printf("BENCH col.collector.hold_drops count %llu\n", (unsigned long long)t.drops);
	printf("BENCH col.collector.hold_consumer_cpu %% %.1f\n", t.consumer_cpu * 100);
	printf("BENCH col.collector.ns_per_record ns %.1f\n", t.ns_per_record);
	printf("BENCH col.collector.producer_bound flag %d\n", col_bound);
	bench_print(&m_win);
	bench_print(&m_win_hold);
	printf("BENCH col.window.hold_target Mrec/s %.3f\n", win_rate / 1e6);
	printf("BENCH col.window.hold_seconds s %.0f\n", win_hold_s);
	printf("BENCH col.window.hold_drops count %llu\n", (unsigned long long)tw.drops);
	printf("BENCH col.window.hold_consumer_cpu %% %.1f\n", tw.consumer_cpu * 100);
	printf("BENCH col.window.ns_per_record ns %.1f\n", tw.ns_per_record);
	printf("BENCH col.window.spans_per_record ratio %.3f\n",
	       tw.records ? (double)tw.spans_added / tw.records : 0);
	printf("BENCH col.window.producer_bound flag %d\n", win_bound);
out:
	bench__destroy(skel);
	if (err) {
		fprintf(stderr, "bench_collector: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
