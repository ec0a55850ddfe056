// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsimdrv.so: a CUDA driver without a GPU (cuda_sim.h). Each exported
 * function calls its implementation, as libcuda's do; the private table
 * points at the implementations themselves, so a caller through the table
 * never enters an exported function. Work takes a little time: a launch
 * or an async copy a few microseconds, a synchronisation ~50 us.
 */
#include <time.h>

#include "cuda_sim.h"

#define EXPORT __attribute__((visibility("default")))
#define IMPL static __attribute__((noinline))

static void spin_ns(long ns)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

static void wait_ns(long ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };

	nanosleep(&ts, NULL);
}

IMPL CUresult drv_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			 unsigned int bx, unsigned int by, unsigned int bz,
			 unsigned int shmem, CUstream stream, void **params, void **extra)
{
	if (!f || !gx || !gy || !gz || !bx || !by || !bz)
		return 1;	/* CUDA_ERROR_INVALID_VALUE */
	(void)shmem;
	(void)stream;
	(void)params;
	(void)extra;
	spin_ns(2000);
	return 0;
}

IMPL CUresult drv_memcpy_htod(CUdeviceptr dst, const void *src, size_t bytes,
			      CUstream stream)
{
	(void)dst;
	(void)src;
	(void)bytes;
	(void)stream;
	spin_ns(3000);
	return 0;
}

IMPL CUresult drv_memcpy_dtoh(void *dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
	(void)dst;
	(void)src;
	(void)bytes;
	(void)stream;
	spin_ns(3000);
	return 0;
}

IMPL CUresult drv_memcpy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
			      CUstream stream)
{
	(void)dst;
	(void)src;
	(void)bytes;
	(void)stream;
	spin_ns(1000);
	return 0;
}

IMPL CUresult drv_stream_sync(CUstream stream)
{
	(void)stream;
	wait_ns(50000);
	return 0;
}

IMPL CUresult drv_graph_launch(CUgraphExec exec, CUstream stream)
{
	(void)exec;
	(void)stream;
	spin_ns(3000);
	return 0;
}

IMPL CUresult drv_event_record(void *event, CUstream stream)
{
	(void)event;
	(void)stream;
	return 0;
}

IMPL CUresult drv_event_sync(void *event)
{
	(void)event;
	wait_ns(20000);
	return 0;
}

IMPL CUresult drv_ctx_sync(void)
{
	wait_ns(20000);
	return 0;
}

static const struct simdrv_export_table table = {
	.size = sizeof(table),
	.launch = drv_launch,
	.memcpy_htod = drv_memcpy_htod,
	.memcpy_dtoh = drv_memcpy_dtoh,
	.memcpy_dtod = drv_memcpy_dtod,
	.stream_sync = drv_stream_sync,
	.graph_launch = drv_graph_launch,
	.event_record = drv_event_record,
	.event_sync = drv_event_sync,
	.ctx_sync = drv_ctx_sync,
};

EXPORT CUresult cuInit(unsigned int flags)
{
	return flags ? 1 : 0;
}

EXPORT CUresult cuGetExportTable(const void **out, const void *id)
{
	(void)id;
	if (!out)
		return 1;
	*out = &table;
	return 0;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
			       unsigned int gz, unsigned int bx, unsigned int by,
			       unsigned int bz, unsigned int shmem, CUstream stream,
			       void **params, void **extra)
{
	return drv_launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes,
				     CUstream stream)
{
	return drv_memcpy_htod(dst, src, bytes, stream);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
				     CUstream stream)
{
	return drv_memcpy_dtoh(dst, src, bytes, stream);
}

EXPORT CUresult cuStreamSynchronize(CUstream stream)
{
	return drv_stream_sync(stream);
}

EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
	return drv_graph_launch(exec, stream);
}

EXPORT CUresult cuEventRecord(void *event, CUstream stream)
{
	return drv_event_record(event, stream);
}

EXPORT CUresult cuEventSynchronize(void *event)
{
	return drv_event_sync(event);
}

EXPORT CUresult cuCtxSynchronize(void)
{
	return drv_ctx_sync();
}
