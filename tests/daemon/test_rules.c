// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Trigger rules: threshold, k x median, stall, crash, cooldown. */
#include <signal.h>
#include <string.h>

#include "test.h"
#include "capture/capture.h"
#include "daemon/metrics.h"
#include "daemon/rules.h"

#define MS 1000000ull
#define S (1000 * MS)

static void test_threshold_and_cooldown(void)
{
	struct rules_config cfg = { .step_time_over_ns = 10 * MS, .cooldown_ns = 60 * S };
	struct rules *r = rules__new(&cfg);
	char why[256];

	if (!ASSERT_OK_PTR(r, "rules"))
		return;
	rules__step(r, 7, 9 * MS, 1 * S);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "under the threshold");
	rules__step(r, 7, 11 * MS, 2 * S);
	ASSERT_TRUE(rules__take(r, why, sizeof(why)), "over the threshold");
	ASSERT_STRCONTAINS(why, "pid 7", "names the process");
	ASSERT_EQ(rules__taken_pid(r), 7, "and its capture is about it");
	rules__step(r, 7, 50 * MS, 30 * S);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "within the cooldown");
	rules__step(r, 7, 50 * MS, 63 * S);
	ASSERT_TRUE(rules__take(r, why, sizeof(why)), "after the cooldown");
	rules__free(r);
}

static void test_median(void)
{
	struct rules_config cfg = { .step_time_factor = 3 };
	struct rules *r = rules__new(&cfg);
	char why[256] = "";

	if (!ASSERT_OK_PTR(r, "rules"))
		return;
	/* Until enough steps are known there is no median to exceed. */
	rules__step(r, 1, 100 * MS, 1);
	for (int i = 0; i < RULES_MEDIAN_MIN_STEPS; i++)
		rules__step(r, 1, (i % 2 ? 99 : 101) * MS / 100, 2 + i);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "no median before enough steps");
	rules__step(r, 1, 2900 * MS / 1000, 100);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "2.9 x the median");
	rules__step(r, 1, 3300 * MS / 1000, 101);
	ASSERT_TRUE(rules__take(r, why, sizeof(why)), "3.3 x the median");
	ASSERT_STRCONTAINS(why, "median", "says why");
	/* Another process has medians of its own. */
	rules__step(r, 2, 3300 * MS / 1000, 102);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "a new process has none yet");
	rules__free(r);
}

static void test_crash(void)
{
	struct rules_config cfg = { .on_crash = true };
	struct rules *r = rules__new(&cfg);
	char why[256];

	if (!ASSERT_OK_PTR(r, "rules"))
		return;
	rules__exit(r, 5, 0, 1);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "exit 0");
	rules__exit(r, 5, 1 << 8, 2);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "exit status 1 is no crash");
	rules__exit(r, 5, SIGTERM, 3);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "SIGTERM asks it to stop");
	rules__exit(r, 5, SIGABRT | 0x80, 4);
	ASSERT_TRUE(rules__take(r, why, sizeof(why)), "SIGABRT with a core dump");
	ASSERT_STRCONTAINS(why, "signal 6", "names the signal");
	rules__free(r);
}

static void test_stall(void)
{
	struct rules_config cfg = { .device_stall_ns = 2 * S };
	struct metrics_opts mo = { .sz = sizeof(mo), .no_proc_labels = true };
	struct capture_opts co = { .sz = sizeof(co) };
	struct capture *c = capture__new(&co);
	struct metrics *m = metrics__new(&mo);
	struct rules *r = rules__new(&cfg);
	struct capture_span s = { .kind = SPAN_DEVICE_MODULE };
	char why[256];
	int dev;

	if (!ASSERT_OK_PTR(c, "capture") || !ASSERT_OK_PTR(m, "metrics") ||
	    !ASSERT_OK_PTR(r, "rules"))
		goto out;
	dev = capture__device(c, 9, 0, NULL, 0, 0);
	s.track = capture__device_track(c, dev, TRACK_DEVICE_MODULES);
	s.name = capture__intern(c, "step");
	s.start_ns = 1 * S;
	s.end_ns = 1 * S + MS;
	metrics__span(m, c, &s);
	/* Nothing enqueued since: idle, not stalled. */
	rules__check_stalls(r, m, 10 * S);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "idle is no stall");
	s.kind = SPAN_EXECUTE;
	s.track = capture__host_track(c, 9, 9);
	s.start_ns = 11 * S;
	s.end_ns = 11 * S + 10000;
	metrics__span(m, c, &s);
	rules__check_stalls(r, m, 12 * S);
	ASSERT_TRUE(rules__take(r, why, sizeof(why)), "enqueued, no completion for 11 s");
	ASSERT_STRCONTAINS(why, "stall", "says why");
	rules__check_stalls(r, m, 13 * S);
	ASSERT_FALSE(rules__take(r, why, sizeof(why)), "the same stall reported once");
out:
	rules__free(r);
	metrics__free(m);
	capture__free(c);
}

int main(void)
{
	test_threshold_and_cooldown();
	test_median();
	test_crash();
	test_stall();
	return test_exit();
}
