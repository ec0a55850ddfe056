// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsimrt.so: a CUDA runtime over libsimdrv.so (cuda_sim.h). Like
 * libcudart it reaches the driver through the private table
 * cuGetExportTable hands out, so none of its calls enter the driver's
 * exported functions; with SIMRT_DRIVER=exported in the environment it
 * calls the exported ones instead, as a runtime might (the same work then
 * passes both layers' probes).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_sim.h"

#define EXPORT __attribute__((visibility("default")))

static const struct simdrv_export_table *drv;
static struct simdrv_export_table exported = {
	.size = sizeof(exported),
	.launch = cuLaunchKernel,
	.memcpy_htod = cuMemcpyHtoDAsync_v2,
	.memcpy_dtoh = cuMemcpyDtoHAsync_v2,
	.stream_sync = cuStreamSynchronize,
	.graph_launch = cuGraphLaunch,
	.event_record = cuEventRecord,
	.event_sync = cuEventSynchronize,
	.ctx_sync = cuCtxSynchronize,
};
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
	const char *mode = getenv("SIMRT_DRIVER");
	const void *t = NULL;

	if (cuInit(0) || cuGetExportTable(&t, "simdrv-private") || !t)
		return;
	drv = t;
	if (mode && !strcmp(mode, "exported")) {
		/* No exported device-to-device copy: the table's. */
		exported.memcpy_dtod = drv->memcpy_dtod;
		drv = &exported;
	}
}

static const struct simdrv_export_table *driver(void)
{
	pthread_once(&once, init);
	return drv;
}

static cudaError_t launch(const void *func, dim3 grid, dim3 block, void **args,
			  size_t shmem, cudaStream_t stream)
{
	const struct simdrv_export_table *d = driver();

	if (!d)
		return 3;	/* cudaErrorInitializationError */
	return d->launch((CUfunction)func, grid.x, grid.y, grid.z, block.x, block.y,
			 block.z, (unsigned int)shmem, stream, args, NULL) ? 1 : 0;
}

EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
				    size_t shmem, cudaStream_t stream)
{
	return launch(func, grid, block, args, shmem, stream);
}

EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block,
					 void **args, size_t shmem, cudaStream_t stream)
{
	return launch(func, grid, block, args, shmem, stream);
}

EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
				       void **args)
{
	if (!config)
		return 1;
	return launch(func, config->gridDim, config->blockDim, args,
		      config->dynamicSmemBytes, config->stream);
}

static cudaError_t copy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
			cudaStream_t stream, int sync)
{
	const struct simdrv_export_table *d = driver();
	CUresult r;

	if (!d)
		return 3;
	switch (kind) {
	case cudaMemcpyHostToDevice:
		r = d->memcpy_htod((CUdeviceptr)(uintptr_t)dst, src, count, stream);
		break;
	case cudaMemcpyDeviceToHost:
		r = d->memcpy_dtoh(dst, (CUdeviceptr)(uintptr_t)src, count, stream);
		break;
	case cudaMemcpyDeviceToDevice:
	case cudaMemcpyDefault:
		r = d->memcpy_dtod((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src,
				   count, stream);
		break;
	default:
		r = 0;
		break;
	}
	if (!r && sync)
		r = d->stream_sync(stream);
	return r ? 1 : 0;
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count,
			      enum cudaMemcpyKind kind)
{
	return copy(dst, src, count, kind, NULL, 1);
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
				   enum cudaMemcpyKind kind, cudaStream_t stream)
{
	return copy(dst, src, count, kind, stream, 0);
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->stream_sync(stream) ? 1 : 0;
}

EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->event_record(event, stream) ? 1 : 0;
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->event_sync(event) ? 1 : 0;
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->ctx_sync() ? 1 : 0;
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->graph_launch(exec, stream) ? 1 : 0;
}
