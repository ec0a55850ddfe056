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
 * each record handed to collector__record(), which pairs off/on-CPU records
 * into spans held in its pre-window buffer (bounded, so memory stays flat).
 * The floor is the same ring drained by a callback that only counts.
 *
 * For each consumer, a search finds the highest rate with zero drops in
 * short trials (a trial that drops is run once more before its rate counts
 * as too high), repeated BENCH_COLLECTOR_REPS times (default 3); then the
 * collector holds 95% of the median rate for BENCH_HOLD_S seconds (default
 * 60), reported per 5-second window.
 */
#include <pthread.h>
#include <stdbool.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bench.skel.h"
#include "capture/capture.h"
#include "collect/collector.h"
#include "lib/log.h"

#define BATCH 256
#define RING_BYTES (8u << 20)

struct consumer {
	struct ring_buffer *rb;
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
};

static int to_collector(void *ctx, void *data, size_t size)
{
	struct collector_ctx *cc = ctx;

	cc->cons->seen++;
	return collector__record(cc->col, data, size);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void *consumer_main(void *arg)
{
	struct consumer *c = arg;
	uint64_t cpu0;

	if (bench_ncpus() > 1)
		bench_pin(1);
	cpu0 = thread_cpu_ns();
	while (!c->stop)
		ring_buffer__poll(c->rb, 5);
	ring_buffer__consume(c->rb);
	c->cpu_ns = thread_cpu_ns() - cpu0;
	return NULL;
}

struct trial {
	double offered;		/* records/s the producer managed */
	double consumed;	/* records/s the consumer took */
	uint64_t drops;
	double consumer_cpu;	/* fraction of one core */
	double ns_per_record;	/* consumer CPU time per record */
};

/*
 * Produces at @rate records/s for @secs seconds; @window_s > 0 also
 * reports the consumed rate per window into @per_window.
 */
static int run_trial(struct bench *skel, bool collector, double rate, double secs,
		     struct trial *t, struct bench_metric *per_window, double window_s)
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
	pthread_t th;
	int err = 0;

	if (collector) {
		cap = capture__new(&capopts);
		copts.capture = cap;
		cc.col = cap ? collector__new(&copts) : NULL;
		if (!cc.col) {
			capture__free(cap);
			return -ENOMEM;
		}
		cons.rb = ring_buffer__new(bpf_map__fd(skel->maps.prod_ring),
					   to_collector, &cc, NULL);
	} else {
		cons.rb = ring_buffer__new(bpf_map__fd(skel->maps.prod_ring),
					   count_only, &cons, NULL);
	}
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
static int trial_twice(struct bench *skel, bool collector, double rate,
		       double trial_s, struct trial *t)
{
	int err = run_trial(skel, collector, rate, trial_s, t, NULL, 0);

	if (!err && t->drops)
		err = run_trial(skel, collector, rate, trial_s, t, NULL, 0);
	return err;
}

/* The highest rate (M records/s) with zero drops, searched in short trials. */
static int search(struct bench *skel, bool collector, double trial_s, double *best,
		  bool *producer_bound)
{
	double good = 0, bad = 0, rate = 1e6;
	struct trial t;
	int err;

	/* Double until a trial drops or the producer cannot keep up. */
	for (;;) {
		err = trial_twice(skel, collector, rate, trial_s, &t);
		if (err)
			return err;
		if (getenv("BENCH_VERBOSE"))
			fprintf(stderr, "  trial %.2f M/s: offered %.2f, consumed %.2f, drops %llu, consumer CPU %.0f%%\n",
				rate / 1e6, t.offered / 1e6, t.consumed / 1e6,
				(unsigned long long)t.drops, t.consumer_cpu * 100);
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
		err = trial_twice(skel, collector, rate, trial_s, &t);
		if (err)
			return err;
		if (!t.drops && t.offered >= 0.95 * rate)
			good = t.offered < rate ? t.offered : rate;
		else
			bad = rate;
		if (getenv("BENCH_VERBOSE"))
			fprintf(stderr, "  trial %.2f M/s: offered %.2f, consumed %.2f, drops %llu, consumer CPU %.0f%%\n",
				rate / 1e6, t.offered / 1e6, t.consumed / 1e6,
				(unsigned long long)t.drops, t.consumer_cpu * 100);
	}
	*best = good / 1e6;
	*producer_bound = bad && t.offered < 0.95 * rate && !t.drops;
	fprintf(stderr, "bench_collector: %s: %.2f M records/s with zero drops%s\n",
		collector ? "collector" : "count-only consumer", *best,
		*producer_bound ? " (producer-bound)" : "");
	return 0;
}

int main(int argc, char **argv)
{
	int reps = bench_env("BENCH_COLLECTOR_REPS", bench_env("BENCH_REPS", 3));
	double trial_s = bench_env("BENCH_TRIAL_MS", 1000) / 1000.0;
	double hold_s = bench_env("BENCH_HOLD_S", 60);
	struct bench_metric m_floor = { "col.floor.max_rate", "Mrec/s" },
			    m_col = { "col.collector.max_rate", "Mrec/s" },
			    m_hold = { "col.collector.hold_rate", "Mrec/s" },
			    m_prod = { "col.producer.max_rate", "Mrec/s" };
	struct bench *skel;
	struct trial t;
	double best, hold_rate;
	bool bound, col_bound = false;
	int err = 0;

	if (geteuid() != 0) {
		fprintf(stderr, "bench_collector: needs root (loads BPF programs)\n");
		return 77;
	}
	log_set_verbosity(LOG_WARN);
	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
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
	err = run_trial(skel, false, 1e9, trial_s, &t, NULL, 0);
	if (err)
		goto out;
	fprintf(stderr, "bench_collector: producer flat out: %.2f M records/s offered\n",
		t.offered / 1e6);

	for (int r = 0; r < reps && !err; r++) {
		err = run_trial(skel, false, 1e9, trial_s / 2, &t, NULL, 0);
		if (!err)
			bench_add(&m_prod, t.offered / 1e6);
		if (!err)
			err = search(skel, false, trial_s, &best, &bound);
		if (!err)
			bench_add(&m_floor, best);
		if (!err)
			err = search(skel, true, trial_s, &best, &bound);
		if (!err)
			bench_add(&m_col, best);
		col_bound |= bound;
	}
	if (err)
		goto out;

	/* Hold the median collector rate, a little under it. */
	{
		double s[BENCH_MAX_REPS];
		int n = m_col.n;

		memcpy(s, m_col.v, n * sizeof(double));
		for (int i = 1; i < n; i++)
			for (int j = i; j > 0 && s[j - 1] > s[j]; j--) {
				double x = s[j];

				s[j] = s[j - 1];
				s[j - 1] = x;
			}
		hold_rate = s[n / 2] * 0.95e6;
	}
	err = run_trial(skel, true, hold_rate, hold_s, &t, &m_hold, hold_s >= 10 ? 5 : hold_s / 2);
	if (err)
		goto out;
	fprintf(stderr, "bench_collector: held %.2f M records/s for %.0f s: consumed %.2f M/s, %llu drops, consumer CPU %.0f%%\n",
		hold_rate / 1e6, hold_s, t.consumed / 1e6, (unsigned long long)t.drops,
		t.consumer_cpu * 100);
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
out:
	bench__destroy(skel);
	if (err) {
		fprintf(stderr, "bench_collector: %s\n", strerror(-err));
		return 1;
	}
	return 0;
}
