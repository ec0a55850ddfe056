// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsimdrv.so: a CUDA driver without a GPU (cuda_sim.h). Each exported
 * function calls its implementation, as libcuda's do; the private table
 * points at the implementations themselves, so a caller through the table
 * never enters an exported function. Work takes a little time: a launch
 * or an async copy a few microseconds, a synchronisation ~50 us.
 *
 * Like libcuda, the first cuInit loads the library CUDA_INJECTION64_PATH
 * names and calls its InitializeInjection (how Nsight Systems, and
 * acceltrace's agent, get into a CUDA process).
 *
 * For tools (the simulated CUPTI, cupti_sim.c) it hands out a second table,
 * SIMDRV_TOOLS_ID: while a tool's sink is set, API calls get correlation ids
 * and are reported when they return, and device work is timed on a
 * simulated device and reported when it is queued. The device runs each
 * stream's work in order: a piece starts LAUNCH_LATENCY_NS after it was
 * queued, or when the stream's previous piece ended if that is later; the
 * NULL stream is the legacy default stream, whose work waits for every
 * stream's and every stream's for its. Synchronisations then also wait for
 * the work they synchronise with. Without a sink none of this runs.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_sim.h"

#define EXPORT __attribute__((visibility("default")))
#define IMPL static __attribute__((noinline))

#define LAUNCH_LATENCY_NS 3000ull
#define NULL_STREAM_ID 7u
#define MAX_STREAMS 64		/* streams remembered; the least used goes */
#define MAX_GRAPHS 16
#define GRAPH_NODES 2		/* kernels a graph launch runs */

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void spin_ns(long ns)
{
	uint64_t t0 = now_ns();

	while (now_ns() - t0 < (uint64_t)ns)
		;
}

static void wait_ns(long ns)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ns };

	nanosleep(&ts, NULL);
}

/* Sleeps until CLOCK_MONOTONIC reaches t (no-op for a time past). */
static void wait_until(uint64_t t)
{
	struct timespec ts = { .tv_sec = (time_t)(t / 1000000000ull),
			       .tv_nsec = (long)(t % 1000000000ull) };

	if (t > now_ns())
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
			;
}

/* ---------------------------------------------------------------- tools */

static const struct sim_tools_sink *tools_sink;
static uint32_t last_correlation;
/* The outermost API call in progress on this thread, while a sink is set. */
static __thread struct sim_api_scope *outermost;

static const struct sim_tools_sink *sink(void)
{
	return __atomic_load_n(&tools_sink, __ATOMIC_ACQUIRE);
}

static void tools_set_sink(const struct sim_tools_sink *s)
{
	__atomic_store_n(&tools_sink, s, __ATOMIC_RELEASE);
}

static void api_enter(struct sim_api_scope *s, uint32_t domain, uint32_t cbid)
{
	s->active = false;
	s->outermost = false;
	if (!sink())
		return;
	s->active = true;
	s->domain = domain;
	s->cbid = cbid;
	if (outermost) {
		s->correlation_id = outermost->correlation_id;
	} else {
		s->correlation_id = __atomic_add_fetch(&last_correlation, 1, __ATOMIC_RELAXED);
		s->outermost = true;
		outermost = s;
	}
	s->t_start = now_ns();
}

static void api_exit(struct sim_api_scope *s, int result)
{
	const struct sim_tools_sink *k;
	struct sim_api_call c;

	if (!s->active)
		return;
	c.t_end = now_ns();
	if (s->outermost)
		outermost = NULL;
	k = sink();
	if (!k)
		return;
	c.domain = s->domain;
	c.cbid = s->cbid;
	c.correlation_id = s->correlation_id;
	c.result = result;
	c.t_start = s->t_start;
	k->api(&c);
}

/* ---------------------------------------------------------------- the device */

struct dev_stream {
	CUstream handle;
	uint32_t id;			/* 0: free slot */
	uint64_t end;			/* when its last queued work ends */
	uint64_t used;
};

static pthread_mutex_t dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dev_stream streams[MAX_STREAMS];
static uint64_t null_end, all_end, use_tick;
static uint32_t last_stream_id = NULL_STREAM_ID;
static CUgraphExec graphs[MAX_GRAPHS];
static int64_t last_grid_id;

/* The stream's slot, made on first sight; under dev_lock. */
static struct dev_stream *stream_slot(CUstream handle)
{
	struct dev_stream *s, *lru = &streams[0];

	for (s = streams; s < streams + MAX_STREAMS; s++) {
		if (s->id && s->handle == handle)
			goto out;
		if (!s->id || (lru->id && s->used < lru->used))
			lru = s;
	}
	/* A forgotten stream seen again is a new stream, as a destroyed
	 * and recreated one is. */
	s = lru;
	s->handle = handle;
	s->id = ++last_stream_id;
	s->end = 0;
out:
	s->used = ++use_tick;
	return s;
}

/* Queues dur ns of work on the stream: its stream id and device times. */
static void dev_queue(CUstream stream, uint64_t dur, struct sim_work *w)
{
	uint64_t start = now_ns() + LAUNCH_LATENCY_NS;

	pthread_mutex_lock(&dev_lock);
	if (!stream) {
		if (start < all_end)
			start = all_end;
		w->stream_id = NULL_STREAM_ID;
		null_end = start + dur;
	} else {
		struct dev_stream *s = stream_slot(stream);

		if (start < s->end)
			start = s->end;
		if (start < null_end)
			start = null_end;
		w->stream_id = s->id;
		s->end = start + dur;
	}
	if (all_end < start + dur)
		all_end = start + dur;
	if (w->kind == SIM_WORK_KERNEL)
		w->grid_id = ++last_grid_id;
	pthread_mutex_unlock(&dev_lock);
	w->t_start = start;
	w->t_end = start + dur;
}

/* When the work a synchronisation waits for ends: the stream's, or all. */
static uint64_t dev_end(CUstream stream, bool all)
{
	uint64_t end;

	pthread_mutex_lock(&dev_lock);
	if (all || !stream) {
		end = all_end;
	} else {
		struct dev_stream *s;

		end = null_end;
		for (s = streams; s < streams + MAX_STREAMS; s++)
			if (s->id && s->handle == stream && s->end > end)
				end = s->end;
	}
	pthread_mutex_unlock(&dev_lock);
	return end;
}

static uint32_t graph_id(CUgraphExec exec)
{
	uint32_t i;

	pthread_mutex_lock(&dev_lock);
	for (i = 0; i < MAX_GRAPHS && graphs[i] && graphs[i] != exec; i++)
		;
	if (i == MAX_GRAPHS)
		i = MAX_GRAPHS - 1;
	graphs[i] = exec;
	pthread_mutex_unlock(&dev_lock);
	return i + 1;
}

/* Kernel names (cuda_sim.h), and a graph's. */
static const char *const kernel_names[SIM_KERNEL_NAME_COUNT] = SIM_KERNEL_NAMES;
static const char *const graph_kernel_names[GRAPH_NODES] = {
	"_Z14sim_graph_gemmPK6__halfS1_PS_i",
	"_Z18sim_graph_epiloguePfPKfi",
};
static const uint64_t graph_kernel_ns[GRAPH_NODES] = { 4000, 3000 };

/* Reports work to the sink, if one is set and an API call is in progress
 * on this thread: the call's correlation id and truth keys go with it. */
static void report(struct sim_work *w, CUstream stream, uint64_t dur)
{
	const struct sim_tools_sink *k = sink();
	struct sim_api_scope *o = outermost;

	if (!k || !o)
		return;
	dev_queue(stream, dur, w);
	w->correlation_id = o->correlation_id;
	w->api_domain = o->domain;
	w->api_cbid = o->cbid;
	k->work(w);
}

static void report_kernel(unsigned int gx, unsigned int gy, unsigned int gz,
			  unsigned int bx, unsigned int by, unsigned int bz,
			  unsigned int shmem, CUstream stream)
{
	struct sim_work w = {
		.kind = SIM_WORK_KERNEL,
		.grid = { gx, gy, gz }, .block = { bx, by, bz },
		.dynamic_smem = shmem,
		.name = kernel_names[(gy - 1) % (sizeof(kernel_names) / sizeof(kernel_names[0]))],
		.a = gx, .b = gy,
	};

	/* 2 to 6 us, times grid z (a test's way to a long kernel). */
	report(&w, stream, (2000ull + 1000ull * ((gx + gy) % 5)) * gz);
}

static void report_copy(uint32_t copy_kind, size_t bytes, CUstream stream, bool async)
{
	struct sim_work w = {
		.kind = SIM_WORK_MEMCPY, .copy_kind = copy_kind, .bytes = bytes,
		.async = async, .a = bytes,
	};

	report(&w, stream, 1500 + bytes / 8);	/* 8 GB/s */
}

/* ---------------------------------------------------------------- the driver */

IMPL CUresult drv_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			 unsigned int bx, unsigned int by, unsigned int bz,
			 unsigned int shmem, CUstream stream, void **params, void **extra)
{
	if (!f || !gx || !gy || !gz || !bx || !by || !bz)
		return 1;	/* CUDA_ERROR_INVALID_VALUE */
	(void)params;
	(void)extra;
	report_kernel(gx, gy, gz, bx, by, bz, shmem, stream);
	spin_ns(2000);
	return 0;
}

IMPL CUresult drv_memcpy_htod(CUdeviceptr dst, const void *src, size_t bytes,
			      CUstream stream)
{
	(void)dst;
	(void)src;
	report_copy(SIM_COPY_HTOD, bytes, stream, true);
	spin_ns(3000);
	return 0;
}

IMPL CUresult drv_memcpy_dtoh(void *dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
	(void)dst;
	(void)src;
	report_copy(SIM_COPY_DTOH, bytes, stream, true);
	spin_ns(3000);
	return 0;
}

IMPL CUresult drv_memcpy_dtod(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
			      CUstream stream)
{
	(void)dst;
	(void)src;
	report_copy(SIM_COPY_DTOD, bytes, stream, true);
	spin_ns(1000);
	return 0;
}

IMPL CUresult drv_memset_d8(CUdeviceptr dst, unsigned char value, size_t bytes,
			    CUstream stream)
{
	struct sim_work w = {
		.kind = SIM_WORK_MEMSET, .bytes = bytes, .value = value, .a = bytes,
	};

	(void)dst;
	report(&w, stream, 1000 + bytes / 32);	/* 32 GB/s */
	spin_ns(1000);
	return 0;
}

IMPL CUresult drv_stream_sync(CUstream stream)
{
	wait_ns(50000);
	if (sink())
		wait_until(dev_end(stream, false));
	return 0;
}

IMPL CUresult drv_graph_launch(CUgraphExec exec, CUstream stream)
{
	if (sink()) {
		uint32_t id = graph_id(exec);

		for (uint32_t n = 0; n < GRAPH_NODES; n++) {
			struct sim_work w = {
				.kind = SIM_WORK_KERNEL,
				.grid = { 64, 1, 1 }, .block = { 256, 1, 1 },
				.graph_id = id,
				.graph_node_id = (uint64_t)id << 32 | (n + 1),
				.name = graph_kernel_names[n],
				.a = (uint64_t)(uintptr_t)stream,
			};

			report(&w, stream, graph_kernel_ns[n]);
		}
	}
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
	if (sink())
		wait_until(dev_end(NULL, true));
	return 0;
}

IMPL CUresult drv_ctx_sync(void)
{
	wait_ns(20000);
	if (sink())
		wait_until(dev_end(NULL, true));
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
	.memset_d8 = drv_memset_d8,
};

static const struct simdrv_tools_table tools = {
	.size = sizeof(tools),
	.set_sink = tools_set_sink,
	.api_enter = api_enter,
	.api_exit = api_exit,
};

/* ---------------------------------------------------------------- cuInit */

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t init_done = PTHREAD_COND_INITIALIZER;
static enum { INIT_NONE, INIT_RUNNING, INIT_DONE } init_state;
static pthread_t init_thread;

/* CUDA_INJECTION64_PATH, as libcuda reads it: a failure is said in one
 * line and the program goes on. */
static void inject(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	int (*initialize)(void);
	void *h;

	if (!path || !*path)
		return;
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "libsimdrv: CUDA_INJECTION64_PATH: %s\n", dlerror());
		return;
	}
	initialize = (int (*)(void))dlsym(h, "InitializeInjection");
	if (!initialize) {
		fprintf(stderr, "libsimdrv: CUDA_INJECTION64_PATH: %s has no InitializeInjection\n",
			path);
		dlclose(h);
		return;
	}
	initialize();
}

/* The first call injects; others wait for it, except a cuInit from inside
 * InitializeInjection, which returns at once. */
static void init_once(void)
{
	if (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == INIT_DONE)
		return;
	pthread_mutex_lock(&init_lock);
	if (init_state == INIT_RUNNING && pthread_equal(init_thread, pthread_self())) {
		pthread_mutex_unlock(&init_lock);
		return;
	}
	while (init_state == INIT_RUNNING)
		pthread_cond_wait(&init_done, &init_lock);
	if (init_state == INIT_DONE) {
		pthread_mutex_unlock(&init_lock);
		return;
	}
	init_state = INIT_RUNNING;
	init_thread = pthread_self();
	pthread_mutex_unlock(&init_lock);

	inject();

	pthread_mutex_lock(&init_lock);
	__atomic_store_n(&init_state, INIT_DONE, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&init_done);
	pthread_mutex_unlock(&init_lock);
}

EXPORT CUresult cuInit(unsigned int flags)
{
	if (flags)
		return 1;	/* CUDA_ERROR_INVALID_VALUE */
	init_once();
	return 0;
}

/* Ids are compared as CUuuids, 16 bytes. */
EXPORT CUresult cuGetExportTable(const void **out, const void *id)
{
	if (!out || !id)
		return 1;
	if (!memcmp(id, SIMDRV_EXPORT_ID, 16))
		*out = &table;
	else if (!memcmp(id, SIMDRV_TOOLS_ID, 16))
		*out = &tools;
	else
		return 500;	/* CUDA_ERROR_NOT_FOUND */
	return 0;
}

/* ---------------------------------------------------------------- the API */

#define DRIVER_CALL(name, call) do {					\
	struct sim_api_scope sc_;					\
	CUresult r_;							\
									\
	api_enter(&sc_, SIM_DOMAIN_DRIVER, SIM_CBID_##name);		\
	r_ = (call);							\
	api_exit(&sc_, r_);						\
	return r_;							\
} while (0)

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy,
			       unsigned int gz, unsigned int bx, unsigned int by,
			       unsigned int bz, unsigned int shmem, CUstream stream,
			       void **params, void **extra)
{
	DRIVER_CALL(cuLaunchKernel,
		    drv_launch(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra));
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t bytes,
				     CUstream stream)
{
	DRIVER_CALL(cuMemcpyHtoDAsync_v2, drv_memcpy_htod(dst, src, bytes, stream));
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t bytes,
				     CUstream stream)
{
	DRIVER_CALL(cuMemcpyDtoHAsync_v2, drv_memcpy_dtoh(dst, src, bytes, stream));
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t bytes,
				CUstream stream)
{
	DRIVER_CALL(cuMemsetD8Async, drv_memset_d8(dst, value, bytes, stream));
}

EXPORT CUresult cuStreamSynchronize(CUstream stream)
{
	DRIVER_CALL(cuStreamSynchronize, drv_stream_sync(stream));
}

EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
	DRIVER_CALL(cuGraphLaunch, drv_graph_launch(exec, stream));
}

EXPORT CUresult cuEventRecord(void *event, CUstream stream)
{
	DRIVER_CALL(cuEventRecord, drv_event_record(event, stream));
}

EXPORT CUresult cuEventSynchronize(void *event)
{
	DRIVER_CALL(cuEventSynchronize, drv_event_sync(event));
}

EXPORT CUresult cuCtxSynchronize(void)
{
	DRIVER_CALL(cuCtxSynchronize, drv_ctx_sync());
}
