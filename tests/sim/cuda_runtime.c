// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsimrt.so: a CUDA runtime over libsimdrv.so (cuda_sim.h). Like
 * libcudart it reaches the driver through the private table
 * cuGetExportTable hands out, so none of its calls enter the driver's
 * exported functions; with SIMRT_DRIVER=exported in the environment it
 * calls the exported ones instead, as a runtime might (the same work then
 * passes both layers' probes). Its first use calls cuInit, as libcudart's
 * does. Each API function brackets its work with the driver's tools table
 * (api_enter/api_exit), which is how a tool sees runtime calls and ties the
 * driver's work to them.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_sim.h"

#define EXPORT __attribute__((visibility("default")))

static const struct simdrv_export_table *drv;
static const struct simdrv_tools_table *tools;
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
	.memset_d8 = cuMemsetD8Async,
};
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
	const char *mode = getenv("SIMRT_DRIVER");
	const void *t = NULL;

	if (cuInit(0) || cuGetExportTable(&t, SIMDRV_EXPORT_ID) || !t)
		return;
	drv = t;
	if (!cuGetExportTable(&t, SIMDRV_TOOLS_ID))
		tools = t;
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

static void api_enter(struct sim_api_scope *s, uint32_t cbid)
{
	s->active = false;
	if (driver() && tools)
		tools->api_enter(s, SIM_DOMAIN_RUNTIME, cbid);
}

static void api_exit(struct sim_api_scope *s, int result)
{
	if (s->active)
		tools->api_exit(s, result);
}

#define RUNTIME_CALL(name, call) do {					\
	struct sim_api_scope sc_;					\
	cudaError_t r_;							\
									\
	api_enter(&sc_, SIM_CBID_##name);				\
	r_ = (call);							\
	api_exit(&sc_, r_);						\
	return r_;							\
} while (0)

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
	RUNTIME_CALL(cudaLaunchKernel, launch(func, grid, block, args, shmem, stream));
}

EXPORT cudaError_t cudaLaunchKernel_ptsz(const void *func, dim3 grid, dim3 block,
					 void **args, size_t shmem, cudaStream_t stream)
{
	RUNTIME_CALL(cudaLaunchKernel_ptsz, launch(func, grid, block, args, shmem, stream));
}

static cudaError_t launch_config(const cudaLaunchConfig_t *config, const void *func,
				 void **args)
{
	if (!config)
		return 1;
	return launch(func, config->gridDim, config->blockDim, args,
		      config->dynamicSmemBytes, config->stream);
}

EXPORT cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func,
				       void **args)
{
	RUNTIME_CALL(cudaLaunchKernelExC, launch_config(config, func, args));
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
	RUNTIME_CALL(cudaMemcpy, copy(dst, src, count, kind, NULL, 1));
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count,
				   enum cudaMemcpyKind kind, cudaStream_t stream)
{
	RUNTIME_CALL(cudaMemcpyAsync, copy(dst, src, count, kind, stream, 0));
}

static cudaError_t memset_async(void *dst, int value, size_t count, cudaStream_t stream)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->memset_d8((CUdeviceptr)(uintptr_t)dst, (unsigned char)value, count,
				     stream) ? 1 : 0;
}

EXPORT cudaError_t cudaMemsetAsync(void *dst, int value, size_t count, cudaStream_t stream)
{
	RUNTIME_CALL(cudaMemsetAsync, memset_async(dst, value, count, stream));
}

static cudaError_t stream_sync(cudaStream_t stream)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->stream_sync(stream) ? 1 : 0;
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	RUNTIME_CALL(cudaStreamSynchronize, stream_sync(stream));
}

static cudaError_t event_record(cudaEvent_t event, cudaStream_t stream)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->event_record(event, stream) ? 1 : 0;
}

EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	RUNTIME_CALL(cudaEventRecord, event_record(event, stream));
}

static cudaError_t event_sync(cudaEvent_t event)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->event_sync(event) ? 1 : 0;
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	RUNTIME_CALL(cudaEventSynchronize, event_sync(event));
}

static cudaError_t device_sync(void)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->ctx_sync() ? 1 : 0;
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	RUNTIME_CALL(cudaDeviceSynchronize, device_sync());
}

static cudaError_t graph_launch(cudaGraphExec_t exec, cudaStream_t stream)
{
	const struct simdrv_export_table *d = driver();

	return !d ? 3 : d->graph_launch(exec, stream) ? 1 : 0;
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
	RUNTIME_CALL(cudaGraphLaunch, graph_launch(exec, stream));
}
