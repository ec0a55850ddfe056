// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probe packs. Offsets are x86-64 LP64, from the structs in
 * shared/reference/pjrt-and-probe-points.md (section 1.5 for PJRT Args,
 * 2.1 for the TPU C API, 8.1 for libcuda, 10.1 for tf.data).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "probe/fetch_plan.h"
#include "lib/lazy_regex.h"
#include "discover/probe_packs.h"

/* Fetch-op shorthands: where a value comes from, and when. */
#define ARG(n) { .src = FETCH_ARG0 + (n) }
#define ARG_AT(n, off, sz) \
	{ .src = FETCH_ARG0 + (n), .size = (sz), .flags = FETCH_DEREF, .offset = (off) }
#define VAL_AT(j, off, sz) \
	{ .src = FETCH_VAL + (j), .size = (sz), .flags = FETCH_DEREF, .offset = (off) }
#define VAL_AT_RET(j, off, sz) \
	{ .src = FETCH_VAL + (j), .size = (sz), \
	  .flags = FETCH_DEREF | FETCH_AT_RETURN, .offset = (off) }
#define VAL_BYTES(j) { .src = FETCH_VAL + (j), .flags = FETCH_PAYLOAD_BYTES }
#define STACK_AT(off, sz) \
	{ .src = FETCH_SP, .size = (sz), .flags = FETCH_DEREF, .offset = (off) }
#define RETVAL { .src = FETCH_RET, .flags = FETCH_AT_RETURN }
/* A value the kernel writes: a memory call's bytes or in-use after. */
#define WRITTEN { .src = FETCH_NONE }

#define OPS(...) \
	.n_ops = sizeof((struct at_fetch_op[]){ __VA_ARGS__ }) / sizeof(struct at_fetch_op), \
	.ops = { __VA_ARGS__ }

#define PAIRED (RT_SPEC_RETURN)
#define ADOPT (RT_SPEC_ADOPT)

/* A memory effect (struct at_mem_desc); NO: a value it does not use. */
#define NO AT_MEM_NO_VAL
#define MEM(op_, kind_, flags_, layer_, addr_, size_, dims_, ndims_, dev_, bytes_, in_use_) \
	.mem = { .op = (op_), .size_kind = (kind_), .flags = (flags_), .layer = (layer_), \
		 .addr_val = (addr_), .size_val = (size_), .dims_val = (dims_), \
		 .ndims_val = (ndims_), .dev_val = (dev_), .out_bytes_val = (bytes_), \
		 .out_in_use_val = (in_use_) }
/* A PJRT buffer made from a shape (enum rt_val_mem_shape). */
#define PJRT_SHAPE_ALLOC \
	MEM(MEM_OP_ALLOC, MEM_SIZE_SHAPE, MEM_F_DEVICE_HANDLE, MEM_LAYER_PJRT, \
	    V_MSHAPE_BUFFER, V_MSHAPE_TYPE, V_MSHAPE_DIM0, V_MSHAPE_NUM_DIMS, \
	    V_MSHAPE_DEVICE, V_MSHAPE_BYTES, V_MSHAPE_IN_USE)
/* A PJRT buffer's free: Args buffer @16. */
#define PJRT_BUFFER_FREE(flags) \
	OPS(ARG_AT(0, 16, 8), WRITTEN, WRITTEN), \
	MEM(MEM_OP_FREE, MEM_SIZE_UNKNOWN, MEM_F_DEVICE_HANDLE | (flags), MEM_LAYER_PJRT, \
	    V_MFREE_ADDR, NO, NO, NO, NO, V_MFREE_BYTES, V_MFREE_IN_USE)

/* PJRT Args structs all start {size_t struct_size; void *ext;}: fields @16. */
#define EIGHT_EVENTS(j) VAL_AT_RET(j, 0, 8), VAL_AT_RET(j, 8, 8), \
	VAL_AT_RET(j, 16, 8), VAL_AT_RET(j, 24, 8), VAL_AT_RET(j, 32, 8), \
	VAL_AT_RET(j, 40, 8), VAL_AT_RET(j, 48, 8), VAL_AT_RET(j, 56, 8)
#define EIGHT_U64(j) VAL_AT(j, 0, 8), VAL_AT(j, 8, 8), VAL_AT(j, 16, 8), \
	VAL_AT(j, 24, 8), VAL_AT(j, 32, 8), VAL_AT(j, 40, 8), \
	VAL_AT(j, 48, 8), VAL_AT(j, 56, 8)

/*
 * The TPU C API's infeed and outfeed, exported by libtpu (reference section
 * 2.1): probed by symbol in PJRT plugins that export them too, and in
 * libraries that export only the TPU C API (TensorFlow's TPU runtime).
 */
#define TPU_C_API_ENTRIES \
	{ \
		/* (manager, executor, XLA_Literal *{buffers, sizes @8, count @16}, status) */ \
		.name = "TpuTransferManager_TransferLiteralToInfeed", \
		.target = RT_TARGET_SYMBOL, \
		.symbol = "TpuTransferManager_TransferLiteralToInfeed", \
		.event = RT_EV_INFEED_LITERAL, .spec_flags = PAIRED | ADOPT, \
		OPS(ARG(2), VAL_AT(V_LIT_LITERAL, 8, 8), VAL_AT(V_LIT_LITERAL, 16, 8), \
		    EIGHT_U64(V_LIT_SIZES)), \
	}, { \
		/* (manager, executor, buffers, sizes_in_uint32, array_size, status) */ \
		.name = "TpuTransferManager_TransferBuffersToInfeed", \
		.target = RT_TARGET_SYMBOL, \
		.symbol = "TpuTransferManager_TransferBuffersToInfeed", \
		.event = RT_EV_INFEED_BUFFERS, .spec_flags = PAIRED | ADOPT, \
		OPS(ARG(3), ARG(4), EIGHT_U64(V_BUFS_SIZES)), \
	}, { \
		/* (executor, queue_index, data, size, status) */ \
		.name = "TpuExecutor_EnqueueInfeed", .target = RT_TARGET_SYMBOL, \
		.symbol = "TpuExecutor_EnqueueInfeed", .event = RT_EV_INFEED_RAW, \
		.spec_flags = PAIRED | ADOPT, \
		OPS(ARG(1), ARG(2), ARG(3)), \
	}, { \
		/* (manager, executor, shape, XLA_Literal *, status): blocks \
		 * until the device produced the data. */ \
		.name = "TpuTransferManager_TransferLiteralFromOutfeed", \
		.target = RT_TARGET_SYMBOL, \
		.symbol = "TpuTransferManager_TransferLiteralFromOutfeed", \
		.event = RT_EV_OUTFEED_LITERAL, .spec_flags = PAIRED | ADOPT, \
		OPS(ARG(3), VAL_AT(V_LIT_LITERAL, 8, 8), VAL_AT(V_LIT_LITERAL, 16, 8), \
		    EIGHT_U64(V_LIT_SIZES)), \
	}, { \
		.name = "TpuExecutor_DequeueOutfeed", .target = RT_TARGET_SYMBOL, \
		.symbol = "TpuExecutor_DequeueOutfeed", .event = RT_EV_OUTFEED_RAW, \
		.spec_flags = PAIRED | ADOPT, \
		OPS(ARG(1), ARG(2), ARG(3)), \
	}

/* PJRT slots are probed in this order once the table is found: Compile
 * first, since a program is compiled before anything else happens to it. */
static const struct rt_pack_entry pjrt_entries[] = {
	{
		.name = "GetPjrtApi", .target = RT_TARGET_SYMBOL,
		.symbol = "GetPjrtApi", .event = RT_EV_GET_PJRT_API,
		.spec_flags = PAIRED | ADOPT | RT_SPEC_URGENT,
		OPS(RETVAL),
	}, {
		/* Args: program @24 -> {code @16, code_size @24, format @32};
		 * out: executable @48. The code's first bytes name the module. */
		.name = "PJRT_Client_Compile", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_CLIENT_COMPILE, .event = RT_EV_COMPILE,
		.spec_flags = PAIRED,
		OPS(ARG_AT(0, 24, 8), VAL_AT(V_COMPILE_PROGRAM, 16, 8),
		    VAL_AT(V_COMPILE_PROGRAM, 24, 8), VAL_AT(V_COMPILE_PROGRAM, 32, 8),
		    VAL_BYTES(V_COMPILE_CODE), ARG(0),
		    VAL_AT_RET(V_COMPILE_ARGS, 48, 8)),
	}, {
		/* The same call's entry, alone: where the program is and its
		 * size, so the collector reads it (MLIR bytecode names its
		 * module near its end) while Compile runs. JAX frees the
		 * bytecode as Compile returns. */
		.name = "PJRT_Client_Compile (program)", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_CLIENT_COMPILE, .event = RT_EV_COMPILE_PROGRAM,
		OPS(ARG_AT(0, 24, 8), VAL_AT(V_COMPILE_PROGRAM, 16, 8),
		    VAL_AT(V_COMPILE_PROGRAM, 24, 8)),
	}, {
		/* Args: executable @16, options @24 (launch_id @48), num_devices
		 * @40, num_args @48, device_complete_events @64 (filled by the
		 * callee: read at return). */
		.name = "PJRT_LoadedExecutable_Execute", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_LOADED_EXECUTABLE_EXECUTE, .event = RT_EV_EXECUTE,
		.spec_flags = PAIRED | ADOPT,
		OPS(ARG_AT(0, 16, 8), ARG_AT(0, 24, 8), VAL_AT(V_EXEC_OPTIONS, 48, 4),
		    ARG_AT(0, 40, 8), ARG_AT(0, 48, 8), ARG_AT(0, 64, 8),
		    ARG_AT(0, 0, 8), EIGHT_EVENTS(V_EXEC_EVENTS)),
	}, {
		/* Args: type @32 (enum), dims @40, num_dims @48, device @80;
		 * out: done_with_host_buffer @104, buffer @112. */
		.name = "PJRT_Client_BufferFromHostBuffer", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_CLIENT_BUFFER_FROM_HOST_BUFFER, .event = RT_EV_H2D,
		.spec_flags = PAIRED | ADOPT,
		OPS(ARG_AT(0, 32, 4), ARG_AT(0, 40, 8), ARG_AT(0, 48, 8),
		    ARG_AT(0, 80, 8), EIGHT_U64(V_H2D_DIMS), ARG(0),
		    VAL_AT_RET(V_H2D_ARGS, 104, 8), VAL_AT_RET(V_H2D_ARGS, 112, 8)),
	}, {
		/* The same call's device memory, always on (the entry above is
		 * detail): the logical size of its shape, its device, the
		 * buffer made. 16 values: the most a probe has. */
		.name = "PJRT_Client_BufferFromHostBuffer (memory)", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_CLIENT_BUFFER_FROM_HOST_BUFFER, .event = RT_EV_MEM,
		.spec_flags = PAIRED | ADOPT, .memory_twin = true,
		OPS(ARG_AT(0, 32, 4), ARG_AT(0, 40, 8), ARG_AT(0, 48, 8),
		    ARG_AT(0, 80, 8), EIGHT_U64(V_MSHAPE_DIMS), ARG(0),
		    VAL_AT_RET(V_MSHAPE_ARGS, 112, 8), WRITTEN, WRITTEN),
		PJRT_SHAPE_ALLOC,
	}, {
		/* Args: shape_dims @24, shape_num_dims @32, shape_element_type
		 * @40, device @56; out: buffer @72 (upstream pjrt_c_api.h). */
		.name = "PJRT_Client_CreateUninitializedBuffer", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_CLIENT_CREATE_UNINITIALIZED_BUFFER, .event = RT_EV_MEM,
		.spec_flags = PAIRED | ADOPT,
		OPS(ARG_AT(0, 40, 4), ARG_AT(0, 24, 8), ARG_AT(0, 32, 8),
		    ARG_AT(0, 56, 8), EIGHT_U64(V_MSHAPE_DIMS), ARG(0),
		    VAL_AT_RET(V_MSHAPE_ARGS, 72, 8), WRITTEN, WRITTEN),
		PJRT_SHAPE_ALLOC,
	}, {
		/* Frees the buffer's device memory and the handle. Counted at
		 * its entry, with no return probe: the handle is an argument
		 * and the call reports no failure worth a trap, and a runtime
		 * destroys every buffer it makes (two a step per device), so a
		 * uretprobe here was the costliest part of memory accounting.
		 * At entry the handle is not yet free for the runtime to reuse,
		 * so a new buffer given it cannot be freed by this call. */
		.name = "PJRT_Buffer_Destroy", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_BUFFER_DESTROY, .event = RT_EV_MEM,
		PJRT_BUFFER_FREE(0),
	}, {
		/* Frees the device memory; the handle lives on to its Destroy.
		 * At its entry, as Destroy. */
		.name = "PJRT_Buffer_Delete", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_BUFFER_DELETE, .event = RT_EV_MEM,
		PJRT_BUFFER_FREE(MEM_F_KEEP_HANDLE),
	}, {
		/* Args: buffer @16; out: on_device_size_in_bytes @24. Sizes a
		 * buffer seen without one (an execution's output). */
		.name = "PJRT_Buffer_OnDeviceSizeInBytes", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_BUFFER_ON_DEVICE_SIZE_IN_BYTES, .event = RT_EV_MEM,
		.spec_flags = PAIRED,
		OPS(ARG_AT(0, 16, 8), ARG(0), VAL_AT_RET(V_MSIZE_ARGS, 24, 8), WRITTEN, WRITTEN),
		MEM(MEM_OP_SIZE, MEM_SIZE_VAL, MEM_F_DEVICE_HANDLE, MEM_LAYER_PJRT,
		    V_MSIZE_BUFFER, V_MSIZE_SIZE, NO, NO, NO, V_MSIZE_BYTES, V_MSIZE_IN_USE),
	}, {
		/* Args: src @16, dst @32 (NULL: a size query), dst_size @40;
		 * out: event @48. */
		.name = "PJRT_Buffer_ToHostBuffer", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_BUFFER_TO_HOST_BUFFER, .event = RT_EV_D2H,
		.spec_flags = PAIRED | ADOPT,
		OPS(ARG_AT(0, 16, 8), ARG_AT(0, 32, 8), ARG_AT(0, 40, 8), ARG(0),
		    VAL_AT_RET(V_D2H_ARGS, 48, 8)),
	}, {
		/* Args: event @16, callback @24, user_arg @32. Entry only: the
		 * record must precede a callback run inside the call. */
		.name = "PJRT_Event_OnReady", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_EVENT_ON_READY, .event = RT_EV_ON_READY,
		OPS(ARG_AT(0, 16, 8), ARG_AT(0, 24, 8), ARG_AT(0, 32, 8)),
	}, {
		.name = "PJRT_Event_Await", .target = RT_TARGET_PJRT,
		.pjrt_fn = PJRT_FN_EVENT_AWAIT, .event = RT_EV_AWAIT,
		.spec_flags = PAIRED,
		OPS(ARG_AT(0, 16, 8)),
	},
	TPU_C_API_ENTRIES
};

/* cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
 * the 7th argument on is on the stack; [sp] is the return address. */
#define CU_LAUNCH_OPS OPS(ARG(0), ARG(1), ARG(2), ARG(3), ARG(4), ARG(5), \
			  STACK_AT(8, 4), STACK_AT(16, 4), STACK_AT(24, 8))
/* cuLaunchKernelEx(const CUlaunchConfig *config, f, params, extra):
 * config = {gridDimX @0, gridDimY @4, gridDimZ @8, blockDimX @12,
 * blockDimY @16, blockDimZ @20, sharedMemBytes @24, CUstream hStream @32,
 * attrs @40, numAttrs @48}, read into cuLaunchKernel's value order.
 * cuBLASLt launches its GEMMs through it (seen on an H100, CUDA 13). */
#define CU_LAUNCH_EX_OPS OPS(ARG(1), ARG_AT(0, 0, 4), ARG_AT(0, 4, 4), ARG_AT(0, 8, 4), \
			     ARG_AT(0, 12, 4), ARG_AT(0, 16, 4), ARG_AT(0, 20, 4), \
			     ARG_AT(0, 24, 4), ARG_AT(0, 32, 8))
#define CU_MEMCPY_OPS OPS(ARG(0), ARG(1), ARG(2), ARG(3))

/*
 * Device memory through the driver and the runtime: what the process's
 * allocator reserved (MEM_F_RESERVED), not its tensors. Calls that name no
 * device use the thread's current one. The runtime's calls are the outer
 * layer: the driver calls they make are counted once, as theirs.
 */
#define CUDA_MEM(sym, flags, ...) \
	{ .name = sym, .target = RT_TARGET_SYMBOL, .symbol = sym, .event = RT_EV_MEM, \
	  .spec_flags = (flags), __VA_ARGS__ }
/* (void **ptr, size_t size, ...): the address is *ptr at return. */
#define CU_ALLOC(sym, mflags) CUDA_MEM(sym, PAIRED | ADOPT, \
	OPS(ARG(0), ARG(1), VAL_AT_RET(V_MALLOC_OUT, 0, 8), WRITTEN, WRITTEN), \
	MEM(MEM_OP_ALLOC, MEM_SIZE_VAL, MEM_F_THREAD_DEVICE | MEM_F_RESERVED | (mflags), \
	    MEM_LAYER_CUDA, V_MALLOC_ADDR, V_MALLOC_SIZE, NO, NO, NO, \
	    V_MALLOC_BYTES, V_MALLOC_IN_USE))
/* (void **ptr, size_t *pitch, width, height): pitch * height. */
#define CU_ALLOC_PITCH(sym, mflags) CUDA_MEM(sym, PAIRED | ADOPT, \
	OPS(ARG(0), ARG(1), ARG(3), VAL_AT_RET(V_MPITCH_OUT, 0, 8), \
	    VAL_AT_RET(V_MPITCH_OUT_PITCH, 0, 8), WRITTEN, WRITTEN), \
	MEM(MEM_OP_ALLOC, MEM_SIZE_PRODUCT, MEM_F_THREAD_DEVICE | MEM_F_RESERVED | (mflags), \
	    MEM_LAYER_CUDA, V_MPITCH_ADDR, V_MPITCH_PITCH, V_MPITCH_HEIGHT, NO, NO, \
	    V_MPITCH_BYTES, V_MPITCH_IN_USE))
/* (ptr, ...): a free finds its size and device in the live table. */
#define CU_FREE(sym, mflags) CUDA_MEM(sym, PAIRED, \
	OPS(ARG(0), WRITTEN, WRITTEN), \
	MEM(MEM_OP_FREE, MEM_SIZE_UNKNOWN, MEM_F_THREAD_DEVICE | MEM_F_RESERVED | (mflags), \
	    MEM_LAYER_CUDA, V_MFREE_ADDR, NO, NO, NO, NO, V_MFREE_BYTES, V_MFREE_IN_USE))
/* Which device a context is: (CUcontext *out, ..., dev at argument @dev). */
#define CU_CTX_DEVICE(sym, dev) CUDA_MEM(sym, PAIRED, \
	OPS(ARG(0), ARG(dev), VAL_AT_RET(V_MCTX_OUT, 0, 8)), \
	MEM(MEM_OP_CTX_DEVICE, MEM_SIZE_UNKNOWN, 0, MEM_LAYER_CUDA, V_MCTX_CTX, NO, NO, NO, \
	    V_MCTX_DEVICE, NO, NO))
/* The thread's current device: cudaSetDevice(dev), cuCtxSetCurrent(ctx). */
#define CU_CURRENT(sym, op) CUDA_MEM(sym, PAIRED, OPS(ARG(0)), \
	MEM((op), MEM_SIZE_UNKNOWN, 0, MEM_LAYER_CUDA, V_MCUR_VALUE, NO, NO, NO, \
	    V_MCUR_VALUE, NO, NO))

static const struct rt_pack_entry cuda_entries[] = {
	{ .name = "cuLaunchKernel", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuLaunchKernel", .event = RT_EV_CUDA_LAUNCH,
	  .spec_flags = ADOPT, CU_LAUNCH_OPS },
	{ .name = "cuLaunchKernel_ptsz", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuLaunchKernel_ptsz", .event = RT_EV_CUDA_LAUNCH,
	  .spec_flags = ADOPT, CU_LAUNCH_OPS },
	{ .name = "cuLaunchKernelEx", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuLaunchKernelEx", .event = RT_EV_CUDA_LAUNCH,
	  .spec_flags = ADOPT, CU_LAUNCH_EX_OPS },
	{ .name = "cuLaunchKernelEx_ptsz", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuLaunchKernelEx_ptsz", .event = RT_EV_CUDA_LAUNCH,
	  .spec_flags = ADOPT, CU_LAUNCH_EX_OPS },
	{ .name = "cuMemcpyHtoDAsync_v2", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuMemcpyHtoDAsync_v2", .event = RT_EV_CUDA_MEMCPY_H2D,
	  .spec_flags = PAIRED | ADOPT, CU_MEMCPY_OPS },
	{ .name = "cuMemcpyHtoDAsync_v2_ptsz", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuMemcpyHtoDAsync_v2_ptsz", .event = RT_EV_CUDA_MEMCPY_H2D,
	  .spec_flags = PAIRED | ADOPT, CU_MEMCPY_OPS },
	{ .name = "cuMemcpyDtoHAsync_v2", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuMemcpyDtoHAsync_v2", .event = RT_EV_CUDA_MEMCPY_D2H,
	  .spec_flags = PAIRED | ADOPT, CU_MEMCPY_OPS },
	{ .name = "cuMemcpyDtoHAsync_v2_ptsz", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuMemcpyDtoHAsync_v2_ptsz", .event = RT_EV_CUDA_MEMCPY_D2H,
	  .spec_flags = PAIRED | ADOPT, CU_MEMCPY_OPS },
	{ .name = "cuStreamSynchronize", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuStreamSynchronize", .event = RT_EV_CUDA_SYNC,
	  .spec_flags = PAIRED, OPS(ARG(0)) },
	{ .name = "cuStreamSynchronize_ptsz", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuStreamSynchronize_ptsz", .event = RT_EV_CUDA_SYNC,
	  .spec_flags = PAIRED, OPS(ARG(0)) },
	{ .name = "cuGraphLaunch", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuGraphLaunch", .event = RT_EV_CUDA_GRAPH_LAUNCH,
	  .spec_flags = ADOPT, OPS(ARG(0), ARG(1)) },
	{ .name = "cuGraphLaunch_ptsz", .target = RT_TARGET_SYMBOL,
	  .symbol = "cuGraphLaunch_ptsz", .event = RT_EV_CUDA_GRAPH_LAUNCH,
	  .spec_flags = ADOPT, OPS(ARG(0), ARG(1)) },
	CU_ALLOC("cuMemAlloc_v2", 0),
	CU_ALLOC_PITCH("cuMemAllocPitch_v2", 0),
	CU_ALLOC("cuMemAllocManaged", 0),
	CU_ALLOC("cuMemAllocAsync", 0),
	CU_ALLOC("cuMemAllocAsync_ptsz", 0),
	CU_ALLOC("cuMemAllocFromPoolAsync", 0),
	CU_ALLOC("cuMemAllocFromPoolAsync_ptsz", 0),
	CU_FREE("cuMemFree_v2", 0),
	CU_FREE("cuMemFreeAsync", 0),
	CU_FREE("cuMemFreeAsync_ptsz", 0),
	/* Virtual memory (PyTorch's expandable segments): cuMemCreate makes
	 * physical memory on prop->location.id (CUmemAllocationProp: type
	 * @0, handle types @4, location {type @8, id @12}); cuMemMap and
	 * cuMemUnmap only map it, and move no memory: not probed. */
	CUDA_MEM("cuMemCreate", PAIRED | ADOPT,
		 OPS(ARG(0), ARG(1), ARG_AT(2, 12, 4), VAL_AT_RET(V_MCREATE_OUT, 0, 8),
		     WRITTEN, WRITTEN),
		 MEM(MEM_OP_ALLOC, MEM_SIZE_VAL, MEM_F_RESERVED, MEM_LAYER_CUDA,
		     V_MCREATE_HANDLE, V_MCREATE_SIZE, NO, NO, V_MCREATE_DEVICE,
		     V_MCREATE_BYTES, V_MCREATE_IN_USE)),
	CU_FREE("cuMemRelease", 0),
	CU_CTX_DEVICE("cuDevicePrimaryCtxRetain", 1),
	CU_CTX_DEVICE("cuCtxCreate_v2", 2),
	CU_CURRENT("cuCtxSetCurrent", MEM_OP_SET_CTX),
	CU_CURRENT("cuCtxPushCurrent_v2", MEM_OP_SET_CTX),
};

/*
 * The CUDA runtime API (cuda_runtime_api.h; signatures in docs/probes.md).
 * cudaLaunchKernel(func, dim3 grid, dim3 block, args, sharedMem, stream):
 * a dim3 (12 bytes) goes by value in two registers, so func is rdi, grid
 * rsi (x | y << 32) and rdx (z), block rcx and r8, args r9, sharedMem
 * [sp+8], stream [sp+16].
 */
#define CUDART_LAUNCH_OPS OPS(ARG(0), ARG(1), ARG(2), ARG(3), ARG(4), \
			      STACK_AT(8, 8), STACK_AT(16, 8))
/* cudaLaunchKernelExC(const cudaLaunchConfig_t *config, func, args):
 * config = {dim3 gridDim @0, dim3 blockDim @12, size_t dynamicSmemBytes
 * @24, cudaStream_t stream @32, attrs @40, numAttrs @48}; read into the
 * plain launch's value order (one 40-byte block read). */
#define CUDART_LAUNCH_EX_OPS OPS(ARG(1), ARG_AT(0, 0, 8), ARG_AT(0, 8, 4), \
				 ARG_AT(0, 12, 8), ARG_AT(0, 20, 4), \
				 ARG_AT(0, 24, 8), ARG_AT(0, 32, 8))
/* cudaMemcpy(dst, src, count, kind); the Async one adds stream. */
#define CUDART_MEMCPY_OPS OPS(ARG(0), ARG(1), ARG(2), ARG(3))
#define CUDART_MEMCPY_ASYNC_OPS OPS(ARG(0), ARG(1), ARG(2), ARG(3), ARG(4))

#define CUDART(sym, ev, flags, ...) \
	{ .name = sym, .target = RT_TARGET_SYMBOL, .symbol = sym, \
	  .event = (ev), .spec_flags = (flags), __VA_ARGS__ }

/* Paired: a driver call the runtime makes through an exported function
 * is told apart by lying inside the runtime call (collect_runtime.c). */
static const struct rt_pack_entry cudart_entries[] = {
	CUDART("cudaLaunchKernel", RT_EV_CUDART_LAUNCH, PAIRED | ADOPT, CUDART_LAUNCH_OPS),
	CUDART("cudaLaunchKernel_ptsz", RT_EV_CUDART_LAUNCH, PAIRED | ADOPT,
	       CUDART_LAUNCH_OPS),
	CUDART("cudaLaunchKernelExC", RT_EV_CUDART_LAUNCH, PAIRED | ADOPT,
	       CUDART_LAUNCH_EX_OPS),
	CUDART("cudaLaunchKernelExC_ptsz", RT_EV_CUDART_LAUNCH, PAIRED | ADOPT,
	       CUDART_LAUNCH_EX_OPS),
	CUDART("cudaMemcpy", RT_EV_CUDART_MEMCPY, PAIRED | ADOPT, CUDART_MEMCPY_OPS),
	CUDART("cudaMemcpy_ptds", RT_EV_CUDART_MEMCPY, PAIRED | ADOPT, CUDART_MEMCPY_OPS),
	CUDART("cudaMemcpyAsync", RT_EV_CUDART_MEMCPY, PAIRED | ADOPT,
	       CUDART_MEMCPY_ASYNC_OPS),
	CUDART("cudaMemcpyAsync_ptsz", RT_EV_CUDART_MEMCPY, PAIRED | ADOPT,
	       CUDART_MEMCPY_ASYNC_OPS),
	CUDART("cudaGraphLaunch", RT_EV_CUDART_GRAPH_LAUNCH, PAIRED | ADOPT,
	       OPS(ARG(0), ARG(1))),
	CUDART("cudaGraphLaunch_ptsz", RT_EV_CUDART_GRAPH_LAUNCH, PAIRED | ADOPT,
	       OPS(ARG(0), ARG(1))),
	CUDART("cudaStreamSynchronize", RT_EV_CUDART_STREAM_SYNC, PAIRED, OPS(ARG(0))),
	CUDART("cudaStreamSynchronize_ptsz", RT_EV_CUDART_STREAM_SYNC, PAIRED,
	       OPS(ARG(0))),
	CUDART("cudaEventSynchronize", RT_EV_CUDART_EVENT_SYNC, PAIRED, OPS(ARG(0))),
	CUDART("cudaDeviceSynchronize", RT_EV_CUDART_DEVICE_SYNC, PAIRED),
	CUDART("cudaEventRecord", RT_EV_CUDART_EVENT_RECORD, PAIRED, OPS(ARG(0), ARG(1))),
	CUDART("cudaEventRecord_ptsz", RT_EV_CUDART_EVENT_RECORD, PAIRED,
	       OPS(ARG(0), ARG(1))),
	CU_ALLOC("cudaMalloc", MEM_F_OUTER),
	CU_ALLOC("cudaMallocAsync", MEM_F_OUTER),
	CU_ALLOC("cudaMallocAsync_ptsz", MEM_F_OUTER),
	CU_ALLOC("cudaMallocManaged", MEM_F_OUTER),
	CU_ALLOC_PITCH("cudaMallocPitch", MEM_F_OUTER),
	CU_FREE("cudaFree", MEM_F_OUTER),
	CU_FREE("cudaFreeAsync", MEM_F_OUTER),
	CU_FREE("cudaFreeAsync_ptsz", MEM_F_OUTER),
	CU_CURRENT("cudaSetDevice", MEM_OP_SET_DEVICE),
};

#define GET_NEXT_SYMBOL \
	"_ZN10tensorflow19DatasetBaseIterator7GetNextEPNS_15IteratorContextEPSt6vectorINS_6TensorESaIS4_EEPb"

static const struct rt_pack_entry tfdata_entries[] = {
	{ .name = "tensorflow::DatasetBaseIterator::GetNext",
	  .target = RT_TARGET_SYMBOL,
	  .symbol = GET_NEXT_SYMBOL,
	  .event = RT_EV_DATASET_GET_NEXT, .spec_flags = PAIRED, OPS(ARG(0)) },
};

/*
 * Attached at run time to each distinct callback OnReady registers. Entry
 * only: its entry is the completion, and on the project's kernel (6.18) a
 * return probe on the simulator's callback misses about 1% of returns
 * (bpftrace sees the same), which would lose completions.
 */
static const struct rt_pack_entry callback_entry = {
	.name = "PJRT_Event_OnReady callback", .target = RT_TARGET_DYNAMIC,
	.event = RT_EV_CALLBACK,
	OPS(ARG(0), ARG(1)),
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct rt_pack_entry tpu_c_api_entries[] = { TPU_C_API_ENTRIES };

/* NULL-terminated symbol lists, for the signatures. */
#define SYMBOLS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/*
 * A library is recognised by the first pack whose ABI signature its exports
 * match, or by one whose name hint its file name matches where several
 * signatures do: libtpu exports both GetPjrtApi and the TPU C API, and is a
 * PJRT plugin.
 */
static const struct rt_pack packs[] = {
	{
		.name = "PJRT plugin",
		/* libtpu (and libtpu-nightly builds), the CUDA PJRT plugins,
		 * and pjrt_plugin_* / pjrt-plugin-* by convention. */
		.library = "^(libtpu[^/]*\\.so(\\.[0-9]+)*|xla_cuda_plugin\\.so|"
			   "pjrt_c_api_[a-z]+_plugin\\.so|pjrt[-_]plugin[^/]*\\.so)$",
		.abi = { .all_of = SYMBOLS("GetPjrtApi") },
		.pjrt = true,
		.entries = pjrt_entries, .n_entries = N(pjrt_entries),
	}, {
		/* TensorFlow's TPU runtime (a libtpu without GetPjrtApi). */
		.name = "TPU C API",
		.library = "^libtpu[^/]*\\.so(\\.[0-9]+)*$",
		.abi = { .any_of = SYMBOLS("TpuTransferManager_TransferLiteralToInfeed",
					   "TpuTransferManager_TransferBuffersToInfeed",
					   "TpuExecutor_EnqueueInfeed",
					   "TpuTransferManager_TransferLiteralFromOutfeed",
					   "TpuExecutor_DequeueOutfeed") },
		.platform = RT_PLATFORM_TPU, .vendor = "Google",
		.entries = tpu_c_api_entries, .n_entries = N(tpu_c_api_entries),
	}, {
		.name = "CUDA driver",
		.library = "^libcuda\\.so(\\.[0-9]+)*$",
		.abi = { .all_of = SYMBOLS("cuLaunchKernel", "cuInit") },
		.platform = RT_PLATFORM_GPU, .vendor = "Nvidia",
		.entries = cuda_entries, .n_entries = N(cuda_entries),
	}, {
		/* Frameworks launch through it, and it reaches libcuda through
		 * a private table (DESIGN.md), so libcuda's exported functions
		 * never see those calls. Recognised by exports: a framework
		 * library that links it statically is probed the same way. */
		.name = "CUDA runtime",
		.library = "^libcudart\\.so(\\.[0-9]+)*$",
		.abi = { .all_of = SYMBOLS("cudaLaunchKernel") },
		.platform = RT_PLATFORM_GPU, .vendor = "Nvidia",
		.entries = cudart_entries, .n_entries = N(cudart_entries),
	}, {
		.name = "tf.data",
		.library = "^libtensorflow_framework\\.so(\\.[0-9]+)*$",
		.abi = { .all_of = SYMBOLS(GET_NEXT_SYMBOL) },
		.entries = tfdata_entries, .n_entries = N(tfdata_entries),
	},
};

size_t rt_pack_count(void)
{
	return N(packs);
}

const struct rt_pack *rt_pack_get(size_t i)
{
	return i < N(packs) ? &packs[i] : NULL;
}

const char *rt_platform_name(enum rt_platform platform)
{
	switch (platform) {
	case RT_PLATFORM_TPU: return "TPU";
	case RT_PLATFORM_GPU: return "GPU";
	default: return NULL;
	}
}

const struct rt_pack *rt_pack_match(const char *path)
{
	const char *base = strrchr(path, '/');

	static struct lazy_regex library_res[N(packs)];

	base = base ? base + 1 : path;
	for (size_t i = 0; i < N(packs); i++)
		if (lazy_regex__match(&library_res[i], packs[i].library, base))
			return &packs[i];
	return NULL;
}

const struct rt_pack_entry *rt_pack_entry_named(const char *name)
{
	for (size_t i = 0; i < rt_pack_count(); i++) {
		const struct rt_pack *p = rt_pack_get(i);

		for (size_t j = 0; j < p->n_entries; j++)
			if (!strcmp(p->entries[j].name, name))
				return &p->entries[j];
	}
	return NULL;
}

const struct rt_pack_entry *rt_pack_callback_entry(void)
{
	return &callback_entry;
}

static bool mem_out_val(const struct at_mem_desc *m, __u32 i)
{
	return m->op != MEM_OP_NONE && (i == m->out_bytes_val || i == m->out_in_use_val);
}

/* Whether @idx names a value of @e (AT_MEM_NO_VAL only where @optional). */
static bool mem_index_ok(const struct rt_pack_entry *e, __u8 idx, bool optional)
{
	return idx == AT_MEM_NO_VAL ? optional : idx < e->n_ops;
}

/*
 * A memory descriptor: the values each op needs are the entry's, the
 * written-back ones FETCH_NONE ops (nothing else writes them), an outer
 * layer's call paired (its mark ends at its return), a memory event kind.
 */
static int validate_mem(const struct rt_pack_entry *e, char *why, size_t len)
{
	const struct at_mem_desc *m = &e->mem;
	bool counts = m->op == MEM_OP_ALLOC || m->op == MEM_OP_FREE || m->op == MEM_OP_SIZE;
	bool need_size = m->op == MEM_OP_SIZE ||
			 (m->op == MEM_OP_ALLOC && m->size_kind != MEM_SIZE_UNKNOWN);
	const __u8 outs[2] = { m->out_bytes_val, m->out_in_use_val };
	const char *bad = NULL;

	if ((m->op != MEM_OP_NONE) != (e->event == RT_EV_MEM))
		bad = "a memory event kind goes with a memory effect, and only it";
	else if (m->op == MEM_OP_NONE)
		return 0;
	else if (m->op > MEM_OP_SET_CTX || m->size_kind > MEM_SIZE_UNKNOWN)
		bad = "an unknown memory op or size kind";
	else if (m->layer != MEM_LAYER_PJRT && m->layer != MEM_LAYER_CUDA)
		bad = "no memory layer";
	else if (!mem_index_ok(e, m->addr_val, m->op == MEM_OP_SET_DEVICE))
		bad = "its address value is not one of its values";
	else if (m->op == MEM_OP_SIZE && m->size_kind == MEM_SIZE_UNKNOWN)
		bad = "a sizing call with no size";
	else if (need_size && !mem_index_ok(e, m->size_val, false))
		bad = "its size value is not one of its values";
	else if (need_size && m->size_kind == MEM_SIZE_PRODUCT && !mem_index_ok(e, m->dims_val, false))
		bad = "its second factor is not one of its values";
	else if (need_size && m->size_kind == MEM_SIZE_SHAPE &&
		 (!mem_index_ok(e, m->ndims_val, false) || m->dims_val == AT_MEM_NO_VAL ||
		  m->dims_val + AT_MEM_MAX_DIMS > (int)e->n_ops))
		bad = "its shape's dims are not among its values";
	else if ((m->op == MEM_OP_SET_DEVICE || m->op == MEM_OP_CTX_DEVICE) &&
		 !mem_index_ok(e, m->dev_val, false))
		bad = "its device value is not one of its values";
	else if (!mem_index_ok(e, m->dev_val, true))
		bad = "its device value is not one of its values";
	else if ((m->flags & MEM_F_THREAD_DEVICE) && (m->flags & MEM_F_DEVICE_HANDLE))
		bad = "a device both the thread's and a handle";
	else if ((m->flags & MEM_F_OUTER) && !(e->spec_flags & RT_SPEC_RETURN))
		bad = "an outer layer's call without a return probe";
	else if (!counts && (outs[0] != AT_MEM_NO_VAL || outs[1] != AT_MEM_NO_VAL))
		bad = "written-back values on a call that counts no memory";
	if (bad) {
		snprintf(why, len, "%s: memory effect: %s", e->name, bad);
		return -EINVAL;
	}
	for (int k = 0; k < 2; k++) {
		__u8 i = outs[k];

		if (i == AT_MEM_NO_VAL)
			continue;
		if (i >= e->n_ops || e->ops[i].src != FETCH_NONE || e->ops[i].flags ||
		    e->ops[i].offset || (k && i == outs[0])) {
			snprintf(why, len, "%s: memory effect: written-back value %u is not a "
				 "FETCH_NONE op of its own", e->name, i);
			return -EINVAL;
		}
	}
	return 0;
}

int rt_pack_entry__validate(const struct rt_pack_entry *e, char *why, size_t len)
{
	int payloads = 0;

	if (e->n_ops > AT_MAX_FETCH_OPS) {
		snprintf(why, len, "%s: %u fetch ops, at most %d", e->name, e->n_ops,
			 AT_MAX_FETCH_OPS);
		return -EINVAL;
	}
	for (__u32 i = 0; i < e->n_ops; i++) {
		const struct at_fetch_op *op = &e->ops[i];
		bool at_ret = op->flags & FETCH_AT_RETURN;

		if (op->src >= FETCH_VAL) {
			__u32 j = op->src - FETCH_VAL;

			if (j >= i) {
				snprintf(why, len, "%s: op %u uses value %u, not fetched yet",
					 e->name, i, j);
				return -EINVAL;
			}
			if (!at_ret && (e->ops[j].flags & FETCH_AT_RETURN)) {
				snprintf(why, len, "%s: entry op %u uses value %u, fetched at return",
					 e->name, i, j);
				return -EINVAL;
			}
		} else if (op->src == FETCH_RET && !at_ret) {
			snprintf(why, len, "%s: op %u reads the return value at entry",
				 e->name, i);
			return -EINVAL;
		} else if (at_ret && op->src >= FETCH_ARG0 && op->src <= FETCH_SP) {
			/* At return the argument registers and the stack hold
			 * something else: read through a value saved at entry. */
			snprintf(why, len, "%s: op %u reads an argument register or the "
				 "stack at return", e->name, i);
			return -EINVAL;
		} else if ((op->src == FETCH_NONE && !mem_out_val(&e->mem, i)) ||
			   op->src > FETCH_RET) {
			snprintf(why, len, "%s: op %u has no source", e->name, i);
			return -EINVAL;
		}
		if (at_ret && !(e->spec_flags & RT_SPEC_RETURN)) {
			snprintf(why, len, "%s: op %u runs at return, but there is no return probe",
				 e->name, i);
			return -EINVAL;
		}
		if ((op->flags & FETCH_DEREF) && op->size != 1 && op->size != 2 &&
		    op->size != 4 && op->size != 8) {
			snprintf(why, len, "%s: op %u reads %u bytes", e->name, i, op->size);
			return -EINVAL;
		}
		payloads += !!(op->flags & (FETCH_PAYLOAD_STR | FETCH_PAYLOAD_BYTES));
	}
	if (payloads > 1) {
		snprintf(why, len, "%s: %d payload ops, at most one", e->name, payloads);
		return -EINVAL;
	}
	return validate_mem(e, why, len);
}

void rt_pack_entry__spec(const struct rt_pack_entry *e, struct rt_probe_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->flags = e->spec_flags | (rt_event_kind_is_detail(e->event) ? RT_SPEC_DETAIL : 0);
	spec->n_ops = e->n_ops;
	memcpy(spec->ops, e->ops, sizeof(spec->ops));
	spec->mem = e->mem;
	fetch_plan__blocks(spec);
}

const char *rt_event_kind_name(enum rt_event_kind kind)
{
	static const char *const names[RT_EV__COUNT] = {
		[RT_EV_GET_PJRT_API] = "GetPjrtApi",
		[RT_EV_EXECUTE] = "execute",
		[RT_EV_H2D] = "host-to-device transfer",
		[RT_EV_D2H] = "device-to-host transfer",
		[RT_EV_ON_READY] = "completion registration",
		[RT_EV_AWAIT] = "await",
		[RT_EV_CALLBACK] = "completion callback",
		[RT_EV_COMPILE] = "compile",
		[RT_EV_COMPILE_PROGRAM] = "compile program",
		[RT_EV_INFEED_LITERAL] = "infeed",
		[RT_EV_INFEED_BUFFERS] = "infeed",
		[RT_EV_INFEED_RAW] = "infeed",
		[RT_EV_OUTFEED_LITERAL] = "outfeed",
		[RT_EV_OUTFEED_RAW] = "outfeed",
		[RT_EV_CUDA_LAUNCH] = "kernel launch",
		[RT_EV_CUDA_MEMCPY_H2D] = "host-to-device copy",
		[RT_EV_CUDA_MEMCPY_D2H] = "device-to-host copy",
		[RT_EV_CUDA_SYNC] = "stream synchronize",
		[RT_EV_CUDA_GRAPH_LAUNCH] = "graph launch",
		[RT_EV_DATASET_GET_NEXT] = "dataset GetNext",
		[RT_EV_CUDART_LAUNCH] = "runtime kernel launch",
		[RT_EV_CUDART_MEMCPY] = "runtime copy",
		[RT_EV_CUDART_GRAPH_LAUNCH] = "runtime graph launch",
		[RT_EV_CUDART_STREAM_SYNC] = "runtime stream synchronize",
		[RT_EV_CUDART_EVENT_SYNC] = "runtime event synchronize",
		[RT_EV_CUDART_DEVICE_SYNC] = "runtime device synchronize",
		[RT_EV_CUDART_EVENT_RECORD] = "runtime event record",
		[RT_EV_MEM] = "device memory",
	};
	return kind < RT_EV__COUNT && names[kind] ? names[kind] : "?";
}

bool rt_event_kind_is_cudart(enum rt_event_kind kind)
{
	return kind >= RT_EV_CUDART_LAUNCH && kind <= RT_EV_CUDART_EVENT_RECORD;
}

bool rt_event_kind_is_detail(enum rt_event_kind kind)
{
	switch (kind) {
	/* Once a step or rarer, and what steps and programs are made of. */
	case RT_EV_GET_PJRT_API:
	case RT_EV_EXECUTE:
	case RT_EV_COMPILE:
	case RT_EV_COMPILE_PROGRAM:
	case RT_EV_CUDA_GRAPH_LAUNCH:
	case RT_EV_CUDART_GRAPH_LAUNCH:
	/* Device memory: kept in the kernel always, and a window's every
	 * allocation and free are its records. */
	case RT_EV_MEM:
		return false;
	/* Per buffer, per kernel, per element: transfers, completions,
	 * feeds, kernel launches, synchronisations, dataset calls. */
	default:
		return true;
	}
}

bool rt_event_kind_is_cuda_driver(enum rt_event_kind kind)
{
	return kind >= RT_EV_CUDA_LAUNCH && kind <= RT_EV_CUDA_GRAPH_LAUNCH;
}

/* PJRT_Buffer_Type order, from pjrt_c_api.h (reference section 1.5):
 * XLA's short name and the bytes of an element (0: sub-byte or none). The
 * BPF side's AT_PJRT_ELEM_LOG2_* encode the same sizes (test_mem_packs). */
static const struct {
	const char *name;
	unsigned char bytes;
} pjrt_types[] = {
	{ NULL, 0 },	/* INVALID */
	{ "pred", 1 }, { "s8", 1 }, { "s16", 2 }, { "s32", 4 }, { "s64", 8 },
	{ "u8", 1 }, { "u16", 2 }, { "u32", 4 }, { "u64", 8 },
	{ "f16", 2 }, { "f32", 4 }, { "f64", 8 }, { "bf16", 2 },
	{ "c64", 8 }, { "c128", 16 },
	{ "f8e5m2", 1 }, { "f8e4m3fn", 1 }, { "f8e4m3b11fnuz", 1 }, { "f8e5m2fnuz", 1 },
	{ "f8e4m3fnuz", 1 },
	{ "s4", 0 }, { "u4", 0 }, { "token", 0 },
	{ "s2", 0 }, { "u2", 0 },
	{ "f8e4m3", 1 }, { "f8e3m4", 1 }, { "f8e8m0fnu", 1 },
	{ "f4e2m1fn", 0 }, { "s1", 0 }, { "u1", 0 },
};
#define N_PJRT_TYPES (sizeof(pjrt_types) / sizeof(pjrt_types[0]))

unsigned int pjrt_buffer_type_size(unsigned int type)
{
	return type < N_PJRT_TYPES ? pjrt_types[type].bytes : 0;
}

const char *pjrt_buffer_type_name(uint64_t type)
{
	return type < N_PJRT_TYPES ? pjrt_types[type].name : NULL;
}
