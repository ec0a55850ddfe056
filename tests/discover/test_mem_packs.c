// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe packs' device-memory entries (struct at_mem_desc): each names
 * values its fetch program has, with its written-back values as FETCH_NONE
 * ops of their own; broken descriptors are refused with a reason; the BPF
 * side's element sizes (AT_PJRT_ELEM_LOG2_*) agree with user space's.
 */
#include "test.h"
#include "discover/probe_packs.h"

static void check_entries(void)
{
	static const char *const expected[] = {
		"PJRT_Client_BufferFromHostBuffer (memory)",
		"PJRT_Client_CreateUninitializedBuffer", "PJRT_Buffer_Destroy",
		"PJRT_Buffer_Delete", "PJRT_Buffer_OnDeviceSizeInBytes",
		"cuMemAlloc_v2", "cuMemAllocPitch_v2", "cuMemAllocManaged",
		"cuMemAllocAsync", "cuMemAllocAsync_ptsz", "cuMemAllocFromPoolAsync",
		"cuMemAllocFromPoolAsync_ptsz", "cuMemFree_v2", "cuMemFreeAsync",
		"cuMemFreeAsync_ptsz", "cuMemCreate", "cuMemRelease",
		"cuDevicePrimaryCtxRetain", "cuCtxCreate_v2", "cuCtxSetCurrent",
		"cuCtxPushCurrent_v2", "cudaMalloc", "cudaMallocAsync",
		"cudaMallocAsync_ptsz", "cudaMallocManaged", "cudaMallocPitch", "cudaFree",
		"cudaFreeAsync", "cudaFreeAsync_ptsz", "cudaSetDevice",
	};
	const struct rt_pack_entry *e;
	char why[256];

	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		e = rt_pack_entry_named(expected[i]);
		if (!ASSERT_OK_PTR((void *)e, expected[i]))
			continue;
		ASSERT_EQ(e->event, RT_EV_MEM, expected[i]);
		ASSERT_NEQ(e->mem.op, MEM_OP_NONE, "it has a memory effect");
		ASSERT_OK(rt_pack_entry__validate(e, why, sizeof(why)), why);
		/* A return probe only where the accounting needs the return:
		 * a value the callee writes, or a failure that must be seen.
		 * A PJRT free needs neither (its handle is an argument), so it
		 * is counted at its entry: no uretprobe on the hottest call. */
		if (e->mem.op == MEM_OP_FREE && e->mem.layer == MEM_LAYER_PJRT)
			ASSERT_FALSE(e->spec_flags & RT_SPEC_RETURN, "a PJRT free: at its entry");
		else
			ASSERT_TRUE(e->spec_flags & RT_SPEC_RETURN, "counted at its return");
		for (__u32 k = 0; k < e->n_ops; k++)
			if (e->ops[k].flags & FETCH_AT_RETURN)
				ASSERT_TRUE(e->spec_flags & RT_SPEC_RETURN,
					    "a value read at return has a return probe");
	}
	ASSERT_FALSE(rt_event_kind_is_detail(RT_EV_MEM), "memory is always on, never detail");

	/* The shape entry: every value a probe has, the written ones last. */
	e = rt_pack_entry_named("PJRT_Client_BufferFromHostBuffer (memory)");
	if (e) {
		ASSERT_EQ(e->n_ops, AT_MAX_FETCH_OPS, "16 values");
		ASSERT_EQ(e->mem.out_in_use_val, AT_MAX_FETCH_OPS - 1, "in use last");
		ASSERT_EQ(e->ops[V_MSHAPE_TYPE].offset, 32, "type @32");
		ASSERT_EQ(e->ops[V_MSHAPE_DEVICE].offset, 80, "device @80");
		ASSERT_EQ(e->ops[V_MSHAPE_BUFFER].offset, 112, "buffer @112, at return");
		ASSERT_TRUE(e->ops[V_MSHAPE_BUFFER].flags & FETCH_AT_RETURN, "read at return");
	}
	e = rt_pack_entry_named("PJRT_Client_CreateUninitializedBuffer");
	if (e) {
		ASSERT_EQ(e->ops[V_MSHAPE_TYPE].offset, 40, "shape_element_type @40");
		ASSERT_EQ(e->ops[V_MSHAPE_BUFFER].offset, 72, "buffer @72");
	}
	e = rt_pack_entry_named("PJRT_Client_BufferFromHostBuffer");
	if (e)
		ASSERT_EQ(e->event, RT_EV_H2D, "the transfer entry is unchanged");
	e = rt_pack_entry_named("PJRT_Buffer_Delete");
	if (e)
		ASSERT_TRUE(e->mem.flags & MEM_F_KEEP_HANDLE, "Delete keeps the handle");
	e = rt_pack_entry_named("cudaMalloc");
	if (e)
		ASSERT_TRUE(e->mem.flags & MEM_F_OUTER, "the runtime is the outer layer");
	e = rt_pack_entry_named("cuMemAlloc_v2");
	if (e)
		ASSERT_FALSE(e->mem.flags & MEM_F_OUTER, "the driver is not");
}

/* A good descriptor, broken one way at a time. */
static struct rt_pack_entry good(void)
{
	struct rt_pack_entry e = {
		.name = "fake alloc", .event = RT_EV_MEM, .spec_flags = RT_SPEC_RETURN,
		.n_ops = 5,
		.ops = {
			{ .src = FETCH_ARG0 }, { .src = FETCH_ARG0 + 1 },
			{ .src = FETCH_VAL + 0, .size = 8,
			  .flags = FETCH_DEREF | FETCH_AT_RETURN },
			{ .src = FETCH_NONE }, { .src = FETCH_NONE },
		},
		.mem = { .op = MEM_OP_ALLOC, .size_kind = MEM_SIZE_VAL,
			 .flags = MEM_F_THREAD_DEVICE, .layer = MEM_LAYER_CUDA,
			 .addr_val = 2, .size_val = 1, .dims_val = AT_MEM_NO_VAL,
			 .ndims_val = AT_MEM_NO_VAL, .dev_val = AT_MEM_NO_VAL,
			 .out_bytes_val = 3, .out_in_use_val = 4 },
	};
	return e;
}

static void refused(struct rt_pack_entry *e, const char *reason)
{
	char why[256] = "";

	ASSERT_EQ(rt_pack_entry__validate(e, why, sizeof(why)), -EINVAL, reason);
	ASSERT_STRCONTAINS(why, reason, "the reason says it");
}

static void check_refused(void)
{
	struct rt_pack_entry e = good();
	char why[256];

	ASSERT_OK(rt_pack_entry__validate(&e, why, sizeof(why)), why);
	e = good();
	e.mem.addr_val = 5;
	refused(&e, "address value is not one of its values");
	e = good();
	e.mem.size_val = AT_MEM_NO_VAL;
	refused(&e, "size value is not one of its values");
	e = good();
	e.ops[3] = (struct at_fetch_op){ .src = FETCH_ARG0 + 2 };
	refused(&e, "written-back value 3 is not a FETCH_NONE op");
	e = good();
	e.mem.out_in_use_val = 3;
	e.ops[4] = (struct at_fetch_op){ .src = FETCH_ARG0 + 3 };
	refused(&e, "written-back value 3 is not a FETCH_NONE op of its own");
	e = good();
	e.mem.out_bytes_val = AT_MEM_NO_VAL;
	refused(&e, "op 3 has no source");
	e = good();
	e.mem.flags |= MEM_F_DEVICE_HANDLE;
	refused(&e, "both the thread's and a handle");
	e = good();
	e.mem.flags = MEM_F_OUTER;
	e.spec_flags = 0;
	e.ops[2].flags = FETCH_DEREF;
	refused(&e, "outer layer's call without a return probe");
	e = good();
	e.event = RT_EV_CUDA_LAUNCH;
	refused(&e, "a memory event kind goes with a memory effect");
	e = good();
	e.mem.op = MEM_OP_NONE;
	e.n_ops = 3;
	refused(&e, "a memory event kind goes with a memory effect");
	e = good();
	e.mem.layer = 0;
	refused(&e, "no memory layer");
	e = good();
	e.mem.op = 42;
	refused(&e, "unknown memory op");
	e = good();
	e.mem.size_kind = MEM_SIZE_SHAPE;
	e.mem.ndims_val = 0;
	e.mem.dims_val = 0;
	refused(&e, "shape's dims are not among its values");
	e = good();
	e.mem.op = MEM_OP_SIZE;
	e.mem.size_kind = MEM_SIZE_UNKNOWN;
	refused(&e, "a sizing call with no size");
	e = good();
	e.mem.op = MEM_OP_SET_DEVICE;
	refused(&e, "its device value is not one of its values");
}

/* AT_PJRT_ELEM_LOG2_* (what BPF sizes shapes by) against user space's table. */
static void check_elem_sizes(void)
{
	for (unsigned int t = 0; t < 32; t++) {
		uint64_t code = (t < 16 ? AT_PJRT_ELEM_LOG2_LO >> (t * 4) :
					  AT_PJRT_ELEM_LOG2_HI >> ((t - 16) * 4)) & 0xf;
		unsigned int bytes = code ? 1u << (code - 1) : 0;
		char what[64];

		snprintf(what, sizeof(what), "PJRT_Buffer_Type %u's element bytes", t);
		ASSERT_EQ(bytes, pjrt_buffer_type_size(t), what);
	}
}

int main(void)
{
	check_entries();
	check_refused();
	check_elem_sizes();
	return test_exit();
}
