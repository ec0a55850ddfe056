/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The simulated CUDA pair (docs/simulator-cuda.md): libsimdrv.so plays libcuda
 * (the driver API, exported) and libsimrt.so plays libcudart (the runtime
 * API). As with the real pair, the runtime reaches the driver through a
 * private table the driver hands out (cuGetExportTable), whose functions
 * are not the exported ones: probes on the driver's exports never see the
 * runtime's calls. SIMRT_DRIVER=exported makes the runtime call the
 * exported driver functions instead (a driver call inside a runtime call).
 * The driver's first cuInit loads CUDA_INJECTION64_PATH, as libcuda does,
 * and a second table (SIMDRV_TOOLS_ID, below) lets the simulated CUPTI
 * (cupti_sim.c) see API calls and device work.
 *
 * The types are the real ones' shapes (x86-64 LP64), not their headers.
 */
#ifndef ACCELTRACE_SIM_CUDA_H
#define ACCELTRACE_SIM_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUgraphExec;
typedef uint64_t CUdeviceptr;
typedef int CUdevice;
typedef struct sim_cu_ctx *CUcontext;
typedef void *CUmemoryPool;
typedef unsigned long long CUmemGenericAllocationHandle;

/* CUresult values the memory API returns (cudaError_t's are the same
 * numbers for these two: cudaErrorInvalidValue, cudaErrorMemoryAllocation). */
#define CUDA_ERROR_INVALID_VALUE	1
#define CUDA_ERROR_OUT_OF_MEMORY	2
#define CUDA_ERROR_INVALID_DEVICE	101
#define CUDA_ERROR_INVALID_CONTEXT	201

/* The simulated GPUs: this many, each with SIMDRV_DEVICE_MEMORY bytes
 * (environment, read at the first memory call; default 16 GiB). */
#define SIMDRV_DEVICES		8
#define SIMDRV_DEFAULT_MEMORY	(16ull << 30)
/* cuMemCreate sizes are multiples of this (cuMemGetAllocationGranularity's
 * minimum on real GPUs). */
#define SIMDRV_VMM_GRANULARITY	(2ull << 20)

/* CUmemAllocationProp, the fields the driver reads: the device is
 * location.id when location.type is CU_MEM_LOCATION_TYPE_DEVICE (1). */
typedef struct {
	int type;			/* CU_MEM_ALLOCATION_TYPE_PINNED = 1 */
	int requestedHandleTypes;
	struct {
		int type;
		int id;
	} location;
	void *win32HandleMetaData;
	struct {
		unsigned char compressionType;
		unsigned char gpuDirectRDMACapable;
		unsigned short usage;
		unsigned char reserved[4];
	} allocFlags;
} CUmemAllocationProp;
_Static_assert(sizeof(CUmemAllocationProp) == 32, "CUmemAllocationProp");

typedef int cudaError_t;
typedef void *cudaStream_t;
typedef void *cudaEvent_t;
typedef void *cudaGraphExec_t;

typedef struct dim3 {
	unsigned int x, y, z;
} dim3;

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4,
};

typedef struct cudaLaunchConfig_st {
	dim3 gridDim;
	dim3 blockDim;
	size_t dynamicSmemBytes;
	cudaStream_t stream;
	void *attrs;
	unsigned int numAttrs;
} cudaLaunchConfig_t;

/* The driver's private table: what cuGetExportTable hands the runtime. */
struct simdrv_export_table {
	size_t size;
	CUresult (*launch)(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			   unsigned int bx, unsigned int by, unsigned int bz,
			   unsigned int shmem, CUstream stream, void **params, void **extra);
	CUresult (*memcpy_htod)(CUdeviceptr dst, const void *src, size_t bytes,
				CUstream stream);
	CUresult (*memcpy_dtoh)(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
	CUresult (*memcpy_dtod)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
				CUstream stream);
	CUresult (*stream_sync)(CUstream stream);
	CUresult (*graph_launch)(CUgraphExec exec, CUstream stream);
	CUresult (*event_record)(void *event, CUstream stream);
	CUresult (*event_sync)(void *event);
	CUresult (*ctx_sync)(void);
	CUresult (*memset_d8)(CUdeviceptr dst, unsigned char value, size_t bytes,
			      CUstream stream);
};

/*
 * The driver's tools interface: what CUPTI gets from libcuda (through
 * cuGetExportTable with its own id, as the real one does), so that the
 * simulated libcupti (cupti_sim.c) sees the driver's work. A tool sets a
 * sink; while one is set, every API call of either library gets a
 * correlation id (one per outermost call on a thread, shared by the calls
 * nested in it) and reports itself to the sink when it returns, and every
 * piece of device work is timed on the simulated device (each stream runs
 * its work in order) and reported when it is queued. Nothing of this runs
 * before an exported function's first instructions, where uprobes go: the
 * hooks are in the functions' bodies and cost one load while no sink is set.
 */
#define SIMDRV_EXPORT_ID "simdrv-export-1"	/* 15 + NUL: a CUuuid's 16 bytes */
#define SIMDRV_TOOLS_ID "simdrv-tools-v1"
_Static_assert(sizeof(SIMDRV_EXPORT_ID) == 16 && sizeof(SIMDRV_TOOLS_ID) == 16, "table ids");

/* CUpti_CallbackDomain numbers. */
enum sim_api_domain { SIM_DOMAIN_DRIVER = 1, SIM_DOMAIN_RUNTIME = 2 };

/*
 * The callback ids: the simulator's own numbers (not NVIDIA's), the same
 * for the libraries and for the simulated CUPTI's cuptiGetCallbackName.
 */
#define SIM_DRIVER_APIS(X)						\
	X(1, cuLaunchKernel)						\
	X(2, cuMemcpyHtoDAsync_v2)					\
	X(3, cuMemcpyDtoHAsync_v2)					\
	X(4, cuMemsetD8Async)						\
	X(5, cuGraphLaunch)						\
	X(6, cuStreamSynchronize)					\
	X(7, cuEventRecord)						\
	X(8, cuEventSynchronize)					\
	X(9, cuCtxSynchronize)
#define SIM_RUNTIME_APIS(X)						\
	X(1, cudaLaunchKernel)						\
	X(2, cudaLaunchKernel_ptsz)					\
	X(3, cudaLaunchKernelExC)					\
	X(4, cudaMemcpy)						\
	X(5, cudaMemcpyAsync)						\
	X(6, cudaMemsetAsync)						\
	X(7, cudaGraphLaunch)						\
	X(8, cudaStreamSynchronize)					\
	X(9, cudaEventRecord)						\
	X(10, cudaEventSynchronize)					\
	X(11, cudaDeviceSynchronize)

#define SIM_CBID_ENUM(n, name) SIM_CBID_##name = n,
enum sim_driver_cbid { SIM_DRIVER_APIS(SIM_CBID_ENUM) };
enum sim_runtime_cbid { SIM_RUNTIME_APIS(SIM_CBID_ENUM) };
#undef SIM_CBID_ENUM

/* The API's name for a (domain, cbid), NULL for none. */
static inline const char *sim_api_name(uint32_t domain, uint32_t cbid)
{
#define SIM_CBID_NAME(n, name) case n: return #name;
	if (domain == SIM_DOMAIN_DRIVER) {
		switch (cbid) { SIM_DRIVER_APIS(SIM_CBID_NAME) }
	} else if (domain == SIM_DOMAIN_RUNTIME) {
		switch (cbid) { SIM_RUNTIME_APIS(SIM_CBID_NAME) }
	}
	return NULL;
#undef SIM_CBID_NAME
}

enum sim_work_kind { SIM_WORK_KERNEL = 1, SIM_WORK_MEMCPY = 2, SIM_WORK_MEMSET = 3 };
/* Copy directions, CUPTI's CUpti_ActivityMemcpyKind numbers. */
enum sim_copy_kind { SIM_COPY_HTOD = 1, SIM_COPY_DTOH = 2, SIM_COPY_DTOD = 8 };

/* One piece of device work, as the simulated device runs it. */
struct sim_work {
	uint32_t kind;			/* SIM_WORK_* */
	uint32_t copy_kind;		/* memcpy: SIM_COPY_* */
	uint32_t stream_id;		/* 7 the NULL stream, then 8, 9, ... first seen */
	uint32_t correlation_id;	/* the outermost API call's */
	uint64_t t_start, t_end;	/* CLOCK_MONOTONIC ns */
	uint64_t bytes;			/* memcpy, memset */
	uint32_t value;			/* memset */
	uint32_t async;			/* memcpy: from an async call */
	uint32_t grid[3], block[3];	/* kernels */
	uint32_t dynamic_smem;
	uint32_t graph_id;		/* graph kernels: per CUgraphExec, from 1 */
	uint64_t graph_node_id;		/* graph_id << 32 | node (from 1) */
	int64_t grid_id;		/* kernels: per launch, from 1 */
	const char *name;		/* kernels: mangled name, static */
	uint32_t api_domain, api_cbid;	/* the outermost API call */
	uint64_t a, b;			/* cuda-app's truth keys for that call */
};

/* One API call, reported when it returns. */
struct sim_api_call {
	uint32_t domain, cbid;
	uint32_t correlation_id;
	int32_t result;
	uint64_t t_start, t_end;	/* CLOCK_MONOTONIC ns */
};

/* What a tool hands the driver; called on the calling thread. */
struct sim_tools_sink {
	size_t size;
	void (*work)(const struct sim_work *w);
	void (*api)(const struct sim_api_call *c);
};

/* An API call in progress, on its caller's stack. */
struct sim_api_scope {
	uint32_t domain, cbid, correlation_id;
	bool active;			/* a sink was set when it began */
	bool outermost;
	uint64_t t_start;
};

struct simdrv_tools_table {
	size_t size;
	/* Sets the sink (NULL: none); takes effect for calls that begin after. */
	void (*set_sink)(const struct sim_tools_sink *sink);
	/* Brackets a runtime API call (the driver's own calls do it inside). */
	void (*api_enter)(struct sim_api_scope *s, uint32_t domain, uint32_t cbid);
	void (*api_exit)(struct sim_api_scope *s, int result);
};

/* Driver API (libsimdrv.so). */
CUresult cuInit(unsigned int flags);
CUresult cuGetExportTable(const void **table, const void *id);
CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			unsigned int bx, unsigned int by, unsigned int bz,
			unsigned int shmem, CUstream stream, void **params, void **extra);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes,
			      CUstream stream);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes, CUstream stream);
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes, CUstream stream);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream);
CUresult cuEventRecord(void *event, CUstream stream);
CUresult cuEventSynchronize(void *event);
CUresult cuCtxSynchronize(void);
/* Device memory (cuda_memory.c). Allocations use the calling thread's
 * current context's device (CUDA_ERROR_INVALID_CONTEXT without one). */
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width_bytes,
			    size_t height, unsigned int element_size_bytes);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream);
CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream stream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
				 CUstream stream);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
				      CUmemoryPool pool, CUstream stream);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream);
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
		     const CUmemAllocationProp *prop, unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
			     CUdeviceptr addr, unsigned long long flags);
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
		  CUmemGenericAllocationHandle handle, unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);

/* Runtime API (libsimrt.so). */
cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
			     size_t shmem, cudaStream_t stream);
cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block, void **args,
				  size_t shmem, cudaStream_t stream);
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
				void **args);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
			    enum cudaMemcpyKind kind, cudaStream_t stream);
cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
/* Device memory (cuda_runtime_mem.c), each through the driver's exported
 * function, so a tracer sees the driver call nested in the runtime's. */
cudaError_t cudaSetDevice(int device);
cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream);
cudaError_t cudaMallocAsync_ptsz(void **ptr, size_t size, cudaStream_t stream);
cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags);
cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream);
cudaError_t cudaFreeAsync_ptsz(void *ptr, cudaStream_t stream);

/*
 * Kernel names as the simulated CUPTI hands them out (mangled, as CUPTI
 * does), chosen by a launch's grid y (cuda-app's kernel index in its step,
 * from 1): SIM_KERNEL_NAMES[(gy - 1) % SIM_KERNEL_NAME_COUNT]. One is 79
 * bytes and one exactly 56, around the 56-byte piece of acceltrace's name
 * table. The driver serves them; its test expects them.
 */
#define SIM_KERNEL_NAMES {						\
	"_Z10sim_matmulPKfS0_Pfiii",					\
	"_Z12sim_add_biasPfPKfi",					\
	"_Z8sim_reluPfi",						\
	"_ZN3sim6kernel23flash_attention_forwardILi128ELi64ELb1EEEvPK6__halfS4_S4_PS2_fi", \
	"_Z16sim_softmax_rowsPfPKfii",					\
	"_ZN3sim6layers17fused_layer_normsILi1024EEEvPKfS3_S3_Pfi",	\
}
#define SIM_KERNEL_NAME_COUNT 6

#endif /* ACCELTRACE_SIM_CUDA_H */
