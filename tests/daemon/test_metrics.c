// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's metrics from spans: steps of the dominant program on the
 * first core, idle time waiting for the host, spans closed at a stop not
 * counted twice, exits removing a process; and the exposition's text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "capture/capture.h"
#include "daemon/metrics.h"

#define MS 1000000ull
#define BASE (1000 * MS)	/* spans start a second in */

static int steps_seen;
static uint64_t last_step_ns;

static void on_step(void *ctx, uint32_t pid, uint64_t step_ns, uint64_t at_ns)
{
	(void)ctx;
	(void)at_ns;
	if (pid == 100) {
		steps_seen++;
		last_step_ns = step_ns;
	}
}

static void feed(struct metrics *m, struct capture *c, int track, const char *name,
		 uint64_t start, uint64_t end, uint16_t kind, uint16_t flags)
{
	struct capture_span s = { .start_ns = BASE + start, .end_ns = BASE + end,
				  .track = track, .kind = kind, .flags = flags };

	s.name = capture__intern(c, name);
	metrics__span(m, c, &s);
}

static char *render(struct metrics *m, uint64_t now)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	ASSERT_OK(metrics__render(m, NULL, BASE + now, f), "render");
	fclose(f);
	return text;
}

int main(void)
{
	struct capture_opts copts = { .sz = sizeof(copts) };
	struct metrics_opts mo = { .sz = sizeof(mo), .on_step = on_step,
				   .no_proc_labels = true };
	struct capture *c = capture__new(&copts);
	struct metrics *m = metrics__new(&mo);
	uint64_t count = 0, sum = 0;
	int d0, d1, t0, t1, host;
	double ratio;
	char *text;

	if (!ASSERT_OK_PTR(c, "capture") || !ASSERT_OK_PTR(m, "metrics"))
		return test_exit();
	d0 = capture__device(c, 100, 0, NULL, 0, 0);
	d1 = capture__device(c, 100, 1, NULL, 0, 0);
	t0 = capture__device_track(c, d0, TRACK_DEVICE_MODULES);
	t1 = capture__device_track(c, d1, TRACK_DEVICE_MODULES);
	host = capture__host_track(c, 100, 100);
	/* A one-off program, then three steps; the third waited 0.5 ms for
	 * the host on both cores. Core 1's executions are not steps. */
	feed(m, c, t0, "jit_init", 0, 1 * MS / 2, SPAN_DEVICE_MODULE, 0);
	for (int core = 0; core < 2; core++) {
		int t = core ? t1 : t0;

		feed(m, c, t, "train_step", 1 * MS, 2 * MS, SPAN_DEVICE_MODULE, 0);
		feed(m, c, t, "train_step", 2 * MS, 3 * MS, SPAN_DEVICE_MODULE, 0);
		feed(m, c, t, "train_step", 3 * MS + MS / 2, 4 * MS + MS / 2,
		     SPAN_DEVICE_MODULE, 0);
	}
	/* Closed at a capture's stop: it comes again with its true end. */
	feed(m, c, t0, "train_step", 5 * MS, 6 * MS, SPAN_DEVICE_MODULE, SPAN_F_OPEN_AT_STOP);
	feed(m, c, host, "PJRT_LoadedExecutable_Execute", 3 * MS, 3 * MS + 10000,
	     SPAN_EXECUTE, 0);
	ASSERT_TRUE(metrics__process_steps(m, 100, &count, &sum), "process known");
	/* Starts 2 ms and 3.5 ms after the first step's (1 ms): the dominant
	 * program became train_step at its second run. */
	ASSERT_EQ(count, 1, "steps: from the second dominant run on");
	ASSERT_EQ(sum, 3 * MS / 2, "step time: start to start");
	ASSERT_EQ(steps_seen, 1, "the rules saw each step");
	ASSERT_EQ(last_step_ns, 3 * MS / 2, "and its time");
	ratio = metrics__input_wait_ratio(m, 100, BASE + 5 * MS);
	/* Core 0: busy 3.5 ms (jit_init's 0.5 ms too), idle 0.5 ms before the
	 * first train_step and 0.5 ms before the third; core 1: busy 3 ms,
	 * idle 0.5 ms (nothing before its first execution counts). */
	ASSERT_TRUE(ratio > 0.1874 && ratio < 0.1876, "input wait ratio: 1.5 ms idle of 8 ms");
	text = render(m, 5 * MS);
	if (ASSERT_OK_PTR(text, "text")) {
		ASSERT_STRCONTAINS(text, "# TYPE acceltrace_step_seconds histogram\n", "histogram");
		ASSERT_STRCONTAINS(text, "acceltrace_step_seconds_bucket{pid=\"100\",command=\"\","
				   "container=\"\",pod=\"\",le=\"0.001\"} 0\n", "bucket below");
		ASSERT_STRCONTAINS(text, "acceltrace_step_seconds_bucket{pid=\"100\",command=\"\","
				   "container=\"\",pod=\"\",le=\"0.0025\"} 1\n", "bucket at");
		ASSERT_STRCONTAINS(text, "le=\"+Inf\"} 1\n", "+Inf bucket");
		ASSERT_STRCONTAINS(text, "acceltrace_step_seconds_sum{pid=\"100\",command=\"\","
				   "container=\"\",pod=\"\"} 0.001500000\n", "sum");
		ASSERT_STRCONTAINS(text, "acceltrace_executions_total{pid=\"100\",command=\"\","
				   "container=\"\",pod=\"\"} 1\n", "executions");
		ASSERT_STRCONTAINS(text, "acceltrace_device_executions_total{pid=\"100\",command=\"\","
				   "container=\"\",pod=\"\",device=\"1\"} 3\n", "per core");
		ASSERT_STRCONTAINS(text, "acceltrace_events_total{kind=\"device_module\"} 8\n",
				   "every span counted as an event");
		ASSERT_STRCONTAINS(text, "acceltrace_traced_processes 1\n", "one process");
	}
	free(text);
	/* Twenty seconds later the ratio gauges have nothing recent. */
	text = render(m, 20000 * MS);
	if (ASSERT_OK_PTR(text, "text later"))
		ASSERT_FALSE(strstr(text, "acceltrace_input_wait_ratio{"), "no stale ratio");
	free(text);
	metrics__process_exit(m, 100);
	text = render(m, 5 * MS);
	if (ASSERT_OK_PTR(text, "text after exit")) {
		ASSERT_FALSE(strstr(text, "pid=\"100\""), "an exited process is not reported");
		ASSERT_STRCONTAINS(text, "acceltrace_process_exits_total 1\n", "exit counted");
	}
	free(text);
	metrics__free(m);
	capture__free(c);
	return test_exit();
}
