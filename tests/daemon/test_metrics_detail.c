// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Metrics and the stall rule under sampled detail: a process whose device
 * work is estimated from completion probes sees them only in slices, so a
 * gap between slices is neither a step, nor input wait, nor a stall; a
 * process with a device trace is unaffected. The kernel's aggregates are
 * rendered per process.
 */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "capture/capture.h"
#include "daemon/metrics.h"
#include "daemon/rules.h"

#define MS 1000000ull
#define S (1000 * MS)

static void feed(struct metrics *m, struct capture *c, int track, uint64_t start,
		 uint64_t end, uint16_t kind, uint16_t flags)
{
	struct capture_span s = { .start_ns = start, .end_ns = end, .track = track,
				  .kind = kind, .flags = flags };

	s.name = capture__intern(c, "train_step");
	metrics__span(m, c, &s);
}

/* Steps of 10 ms, each busy 8 ms, from @from, @n of them. */
static void steps(struct metrics *m, struct capture *c, int track, uint64_t from, int n,
		  uint16_t flags)
{
	for (int i = 0; i < n; i++)
		feed(m, c, track, from + i * 10 * MS, from + i * 10 * MS + 8 * MS,
		     SPAN_DEVICE_MODULE, flags);
}

static char *render(struct metrics *m, uint64_t now)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	ASSERT_OK(metrics__render(m, NULL, now, f), "render");
	fclose(f);
	return text;
}

int main(void)
{
	struct capture_opts copts = { .sz = sizeof(copts) };
	struct metrics_opts mo = { .sz = sizeof(mo), .no_proc_labels = true };
	struct rules_config rc = { .device_stall_ns = 2 * S };
	struct capture *c = capture__new(&copts);
	struct metrics *m = metrics__new(&mo);
	struct rules *r = rules__new(&rc);
	uint64_t count, sum, agg[AGG_MAX] = { 3, 11 };
	int est, traced, host;
	char why[256], *text;

	if (!ASSERT_OK_PTR(c, "capture") || !ASSERT_OK_PTR(m, "metrics") ||
	    !ASSERT_OK_PTR(r, "rules"))
		goto out;
	/* Process 1: estimated from completions; process 2: device trace. */
	est = capture__device_track(c, capture__device(c, 1, 0, NULL, 0, 0),
				    TRACK_DEVICE_MODULES);
	traced = capture__device_track(c, capture__device(c, 2, 0, NULL, 0, 0),
				       TRACK_DEVICE_MODULES);
	host = capture__host_track(c, 1, 1);

	/* A slice from 1 s: 10 steps each. */
	steps(m, c, est, 1 * S, 10, SPAN_F_ESTIMATED);
	steps(m, c, traced, 1 * S, 10, 0);
	metrics__detail(m, false, 1 * S + 100 * MS);
	/* Between slices the device trace goes on; the estimate cannot. */
	steps(m, c, traced, 1 * S + 100 * MS, 2880, 0);
	/* Executes go on (core probes), completions are unseen: no stall. */
	feed(m, c, host, 20 * S, 20 * S + 10000, SPAN_EXECUTE, 0);
	rules__check_stalls(r, m, 25 * S);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "no stall told between slices");
	/* The next slice, from 30 s. */
	metrics__detail(m, true, 30 * S);
	feed(m, c, host, 30 * S + 1 * MS, 30 * S + 2 * MS, SPAN_EXECUTE, 0);
	rules__check_stalls(r, m, 31 * S);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)),
		     "a stall counts from the slice's start, not the last completion");
	steps(m, c, est, 30 * S + 2 * MS, 10, SPAN_F_ESTIMATED);
	steps(m, c, traced, 30 * S + 2 * MS, 10, 0);

	ASSERT_TRUE(metrics__process_steps(m, 1, &count, &sum), "process 1");
	/* The program becomes dominant at its second run: 8 steps in the
	 * first slice, 9 in the second (its first run starts afresh). */
	ASSERT_EQ(count, 17, "estimated: the slices' steps, none across the gap");
	ASSERT_EQ(sum, 17 * 10 * MS, "each 10 ms: the gap is no step");
	/* 2 ms idle per step inside the slices, none for the gap. */
	ASSERT_TRUE(metrics__input_wait_ratio(m, 1, 30 * S + 102 * MS) < 0.21,
		    "the gap is no input wait");
	ASSERT_TRUE(metrics__process_steps(m, 2, &count, &sum), "process 2");
	ASSERT_EQ(count, 2898, "device-traced: every step, slices or not");

	/* A stall inside a slice is still told. */
	feed(m, c, host, 31 * S, 31 * S + 10000, SPAN_EXECUTE, 0);
	rules__check_stalls(r, m, 34 * S);
	ASSERT_TRUE(rules__take(r, why, sizeof(why)), "a stall within a slice");

	metrics__set_aggregates(m, 1, agg);
	metrics__set_reads(m, 1, 7, 700);
	text = render(m, 34 * S);
	if (ASSERT_OK_PTR(text, "text")) {
		ASSERT_STRCONTAINS(text, "acceltrace_read_syscalls_total{pid=\"1\",command=\"\","
				   "container=\"\",pod=\"\"} 7\n", "read calls");
		ASSERT_STRCONTAINS(text, "acceltrace_read_bytes_total{pid=\"1\",command=\"\","
				   "container=\"\",pod=\"\"} 700\n", "read bytes");
		ASSERT_STRCONTAINS(text, "acceltrace_device_ioctls_total{pid=\"1\",command=\"\","
				   "container=\"\",pod=\"\"} 3\n", "ioctls");
		ASSERT_STRCONTAINS(text, "acceltrace_detail_skipped_total{pid=\"1\",command=\"\","
				   "container=\"\",pod=\"\"} 11\n", "skipped hits");
		ASSERT_FALSE(strstr(text, "acceltrace_read_bytes_total{pid=\"2\""),
			     "no reads read: no sample");
		ASSERT_FALSE(strstr(text, "acceltrace_device_ioctls_total{pid=\"2\""),
			     "no aggregates read: no sample");
	}
	free(text);
out:
	rules__free(r);
	metrics__free(m);
	capture__free(c);
	return test_exit();
}
