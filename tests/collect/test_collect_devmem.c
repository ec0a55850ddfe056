// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory through the collector (collect/collect_devmem.c), records
 * built here as the probe session hands them on:
 * - a BufferFromHostBuffer whose pack entry has a memory effect is both an
 *   H2D span and an allocation, on the calling thread, its PJRT_Device
 *   handle numbered per process in first-seen order, its platform the
 *   process's (TPU);
 * - events before the window opens are held and kept when the window
 *   reaches back to them; those before its start are not, nor those after
 *   a stop (carried to the next window);
 * - cuMemAlloc / cuMemFree on a GPU process: allocator GPU_0_cuda_reserved,
 *   the free sized from the record;
 * - collector__mem_device names an aggregate's handle as the events did,
 *   an ordinal as itself, and knows no handle once its process exited;
 * - the daemon's window moving on (collector__forget_before) forgets the
 *   memory events before its new start;
 * - allocation failures, injected one at a time: never a crash, no leak,
 *   and an event missing from the capture is counted as lost state.
 */
#include <linux/types.h>

#include <string.h>

#include "test.h"
#include "alloc_fail.h"
#include "acceltrace/events.h"
#include "capture/capture.h"
#include "capture/capture_memory.h"
#include "collect/collector.h"
#include "collect/control.h"
#include "discover/probe_packs.h"
#include "lib/log.h"

#define PID 3999980u
#define TID 3999981u
#define MS 1000000ull

enum { P_H2D, P_CU_ALLOC, P_CU_FREE, P__COUNT };

/* vals: 0 type, 1 dims ptr, 2 ndims, 3 device, 4.. dims, 10 bytes out,
 * 11 in use out, 14 the buffer. */
#define H2D_OUT_BYTES 10
#define H2D_OUT_IN_USE 11

static const struct rt_pack_entry entries[P__COUNT] = {
	[P_H2D] = {
		.name = "PJRT_Client_BufferFromHostBuffer", .event = RT_EV_H2D,
		.mem = { .op = MEM_OP_ALLOC, .size_kind = MEM_SIZE_SHAPE,
			 .flags = MEM_F_DEVICE_HANDLE, .addr_val = V_H2D_BUFFER,
			 .size_val = V_H2D_TYPE, .dims_val = V_H2D_DIM0,
			 .ndims_val = V_H2D_NUM_DIMS, .dev_val = V_H2D_DEVICE,
			 .out_bytes_val = H2D_OUT_BYTES, .out_in_use_val = H2D_OUT_IN_USE,
			 .layer = MEM_LAYER_PJRT },
	},
	/* cuMemAlloc_v2(&dptr, size): 0 dptr, 1 size, 2 bytes, 3 in use, 4 device */
	[P_CU_ALLOC] = {
		.name = "cuMemAlloc_v2", .event = RT_EV_CUDART_DEVICE_SYNC,	/* any: the kind is not read here */
		.mem = { .op = MEM_OP_ALLOC, .size_kind = MEM_SIZE_VAL,
			 .flags = MEM_F_RESERVED, .addr_val = 0, .size_val = 1,
			 .dims_val = AT_MEM_NO_VAL, .ndims_val = AT_MEM_NO_VAL, .dev_val = 4,
			 .out_bytes_val = 2, .out_in_use_val = 3, .layer = MEM_LAYER_CUDA },
	},
	[P_CU_FREE] = {
		.name = "cuMemFree_v2", .event = RT_EV_CUDART_DEVICE_SYNC,	/* any: the kind is not read here */
		.mem = { .op = MEM_OP_FREE, .size_kind = MEM_SIZE_UNKNOWN, .addr_val = 0,
			 .size_val = AT_MEM_NO_VAL, .dims_val = AT_MEM_NO_VAL,
			 .ndims_val = AT_MEM_NO_VAL, .dev_val = 4, .out_bytes_val = 2,
			 .out_in_use_val = 3, .layer = MEM_LAYER_CUDA },
	},
};

static const char *platform = "TPU";

static const struct rt_pack_entry *fake_entry(void *ctx, int probe_id)
{
	(void)ctx;
	return probe_id >= 0 && probe_id < P__COUNT ? &entries[probe_id] : NULL;
}

static const char *fake_platform(void *ctx, uint32_t pid, const char **vendor)
{
	(void)ctx;
	(void)pid;
	*vendor = NULL;
	return platform;
}

static void rt_call(struct collector *col, int probe, uint64_t t, const uint64_t *vals,
		    size_t n)
{
	struct ev_rt_call rec = {
		.h = { .type = EV_RT_CALL, .pid = PID, .tid = TID, .start_ns = t,
		       .end_ns = t + 1000 },
		.probe_id = probe,
		.n_vals = n,
	};

	memcpy(rec.vals, vals, n * sizeof(*vals));
	collector__record(col, &rec, RT_CALL_SIZE(n, 0));
}

/* f32[2,3] on device handle @dev, buffer @buf, in use after @in_use. */
static void h2d(struct collector *col, uint64_t t, uint64_t dev, uint64_t buf,
		uint64_t in_use)
{
	uint64_t v[15] = { [V_H2D_TYPE] = 11, [V_H2D_NUM_DIMS] = 2, [V_H2D_DEVICE] = dev,
			   [V_H2D_DIM0] = 2, [V_H2D_DIM0 + 1] = 3, [H2D_OUT_BYTES] = 24,
			   [H2D_OUT_IN_USE] = in_use, [V_H2D_BUFFER] = buf };

	rt_call(col, P_H2D, t, v, 15);
}

static const char *str(struct capture *cap, uint32_t id)
{
	return capture__string(cap, id);
}

/* A capture and a collector on it, connected to the fake control ops, for
 * platform @plat; NULL collector (the capture maybe made) on failure. */
static struct collector *open_collector(const char *plat, struct capture **cap)
{
	struct capture_opts copts = { .sz = sizeof(copts), .hostname = "h", .session = "s" };
	static const struct control_lookups ops = { .probe_entry = fake_entry,
						    .device_platform = fake_platform };
	struct collector_opts opts = { .sz = sizeof(opts) };
	struct collector *col;

	platform = plat;
	*cap = capture__new(&copts);
	opts.capture = *cap;
	col = *cap ? collector__new(&opts) : NULL;
	if (col)
		collector__connect(col, NULL, &ops);
	return col;
}

static void test_pjrt_window(void)
{
	struct at_mem_agg_key key = { .pid = PID, .layer = MEM_LAYER_PJRT,
				      .flags = MEM_F_DEVICE_HANDLE, .device = 0xd1 };
	const struct capture_mem_event *e;
	struct capture *cap;
	struct collector *col;
	const char *plat = NULL;
	uint32_t ord = 99;
	bool h2d_span = false;

	col = open_collector("TPU", &cap);
	if (!ASSERT_OK_PTR(col, "collector"))
		goto out;

	/* Before the window opens: one before its start, one in it. */
	h2d(col, 5 * MS, 0xd0, 0xb0, 24);
	h2d(col, 10 * MS, 0xd1, 0xb1, 24);
	ASSERT_OK(collector__open_window(col, 9 * MS), "open");
	h2d(col, 20 * MS, 0xd0, 0xb2, 48);
	collector__begin_close(col, 40 * MS);
	h2d(col, 50 * MS, 0xd0, 0xb3, 72);	/* after the stop: the next window's */
	ASSERT_TRUE(collector__mem_device(col, &key, &ord, &plat), "handle named");
	ASSERT_EQ(ord, 1, "the second handle seen is device 1");
	ASSERT_STREQ(plat, "TPU", "platform");
	key.device = 0xd0;
	ASSERT_TRUE(collector__mem_device(col, &key, &ord, &plat) && ord == 0, "first: 0");
	key.device = 0xd9;
	ASSERT_FALSE(collector__mem_device(col, &key, &ord, &plat), "never seen");
	key = (struct at_mem_agg_key){ .pid = PID, .layer = MEM_LAYER_CUDA, .device = 3 };
	ASSERT_TRUE(collector__mem_device(col, &key, &ord, &plat) && ord == 3, "an ordinal");
	ASSERT_OK(collector__finish(col), "finish");
	ASSERT_OK(capture__finalize(cap), "finalize");

	ASSERT_EQ(capture__num_mem_events(cap), 2, "the window's two");
	ASSERT_EQ(collector__stats(col)->mem_events, 2, "counted kept");
	ASSERT_EQ(collector__stats(col)->mem_outside, 1, "the one before the start");
	e = capture__mem_event(cap, 0);
	if (ASSERT_TRUE(e != NULL, "first")) {
		ASSERT_EQ(e->ts_ns, 10 * MS + 1000, "held before the window, at its return");
		ASSERT_EQ(e->addr, 0xb1, "the buffer");
		ASSERT_STREQ(str(cap, e->alloc.name), "TPU_1_pjrt_buffers", "handle 0xd1: 1");
		ASSERT_STREQ(str(cap, e->shape), "f32[2,3]", "shape");
		ASSERT_STREQ(str(cap, e->api), "PJRT_Client_BufferFromHostBuffer", "api");
		ASSERT_EQ(e->tid, TID, "calling thread");
	}
	e = capture__mem_event(cap, 1);
	if (ASSERT_TRUE(e != NULL, "second")) {
		ASSERT_STREQ(str(cap, e->alloc.name), "TPU_0_pjrt_buffers", "handle 0xd0: 0");
		ASSERT_EQ(e->in_use_after, 48, "in use");
		ASSERT_EQ(e->peak_in_use, 48, "peak");
	}
	for (size_t t = 0; t < capture__num_tracks(cap); t++) {
		size_t n;
		const struct capture_span *sp = capture__track_spans(cap, t, &n);

		for (size_t i = 0; sp && i < n; i++)
			h2d_span |= sp[i].kind == SPAN_H2D;
	}
	ASSERT_TRUE(h2d_span, "still an H2D span too");
out:
	collector__free(col);
	capture__free(cap);
}

static void test_cuda_and_exit(void)
{
	struct at_mem_agg_key key = { .pid = PID, .layer = MEM_LAYER_PJRT,
				      .flags = MEM_F_DEVICE_HANDLE, .device = 0xd0 };
	struct ev_task exit_rec = {
		.h = { .type = EV_TASK, .pid = PID, .tid = TID, .start_ns = 30 * MS,
		       .end_ns = 30 * MS },
		.event = TASK_PROC_EXIT,
	};
	const struct capture_mem_event *e;
	struct capture *cap;
	struct collector *col;
	const char *plat;
	uint32_t ord;

	col = open_collector("GPU", &cap);
	if (!ASSERT_OK_PTR(col, "collector"))
		goto out;
	ASSERT_OK(collector__open_window(col, 1 * MS), "open");
	rt_call(col, P_CU_ALLOC, 2 * MS, (uint64_t[]){ 0x7000, 2 << 20, 2 << 20, 2 << 20, 0 }, 5);
	rt_call(col, P_CU_FREE, 3 * MS, (uint64_t[]){ 0x7000, 0, 2 << 20, 0, 0 }, 5);
	h2d(col, 4 * MS, 0xd0, 0xb0, 24);
	ASSERT_TRUE(collector__mem_device(col, &key, &ord, &plat), "handle known");
	collector__record(col, &exit_rec, sizeof(exit_rec));
	ASSERT_FALSE(collector__mem_device(col, &key, &ord, &plat), "forgotten at exit");
	collector__begin_close(col, 40 * MS);
	ASSERT_OK(collector__finish(col), "finish");
	ASSERT_OK(capture__finalize(cap), "finalize");
	ASSERT_EQ(capture__num_mem_events(cap), 3, "alloc, free, buffer");
	e = capture__mem_event(cap, 0);
	if (ASSERT_TRUE(e != NULL, "alloc")) {
		ASSERT_STREQ(str(cap, e->alloc.name), "GPU_0_cuda_reserved", "allocator");
		ASSERT_TRUE(e->flags & CAPTURE_MEM_F_RESERVED, "reserved");
	}
	e = capture__mem_event(cap, 1);
	if (ASSERT_TRUE(e != NULL, "free")) {
		ASSERT_EQ(e->op, CAPTURE_MEM_FREE, "free");
		ASSERT_EQ(e->bytes, 2 << 20, "sized");
		ASSERT_EQ(e->in_use_after, 0, "none in use after");
		ASSERT_EQ(e->peak_in_use, 2 << 20, "peak");
	}
out:
	collector__free(col);
	capture__free(cap);
}

/* The daemon's window moves on: what it forgot is not in its capture. */
static void test_forget_before(void)
{
	struct capture *cap;
	struct collector *col;

	col = open_collector("TPU", &cap);
	if (!ASSERT_OK_PTR(col, "collector"))
		goto out;
	ASSERT_OK(collector__open_window(col, 1 * MS), "open");
	h2d(col, 2 * MS, 0xd0, 0xb0, 24);
	h2d(col, 10 * MS, 0xd0, 0xb1, 48);
	collector__forget_before(col, 5 * MS);
	h2d(col, 12 * MS, 0xd0, 0xb2, 72);
	collector__begin_close(col, 40 * MS);
	ASSERT_OK(collector__finish(col), "finish");
	ASSERT_OK(capture__finalize(cap), "finalize");
	ASSERT_EQ(capture__num_mem_events(cap), 2, "the one before 5 ms forgotten");
	ASSERT_EQ(capture__mem_event(cap, 0)->addr, 0xb1, "10 ms kept");
out:
	collector__free(col);
	capture__free(cap);
}

static uint64_t loss_named(const struct capture *cap, const char *prefix)
{
	uint64_t n = 0;

	for (size_t i = 0; i < capture__num_losses(cap); i++) {
		const char *what = capture__loss(cap, i, &n);

		if (what && !strncmp(what, prefix, strlen(prefix)))
			return n;
	}
	return 0;
}

/* More events before the window than its buffer holds: the oldest go,
 * and the capture says how many. */
static void test_prearm_dropped(void)
{
	const int held = 4096, extra = 10;	/* collect_devmem.c's MEM_PREARM_MAX */
	struct capture *cap;
	struct collector *col;

	col = open_collector("TPU", &cap);
	if (!ASSERT_OK_PTR(col, "collector"))
		goto out;
	for (int i = 0; i < held + extra; i++)
		h2d(col, (1 + i) * 1000, 0xd0, 0x100000 + i, 24);
	ASSERT_OK(collector__open_window(col, 1 * MS), "open");
	collector__begin_close(col, 40 * MS);
	ASSERT_OK(collector__finish(col), "finish");
	ASSERT_EQ(loss_named(cap, "device-memory events before the window dropped"), extra,
		  "the dropped ones counted in the capture");
out:
	collector__free(col);
	capture__free(cap);
}

/* One run of allocations and a buffer with the n-th allocation failing;
 * false once a run saw no failure. */
static bool attempt(long n, bool persistent)
{
	long live = alloc_fail_live();
	struct capture *cap = NULL;
	struct collector *col = NULL;
	unsigned long failures;
	bool finished = false;

	alloc_fail_at(n, persistent);
	col = open_collector("TPU", &cap);
	if (col) {
		collector__open_window(col, 1 * MS);
		for (uint64_t i = 0; i < 4; i++) {
			rt_call(col, P_CU_ALLOC, (2 + i) * MS,
				(uint64_t[]){ 0x7000 + i, 64, 64, 64 * (i + 1), 0 }, 5);
			h2d(col, (2 + i) * MS + 500, 0xd0 + i, 0xb0 + i, 24 * (i + 1));
		}
		collector__begin_close(col, 40 * MS);
		finished = !collector__finish(col) && !capture__finalize(cap);
	}
	failures = alloc_fail_off();
	if (finished && failures) {
		const struct collector_stats *st = collector__stats(col);

		ASSERT_TRUE(capture__num_mem_events(cap) == 8 || st->out_of_memory,
			    "an event not kept is counted as lost");
	}
	if (finished && !failures)
		ASSERT_EQ(capture__num_mem_events(cap), 8, "without failures: all 8");
	collector__free(col);
	capture__free(cap);
	ASSERT_EQ(alloc_fail_live(), live, "nothing leaks");
	return failures > 0;
}

static void test_alloc_failures(void)
{
	int fails = test_failures;
	long n;

	log_set_verbosity(LOG_ERROR);	/* losses are logged as they happen */
	for (n = 0; n < 5000 && attempt(n, false) && test_failures == fails; n++)
		;
	ASSERT_TRUE(n < 5000, "one failure: an attempt without failures came");
	for (n = 0; n < 5000 && attempt(n, true) && test_failures == fails; n++)
		;
	ASSERT_TRUE(n < 5000, "persistent: an attempt without failures came");
}

int main(void)
{
	test_pjrt_window();
	test_cuda_and_exit();
	test_forget_before();
	test_prearm_dropped();
	test_alloc_failures();
	return test_exit();
}
