// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The simulated CUPTI (cupti_sim.c) over the simulated CUDA pair, in this
 * process: the driver and runtime are dlopen'ed from $OUTPUT/sim/cuda (the
 * driver RTLD_LOCAL, so the stub must find it by itself), libcupti.so.13
 * too, and its entry points taken by name as an agent takes them. Records
 * are read through the agent's declarations (user/agent/cupti_abi.h), which
 * were written apart from the stub's.
 *
 * Checked: version, result strings, callback names; the kinds an agent
 * enables, with record sizes (216, 96, 88, 40), 8-byte alignment, walking
 * to CUPTI_ERROR_MAX_LIMIT_REACHED; kernel names (one over 56 bytes, one of
 * exactly 56), grids, graph kernels with their graphId, copies and memsets;
 * correlation (each kernel, copy and memset with its runtime or driver
 * API record, driver calls made by the runtime through its private table
 * unseen); stream ids and each stream's work in order, after its call;
 * timestamps in CLOCK_REALTIME, then in a registered callback's clock;
 * thread ids by default and with THREAD_ID_TYPE_SYSTEM; full buffers handed
 * back by the worker thread, maxNumRecords; dropped records counted and
 * reset; a flush without FORCED keeping back a buffer whose kernel still
 * runs, FORCED handing it back with the kernel's timestamps zero, and the
 * stream synchronize waiting for it; SIM_CUPTI_FAIL; disabling; the
 * "cuda_device" truth lines, one per reported piece of work; and, first,
 * that the runtime's first call runs cuInit, which loads
 * CUDA_INJECTION64_PATH.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "test.h"
#include "cupti_abi.h"
#include "cuda_sim.h"
#include "simtruth.h"

#define CUPTI_ERROR_INVALID_PARAMETER 1	/* not in cupti_abi.h */
#define KERNEL10_SIZE 216
#define MEMCPY6_SIZE 96
#define MEMSET4_SIZE 88
#define API_SIZE 40
#define KERNEL10_GRAPH_ID 156		/* graphId, after the shared prefix */
#define MAX_BUFFERS 1024
#define MAX_RECORDS 4096

static const char *const kernel_names[SIM_KERNEL_NAME_COUNT] = SIM_KERNEL_NAMES;

static struct cupti_api_table cupti;

/* The CUDA pair, by name. */
static __typeof__(&cuInit) p_cuInit;
static __typeof__(&cuLaunchKernel) p_cuLaunchKernel;
static __typeof__(&cuMemcpyHtoDAsync_v2) p_cuMemcpyHtoDAsync;
static __typeof__(&cuStreamSynchronize) p_cuStreamSynchronize;
static __typeof__(&cudaLaunchKernel) p_cudaLaunchKernel;
static __typeof__(&cudaMemcpyAsync) p_cudaMemcpyAsync;
static __typeof__(&cudaMemcpy) p_cudaMemcpy;
static __typeof__(&cudaMemsetAsync) p_cudaMemsetAsync;
static __typeof__(&cudaGraphLaunch) p_cudaGraphLaunch;
static __typeof__(&cudaStreamSynchronize) p_cudaStreamSynchronize;
static __typeof__(&cudaDeviceSynchronize) p_cudaDeviceSynchronize;

static void kernel(void)
{
}

/* ---------------------------------------------------------------- the client */

struct got {
	uint8_t *data;
	size_t valid;
	pthread_t thread;
};

static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static struct got got[MAX_BUFFERS];
static int n_got;
static size_t req_size = 64 << 10, req_max_records;
static bool req_none;
static int requests;

static void on_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	pthread_mutex_lock(&got_lock);
	requests++;
	if (req_none) {
		*buffer = NULL;
		*size = 0;
	} else {
		*buffer = aligned_alloc(8, req_size);
		*size = req_size;
		*max_records = req_max_records;
	}
	pthread_mutex_unlock(&got_lock);
}

static void on_complete(void *context, uint32_t stream_id, uint8_t *buffer, size_t size,
			size_t valid)
{
	(void)size;
	ASSERT_TRUE(!context && !stream_id, "buffers come back for the global queue");
	pthread_mutex_lock(&got_lock);
	if (n_got < MAX_BUFFERS)
		got[n_got++] = (struct got){ buffer, valid, pthread_self() };
	else
		free(buffer);
	pthread_mutex_unlock(&got_lock);
}

static int buffers_got(void)
{
	int n;

	pthread_mutex_lock(&got_lock);
	n = n_got;
	pthread_mutex_unlock(&got_lock);
	return n;
}

static void forget_buffers(void)
{
	pthread_mutex_lock(&got_lock);
	for (int i = 0; i < n_got; i++)
		free(got[i].data);
	n_got = 0;
	requests = 0;
	pthread_mutex_unlock(&got_lock);
}

/* The records of every buffer handed back so far, walked as an agent walks
 * them; checks each record's size by the distance to the next. */
struct rec {
	const struct cupti_activity *r;
	uint32_t kind;
};

static struct rec recs[MAX_RECORDS];
static int n_recs;

static size_t expected_size(uint32_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		return KERNEL10_SIZE;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return MEMCPY6_SIZE;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return MEMSET4_SIZE;
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		return API_SIZE;
	default:
		return 0;
	}
}

static void walk(void)
{
	n_recs = 0;
	pthread_mutex_lock(&got_lock);
	for (int i = 0; i < n_got; i++) {
		struct cupti_activity *r = NULL, *prev = NULL;
		int err;

		while ((err = cupti.ActivityGetNextRecord(got[i].data, got[i].valid, &r)) ==
		       CUPTI_SUCCESS) {
			if (!prev)
				ASSERT_TRUE((uint8_t *)r == got[i].data, "first record at the buffer");
			else
				ASSERT_EQ((uint8_t *)r - (uint8_t *)prev, expected_size(prev->kind),
					  "record size (distance to the next)");
			ASSERT_EQ((uintptr_t)r % 8, 0, "record 8-byte aligned");
			if (n_recs < MAX_RECORDS)
				recs[n_recs++] = (struct rec){ r, r->kind };
			prev = r;
		}
		ASSERT_EQ(err, CUPTI_ERROR_MAX_LIMIT_REACHED, "walk ends with MAX_LIMIT_REACHED");
		if (prev)
			ASSERT_EQ((uint8_t *)prev + expected_size(prev->kind) - got[i].data,
				  got[i].valid, "last record ends at validSize");
	}
	pthread_mutex_unlock(&got_lock);
}

static int count_kind(uint32_t kind)
{
	int n = 0;

	for (int i = 0; i < n_recs; i++)
		n += recs[i].kind == kind;
	return n;
}

static const struct cupti_api *api_of(uint32_t kind, uint32_t corr)
{
	for (int i = 0; i < n_recs; i++) {
		const struct cupti_api *a = (const void *)recs[i].r;

		if (recs[i].kind == kind && a->correlation_id == corr)
			return a;
	}
	return NULL;
}

static const char *api_name(uint32_t kind, const struct cupti_api *a)
{
	const char *name = NULL;

	if (!a || cupti.GetCallbackName(kind == CUPTI_ACTIVITY_KIND_DRIVER ?
					CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
					a->cbid, &name))
		return NULL;
	return name;
}

static uint32_t kernel_graph_id(const struct cupti_kernel_prefix *k)
{
	uint32_t id;

	memcpy(&id, (const uint8_t *)k + KERNEL10_GRAPH_ID, sizeof(id));
	return id;
}

/* Start and end of a device record, and its stream. */
static void span_of(const struct rec *r, uint64_t *start, uint64_t *end, uint32_t *stream,
		    uint32_t *corr)
{
	if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || r->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
		const struct cupti_kernel_prefix *k = (const void *)r->r;

		*start = k->start, *end = k->end, *stream = k->stream_id;
		*corr = k->correlation_id;
	} else {
		const struct cupti_transfer_prefix *t = (const void *)r->r;

		*start = t->start, *end = t->end, *stream = t->stream_id;
		*corr = t->correlation_id;
	}
}

static bool is_device(uint32_t kind)
{
	return kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_KERNEL ||
	       kind == CUPTI_ACTIVITY_KIND_MEMCPY || kind == CUPTI_ACTIVITY_KIND_MEMSET;
}

/*
 * Every device record: after its API call began (plus the launch latency,
 * less a little for the clock conversion), within [lo, hi], and on its
 * stream after the one before it.
 */
static void check_device_times(uint64_t lo, uint64_t hi, const char *what)
{
	for (int i = 0; i < n_recs; i++) {
		uint64_t s, e, s2, e2;
		uint32_t st, st2, corr, corr2;
		const struct cupti_api *a;

		if (!is_device(recs[i].kind))
			continue;
		span_of(&recs[i], &s, &e, &st, &corr);
		if (!ASSERT_TRUE(s < e, what) || !ASSERT_GE(s, lo, what) || !ASSERT_LE(e, hi, what))
			return;
		a = api_of(CUPTI_ACTIVITY_KIND_RUNTIME, corr);
		if (!a)
			a = api_of(CUPTI_ACTIVITY_KIND_DRIVER, corr);
		if (ASSERT_OK_PTR(a, "device work has its API record"))
			ASSERT_GE(s, a->start + 2000, "device work starts after its call + latency");
		for (int j = 0; j < i; j++) {
			if (!is_device(recs[j].kind))
				continue;
			span_of(&recs[j], &s2, &e2, &st2, &corr2);
			if (st2 == st && !ASSERT_TRUE(e2 <= s, "a stream's work in order, no overlap"))
				return;
		}
	}
}

/* ---------------------------------------------------------------- helpers */

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

#define FAKE_CLOCK_OFFSET 5000000000000000ull

static uint64_t fake_clock(void)
{
	return clock_ns(CLOCK_MONOTONIC) + FAKE_CLOCK_OFFSET;
}

static int enable_all(bool on)
{
	static const uint32_t kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_DRIVER,
		CUPTI_ACTIVITY_KIND_RUNTIME,
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]) && !err; i++)
		err = on ? cupti.ActivityEnable(kinds[i]) : cupti.ActivityDisable(kinds[i]);
	return err;
}

#define STREAM_A ((cudaStream_t)(uintptr_t)0xa100)
#define STREAM_B ((cudaStream_t)(uintptr_t)0xb200)

static int launch(unsigned int gx, unsigned int gy, unsigned int gz, cudaStream_t s)
{
	dim3 grid = { gx, gy, gz }, block = { 128, 1, 1 };

	return p_cudaLaunchKernel((const void *)kernel, grid, block, NULL, 64, s);
}

/* ---------------------------------------------------------------- phases */

static char host[4096];

static void check_basics(void)
{
	const char *s = NULL;
	uint32_t v = 0;

	ASSERT_OK(cupti.GetVersion(&v), "cuptiGetVersion");
	ASSERT_EQ(v, 130001, "CUPTI version (CUDA 13.0)");
	ASSERT_OK(cupti.GetResultString(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, &s), "result string");
	ASSERT_STREQ(s, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES", "result string 35");
	ASSERT_NEQ(cupti.GetResultString(4242, &s), 0, "no string for a made-up result");
	ASSERT_OK(cupti.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, SIM_CBID_cudaLaunchKernel, &s),
		  "runtime callback name");
	ASSERT_STREQ(s, "cudaLaunchKernel", "runtime cbid name");
	ASSERT_OK(cupti.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, SIM_CBID_cuGraphLaunch, &s),
		  "driver callback name");
	ASSERT_STREQ(s, "cuGraphLaunch", "driver cbid name");
	ASSERT_NEQ(cupti.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, 4242, &s), 0,
		   "no name for a made-up cbid");
	ASSERT_EQ(cupti.ActivityEnable(77), 21, "an unknown kind: CUPTI_ERROR_INVALID_KIND");
	ASSERT_EQ(cupti.SetThreadIdType(7), CUPTI_ERROR_INVALID_PARAMETER, "bad thread id type");

	setenv("SIM_CUPTI_FAIL", "privileges", 1);
	ASSERT_EQ(cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
		  CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "SIM_CUPTI_FAIL=privileges");
	setenv("SIM_CUPTI_FAIL", "subscribers", 1);
	ASSERT_EQ(cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
		  CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "SIM_CUPTI_FAIL=subscribers");
	unsetenv("SIM_CUPTI_FAIL");
}

/* Returns how many device records the phase made (truth lines expected). */
static int check_main_run(void)
{
	uint64_t t0, t1, ts;
	const struct cupti_api *a;
	int kernels_seen = 0, devices = 0, long_name = 0, name56 = 0, graph_kernels = 0;
	uint32_t stream_a = 0, stream_b = 0, graph_corr = 0, graph_id = 0;
	size_t dropped = 99;

	ASSERT_OK(enable_all(true), "enable five kinds");
	t0 = clock_ns(CLOCK_REALTIME);
	for (unsigned int k = 1; k <= 6; k++)
		ASSERT_OK(launch(1, k, 1, STREAM_A), "cudaLaunchKernel");
	ASSERT_OK(p_cudaMemcpyAsync((void *)0x10000, host, 1000, cudaMemcpyHostToDevice, STREAM_A),
		  "cudaMemcpyAsync");
	ASSERT_OK(p_cudaMemsetAsync((void *)0x20000, 7, 512, STREAM_A), "cudaMemsetAsync");
	ASSERT_OK(p_cudaGraphLaunch((cudaGraphExec_t)0x7000, STREAM_A), "cudaGraphLaunch");
	ASSERT_OK(p_cuLaunchKernel((CUfunction)kernel, 2, 3, 1, 32, 1, 1, 0, STREAM_B, NULL, NULL),
		  "cuLaunchKernel");
	ASSERT_OK(p_cuMemcpyHtoDAsync(0x10000, host, 64, STREAM_B), "cuMemcpyHtoDAsync_v2");
	ASSERT_OK(p_cudaMemcpy(host, (void *)0x10000, 256, cudaMemcpyDeviceToHost), "cudaMemcpy");
	ASSERT_OK(p_cudaStreamSynchronize(STREAM_A), "cudaStreamSynchronize");
	ASSERT_OK(p_cudaDeviceSynchronize(), "cudaDeviceSynchronize");
	t1 = clock_ns(CLOCK_REALTIME);
	ASSERT_OK(cupti.GetTimestamp(&ts), "cuptiGetTimestamp");
	ASSERT_TRUE(ts >= t1 && ts - t1 < 1000000000ull, "cuptiGetTimestamp is CLOCK_REALTIME");

	ASSERT_OK(cupti.ActivityFlushAll(0), "flush");
	ASSERT_EQ(buffers_got(), 1, "one buffer, complete after the device synchronize");
	walk();
	ASSERT_EQ(count_kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 6 + 2 + 1,
		  "kernels: 6 launches, 2 graph nodes, 1 driver launch");
	ASSERT_EQ(count_kind(CUPTI_ACTIVITY_KIND_MEMCPY), 3, "copies");
	ASSERT_EQ(count_kind(CUPTI_ACTIVITY_KIND_MEMSET), 1, "memsets");
	ASSERT_EQ(count_kind(CUPTI_ACTIVITY_KIND_RUNTIME), 6 + 1 + 1 + 1 + 1 + 2,
		  "runtime calls (driver calls through the private table unseen)");
	ASSERT_EQ(count_kind(CUPTI_ACTIVITY_KIND_DRIVER), 2, "driver calls");

	for (int i = 0; i < n_recs; i++) {
		const struct rec *r = &recs[i];

		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			const struct cupti_kernel_prefix *k = (const void *)r->r;

			devices++;
			ASSERT_EQ(k->device_id, 0, "kernel deviceId");
			ASSERT_EQ(k->context_id, 1, "kernel contextId");
			ASSERT_TRUE(k->end == k->completed, "kernel completed = end");
			if (!ASSERT_OK_PTR(k->name, "kernel name"))
				continue;
			long_name += strlen(k->name) > 56;
			name56 += strlen(k->name) == 56;
			if (kernel_graph_id(k)) {
				graph_kernels++;
				ASSERT_EQ(k->grid_x, 64, "graph kernel grid");
				if (!graph_corr) {
					graph_corr = k->correlation_id;
					graph_id = kernel_graph_id(k);
				}
				ASSERT_EQ(k->correlation_id, graph_corr, "graph kernels share a corr");
				ASSERT_EQ(kernel_graph_id(k), graph_id, "graph kernels share a graphId");
				ASSERT_STREQ(api_name(CUPTI_ACTIVITY_KIND_RUNTIME,
						      api_of(CUPTI_ACTIVITY_KIND_RUNTIME, k->correlation_id)),
					     "cudaGraphLaunch", "graph kernels: the graph launch's corr");
				continue;
			}
			if (k->stream_id != stream_a && stream_a && k->grid_x == 2) {
				/* The driver launch: its own corr, a DRIVER record. */
				stream_b = k->stream_id;
				ASSERT_EQ(k->grid_y, 3, "driver launch grid y");
				ASSERT_STREQ(k->name, kernel_names[2], "name from grid y 3");
				a = api_of(CUPTI_ACTIVITY_KIND_DRIVER, k->correlation_id);
				ASSERT_STREQ(api_name(CUPTI_ACTIVITY_KIND_DRIVER, a), "cuLaunchKernel",
					     "driver launch: its cuLaunchKernel record has its corr");
				ASSERT_FALSE(api_of(CUPTI_ACTIVITY_KIND_RUNTIME, k->correlation_id),
					     "driver launch: no runtime record with its corr");
				continue;
			}
			kernels_seen++;
			if (!stream_a)
				stream_a = k->stream_id;
			ASSERT_EQ(k->stream_id, stream_a, "runtime launches on one stream");
			ASSERT_EQ(k->grid_x, 1, "grid x");
			ASSERT_EQ(k->grid_y, kernels_seen, "grid y, in launch order");
			ASSERT_EQ(k->block_x, 128, "block x");
			ASSERT_EQ(k->dynamic_shared_memory, 64, "dynamic shared memory");
			ASSERT_STREQ(k->name, kernel_names[(k->grid_y - 1) % SIM_KERNEL_NAME_COUNT], "name from grid y");
			a = api_of(CUPTI_ACTIVITY_KIND_RUNTIME, k->correlation_id);
			ASSERT_STREQ(api_name(CUPTI_ACTIVITY_KIND_RUNTIME, a), "cudaLaunchKernel",
				     "kernel corr == its cudaLaunchKernel record's");
			if (a) {
				ASSERT_EQ(a->process_id, getpid(), "API record pid");
				ASSERT_EQ(a->thread_id, (uint32_t)(uintptr_t)pthread_self(),
					  "API record threadId: pthread_self() by default");
				ASSERT_EQ(a->return_value, 0, "API record result");
				ASSERT_TRUE(a->start < a->end, "API record start < end");
			}
		} else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
			const struct cupti_transfer_prefix *t = (const void *)r->r;

			devices++;
			a = api_of(CUPTI_ACTIVITY_KIND_RUNTIME, t->correlation_id);
			if (t->bytes == 1000) {
				ASSERT_EQ(t->copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, "H2D copy kind");
				ASSERT_EQ(t->stream_id, stream_a, "H2D on stream A");
				ASSERT_STREQ(api_name(CUPTI_ACTIVITY_KIND_RUNTIME, a), "cudaMemcpyAsync",
					     "H2D corr");
			} else if (t->bytes == 64) {
				ASSERT_EQ(t->copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, "driver copy kind");
				ASSERT_STREQ(api_name(CUPTI_ACTIVITY_KIND_DRIVER,
						      api_of(CUPTI_ACTIVITY_KIND_DRIVER, t->correlation_id)),
					     "cuMemcpyHtoDAsync_v2", "driver copy corr");
			} else {
				ASSERT_EQ(t->bytes, 256, "D2H bytes");
				ASSERT_EQ(t->copy_kind, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, "D2H copy kind");
				ASSERT_EQ(t->stream_id, 7, "cudaMemcpy on the NULL stream (id 7)");
				ASSERT_STREQ(api_name(CUPTI_ACTIVITY_KIND_RUNTIME, a), "cudaMemcpy",
					     "D2H corr");
			}
		} else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
			const struct cupti_transfer_prefix *t = (const void *)r->r;

			devices++;
			ASSERT_EQ(t->bytes, 512, "memset bytes");
			ASSERT_EQ(t->copy_kind, 7, "memset value's first byte at offset 4");
			ASSERT_EQ(t->stream_id, stream_a, "memset on stream A");
			ASSERT_STREQ(api_name(CUPTI_ACTIVITY_KIND_RUNTIME,
					      api_of(CUPTI_ACTIVITY_KIND_RUNTIME, t->correlation_id)),
				     "cudaMemsetAsync", "memset corr");
		}
	}
	ASSERT_EQ(kernels_seen, 6, "six runtime launches checked");
	ASSERT_EQ(graph_kernels, 2, "two graph kernels");
	ASSERT_GE(long_name, 1, "a kernel name over 56 bytes");
	ASSERT_EQ(name56, 1, "a kernel name of exactly 56 bytes");
	ASSERT_TRUE(stream_a && stream_b && stream_a != stream_b && stream_a != 7 && stream_b != 7,
		    "distinct stream ids");
	check_device_times(t0, t1 + 1000000, "device times in CLOCK_REALTIME");
	ASSERT_OK(cupti.ActivityGetNumDroppedRecords(NULL, 0, &dropped), "dropped");
	ASSERT_EQ(dropped, 0, "nothing dropped");
	forget_buffers();
	return devices;
}

static uint32_t worker_tid;

static void *launch_thread(void *arg)
{
	(void)arg;
	worker_tid = (uint32_t)syscall(SYS_gettid);
	for (unsigned int k = 1; k <= 3; k++)
		launch(3, k, 1, STREAM_B);
	p_cudaStreamSynchronize(STREAM_B);
	return NULL;
}

/* A timestamp callback and kernel thread ids; launches from a thread. */
static int check_callback_clock(void)
{
	uint64_t t0, t1, ts;
	pthread_t th;
	int apis = 0;

	ASSERT_OK(cupti.ActivityRegisterTimestampCallback(fake_clock), "timestamp callback");
	ASSERT_OK(cupti.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), "SYSTEM tids");
	ASSERT_OK(cupti.GetTimestamp(&ts), "cuptiGetTimestamp");
	t0 = fake_clock();
	ASSERT_TRUE(ts <= t0 && t0 - ts < 1000000000ull, "cuptiGetTimestamp in the callback's clock");
	pthread_create(&th, NULL, launch_thread, NULL);
	pthread_join(th, NULL);
	t1 = fake_clock();
	ASSERT_OK(cupti.ActivityFlushAll(0), "flush");
	walk();
	ASSERT_EQ(count_kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 3, "three kernels");
	check_device_times(t0, t1, "device times in the callback's clock");
	for (int i = 0; i < n_recs; i++) {
		const struct cupti_api *a = (const void *)recs[i].r;

		if (recs[i].kind != CUPTI_ACTIVITY_KIND_RUNTIME)
			continue;
		apis++;
		ASSERT_EQ(a->thread_id, worker_tid, "threadId: the caller's tid");
		ASSERT_TRUE(a->start >= t0 && a->end <= t1, "API times in the callback's clock");
	}
	ASSERT_EQ(apis, 4, "three launches and a synchronize");
	ASSERT_OK(cupti.ActivityRegisterTimestampCallback(NULL), "default clock again");
	ASSERT_OK(cupti.SetThreadIdType(0), "default thread ids again");
	forget_buffers();
	return 3;
}

/* Small buffers: handed back full by the worker thread, without a flush. */
static int check_full_buffers(void)
{
	uint64_t deadline;
	int n, kernels = 0, max_per_buffer = 0;

	ASSERT_OK(enable_all(false), "disable all");
	ASSERT_OK(cupti.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "kernels only");
	req_size = 1024;		/* four kernel records */
	for (unsigned int k = 1; k <= 40; k++)
		launch(5, k, 1, STREAM_A);
	p_cudaStreamSynchronize(STREAM_A);
	deadline = clock_ns(CLOCK_MONOTONIC) + 3000000000ull;
	while ((n = buffers_got()) < 9 && clock_ns(CLOCK_MONOTONIC) < deadline)
		usleep(1000);
	ASSERT_GE(n, 9, "full buffers handed back without a flush");
	pthread_mutex_lock(&got_lock);
	for (int i = 0; i < n_got; i++)
		ASSERT_FALSE(pthread_equal(got[i].thread, pthread_self()),
			     "full buffers handed back from CUPTI's worker thread");
	pthread_mutex_unlock(&got_lock);
	ASSERT_OK(cupti.ActivityFlushAll(0), "flush the rest");
	walk();
	ASSERT_EQ(count_kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), 40, "every kernel once");
	forget_buffers();

	/* maxNumRecords: a buffer is full after that many. */
	req_size = 64 << 10;
	req_max_records = 3;
	for (unsigned int k = 1; k <= 10; k++)
		launch(5, k, 1, STREAM_A);
	p_cudaStreamSynchronize(STREAM_A);
	ASSERT_OK(cupti.ActivityFlushAll(0), "flush");
	pthread_mutex_lock(&got_lock);
	for (int i = 0; i < n_got; i++) {
		struct cupti_activity *r = NULL;
		int c = 0;

		while (!cupti.ActivityGetNextRecord(got[i].data, got[i].valid, &r))
			c++;
		kernels += c;
		if (c > max_per_buffer)
			max_per_buffer = c;
	}
	pthread_mutex_unlock(&got_lock);
	ASSERT_EQ(kernels, 10, "maxNumRecords: every kernel once");
	ASSERT_EQ(max_per_buffer, 3, "maxNumRecords: three a buffer");
	req_max_records = 0;
	forget_buffers();
	return 50;
}

/* No buffer to be had: records dropped, counted, the count reset. */
static int check_dropped(void)
{
	size_t dropped = 0;

	req_none = true;
	for (unsigned int k = 1; k <= 5; k++)
		launch(6, k, 1, STREAM_A);
	p_cudaStreamSynchronize(STREAM_A);
	ASSERT_OK(cupti.ActivityGetNumDroppedRecords(NULL, 0, &dropped), "dropped");
	ASSERT_EQ(dropped, 5, "five kernels dropped");
	ASSERT_OK(cupti.ActivityGetNumDroppedRecords(NULL, 0, &dropped), "dropped again");
	ASSERT_EQ(dropped, 0, "the count is reset by reading it");
	ASSERT_GE(requests, 5, "a buffer asked for each time");
	req_none = false;
	ASSERT_OK(cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "flush");
	walk();
	ASSERT_EQ(n_recs, 0, "nothing recorded");
	forget_buffers();
	return 5;
}

/* A long kernel: kept back by a plain flush, handed back by a forced one
 * without timestamps; the stream synchronize waits for it. */
static int check_unfinished(void)
{
	const struct cupti_kernel_prefix *k;
	uint64_t t0, t1;

	ASSERT_OK(launch(1, 1, 100000, STREAM_A), "a kernel of 0.4 s (grid z 100000)");
	ASSERT_OK(cupti.ActivityFlushAll(0), "flush");
	ASSERT_EQ(buffers_got(), 0, "a buffer with a running kernel is kept back");
	ASSERT_OK(cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "forced flush");
	ASSERT_EQ(buffers_got(), 1, "forced: handed back");
	walk();
	if (ASSERT_EQ(n_recs, 1, "the kernel")) {
		k = (const void *)recs[0].r;
		ASSERT_TRUE(!k->start && !k->end, "unfinished kernel: start = end = 0");
		ASSERT_TRUE(k->correlation_id && k->name, "but the rest is there");
	}
	t0 = clock_ns(CLOCK_MONOTONIC);
	p_cudaStreamSynchronize(STREAM_A);
	t1 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_GE(t1 - t0, 100000000, "the synchronize waits for the kernel");
	forget_buffers();
	return 1;
}

static int check_disabled(void)
{
	ASSERT_OK(cupti.ActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "disable");
	launch(7, 1, 1, STREAM_A);
	p_cudaDeviceSynchronize();
	ASSERT_OK(cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "flush");
	walk();
	ASSERT_EQ(n_recs, 0, "disabled: no records");
	forget_buffers();
	return 0;
}

/* The truth file: one cuda_device line per piece of work reported. */
static void check_truth(const char *path, int want, int want_dropped)
{
	char line[TRUTH_LINE_MAX + 2];
	int n = 0, dropped = 0, names = 0;
	FILE *f = fopen(path, "r");

	if (!ASSERT_OK_PTR(f, "truth file"))
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "\"type\":\"cuda_device\""))
			continue;
		n++;
		dropped += !!strstr(line, "\"dropped\":true");
		names += !!strstr(line, "\"name\":\"_ZN3sim6kernel23flash_attention_forward");
		ASSERT_STRCONTAINS(line, "\"t_start\":", "truth line times");
		ASSERT_STRCONTAINS(line, "\"api\":\"c", "truth line api");
	}
	fclose(f);
	ASSERT_EQ(n, want, "a cuda_device truth line per piece of work reported");
	ASSERT_EQ(dropped, want_dropped, "truth lines of dropped records say so");
	ASSERT_GE(names, 1, "truth lines name kernels");
}

static void *open_lib(const char *dir, const char *name, int mode)
{
	char path[4096];
	void *h;

	snprintf(path, sizeof(path), "%s/sim/cuda/%s", dir, name);
	h = dlopen(path, mode);
	if (!h)
		fprintf(stderr, "%s\n", dlerror());
	return h;
}

#define SYM(h, var, name) (*(void **)&(var) = dlsym(h, name))

int main(void)
{
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : "build";
	char truth[] = "/tmp/test_cupti_sim.XXXXXX", inject[4096], inject_abs[PATH_MAX] = "";
	void *drv, *rt, *lib;
	int fd, devices = 0;

	drv = open_lib(out, "libsimdrv.so", RTLD_NOW | RTLD_LOCAL);
	rt = open_lib(out, "libsimrt.so", RTLD_NOW | RTLD_LOCAL);
	lib = open_lib(out, "libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
	if (!drv || !rt || !lib) {
		fprintf(stderr, "the simulated CUDA stack is not built (set OUTPUT)\n");
		return 1;
	}
	ASSERT_TRUE(SYM(drv, p_cuInit, "cuInit") && SYM(drv, p_cuLaunchKernel, "cuLaunchKernel") &&
		    SYM(drv, p_cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2") &&
		    SYM(drv, p_cuStreamSynchronize, "cuStreamSynchronize"), "driver symbols");
	ASSERT_TRUE(SYM(rt, p_cudaLaunchKernel, "cudaLaunchKernel") &&
		    SYM(rt, p_cudaMemcpyAsync, "cudaMemcpyAsync") &&
		    SYM(rt, p_cudaMemcpy, "cudaMemcpy") &&
		    SYM(rt, p_cudaMemsetAsync, "cudaMemsetAsync") &&
		    SYM(rt, p_cudaGraphLaunch, "cudaGraphLaunch") &&
		    SYM(rt, p_cudaStreamSynchronize, "cudaStreamSynchronize") &&
		    SYM(rt, p_cudaDeviceSynchronize, "cudaDeviceSynchronize"), "runtime symbols");
	ASSERT_TRUE(SYM(lib, cupti.ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks") &&
		    SYM(lib, cupti.ActivityEnable, "cuptiActivityEnable") &&
		    SYM(lib, cupti.ActivityDisable, "cuptiActivityDisable") &&
		    SYM(lib, cupti.ActivityFlushAll, "cuptiActivityFlushAll") &&
		    SYM(lib, cupti.ActivityGetNextRecord, "cuptiActivityGetNextRecord") &&
		    SYM(lib, cupti.ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords") &&
		    SYM(lib, cupti.GetTimestamp, "cuptiGetTimestamp") &&
		    SYM(lib, cupti.GetResultString, "cuptiGetResultString") &&
		    SYM(lib, cupti.GetVersion, "cuptiGetVersion") &&
		    SYM(lib, cupti.GetCallbackName, "cuptiGetCallbackName") &&
		    SYM(lib, cupti.SetThreadIdType, "cuptiSetThreadIdType") &&
		    SYM(lib, cupti.ActivityRegisterTimestampCallback,
			"cuptiActivityRegisterTimestampCallback"), "every CUPTI entry point");
	if (test_failures)
		return test_exit();

	fd = mkstemp(truth);
	if (!ASSERT_TRUE(fd >= 0, "truth file") || !ASSERT_OK(truth_open(truth), "truth_open"))
		return test_exit();
	close(fd);

	/* The runtime's first use calls cuInit, which injects. */
	snprintf(inject, sizeof(inject), "%s/sim/cuda/libsiminject.so", out);
	if (ASSERT_OK_PTR(realpath(inject, inject_abs), "libsiminject.so"))
		setenv("CUDA_INJECTION64_PATH", inject_abs, 1);
	ASSERT_OK(p_cudaDeviceSynchronize(), "work before CUPTI is enabled");
	ASSERT_OK_PTR(dlopen(inject_abs, RTLD_NOW | RTLD_NOLOAD),
		      "the runtime's first call ran cuInit, which loaded CUDA_INJECTION64_PATH");
	unsetenv("CUDA_INJECTION64_PATH");
	ASSERT_OK(p_cuInit(0), "cuInit again");
	ASSERT_EQ(p_cuInit(1), 1, "cuInit with flags: CUDA_ERROR_INVALID_VALUE");

	check_basics();
	ASSERT_EQ(cupti.ActivityRegisterCallbacks(NULL, NULL), CUPTI_ERROR_INVALID_PARAMETER,
		  "callbacks are required");
	ASSERT_OK(cupti.ActivityRegisterCallbacks(on_request, on_complete), "callbacks");
	devices += check_main_run();
	devices += check_callback_clock();
	devices += check_full_buffers();
	devices += check_dropped();
	devices += check_unfinished();
	devices += check_disabled();

	ASSERT_OK(truth_flush(), "truth flush");
	check_truth(truth, devices, 5);
	truth_close();
	unlink(truth);
	return test_exit();
}
