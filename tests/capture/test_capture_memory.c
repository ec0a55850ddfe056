// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory in the capture model (capture/capture_memory.h): events
 * checked, copied and bounded by the budget (the oldest go, counted and
 * said; bounded while they come too), put
 * in time order at finalize (stable), trimmed with the window by
 * capture__drop_before/after; timelines set and replaced per allocator,
 * points in order; nothing accepted after finalize.
 */
#include "test.h"
#include "capture/capture.h"
#include "capture/capture_memory.h"

static struct capture *new_capture(uint64_t max_spans)
{
	struct capture_opts o = { .sz = sizeof(o), .hostname = "h", .session = "s",
				  .max_spans = max_spans };

	return capture__new(&o);
}

static struct capture_mem_event ev(struct capture *c, uint64_t ts, uint32_t op,
				   uint64_t addr)
{
	return (struct capture_mem_event){
		.ts_ns = ts, .tid = 7, .op = op, .addr = addr, .bytes = 4096,
		.alloc = { .pid = 7, .device = 0, .layer = 2,
			   .name = capture__intern(c, "GPU_0_cuda_reserved") },
	};
}

static void test_add_and_sort(void)
{
	struct capture *c = new_capture(0);
	struct capture_mem_event e;
	uint64_t ts[] = { 300, 100, 200, 100 };

	if (!ASSERT_OK_PTR(c, "new"))
		return;
	for (size_t i = 0; i < 4; i++) {
		e = ev(c, ts[i], CAPTURE_MEM_ALLOC, 0x1000 + i);
		ASSERT_OK(capture__add_mem_event(c, &e), "add");
	}
	e = ev(c, 350, CAPTURE_MEM_FREE, 0x9);
	e.flags = CAPTURE_MEM_F_SIZE_UNKNOWN;
	e.bytes = 0;
	ASSERT_OK(capture__add_mem_event(c, &e), "a free of unknown size");
	e = ev(c, 1, 9, 0);
	ASSERT_EQ(capture__add_mem_event(c, &e), -EINVAL, "unknown op");
	e = ev(c, 1, CAPTURE_MEM_FREE, 0);
	e.alloc.name = 0;
	ASSERT_EQ(capture__add_mem_event(c, &e), -EINVAL, "no allocator name");
	ASSERT_OK(capture__finalize(c), "finalize");
	ASSERT_EQ(capture__num_mem_events(c), 5, "kept");
	ASSERT_TRUE(capture__num_warnings(c) == 1 &&
		    strstr(capture__warning(c, 0), "1 device memory frees of allocations made "
			   "before the probes") != NULL, "the unknown free is said");
	ASSERT_EQ(capture__mem_event(c, 0)->addr, 0x1001, "first at 100");
	ASSERT_EQ(capture__mem_event(c, 1)->addr, 0x1003, "same time: as recorded");
	ASSERT_EQ(capture__mem_event(c, 2)->ts_ns, 200, "then 200");
	ASSERT_EQ(capture__mem_event(c, 3)->ts_ns, 300, "then 300");
	ASSERT_EQ(capture__mem_event(c, 4)->op, CAPTURE_MEM_FREE, "then the free at 350");
	ASSERT_TRUE(capture__mem_event(c, 5) == NULL, "past the end");
	ASSERT_EQ(capture__mem_events_dropped(c), 0, "none dropped");
	e = ev(c, 400, CAPTURE_MEM_ALLOC, 1);
	ASSERT_EQ(capture__add_mem_event(c, &e), -EBUSY, "after finalize");
	capture__free(c);
}

static void test_budget(void)
{
	struct capture *c = new_capture(3);
	bool said = false;

	if (!ASSERT_OK_PTR(c, "new"))
		return;
	for (uint64_t i = 0; i < 5; i++) {
		struct capture_mem_event e = ev(c, 10 * i, CAPTURE_MEM_ALLOC, i);

		ASSERT_OK(capture__add_mem_event(c, &e), "add over budget is not an error");
	}
	ASSERT_TRUE(capture__num_mem_events(c) <= 3 + 3 / 2 + 1, "bounded while adding");
	ASSERT_OK(capture__finalize(c), "finalize");
	ASSERT_EQ(capture__num_mem_events(c), 3, "budget kept");
	ASSERT_EQ(capture__mem_event(c, 0)->addr, 2, "the oldest went");
	ASSERT_EQ(capture__mem_event(c, 2)->addr, 4, "the latest kept");
	ASSERT_EQ(capture__mem_events_dropped(c), 2, "dropped counted");
	for (size_t i = 0; i < capture__num_warnings(c); i++)
		said |= strstr(capture__warning(c, i), "not kept (budget: 3") != NULL;
	ASSERT_TRUE(said, "the drop is said in a warning");
	capture__free(c);
}

/* 10,000 events, a budget of 100, in a shuffled order: the latest 100. */
static void test_budget_online(void)
{
	struct capture *c = new_capture(100);
	size_t peak = 0;

	if (!ASSERT_OK_PTR(c, "new"))
		return;
	for (uint64_t i = 0; i < 10000; i++) {
		uint64_t ts = (i * 7919) % 10000;	/* a permutation of 0..9999 */
		struct capture_mem_event e = ev(c, ts, CAPTURE_MEM_ALLOC, ts);

		ASSERT_OK(capture__add_mem_event(c, &e), "add");
		if (capture__num_mem_events(c) > peak)
			peak = capture__num_mem_events(c);
	}
	ASSERT_TRUE(peak <= 151, "never past one and a half times the budget");
	ASSERT_OK(capture__finalize(c), "finalize");
	ASSERT_EQ(capture__num_mem_events(c), 100, "the budget");
	ASSERT_EQ(capture__mem_events_dropped(c), 9900, "the rest counted");
	/* What is kept is in time order. */
	for (size_t i = 1; i < 100; i++)
		ASSERT_TRUE(capture__mem_event(c, i - 1)->ts_ns < capture__mem_event(c, i)->ts_ns,
			    "sorted");
	capture__free(c);
}

static void test_drop_window(void)
{
	struct capture *c = new_capture(0);

	if (!ASSERT_OK_PTR(c, "new"))
		return;
	for (uint64_t i = 0; i < 100; i++) {
		struct capture_mem_event e = ev(c, i, CAPTURE_MEM_ALLOC, i);

		ASSERT_OK(capture__add_mem_event(c, &e), "add");
	}
	/* No spans: none counted, the memory events go all the same. */
	ASSERT_EQ(capture__drop_before(c, 90), 0, "no span went");
	ASSERT_EQ(capture__num_mem_events(c), 10, "before 90 went");
	ASSERT_EQ(capture__drop_after(c, 95), 0, "no span went");
	ASSERT_EQ(capture__num_mem_events(c), 6, "after 95 went");
	ASSERT_OK(capture__finalize(c), "finalize");
	ASSERT_EQ(capture__num_mem_events(c), 6, "90..95 stay");
	ASSERT_EQ(capture__mem_event(c, 0)->ts_ns, 90, "first");
	ASSERT_EQ(capture__mem_event(c, 5)->ts_ns, 95, "last");
	ASSERT_EQ(capture__mem_events_dropped(c), 0, "outside the window is no loss");
	capture__free(c);
}

static void test_timelines(void)
{
	struct capture *c = new_capture(0);
	struct capture_mem_allocator a = { .pid = 1, .device = 0, .layer = 1 };
	struct capture_mem_allocator b = { .pid = 1, .device = 1, .layer = 1 };
	struct capture_mem_point p[3] = {
		{ .ts_ns = 10, .span_ns = 10, .in_use = 1 },
		{ .ts_ns = 20, .span_ns = 10, .in_use = 2 },
		{ .ts_ns = 30, .span_ns = 1, .in_use = 3, .peak = 3 },
	};
	struct capture_mem_point bad[2] = { { .ts_ns = 5 }, { .ts_ns = 4 } };
	const struct capture_mem_point *got;
	struct capture_mem_allocator ga;
	size_t n;

	if (!ASSERT_OK_PTR(c, "new"))
		return;
	ASSERT_EQ(capture__set_mem_timeline(c, &a, p, 3), -EINVAL, "no name");
	a.name = capture__intern(c, "TPU_0_pjrt_buffers");
	b.name = capture__intern(c, "TPU_1_pjrt_buffers");
	ASSERT_EQ(capture__set_mem_timeline(c, &a, bad, 2), -EINVAL, "out of order");
	ASSERT_OK(capture__set_mem_timeline(c, &a, p, 2), "set a");
	ASSERT_OK(capture__set_mem_timeline(c, &b, p, 1), "set b");
	p[0].in_use = 99;	/* copied: the caller's array is its own */
	ASSERT_OK(capture__set_mem_timeline(c, &a, p + 1, 2), "replace a");
	ASSERT_OK(capture__finalize(c), "finalize");
	ASSERT_EQ(capture__set_mem_timeline(c, &a, p, 1), -EBUSY, "after finalize");
	ASSERT_EQ(capture__num_mem_timelines(c), 2, "two allocators");
	got = capture__mem_timeline(c, 0, &ga, &n);
	ASSERT_EQ(n, 2, "a replaced");
	ASSERT_EQ(ga.name, a.name, "a's name");
	ASSERT_EQ(got[0].in_use, 2, "a's first point now");
	ASSERT_EQ(got[1].peak, 3, "a's last point");
	got = capture__mem_timeline(c, 1, &ga, &n);
	ASSERT_EQ(n, 1, "b");
	ASSERT_EQ(got[0].in_use, 1, "b copied before the caller changed it");
	ASSERT_TRUE(capture__mem_timeline(c, 2, NULL, &n) == NULL && n == 0, "past the end");
	capture__free(c);
}

int main(void)
{
	test_add_and_sort();
	test_budget();
	test_budget_online();
	test_drop_window();
	test_timelines();
	return test_exit();
}
