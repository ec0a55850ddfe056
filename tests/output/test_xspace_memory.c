// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory in the XSpace writer (output/xspace_memory.c), the side
 * this test can see without a decoder: the step a time falls in
 * (step_groups__at: the process's steps by extent, none between steps or
 * for another process), and a capture with memory events, a memory-only
 * thread, an allocator timeline reaching before the window and a dropped
 * event written without error. `test_xspace_memory --emit DIR` writes
 * that capture for tests/output/test_xspace_memory_decode.sh, which reads
 * it with Python's protobuf and checks every name, type and value.
 */
#include <linux/types.h>

#include "test.h"
#include "acceltrace/events.h"
#include "capture/capture.h"
#include "capture/capture_memory.h"
#include "output/step_groups.h"
#include "output/xspace_writer.h"

#define WS 1000000000ull
#define WE (WS + 1000000)

static struct capture *cap;

static uint32_t I(const char *s)
{
	return capture__intern(cap, s);
}

static int add_span(int track, enum span_kind kind, const char *name, uint64_t start,
		    uint64_t end, uint64_t corr)
{
	struct capture_span s = {
		.start_ns = start, .end_ns = end, .track = track, .kind = kind,
		.correlation_id = corr, .name = I(name),
	};

	return capture__add_span(cap, &s);
}

static int add_mem(uint32_t tid, uint64_t ts, uint32_t op, const char *allocator,
		   uint32_t device, uint32_t layer, uint32_t flags, uint64_t addr,
		   uint64_t bytes, uint64_t in_use, uint64_t peak, const char *shape,
		   const char *api)
{
	struct capture_mem_event e = {
		.ts_ns = ts, .tid = tid, .op = op, .flags = flags, .api = I(api),
		.alloc = { .pid = 100, .device = device, .name = I(allocator), .layer = layer },
		.addr = addr, .bytes = bytes, .requested_bytes = bytes,
		.in_use_after = in_use, .peak_in_use = peak, .shape = shape ? I(shape) : 0,
	};

	return capture__add_mem_event(cap, &e);
}

/* What test_xspace_memory_decode.sh expects, value for value. */
static struct capture *build_sample(void)
{
	struct capture_opts opts = {
		.sz = sizeof(opts), .hostname = "gpu-host", .session = "2026_01_01_00_00_00",
		.max_spans = 3,	/* 3 spans; 4 memory events: the oldest dropped */
	};
	struct capture_mem_allocator a = { .pid = 100, .device = 0, .layer = MEM_LAYER_PJRT };
	struct capture_mem_point p[4] = {
		{ WS - 500000, 1000, 10, 5, 12, 12 },
		{ WS - 100000, 1000, 20, 15, 22, 22 },
		{ WS + 500000, 10, 30, 25, 32, 32 },
		/* A peak past int64 (an accounting that wrapped): the JSON's
		 * numbers are int64, as every reader of it takes them. */
		{ WE + 100, 10, 40, 35, 42, UINT64_MAX - 5 },
	};
	int err = 0, t101, t201, d0, steps;

	cap = capture__new(&opts);
	if (!cap)
		return NULL;
	capture__set_window(cap, WS, WE);
	capture__set_thread(cap, 100, 101, "python3", 0);
	capture__set_thread(cap, 100, 102, "worker", 0);
	t101 = capture__host_track(cap, 100, 101);
	/* A second process's thread: lines are labelled with their pid. */
	capture__set_thread(cap, 200, 201, "other", 0);
	t201 = capture__host_track(cap, 200, 201);
	err |= add_span(t201, SPAN_CALLBACK, "callback", WS + 100000, WS + 110000, 0);
	d0 = capture__device(cap, 100, 0, "TPU v4", 0, 0);
	steps = capture__device_track(cap, d0, TRACK_DEVICE_STEPS);
	err |= add_span(t101, SPAN_EXECUTE, "PJRT_LoadedExecutable_Execute", WS + 100000,
			WS + 200000, 7);
	err |= add_span(steps, SPAN_DEVICE_STEP, "1", WS + 150000, WS + 400000, 7);
	err |= add_span(steps, SPAN_DEVICE_STEP, "2", WS + 500000, WS + 700000, 8);
	/* Added out of order: the model sorts them. */
	err |= add_mem(102, WS + 600000, CAPTURE_MEM_FREE, "GPU_1_cuda_reserved", 1,
		       MEM_LAYER_CUDA, CAPTURE_MEM_F_SIZE_UNKNOWN | CAPTURE_MEM_F_DEVICE_GUESSED,
		       0xffffffffffff0000ull, 0, 4096, 8192, NULL, "cuMemFree_v2");
	err |= add_mem(101, WS + 300000, CAPTURE_MEM_ALLOC, "TPU_0_pjrt_buffers", 0,
		       MEM_LAYER_PJRT, CAPTURE_MEM_F_SIZE_FROM_SHAPE, 0xb0, 131072, 131072,
		       131072, "f32[128,256]", "PJRT_Client_BufferFromHostBuffer");
	err |= add_mem(101, WS + 800000, CAPTURE_MEM_ALLOC, "GPU_1_cuda_reserved", 1,
		       MEM_LAYER_CUDA, CAPTURE_MEM_F_RESERVED | CAPTURE_MEM_F_UNTRACKED, 0x7f00, 8192,
		       12288, 12288, NULL,
		       "cuMemAlloc_v2");
	/* The oldest: the one the budget drops. */
	err |= add_mem(101, WS + 50000, CAPTURE_MEM_ALLOC, "GPU_1_cuda_reserved", 1,
		       MEM_LAYER_CUDA, 0, 0x8f00, 1, 1, 1, NULL, "cuMemAlloc_v2");
	a.name = I("TPU_0_pjrt_buffers");
	err |= capture__set_mem_timeline(cap, &a, p, 4);
	err |= capture__finalize(cap);
	if (err) {
		capture__free(cap);
		errno = ENOMEM;
		return NULL;
	}
	return cap;
}

static void test_step_at(void)
{
	struct step_groups g;
	int64_t step = -1;

	if (!ASSERT_OK_PTR(build_sample(), "sample"))
		return;
	if (!ASSERT_OK(step_groups__build(&g, cap, WS, WE), "build"))
		goto out;
	ASSERT_TRUE(step_groups__at(&g, 100, WS + 150000, &step) && step == 0, "step 0's start");
	ASSERT_TRUE(step_groups__at(&g, 100, WS + 300000, &step) && step == 0, "in step 0");
	ASSERT_TRUE(step_groups__at(&g, 100, WS + 700000, &step) && step == 1, "step 1's end");
	ASSERT_FALSE(step_groups__at(&g, 100, WS + 450000, &step), "between steps");
	ASSERT_FALSE(step_groups__at(&g, 100, WS + 100000, &step), "before the first");
	ASSERT_FALSE(step_groups__at(&g, 100, WS + 800000, &step), "after the last");
	ASSERT_FALSE(step_groups__at(&g, 99, WS + 300000, &step), "another process");
	ASSERT_FALSE(step_groups__at(&g, 101, WS + 300000, &step), "a later pid");
	step_groups__free(&g);
out:
	capture__free(cap);
}

static void test_write(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!ASSERT_OK_PTR(build_sample(), "sample"))
		return;
	ASSERT_EQ(capture__num_mem_events(cap), 3, "budget kept 3");
	ASSERT_EQ(capture__mem_events_dropped(cap), 1, "1 dropped");
	f = open_memstream(&buf, &len);
	if (ASSERT_OK_PTR(f, "memstream")) {
		ASSERT_OK(xspace_write_stream(cap, f, NULL, NULL), "write");
		fclose(f);
		ASSERT_TRUE(memmem(buf, len, "MemoryAllocation", 16) != NULL, "allocation named");
		ASSERT_TRUE(memmem(buf, len, "Device memory: TPU_0_pjrt_buffers (pid 100)",
				   43) != NULL, "counter line named");
	}
	free(buf);
	capture__free(cap);
}

static int emit(const char *dir)
{
	char path[512];
	int err;

	if (!build_sample()) {
		perror("build_sample");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/memory.xplane.pb", dir);
	err = xspace_write_file(cap, path, NULL);
	capture__free(cap);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--emit"))
		return emit(argv[2]);
	test_step_at();
	test_write();
	return test_exit();
}
