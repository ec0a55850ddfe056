// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devmem/devmem_events.h on synthetic records: a CUDA allocation and its
 * free (sizes from the call and from the live table, in-use after, the
 * allocator's peak since first seen), a PJRT buffer sized by its shape (its
 * type and shape named), a size query first sizing a buffer and then one
 * already sized, a free the live table lacked (size unknown, bytes 0),
 * failed and nested calls (no event, counted), the thread's current device
 * from cudaSetDevice and from a context, a PJRT_Device handle resolved or
 * not, and hostile records (indexes beyond the record, too many dims,
 * products that overflow).
 */
#include <linux/types.h>

#include "test.h"
#include "acceltrace/events.h"
#include "capture/capture.h"
#include "devmem/devmem_events.h"

/* A cuMemAlloc-like spec: vals 0 addr, 1 size, 2 bytes out, 3 in use out. */
static const struct at_mem_desc cu_alloc = {
	.op = MEM_OP_ALLOC, .size_kind = MEM_SIZE_VAL, .flags = MEM_F_THREAD_DEVICE,
	.addr_val = 0, .size_val = 1, .dims_val = AT_MEM_NO_VAL, .ndims_val = AT_MEM_NO_VAL,
	.dev_val = AT_MEM_NO_VAL, .out_bytes_val = 2, .out_in_use_val = 3,
	.layer = MEM_LAYER_CUDA,
};
static const struct at_mem_desc cu_free = {
	.op = MEM_OP_FREE, .size_kind = MEM_SIZE_UNKNOWN, .flags = MEM_F_THREAD_DEVICE,
	.addr_val = 0, .size_val = AT_MEM_NO_VAL, .dims_val = AT_MEM_NO_VAL,
	.ndims_val = AT_MEM_NO_VAL, .dev_val = AT_MEM_NO_VAL, .out_bytes_val = 2,
	.out_in_use_val = 3, .layer = MEM_LAYER_CUDA,
};
/* cudaSetDevice(dev): val 0. */
static const struct at_mem_desc cu_set_device = {
	.op = MEM_OP_SET_DEVICE, .addr_val = AT_MEM_NO_VAL, .size_val = AT_MEM_NO_VAL,
	.dims_val = AT_MEM_NO_VAL, .ndims_val = AT_MEM_NO_VAL, .dev_val = 0,
	.out_bytes_val = AT_MEM_NO_VAL, .out_in_use_val = AT_MEM_NO_VAL,
	.layer = MEM_LAYER_CUDA,
};
/* cuCtxCreate-like: val 0 the context, val 1 its device; cuCtxSetCurrent: val 0. */
static const struct at_mem_desc cu_ctx_device = {
	.op = MEM_OP_CTX_DEVICE, .addr_val = 0, .size_val = AT_MEM_NO_VAL,
	.dims_val = AT_MEM_NO_VAL, .ndims_val = AT_MEM_NO_VAL, .dev_val = 1,
	.out_bytes_val = AT_MEM_NO_VAL, .out_in_use_val = AT_MEM_NO_VAL,
	.layer = MEM_LAYER_CUDA,
};
static const struct at_mem_desc cu_set_ctx = {
	.op = MEM_OP_SET_CTX, .addr_val = 0, .size_val = AT_MEM_NO_VAL,
	.dims_val = AT_MEM_NO_VAL, .ndims_val = AT_MEM_NO_VAL, .dev_val = AT_MEM_NO_VAL,
	.out_bytes_val = AT_MEM_NO_VAL, .out_in_use_val = AT_MEM_NO_VAL,
	.layer = MEM_LAYER_CUDA,
};
/* BufferFromHostBuffer-like: 0 type, 1 ndims, 2 device handle, 3 buffer,
 * 4 bytes out, 5 in use out, 6.. dims. */
static const struct at_mem_desc pjrt_h2d = {
	.op = MEM_OP_ALLOC, .size_kind = MEM_SIZE_SHAPE, .flags = MEM_F_DEVICE_HANDLE,
	.addr_val = 3, .size_val = 0, .dims_val = 6, .ndims_val = 1, .dev_val = 2,
	.out_bytes_val = 4, .out_in_use_val = 5, .layer = MEM_LAYER_PJRT,
};
/* Buffer_Destroy-like: 0 buffer, 1 bytes out, 2 in use out; no device. */
static const struct at_mem_desc pjrt_destroy = {
	.op = MEM_OP_FREE, .size_kind = MEM_SIZE_UNKNOWN, .flags = MEM_F_DEVICE_HANDLE,
	.addr_val = 0, .size_val = AT_MEM_NO_VAL, .dims_val = AT_MEM_NO_VAL,
	.ndims_val = AT_MEM_NO_VAL, .dev_val = AT_MEM_NO_VAL, .out_bytes_val = 1,
	.out_in_use_val = 2, .layer = MEM_LAYER_PJRT,
};
/* Buffer_OnDeviceSizeInBytes-like: 0 buffer, 1 size, 2 bytes out, 3 in use, 4 device. */
static const struct at_mem_desc pjrt_size = {
	.op = MEM_OP_SIZE, .size_kind = MEM_SIZE_VAL, .flags = MEM_F_DEVICE_HANDLE,
	.addr_val = 0, .size_val = 1, .dims_val = AT_MEM_NO_VAL, .ndims_val = AT_MEM_NO_VAL,
	.dev_val = 4, .out_bytes_val = 2, .out_in_use_val = 3, .layer = MEM_LAYER_PJRT,
};

static struct ev_rt_call rec(uint32_t tid, uint64_t t, uint32_t flags, int n,
			     const uint64_t *v)
{
	struct ev_rt_call r = {
		.h = { .type = EV_RT_CALL, .pid = 100, .tid = tid, .start_ns = t,
		       .end_ns = t + 5 },
		.flags = flags, .n_vals = n,
	};

	for (int i = 0; i < n; i++)
		r.vals[i] = v[i];
	return r;
}

static int make(struct devmem_events *d, struct capture *cap, const struct ev_rt_call *r,
		const struct at_mem_desc *m, const char *platform, struct capture_mem_event *e)
{
	struct devmem_call call = { .rec = r, .mem = m, .api = "cuMemAlloc_v2",
				    .platform = platform };

	return devmem_events__make(d, cap, &call, e);
}

static const char *str(struct capture *cap, uint32_t id)
{
	return capture__string(cap, id);
}

static void test_cuda(struct devmem_events *d, struct capture *cap)
{
	struct capture_mem_event e;
	struct ev_rt_call r;

	r = rec(1, 1000, 0, 4, (uint64_t[]){ 0x7f0000, 1 << 20, 1 << 20, 1 << 20 });
	ASSERT_EQ(make(d, cap, &r, &cu_alloc, "GPU", &e), 1, "alloc is an event");
	ASSERT_EQ(e.op, CAPTURE_MEM_ALLOC, "op");
	ASSERT_EQ(e.ts_ns, 1005, "at its return");
	ASSERT_EQ(e.tid, 1, "tid");
	ASSERT_EQ(e.addr, 0x7f0000, "addr");
	ASSERT_EQ(e.bytes, 1 << 20, "bytes");
	ASSERT_EQ(e.requested_bytes, 1 << 20, "requested");
	ASSERT_EQ(e.in_use_after, 1 << 20, "in use");
	ASSERT_EQ(e.peak_in_use, 1 << 20, "peak");
	ASSERT_EQ(e.alloc.device, 0, "no device known: 0");
	ASSERT_TRUE(e.flags & CAPTURE_MEM_F_DEVICE_GUESSED, "and said guessed");
	ASSERT_STREQ(str(cap, e.alloc.name), "GPU_0_cuda_reserved", "allocator");
	ASSERT_STREQ(str(cap, e.api), "cuMemAlloc_v2", "api");

	/* cudaSetDevice(1): later calls of the thread are device 1's. */
	r = rec(1, 1100, 0, 1, (uint64_t[]){ 1 });
	ASSERT_EQ(make(d, cap, &r, &cu_set_device, "GPU", &e), 0, "set device: no event");
	r = rec(1, 1200, 0, 4, (uint64_t[]){ 0x8f0000, 3 << 20, 3 << 20, 3 << 20 });
	ASSERT_EQ(make(d, cap, &r, &cu_alloc, "GPU", &e), 1, "alloc on device 1");
	ASSERT_STREQ(str(cap, e.alloc.name), "GPU_1_cuda_reserved", "device 1's allocator");
	ASSERT_FALSE(e.flags & CAPTURE_MEM_F_DEVICE_GUESSED, "not guessed");
	ASSERT_EQ(e.peak_in_use, 3 << 20, "device 1's own peak");

	/* Another thread: a context of device 2 made current. */
	r = rec(2, 1300, 0, 2, (uint64_t[]){ 0xc0, 2 });
	ASSERT_EQ(make(d, cap, &r, &cu_ctx_device, "GPU", &e), 0, "ctx device: no event");
	r = rec(2, 1310, 0, 1, (uint64_t[]){ 0xc0 });
	ASSERT_EQ(make(d, cap, &r, &cu_set_ctx, "GPU", &e), 0, "set ctx: no event");
	r = rec(2, 1320, 0, 4, (uint64_t[]){ 0x9f0000, 64, 64, 64 });
	ASSERT_EQ(make(d, cap, &r, &cu_alloc, "GPU", &e), 1, "alloc on device 2");
	ASSERT_EQ(e.alloc.device, 2, "the context's device");

	/* A second allocation on device 0, then the first freed: the peak stays. */
	r = rec(1, 1400, 0, 1, (uint64_t[]){ 0 });
	make(d, cap, &r, &cu_set_device, "GPU", &e);
	r = rec(1, 1500, 0, 4, (uint64_t[]){ 0x7f8000, 1 << 20, 1 << 20, 2 << 20 });
	ASSERT_EQ(make(d, cap, &r, &cu_alloc, "GPU", &e), 1, "second alloc");
	ASSERT_EQ(e.peak_in_use, 2 << 20, "peak grows");
	r = rec(1, 1600, RT_F_NO_RETURN, 4, (uint64_t[]){ 0x7f0000, 0, 1 << 20, 1 << 20 });
	ASSERT_EQ(make(d, cap, &r, &cu_free, "GPU", &e), 1, "free is an event");
	ASSERT_EQ(e.op, CAPTURE_MEM_FREE, "free op");
	ASSERT_EQ(e.ts_ns, 1600, "entry-only: at its entry");
	ASSERT_EQ(e.bytes, 1 << 20, "size from the live table");
	ASSERT_EQ(e.requested_bytes, 1 << 20, "requested: the bytes freed");
	ASSERT_EQ(e.in_use_after, 1 << 20, "in use after");
	ASSERT_EQ(e.peak_in_use, 2 << 20, "peak kept");

	/* 0x8f0000 was device 1's: its free is device 1's, though the
	 * thread's current device is 0 by now. */
	r = rec(1, 1650, RT_F_NO_RETURN, 4, (uint64_t[]){ 0x8f0000, 0, 3 << 20, 0 });
	ASSERT_EQ(make(d, cap, &r, &cu_free, "GPU", &e), 1, "free on another device");
	ASSERT_STREQ(str(cap, e.alloc.name), "GPU_1_cuda_reserved", "its allocation's device");
	ASSERT_FALSE(e.flags & CAPTURE_MEM_F_DEVICE_GUESSED, "known, not guessed");

	/* A free of memory allocated before the probes. */
	r = rec(1, 1700, RT_F_MEM_UNKNOWN, 4, (uint64_t[]){ 0x1234, 0, 0, 1 << 20 });
	ASSERT_EQ(make(d, cap, &r, &cu_free, "GPU", &e), 1, "unknown free is an event");
	ASSERT_TRUE(e.flags & CAPTURE_MEM_F_SIZE_UNKNOWN, "said unknown");
	ASSERT_EQ(e.bytes, 0, "never sized");

	/* Failed and nested calls: nothing. */
	r = rec(1, 1800, RT_F_MEM_FAILED, 4, (uint64_t[]){ 0, 1 << 30, 0, 1 << 20 });
	ASSERT_EQ(make(d, cap, &r, &cu_alloc, "GPU", &e), 0, "failed: no event");
	r = rec(1, 1900, RT_F_MEM_NESTED, 4, (uint64_t[]){ 0x5, 1, 1, 1 });
	ASSERT_EQ(make(d, cap, &r, &cu_alloc, "GPU", &e), 0, "nested: no event");

	/* The live table was full: an event all the same, counted. */
	r = rec(1, 2000, RT_F_MEM_TABLE_FULL, 4, (uint64_t[]){ 0x6, 16, 16, (1 << 20) + 16 });
	ASSERT_EQ(make(d, cap, &r, &cu_alloc, "GPU", &e), 1, "table full: an event");
	ASSERT_TRUE(e.flags & CAPTURE_MEM_F_UNTRACKED, "said untracked");
	ASSERT_EQ(e.bytes, 16, "with its bytes");
	ASSERT_EQ(devmem_events__stats(d)->table_full, 1, "table full counted");
	ASSERT_EQ(devmem_events__stats(d)->failed, 1, "failed counted");
	ASSERT_EQ(devmem_events__stats(d)->nested, 1, "nested counted");
	ASSERT_EQ(devmem_events__stats(d)->unknown_frees, 1, "unknown free counted");
	ASSERT_EQ(devmem_events__stats(d)->device_changes, 4, "device changes counted");
}

static void test_pjrt(struct devmem_events *d, struct capture *cap)
{
	struct capture_mem_event e;
	struct devmem_call call = { .mem = &pjrt_h2d, .api = "PJRT_Client_BufferFromHostBuffer",
				    .platform = "TPU", .device_resolved = true, .device = 3 };
	struct ev_rt_call r;

	/* f32[128,256] on the device the caller resolved. */
	r = rec(5, 2000, 0, 8, (uint64_t[]){ 11, 2, 0xd3d3, 0xb0f, 131072, 131072, 128, 256 });
	call.rec = &r;
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), 1, "h2d buffer is an event");
	ASSERT_EQ(e.requested_bytes, 128 * 256 * 4, "shape's size");
	ASSERT_TRUE(e.flags & CAPTURE_MEM_F_SIZE_FROM_SHAPE, "said from shape");
	ASSERT_STREQ(str(cap, e.shape), "f32[128,256]", "type and shape");
	ASSERT_STREQ(str(cap, e.alloc.name), "TPU_3_pjrt_buffers", "allocator");
	ASSERT_EQ(e.alloc.layer, MEM_LAYER_PJRT, "layer");

	/* Unresolved handle (another buffer): its device unknown, not
	 * guessed as 0. */
	call.device_resolved = false;
	r.vals[3] = 0xb10;
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), 1, "unresolved");
	ASSERT_EQ(e.alloc.device, CAPTURE_MEM_DEVICE_UNKNOWN, "device unknown");
	ASSERT_STREQ(str(cap, e.alloc.name), "TPU_unknown_pjrt_buffers", "so named");
	ASSERT_FALSE(e.flags & CAPTURE_MEM_F_DEVICE_GUESSED, "not guessed");

	/* An unsized allocation (an execution's output): no event yet ... */
	r = rec(5, 2100, RT_F_MEM_UNSIZED, 8, (uint64_t[]){ 11, 0, 0xd3d3, 0xe0, 0, 131072,
							      0, 0 });
	call.device_resolved = true;
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), 0, "unsized: no event");
	/* ... its size query makes it; a second query of it does not. */
	call.mem = &pjrt_size;
	call.api = "PJRT_Buffer_OnDeviceSizeInBytes";
	r = rec(5, 2200, 0, 5, (uint64_t[]){ 0xe0, 4096, 4096, 135168, 0xd3d3 });
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), 1, "first sized: an allocation");
	ASSERT_EQ(e.op, CAPTURE_MEM_ALLOC, "alloc");
	ASSERT_TRUE(e.flags & CAPTURE_MEM_F_SIZE_QUERIED, "said queried");
	ASSERT_EQ(e.bytes, 4096, "its size");
	r = rec(5, 2300, 0, 5, (uint64_t[]){ 0xe0, 4096, 0, 135168, 0xd3d3 });
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), 0, "already sized: none");
	/* Destroying buffer 0xb0f (device 3) and 0xe0 (sized on device 3). */
	call.mem = &pjrt_destroy;
	call.api = "PJRT_Buffer_Destroy";
	call.device_resolved = false;
	r = rec(5, 2400, RT_F_NO_RETURN, 3, (uint64_t[]){ 0xb0f, 131072, 4096 });
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), 1, "destroy is a free");
	ASSERT_STREQ(str(cap, e.alloc.name), "TPU_3_pjrt_buffers", "its allocation's device");
	ASSERT_FALSE(e.flags & CAPTURE_MEM_F_DEVICE_GUESSED, "not guessed");
	r = rec(5, 2500, RT_F_NO_RETURN | RT_F_MEM_UNKNOWN, 3, (uint64_t[]){ 0xbad, 0, 4096 });
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), 1, "an unknown buffer's free");
	ASSERT_EQ(e.alloc.device, CAPTURE_MEM_DEVICE_UNKNOWN, "its device unknown");
	ASSERT_EQ(devmem_events__stats(d)->unsized, 1, "unsized counted");
	ASSERT_EQ(devmem_events__stats(d)->already_sized, 1, "already sized counted");
}

static void test_hostile(struct devmem_events *d, struct capture *cap)
{
	struct capture_mem_event e;
	struct devmem_call call = { .mem = &pjrt_h2d, .platform = "TPU",
				    .device_resolved = true };
	uint64_t before = devmem_events__stats(d)->bad_records;
	struct ev_rt_call r;

	/* Too few values for the spec's indexes. */
	r = rec(5, 3000, 0, 3, (uint64_t[]){ 11, 2, 0xd3d3 });
	call.rec = &r;
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), -EINVAL, "short record");
	/* 9 dims claimed. */
	r = rec(5, 3100, 0, 8, (uint64_t[]){ 11, 9, 0xd3d3, 0xb1, 4, 4, 1, 1 });
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), -EINVAL, "too many dims");
	/* Dims beyond the record's values. */
	r = rec(5, 3200, 0, 8, (uint64_t[]){ 11, 4, 0xd3d3, 0xb2, 4, 4, 1, 1 });
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), -EINVAL, "dims beyond the record");
	/* A product that overflows saturates; a type number of nothing. */
	r = rec(5, 3300, 0, 8, (uint64_t[]){ 11, 2, 0xd3d3, 0xb3, 4, 4, UINT64_MAX, 16 });
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), 1, "overflow: still an event");
	ASSERT_EQ(e.requested_bytes, UINT64_MAX, "saturated");
	r = rec(5, 3400, 0, 8, (uint64_t[]){ 1u << 31, 1, 0xd3d3, 0xb4, 4, 4, 2, 0 });
	ASSERT_EQ(devmem_events__make(d, cap, &call, &e), 1, "unknown type");
	ASSERT_EQ(e.shape, 0, "no shape name");
	ASSERT_EQ(e.requested_bytes, 0, "no size from an unknown type");
	ASSERT_EQ(devmem_events__stats(d)->bad_records - before, 3, "bad records counted");
}

static void test_forget(struct devmem_events *d, struct capture *cap)
{
	struct capture_mem_event e;
	struct ev_rt_call r;
	uint32_t dev;

	ASSERT_TRUE(devmem_events__thread_device(d, 100, 2, &dev) && dev == 2, "thread 2 on 2");
	devmem_events__forget_pid(d, 100);
	ASSERT_FALSE(devmem_events__thread_device(d, 100, 2, &dev), "forgotten");
	r = rec(1, 4000, 0, 4, (uint64_t[]){ 0x10, 8, 8, 8 });
	ASSERT_EQ(make(d, cap, &r, &cu_alloc, NULL, &e), 1, "a new process with the pid");
	ASSERT_EQ(e.peak_in_use, 8, "its peak starts again");
	ASSERT_STREQ(str(cap, e.alloc.name), "GPU_0_cuda_reserved",
		     "platform unknown: CUDA's memory is a GPU's");
}

int main(void)
{
	struct capture_opts o = { .sz = sizeof(o), .hostname = "h", .session = "s" };
	struct capture *cap = capture__new(&o);
	struct devmem_events *d = devmem_events__new();

	if (!ASSERT_OK_PTR(cap, "capture") || !ASSERT_OK_PTR(d, "events"))
		return 1;
	test_cuda(d, cap);
	test_pjrt(d, cap);
	test_hostile(d, cap);
	test_forget(d, cap);
	devmem_events__free(d);
	capture__free(cap);
	return test_exit();
}
