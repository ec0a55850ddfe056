// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Steps as XProf's group ids (output/step_groups.c): numbered by start
 * over the capture, one step on several cores once, a launch
 * found by its correlation id, and the step that holds a time: between
 * steps none, a step nested in a longer one leaving the longer one
 * holding what follows it, another process's steps never.
 */
#include "test.h"
#include "capture/capture.h"
#include "output/step_groups.h"

#define MS 1000000ull

static int step(struct capture *cap, int track, uint64_t start, uint64_t end, uint64_t corr)
{
	struct capture_span s = { .start_ns = start, .end_ns = end, .track = track,
				  .kind = SPAN_DEVICE_STEP, .correlation_id = corr,
				  .name = capture__intern(cap, "step") };

	return capture__add_span(cap, &s);
}

int main(void)
{
	struct capture_opts copts = { .sz = sizeof(copts) };
	struct capture *cap = capture__new(&copts);
	struct step_groups g = {};
	int64_t n = -1;
	int d0, d1, e0, err = 0;

	if (!ASSERT_OK_PTR(cap, "capture"))
		return test_exit();
	capture__set_window(cap, 0, 1000 * MS);
	d0 = capture__device_track(cap, capture__device(cap, 100, 0, "TPU v4", 0, 0),
				   TRACK_DEVICE_STEPS);
	d1 = capture__device_track(cap, capture__device(cap, 100, 1, "TPU v4", 0, 0),
				   TRACK_DEVICE_STEPS);
	e0 = capture__device_track(cap, capture__device(cap, 200, 0, "TPU v4", 0, 0),
				   TRACK_DEVICE_STEPS);
	/* pid 100: A [10, 100] ms on both cores, B [20, 30] inside it, C
	 * [200, 300]; pid 200: D [40, 60]. */
	err |= step(cap, d0, 10 * MS, 90 * MS, 7);
	err |= step(cap, d1, 12 * MS, 100 * MS, 7);
	err |= step(cap, d0, 20 * MS, 30 * MS, 8);
	err |= step(cap, d0, 200 * MS, 300 * MS, 9);
	err |= step(cap, e0, 40 * MS, 60 * MS, 3);
	ASSERT_OK(err, "steps added");
	if (!ASSERT_OK(capture__finalize(cap), "finalize") ||
	    !ASSERT_OK(step_groups__build(&g, cap, 0, 1000 * MS), "build"))
		goto out;
	ASSERT_EQ(g.n, 4, "A once for its two cores, B, C, D");
	ASSERT_TRUE(step_groups__find(&g, 100, 7, &n) && n == 0, "A is step 0");
	ASSERT_TRUE(step_groups__find(&g, 100, 8, &n) && n == 1, "B is step 1");
	ASSERT_FALSE(step_groups__find(&g, 100, 3, &n), "D's launch is not pid 100's");
	ASSERT_TRUE(step_groups__at(&g, 100, 25 * MS, &n) && n == 1, "in B: B");
	ASSERT_TRUE(step_groups__at(&g, 100, 50 * MS, &n) && n == 0,
		    "after B, within A (its latest end on core 1): A");
	ASSERT_TRUE(step_groups__at(&g, 100, 95 * MS, &n) && n == 0, "A's end on core 1");
	ASSERT_FALSE(step_groups__at(&g, 100, 150 * MS, &n), "between A and C: none");
	ASSERT_TRUE(step_groups__at(&g, 100, 250 * MS, &n) && n == 3,
		    "in C: C (numbered by start over the capture: A, B, D, C)");
	ASSERT_FALSE(step_groups__at(&g, 100, 5 * MS, &n), "before the first: none");
	ASSERT_TRUE(step_groups__at(&g, 200, 50 * MS, &n) && n == 2,
		    "pid 200, within pid 100's A: its own D");
	ASSERT_FALSE(step_groups__at(&g, 300, 50 * MS, &n), "a pid with no steps: none");
	step_groups__free(&g);
out:
	capture__free(cap);
	return test_exit();
}
