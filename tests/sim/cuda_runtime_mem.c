// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsimrt.so's device memory: cudaSetDevice and the cudaMalloc/cudaFree
 * family, each implemented by calling the driver's *exported* function
 * (cuMemAlloc_v2, cuMemAllocAsync, ...), as libcudart reaches the driver's
 * memory API: a tracer sees the runtime call with the driver call nested
 * inside it on the same thread, and must count the allocation once.
 *
 * Like libcudart, a thread's first memory call without cudaSetDevice uses
 * device 0, making its primary context current; cudaSetDevice and that
 * first call run cuInit first. The memory calls are not bracketed for the
 * simulated CUPTI (they have no callback ids).
 */
#include <stdint.h>

#include "cuda_sim.h"

#define EXPORT __attribute__((visibility("default")))

static __thread int thread_device = -1;

/* CUresult to cudaError_t: the memory API's numbers are the same. */
static cudaError_t rt_error(CUresult r)
{
	switch (r) {
	case 0:
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_OUT_OF_MEMORY:
	case CUDA_ERROR_INVALID_DEVICE:
		return r;
	default:
		return 999;	/* cudaErrorUnknown */
	}
}

static cudaError_t use_device(int device)
{
	CUcontext ctx;
	CUresult r;

	/* The runtime's first use initialises the driver (and so loads
	 * CUDA_INJECTION64_PATH), whichever call it is. */
	r = cuInit(0);
	if (!r)
		r = cuDevicePrimaryCtxRetain(&ctx, device);
	if (!r)
		r = cuCtxSetCurrent(ctx);
	if (!r)
		thread_device = device;
	return rt_error(r);
}

static cudaError_t ensure_device(void)
{
	return thread_device >= 0 ? 0 : use_device(0);
}

EXPORT cudaError_t cudaSetDevice(int device)
{
	return use_device(device);
}

EXPORT cudaError_t cudaMalloc(void **ptr, size_t size)
{
	cudaError_t e = ensure_device();

	return e ? e : rt_error(cuMemAlloc_v2((CUdeviceptr *)ptr, size));
}

EXPORT cudaError_t cudaMallocAsync(void **ptr, size_t size, cudaStream_t stream)
{
	cudaError_t e = ensure_device();

	return e ? e : rt_error(cuMemAllocAsync((CUdeviceptr *)ptr, size, stream));
}

EXPORT cudaError_t cudaMallocAsync_ptsz(void **ptr, size_t size, cudaStream_t stream)
{
	cudaError_t e = ensure_device();

	return e ? e : rt_error(cuMemAllocAsync_ptsz((CUdeviceptr *)ptr, size, stream));
}

EXPORT cudaError_t cudaMallocManaged(void **ptr, size_t size, unsigned int flags)
{
	cudaError_t e = ensure_device();

	return e ? e : rt_error(cuMemAllocManaged((CUdeviceptr *)ptr, size, flags));
}

EXPORT cudaError_t cudaMallocPitch(void **ptr, size_t *pitch, size_t width, size_t height)
{
	cudaError_t e = ensure_device();

	return e ? e : rt_error(cuMemAllocPitch_v2((CUdeviceptr *)ptr, pitch, width,
						   height, 4));
}

/* cudaFree(NULL) is a no-op that never reaches the driver. */
EXPORT cudaError_t cudaFree(void *ptr)
{
	return ptr ? rt_error(cuMemFree_v2((CUdeviceptr)(uintptr_t)ptr)) : 0;
}

EXPORT cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream)
{
	return ptr ? rt_error(cuMemFreeAsync((CUdeviceptr)(uintptr_t)ptr, stream)) : 0;
}

EXPORT cudaError_t cudaFreeAsync_ptsz(void *ptr, cudaStream_t stream)
{
	return ptr ? rt_error(cuMemFreeAsync_ptsz((CUdeviceptr)(uintptr_t)ptr, stream)) : 0;
}
