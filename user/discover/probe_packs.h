/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Probe packs: what acceltrace attaches to each runtime library, as data.
 * A pack recognises libraries by their ABI, the functions they export
 * (runtime_kind.h does the recognising), with a file-name pattern as a hint
 * only; each entry names a target (an
 * exported symbol, a PJRT_Api slot, or an address learned at run time), the
 * kind of event it yields, and the fetch program that reads its arguments.
 * Adding a runtime is adding a pack, not code.
 *
 * The collector reads an event's values by the indexes named here (enum
 * rt_val_*), so a pack entry and its interpretation stay side by side.
 */
#ifndef ACCELTRACE_PROBE_PACKS_H
#define ACCELTRACE_PROBE_PACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "acceltrace/events.h"
#include "discover/pjrt_api.h"

enum rt_event_kind {
	RT_EV_GET_PJRT_API,	/* GetPjrtApi returned the table */
	RT_EV_EXECUTE,		/* LoadedExecutable_Execute */
	RT_EV_H2D,		/* Client_BufferFromHostBuffer */
	RT_EV_D2H,		/* Buffer_ToHostBuffer */
	RT_EV_ON_READY,		/* Event_OnReady registered a callback */
	RT_EV_AWAIT,		/* Event_Await: the host blocks on an event */
	RT_EV_CALLBACK,		/* a registered OnReady callback runs */
	RT_EV_COMPILE,		/* Client_Compile */
	RT_EV_COMPILE_PROGRAM,	/* Client_Compile's entry: the program, read
				 * while the caller still holds it */
	RT_EV_INFEED_LITERAL,	/* TPU C API infeed of a literal */
	RT_EV_INFEED_BUFFERS,	/* TPU C API infeed of prelinearized buffers */
	RT_EV_INFEED_RAW,	/* TPU C API EnqueueInfeed(data, size) */
	RT_EV_OUTFEED_LITERAL,	/* TPU C API outfeed into a literal */
	RT_EV_OUTFEED_RAW,	/* TPU C API DequeueOutfeed(data, size) */
	RT_EV_CUDA_LAUNCH,	/* cuLaunchKernel(_ptsz) */
	RT_EV_CUDA_MEMCPY_H2D,
	RT_EV_CUDA_MEMCPY_D2H,
	RT_EV_CUDA_SYNC,	/* cuStreamSynchronize(_ptsz) */
	RT_EV_CUDA_GRAPH_LAUNCH,
	RT_EV_DATASET_GET_NEXT,	/* tf.data DatasetBaseIterator::GetNext */
	/* The CUDA runtime (libcudart, or a framework linking it statically):
	 * the layer frameworks call, kept apart from the driver's kinds so the
	 * collector can tell a driver call made inside a runtime call. */
	RT_EV_CUDART_LAUNCH,	/* cudaLaunchKernel(ExC)(_ptsz) */
	RT_EV_CUDART_MEMCPY,	/* cudaMemcpy(_ptds), cudaMemcpyAsync(_ptsz) */
	RT_EV_CUDART_GRAPH_LAUNCH,	/* cudaGraphLaunch(_ptsz) */
	RT_EV_CUDART_STREAM_SYNC,	/* cudaStreamSynchronize(_ptsz) */
	RT_EV_CUDART_EVENT_SYNC,	/* cudaEventSynchronize */
	RT_EV_CUDART_DEVICE_SYNC,	/* cudaDeviceSynchronize */
	RT_EV_CUDART_EVENT_RECORD,	/* cudaEventRecord(_ptsz) */
	/* A device-memory call (its entry's struct at_mem_desc says what it
	 * does: allocate, free, size, current device). Core, never detail:
	 * the kernel's accounting is always on. */
	RT_EV_MEM,
	RT_EV__COUNT,
};

/* Value indexes (op numbers) per event kind. */
enum rt_val_get_pjrt_api { V_API_TABLE = 0 };
enum rt_val_execute {
	V_EXEC_EXECUTABLE = 0, V_EXEC_OPTIONS, V_EXEC_LAUNCH_ID, V_EXEC_NUM_DEVICES,
	V_EXEC_NUM_ARGS, V_EXEC_EVENTS, V_EXEC_STRUCT_SIZE,
	V_EXEC_EVENT0,		/* ..V_EXEC_EVENT0 + EXEC_MAX_EVENTS - 1, at return */
};
#define EXEC_MAX_EVENTS 8
enum rt_val_h2d {
	V_H2D_TYPE = 0, V_H2D_DIMS, V_H2D_NUM_DIMS, V_H2D_DEVICE,
	V_H2D_DIM0,		/* ..V_H2D_DIM0 + H2D_MAX_DIMS - 1 */
	V_H2D_ARGS = V_H2D_DIM0 + 8,	/* the Args pointer, saved at entry */
	V_H2D_DONE_EVENT, V_H2D_BUFFER,	/* out fields, read at return */
};
#define H2D_MAX_DIMS 8
enum rt_val_d2h { V_D2H_SRC = 0, V_D2H_DST, V_D2H_DST_SIZE, V_D2H_ARGS, V_D2H_EVENT };
enum rt_val_on_ready { V_ONREADY_EVENT = 0, V_ONREADY_CALLBACK, V_ONREADY_USER_ARG };
enum rt_val_await { V_AWAIT_EVENT = 0 };
enum rt_val_callback { V_CB_ERROR = 0, V_CB_USER_ARG };
enum rt_val_compile {
	V_COMPILE_PROGRAM = 0, V_COMPILE_CODE, V_COMPILE_CODE_SIZE,
	V_COMPILE_FORMAT, V_COMPILE_CODE_BYTES, V_COMPILE_ARGS,
	V_COMPILE_EXECUTABLE,
};
enum rt_val_infeed_literal {
	V_LIT_LITERAL = 0, V_LIT_SIZES, V_LIT_COUNT,
	V_LIT_SIZE0,		/* ..V_LIT_SIZE0 + LIT_MAX_PARTS - 1 */
};
#define LIT_MAX_PARTS 8
enum rt_val_infeed_buffers {
	V_BUFS_SIZES = 0, V_BUFS_COUNT,
	V_BUFS_SIZE0,		/* in uint32 words, ..+ LIT_MAX_PARTS - 1 */
};
enum rt_val_raw_feed { V_FEED_QUEUE = 0, V_FEED_DATA, V_FEED_SIZE };
enum rt_val_cuda_launch {
	V_CU_FUNC = 0, V_CU_GRID_X, V_CU_GRID_Y, V_CU_GRID_Z, V_CU_BLOCK_X,
	V_CU_BLOCK_Y, V_CU_BLOCK_Z, V_CU_SHARED, V_CU_STREAM,
};
enum rt_val_cuda_memcpy { V_CUMEM_DST = 0, V_CUMEM_SRC, V_CUMEM_BYTES, V_CUMEM_STREAM };
enum rt_val_cuda_sync { V_CUSYNC_STREAM = 0 };
enum rt_val_get_next { V_GETNEXT_THIS = 0 };
/*
 * cudaLaunchKernel passes each dim3 {x, y, z} (12 bytes) by value in two
 * registers: x | y << 32, then z (upper half undefined). The Ex variant's
 * ops read its config into the same form, so both share these indexes.
 */
enum rt_val_cudart_launch {
	V_CUDART_FUNC = 0, V_CUDART_GRID_XY, V_CUDART_GRID_Z, V_CUDART_BLOCK_XY,
	V_CUDART_BLOCK_Z, V_CUDART_SHARED, V_CUDART_STREAM,
};
/* cudaMemcpy has no stream: its V_CUDART_MEM_STREAM reads 0. */
enum rt_val_cudart_memcpy {
	V_CUDART_MEM_DST = 0, V_CUDART_MEM_SRC, V_CUDART_MEM_BYTES,
	V_CUDART_MEM_KIND, V_CUDART_MEM_STREAM,
};
/* enum cudaMemcpyKind (driver_types.h). */
enum cudart_memcpy_kind {
	CUDART_MEMCPY_H2H = 0, CUDART_MEMCPY_H2D = 1, CUDART_MEMCPY_D2H = 2,
	CUDART_MEMCPY_D2D = 3, CUDART_MEMCPY_DEFAULT = 4,
};
/* cudaGraphLaunch(exec, stream), cudaEventRecord(event, stream),
 * cudaStreamSynchronize(stream), cudaEventSynchronize(event). */
enum rt_val_cudart_handle { V_CUDART_HANDLE = 0, V_CUDART_HANDLE_STREAM };

/*
 * Device-memory calls (RT_EV_MEM). Each ends with the two values the
 * kernel writes (struct at_mem_desc's out values): the bytes allocated,
 * freed or sized (0: not known), and the bytes in use after, on the
 * allocation's device and layer.
 */
/* PJRT buffers made from a shape: Client_BufferFromHostBuffer,
 * Client_CreateUninitializedBuffer. */
enum rt_val_mem_shape {
	V_MSHAPE_TYPE = 0, V_MSHAPE_DIMS, V_MSHAPE_NUM_DIMS, V_MSHAPE_DEVICE,
	V_MSHAPE_DIM0,		/* ..V_MSHAPE_DIM0 + AT_MEM_MAX_DIMS - 1 */
	V_MSHAPE_ARGS = V_MSHAPE_DIM0 + AT_MEM_MAX_DIMS, V_MSHAPE_BUFFER,
	V_MSHAPE_BYTES, V_MSHAPE_IN_USE,
};
/* Frees of one handle: Buffer_Destroy/Delete, cuMemFree*, cuMemRelease,
 * cudaFree*. */
enum rt_val_mem_free { V_MFREE_ADDR = 0, V_MFREE_BYTES, V_MFREE_IN_USE };
/* Buffer_OnDeviceSizeInBytes: the buffer, its Args, the size at return. */
enum rt_val_mem_size { V_MSIZE_BUFFER = 0, V_MSIZE_ARGS, V_MSIZE_SIZE, V_MSIZE_BYTES, V_MSIZE_IN_USE };
/* cuMemAlloc*(CUdeviceptr *, size, ...), cudaMalloc*(void **, size, ...):
 * the out pointer's place, the size, the address at return. */
enum rt_val_mem_alloc { V_MALLOC_OUT = 0, V_MALLOC_SIZE, V_MALLOC_ADDR, V_MALLOC_BYTES, V_MALLOC_IN_USE };
/* cuMemAllocPitch_v2 / cudaMallocPitch(ptr *, size_t *pitch, width,
 * height): pitch * height bytes. */
enum rt_val_mem_pitch {
	V_MPITCH_OUT = 0, V_MPITCH_OUT_PITCH, V_MPITCH_HEIGHT, V_MPITCH_ADDR,
	V_MPITCH_PITCH, V_MPITCH_BYTES, V_MPITCH_IN_USE,
};
/* cuMemCreate(handle *, size, prop *, flags): prop->location.id the device. */
enum rt_val_mem_create {
	V_MCREATE_OUT = 0, V_MCREATE_SIZE, V_MCREATE_DEVICE, V_MCREATE_HANDLE,
	V_MCREATE_BYTES, V_MCREATE_IN_USE,
};
/* cuDevicePrimaryCtxRetain(ctx *, dev), cuCtxCreate_v2(ctx *, flags, dev). */
enum rt_val_mem_ctx { V_MCTX_OUT = 0, V_MCTX_DEVICE, V_MCTX_CTX };
/* cudaSetDevice(device), cuCtxSetCurrent(ctx), cuCtxPushCurrent_v2(ctx). */
enum rt_val_mem_current { V_MCUR_VALUE = 0 };

enum rt_target_kind {
	RT_TARGET_SYMBOL,	/* an exported (or .symtab) function */
	RT_TARGET_PJRT,		/* a slot of the PJRT_Api table */
	RT_TARGET_DYNAMIC,	/* an address learned at run time (callbacks) */
};

struct rt_pack_entry {
	const char *name;		/* what a user reads in `acceltrace probes` */
	enum rt_target_kind target;
	const char *symbol;		/* RT_TARGET_SYMBOL */
	enum pjrt_fn pjrt_fn;		/* RT_TARGET_PJRT */
	enum rt_event_kind event;
	__u32 spec_flags;		/* enum rt_spec_flags */
	__u32 n_ops;
	struct at_fetch_op ops[AT_MAX_FETCH_OPS];
	/* What the call does to device memory (op MEM_OP_NONE: nothing),
	 * kept in the kernel (include/acceltrace/events.h). */
	struct at_mem_desc mem;
	/* The memory half of a call a detail entry at the same place also
	 * records: the call's span is that entry's, so this one makes a
	 * span only while detail is off (else the call is there twice). */
	bool memory_twin;
};

/*
 * Which exported functions make a library this runtime, whatever its file
 * is called: it exports (defines, in .dynsym) every name of all_of, and one
 * of any_of when any_of is set. NULL-terminated lists; either may be NULL,
 * not both.
 */
struct rt_abi_signature {
	const char *const *all_of;
	const char *const *any_of;
};

/*
 * The kind of device a runtime drives, as XProf names device planes
 * (/device:GPU:N, /device:TPU:N). A PJRT plugin alone does not say: the
 * driver it loads does.
 */
enum rt_platform {
	RT_PLATFORM_UNKNOWN = 0,
	RT_PLATFORM_TPU,
	RT_PLATFORM_GPU,
};

struct rt_pack {
	const char *name;
	/*
	 * Extended regex on the library's file name (basename): a hint, never
	 * required. Where a library's exports match several packs'
	 * signatures, the one whose hint matches its name is preferred.
	 */
	const char *library;
	struct rt_abi_signature abi;
	/* The library exports GetPjrtApi: find its table and use slots. */
	bool pjrt;
	/* The devices behind it, and their vendor (XProf's device_vendor). */
	enum rt_platform platform;
	const char *vendor;
	const struct rt_pack_entry *entries;	/* may be empty: recognised only */
	size_t n_entries;
};

size_t rt_pack_count(void);
const struct rt_pack *rt_pack_get(size_t i);
/* "GPU", "TPU" or NULL (unknown): the word in XProf's plane names. */
const char *rt_platform_name(enum rt_platform platform);
/*
 * The first pack whose name hint matches @path's basename, or NULL. A hint
 * only: runtime_kind.h recognises a library by what it exports.
 */
const struct rt_pack *rt_pack_match(const char *path);
/* The first entry of any pack with this name ("cuMemAlloc_v2"), or NULL. */
const struct rt_pack_entry *rt_pack_entry_named(const char *name);
/* The entry for OnReady callbacks (attached at run time). */
const struct rt_pack_entry *rt_pack_callback_entry(void);
/*
 * Checks a fetch program: ops reference only earlier values, entry ops never
 * use values fetched at return, the return value only at return, argument
 * registers and the stack pointer only at entry (at return they hold other
 * things: save the pointer at entry and read through the saved value), at
 * most one payload; and its memory effect (struct at_mem_desc): the values
 * it names are the entry's, the ones the kernel writes back FETCH_NONE ops
 * of their own, an outer layer's call paired, event RT_EV_MEM exactly when
 * there is an effect. Returns 0, or -EINVAL with the reason in @why.
 */
int rt_pack_entry__validate(const struct rt_pack_entry *e, char *why, size_t len);
/* Fills a BPF probe spec from an entry. */
void rt_pack_entry__spec(const struct rt_pack_entry *e, struct rt_probe_spec *spec);
const char *rt_event_kind_name(enum rt_event_kind kind);
/* True for the CUDA runtime's kinds (RT_EV_CUDART_*), false for the rest. */
bool rt_event_kind_is_cudart(enum rt_event_kind kind);
/* True for the CUDA driver's kinds (RT_EV_CUDA_*). */
bool rt_event_kind_is_cuda_driver(enum rt_event_kind kind);
/*
 * Detail, not core: high-rate calls (per buffer, kernel or element) that
 * the daemon's sampled mode records only in its detail slices. Core kinds
 * (Execute, Compile, GetPjrtApi, graph launches) are recorded always.
 */
bool rt_event_kind_is_detail(enum rt_event_kind kind);

/* Bytes per element of a PJRT_Buffer_Type; 0 when unknown. */
unsigned int pjrt_buffer_type_size(unsigned int type);
/* Its XLA short name ("f32", "bf16", "pred"); NULL for INVALID or a number
 * it does not know. */
const char *pjrt_buffer_type_name(uint64_t type);

#endif /* ACCELTRACE_PROBE_PACKS_H */
