/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The simulated CUDA pair (docs/simulator.md): libsimdrv.so plays libcuda
 * (the driver API, exported) and libsimrt.so plays libcudart (the runtime
 * API). As with the real pair, the runtime reaches the driver through a
 * private table the driver hands out (cuGetExportTable), whose functions
 * are not the exported ones: probes on the driver's exports never see the
 * runtime's calls. SIMRT_DRIVER=exported makes the runtime call the
 * exported driver functions instead (a driver call inside a runtime call).
 *
 * The types are the real ones' shapes (x86-64 LP64), not their headers.
 */
#ifndef ACCELTRACE_SIM_CUDA_H
#define ACCELTRACE_SIM_CUDA_H

#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUgraphExec;
typedef uint64_t CUdeviceptr;

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
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream);
CUresult cuEventRecord(void *event, CUstream stream);
CUresult cuEventSynchronize(void *event);
CUresult cuCtxSynchronize(void);

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
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);

#endif /* ACCELTRACE_SIM_CUDA_H */
