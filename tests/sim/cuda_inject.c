// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsiminject.so: a CUDA_INJECTION64_PATH library for the simulator's
 * tests (test_cuda_injection.sh). Its InitializeInjection says on stderr
 * that it ran ("siminject: InitializeInjection pid=P calls=N"), and:
 *
 *   SIM_INJECT_REENTER=1   calls cuInit from inside InitializeInjection, as
 *                          an injected tool may (it must return at once)
 *   SIM_INJECT_CUPTI=PATH  and SIM_INJECT_OUT=FILE: a small CUPTI client.
 *                          It opens PATH (the simulated libcupti.so.13),
 *                          puts records on CLOCK_MONOTONIC (a timestamp
 *                          callback) and kernel thread ids, enables kernels,
 *                          copies, memsets and driver and runtime calls, and
 *                          writes every record it gets to FILE as one JSON
 *                          line, read through the agent's declarations
 *                          (cupti_abi.h); at exit it force-flushes and adds
 *                          {"dropped":N}.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti_abi.h"

#define EXPORT __attribute__((visibility("default")))
#define BUFFER_SIZE (64u << 10)
#define KERNEL_GRAPH_ID_OFFSET 156	/* CUpti_ActivityKernel10.graphId */

static int calls;
static struct cupti_api_table cupti;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *out;

static uint64_t monotonic_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void on_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUFFER_SIZE);
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0;
}

static void write_record(const struct cupti_activity *r)
{
	const char *name = NULL;

	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const struct cupti_kernel_prefix *k = (const void *)r;
		uint32_t graph_id;

		memcpy(&graph_id, (const char *)r + KERNEL_GRAPH_ID_OFFSET, sizeof(graph_id));
		fprintf(out, "{\"kind\":\"kernel\",\"start\":%llu,\"end\":%llu,\"device\":%u,"
			"\"context\":%u,\"stream\":%u,\"corr\":%u,\"grid_x\":%d,\"grid_y\":%d,"
			"\"graph_id\":%u,\"name\":\"%s\"}\n",
			(unsigned long long)k->start, (unsigned long long)k->end, k->device_id,
			k->context_id, k->stream_id, k->correlation_id, k->grid_x, k->grid_y,
			graph_id, k->name ? k->name : "");
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY:
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const struct cupti_transfer_prefix *t = (const void *)r;

		fprintf(out, "{\"kind\":\"%s\",\"start\":%llu,\"end\":%llu,\"stream\":%u,"
			"\"corr\":%u,\"bytes\":%llu,\"copy_kind\":%u}\n",
			r->kind == CUPTI_ACTIVITY_KIND_MEMCPY ? "memcpy" : "memset",
			(unsigned long long)t->start, (unsigned long long)t->end, t->stream_id,
			t->correlation_id, (unsigned long long)t->bytes, t->copy_kind);
		break;
	}
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME: {
		const struct cupti_api *a = (const void *)r;
		uint32_t domain = r->kind == CUPTI_ACTIVITY_KIND_DRIVER ?
				  CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;

		if (cupti.GetCallbackName(domain, a->cbid, &name))
			name = "?";
		fprintf(out, "{\"kind\":\"%s\",\"cbid\":%u,\"api\":\"%s\",\"start\":%llu,"
			"\"end\":%llu,\"pid\":%u,\"tid\":%u,\"corr\":%u,\"result\":%u}\n",
			r->kind == CUPTI_ACTIVITY_KIND_DRIVER ? "driver" : "runtime", a->cbid,
			name, (unsigned long long)a->start, (unsigned long long)a->end,
			a->process_id, a->thread_id, a->correlation_id, a->return_value);
		break;
	}
	default:
		fprintf(out, "{\"kind\":\"unknown\",\"value\":%u}\n", r->kind);
		break;
	}
}

static void on_complete(void *context, uint32_t stream_id, uint8_t *buffer, size_t size,
			size_t valid_size)
{
	struct cupti_activity *r = NULL;

	(void)context;
	(void)stream_id;
	(void)size;
	pthread_mutex_lock(&out_lock);
	while (out && cupti.ActivityGetNextRecord(buffer, valid_size, &r) == CUPTI_SUCCESS)
		write_record(r);
	pthread_mutex_unlock(&out_lock);
	free(buffer);
}

static void at_exit(void)
{
	size_t dropped = 0;

	cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	cupti.ActivityGetNumDroppedRecords(NULL, 0, &dropped);
	pthread_mutex_lock(&out_lock);
	fprintf(out, "{\"dropped\":%zu}\n", dropped);
	if (fclose(out))
		perror("siminject: SIM_INJECT_OUT");
	out = NULL;
	pthread_mutex_unlock(&out_lock);
}

#define LOAD(field, name) do {							\
	*(void **)&cupti.field = dlsym(h, name);				\
	if (!cupti.field) {							\
		fprintf(stderr, "siminject: %s: no %s\n", path, name);		\
		return -1;							\
	}									\
} while (0)

static int start_cupti(const char *path, const char *out_path)
{
	static const uint32_t kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_DRIVER,
		CUPTI_ACTIVITY_KIND_RUNTIME,
	};
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "siminject: %s\n", dlerror());
		return -1;
	}
	LOAD(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
	LOAD(ActivityEnable, "cuptiActivityEnable");
	LOAD(ActivityFlushAll, "cuptiActivityFlushAll");
	LOAD(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
	LOAD(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
	LOAD(GetCallbackName, "cuptiGetCallbackName");
	LOAD(SetThreadIdType, "cuptiSetThreadIdType");
	LOAD(ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback");
	out = fopen(out_path, "w");
	if (!out) {
		perror(out_path);
		return -1;
	}
	if (cupti.ActivityRegisterTimestampCallback(monotonic_ns) ||
	    cupti.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) ||
	    cupti.ActivityRegisterCallbacks(on_request, on_complete)) {
		fprintf(stderr, "siminject: setting CUPTI up failed\n");
		return -1;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		int err = cupti.ActivityEnable(kinds[i]);

		if (err) {
			fprintf(stderr, "siminject: cuptiActivityEnable(%u): %d\n", kinds[i], err);
			return -1;
		}
	}
	atexit(at_exit);
	return 0;
}

EXPORT int InitializeInjection(void)
{
	const char *cupti_path = getenv("SIM_INJECT_CUPTI");
	const char *reenter = getenv("SIM_INJECT_REENTER");

	fprintf(stderr, "siminject: InitializeInjection pid=%d calls=%d\n", getpid(), ++calls);
	if (reenter && !strcmp(reenter, "1")) {
		int (*cu_init)(unsigned int) = (int (*)(unsigned int))dlsym(RTLD_DEFAULT, "cuInit");

		fprintf(stderr, "siminject: cuInit inside InitializeInjection: %d\n",
			cu_init ? cu_init(0) : -1);
	}
	if (cupti_path && start_cupti(cupti_path, getenv("SIM_INJECT_OUT") ?: "/dev/null"))
		return 0;
	return 1;
}
