// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CUPTI's Activity API into the GPU buffers (cupti_backend.h). libcupti is
 * found where the process's CUDA libraries are, never linked: the one
 * already loaded, else beside the loaded libcudart (the nvidia-*-cu wheels
 * put both in one folder), else on the library path or in the toolkit.
 * Records are read by the offsets every CUPTI since CUDA 11 shares
 * (cupti_abi.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent_log.h"
#include "agent/cupti_abi.h"
#include "agent/cupti_backend.h"
#include "agent/gpu_buffers.h"

#define ACTIVITY_BUFFER_BYTES (4u << 20)
#define CBID_CACHE 2048		/* per API domain; larger cbids are looked up each time */

static const char *const sonames[] = {
	"libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so",
};

static struct cupti_api_table api;
static void *lib;
static int load_err;		/* 0 not tried, 1 loaded, -errno failed */
static bool callbacks_registered;
/* Where records go: set before any kind is enabled, cleared in a forked
 * child (whose CUPTI may still call back); read atomically. */
static struct gpu_buffers *out;
static uint64_t dropped, incomplete;
static uint32_t enabled;	/* a bit per activity kind turned on */
/* Per domain (driver 0, runtime 1) and cbid: 0 not asked, 1 a call that
 * queues device work (its LAUNCH record is kept), 2 any other call. */
static unsigned char cbid_kind[2][CBID_CACHE];

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CUPTI's timestamps in CLOCK_MONOTONIC, where CUPTI lets us choose. */
static uint64_t timestamp_cb(void)
{
	return mono_ns();
}

struct dir_search {
	char dir[4096];
};

/* The folder of a loaded CUDA library whose libcupti is likely beside. */
static int find_cuda_dir(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct dir_search *s = ctx;
	const char *base, *p = info->dlpi_name;

	(void)size;
	if (!p || p[0] != '/')
		return 0;
	base = strrchr(p, '/') + 1;
	if (strncmp(base, "libcudart.so", 12) && strncmp(base, "libcublas.so", 12) &&
	    strncmp(base, "libnvrtc.so", 11))
		return 0;
	if ((size_t)(base - p) >= sizeof(s->dir))
		return 0;
	memcpy(s->dir, p, (size_t)(base - p));
	s->dir[base - p] = '\0';
	return 1;
}

static void *open_in(const char *dir)
{
	char path[4200];
	void *h;

	for (size_t i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, sonames[i]);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
	}
	return NULL;
}

static void *open_cupti(const char **how)
{
	const char *env = getenv("ACCELTRACE_AGENT_CUPTI");
	struct dir_search s = { .dir = "" };
	void *h;
	size_t i;

	if (env && env[0]) {
		*how = env;
		return dlopen(env, RTLD_NOW | RTLD_LOCAL);
	}
	for (i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++) {
		h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
		if (h) {
			*how = "already loaded";
			return h;
		}
	}
	if (dl_iterate_phdr(find_cuda_dir, &s) && (h = open_in(s.dir))) {
		*how = "beside the process's CUDA libraries";
		return h;
	}
	for (i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++) {
		h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
		if (h) {
			*how = "on the library path";
			return h;
		}
	}
	*how = "from the CUDA toolkit";
	h = open_in("/usr/local/cuda/extras/CUPTI/lib64/");
	return h ? h : open_in("/usr/local/cuda/lib64/");
}

#define SYM(field, name, required) do {						\
	*(void **)&api.field = dlsym(lib, name);				\
	if (!api.field && (required)) {						\
		missing = name;							\
		goto fail;							\
	}									\
} while (0)

int cupti_backend_load(void)
{
	const char *how = "", *missing = NULL;
	uint32_t version = 0;

	if (load_err)
		return load_err > 0 ? 0 : load_err;
	lib = open_cupti(&how);
	if (!lib) {
		agent_say(AGENT_P_CUPTI_LOAD, "no libcupti for this process (%s; set "
			  "ACCELTRACE_AGENT_CUPTI to its path): no GPU kernels in captures",
			  dlerror());
		load_err = -ENOENT;
		return load_err;
	}
	SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks", true);
	SYM(ActivityEnable, "cuptiActivityEnable", true);
	SYM(ActivityDisable, "cuptiActivityDisable", true);
	SYM(ActivityFlushAll, "cuptiActivityFlushAll", true);
	SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord", true);
	SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", true);
	SYM(GetTimestamp, "cuptiGetTimestamp", true);
	SYM(GetResultString, "cuptiGetResultString", true);
	SYM(GetVersion, "cuptiGetVersion", true);
	SYM(GetCallbackName, "cuptiGetCallbackName", false);
	SYM(SetThreadIdType, "cuptiSetThreadIdType", false);
	SYM(ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback", false);
	api.GetVersion(&version);
	agent_debug("libcupti API version %u (%s)", version, how);
	/* Before anything asks CUPTI for a time (the buffers' first clock
	 * pair) or any kind is enabled, so every timestamp is in it. */
	if (api.ActivityRegisterTimestampCallback)
		api.ActivityRegisterTimestampCallback(timestamp_cb);
	if (api.SetThreadIdType)
		api.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	load_err = 1;
	return 0;
fail:
	agent_say(AGENT_P_CUPTI_LOAD, "libcupti (%s) lacks %s: no GPU kernels in captures",
		  how, missing);
	dlclose(lib);
	lib = NULL;
	load_err = -ENOSYS;
	return load_err;
}

static const char *result_text(CUptiResult r)
{
	const char *s = NULL;

	if (api.GetResultString && api.GetResultString(r, &s) != CUPTI_SUCCESS)
		s = NULL;
	return s ? s : "unknown CUPTI error";
}

static void buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	/* CUPTI wants 8-byte aligned buffers. NULL: it drops (and counts). */
	*buffer = aligned_alloc(8, ACTIVITY_BUFFER_BYTES);
	*size = *buffer ? ACTIVITY_BUFFER_BYTES : 0;
	*max_records = 0;
}

/* Whether an API call (cbid of @domain) queues device work. */
static bool queues_work(uint32_t domain, uint32_t cbid)
{
	int d = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
	const char *name = NULL;
	bool yes;

	if (cbid < CBID_CACHE && cbid_kind[d][cbid])
		return cbid_kind[d][cbid] == 1;
	if (api.GetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name)
		return false;
	yes = strstr(name, "Launch") || strstr(name, "Memcpy") || strstr(name, "Memset");
	if (cbid < CBID_CACHE)
		cbid_kind[d][cbid] = yes ? 1 : 2;
	return yes;
}

static const char *copy_name(uint8_t copy_kind)
{
	switch (copy_kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return "MemcpyH2D";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return "MemcpyD2H";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
		return "MemcpyD2D";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return "MemcpyP2P";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return "MemcpyH2H";
	default:
		return "Memcpy";
	}
}

static void translate(struct gpu_buffers *to, const struct cupti_activity *a)
{
	bool kept = true;

	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const struct cupti_kernel_prefix *k = (const void *)a;

		if (!k->start || k->end < k->start) {
			__atomic_add_fetch(&incomplete, 1, __ATOMIC_RELAXED);
			return;
		}
		kept = gpu_buffers__kernel(to, k->device_id, k->stream_id, k->correlation_id,
					   k->start, k->end, k->name);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY:
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const struct cupti_transfer_prefix *t = (const void *)a;

		if (!t->start || t->end < t->start) {
			__atomic_add_fetch(&incomplete, 1, __ATOMIC_RELAXED);
			return;
		}
		kept = gpu_buffers__transfer(to, t->device_id, t->stream_id, t->correlation_id,
					     t->start, t->end, t->bytes,
					     a->kind == CUPTI_ACTIVITY_KIND_MEMSET ? "Memset" :
					     copy_name(t->copy_kind));
		break;
	}
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME: {
		const struct cupti_api *c = (const void *)a;
		uint32_t domain = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ?
				  CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
		const char *name = NULL;

		if (!queues_work(domain, c->cbid) || c->end < c->start)
			return;
		api.GetCallbackName(domain, c->cbid, &name);
		gpu_buffers__launch(to, c->thread_id, c->correlation_id, c->start, c->end,
				    name ? name : "launch");
		return;
	}
	default:
		return;	/* kinds the agent did not ask for */
	}
	/* A device the buffers do not know (the driver listed fewer): lost,
	 * and counted with the records that had no end. */
	if (!kept)
		__atomic_add_fetch(&incomplete, 1, __ATOMIC_RELAXED);
}

static void buffer_completed(void *context, uint32_t stream_id, uint8_t *buffer, size_t size,
			     size_t valid_size)
{
	struct gpu_buffers *to = __atomic_load_n(&out, __ATOMIC_ACQUIRE);
	struct cupti_activity *rec = NULL;
	size_t lost = 0;

	(void)context;
	(void)stream_id;
	(void)size;
	if (!buffer)
		return;

	while (to && api.ActivityGetNextRecord(buffer, valid_size, &rec) == CUPTI_SUCCESS && rec)
		translate(to, rec);
	if (api.ActivityGetNumDroppedRecords(NULL, 0, &lost) == CUPTI_SUCCESS && lost) {
		__atomic_add_fetch(&dropped, lost, __ATOMIC_RELAXED);
		agent_say(AGENT_P_DROPPED, "CUPTI dropped %zu activity records (no buffer in time)",
			  lost);
	}
	free(buffer);
}

static const uint32_t work_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
};
static const uint32_t call_kinds[] = {
	CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
};

/* Exactly the kinds turned on, off again. */
static void disable_all(void)
{
	for (uint32_t k = 0; k < 32; k++)
		if (enabled & (1u << k))
			api.ActivityDisable(k);
	enabled = 0;
}

static CUptiResult enable(uint32_t kind)
{
	CUptiResult r = api.ActivityEnable(kind);

	if (r == CUPTI_SUCCESS)
		enabled |= 1u << kind;
	return r;
}

static const char *enable_hint(CUptiResult r)
{
	switch (r) {
	case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
		return ": the driver lets only administrators profile "
		       "(NVreg_RestrictProfilingToAdminUsers=1)";
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		return ": another profiler holds CUPTI in this process "
		       "(torch.profiler, jax.profiler, Nsight)";
	default:
		return "";
	}
}

int cupti_backend_start(struct gpu_buffers *buffers)
{
	CUptiResult r = CUPTI_SUCCESS;
	bool join;
	size_t i;

	if (cupti_backend_load())
		return -ENOENT;
	__atomic_store_n(&out, buffers, __ATOMIC_RELEASE);
	if (!callbacks_registered) {
		r = api.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
		if (r != CUPTI_SUCCESS)
			goto refused;
		callbacks_registered = true;
	}
	for (i = 0; i < sizeof(work_kinds) / sizeof(work_kinds[0]); i++) {
		r = enable(work_kinds[i]);
		if (r != CUPTI_SUCCESS)
			goto refused;
	}
	/* The calls that queued the work join each kernel to its launch;
	 * without their names (an old CUPTI) every API call would come. A
	 * kind that will not turn on leaves the other off too. */
	join = api.GetCallbackName && api.SetThreadIdType;
	for (i = 0; join && i < sizeof(call_kinds) / sizeof(call_kinds[0]); i++)
		join = enable(call_kinds[i]) == CUPTI_SUCCESS;
	if (!join) {
		for (i = 0; i < sizeof(call_kinds) / sizeof(call_kinds[0]); i++)
			if (enabled & (1u << call_kinds[i])) {
				api.ActivityDisable(call_kinds[i]);
				enabled &= ~(1u << call_kinds[i]);
			}
		agent_say(AGENT_P_NO_JOIN, "this CUPTI gives no launch records: kernels are "
			  "shown, not joined to their host launches");
	}
	return 0;
refused:
	disable_all();
	agent_say(AGENT_P_CUPTI_ENABLE, "CUPTI refused activity recording: %s (%d)%s",
		  result_text(r), r, enable_hint(r));
	return -EPERM;
}

void cupti_backend_flush(bool forced)
{
	if (load_err > 0 && callbacks_registered)
		api.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

void cupti_backend_stop(void)
{
	if (load_err <= 0)
		return;
	disable_all();
	cupti_backend_flush(true);
}

/* A clock pair is only as good as the host time around CUPTI's: a thread
 * descheduled between the two reads (20 ms on a busy 2-CPU host) would
 * misplace every kernel of the window by half of it. So take a few, keep
 * the tightest bracket, and give none when even that one is wide. */
#define CLOCK_PAIR_TRIES 8
#define CLOCK_PAIR_MAX_BRACKET_NS 200000ull

int cupti_backend_clock_pair(uint64_t *cupti_ts, uint64_t *host_ns)
{
	uint64_t best = UINT64_MAX;

	if (load_err <= 0)
		return -ENOENT;
	for (int i = 0; i < CLOCK_PAIR_TRIES; i++) {
		uint64_t t0 = mono_ns(), t1, ts = 0;

		if (api.GetTimestamp(&ts) != CUPTI_SUCCESS || !ts)
			return -EIO;
		t1 = mono_ns();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*cupti_ts = ts;
			*host_ns = t0 + (t1 - t0) / 2;
		}
	}
	return best <= CLOCK_PAIR_MAX_BRACKET_NS ? 0 : -EAGAIN;
}

void cupti_backend_forget(void)
{
	__atomic_store_n(&out, NULL, __ATOMIC_RELEASE);
	enabled = 0;
}

uint64_t cupti_backend_dropped(void)
{
	return __atomic_load_n(&dropped, __ATOMIC_RELAXED);
}

uint64_t cupti_backend_incomplete(void)
{
	return __atomic_load_n(&incomplete, __ATOMIC_RELAXED);
}
