// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcupti.so.13: the part of NVIDIA's CUPTI Activity API that an activity
 * tracer uses, over the simulated CUDA pair (docs/simulator-cuda.md, "The
 * simulated CUPTI"). It exports CUPTI's real names and hands out records
 * laid out as CUDA 13's CUPTI lays them out: CUpti_ActivityKernel10 (216
 * bytes) for kernels, CUpti_ActivityMemcpy6 (96) for copies,
 * CUpti_ActivityMemset4 (88) for memsets, CUpti_ActivityAPI (40) for driver
 * and runtime calls, packed back to back, 8-byte aligned, in buffers the
 * client's request callback gives and its completed callback gets back.
 *
 * The layouts below are written from NVIDIA's documentation of those
 * structs, not from acceltrace's agent header (user/agent/cupti_abi.h):
 * test_cupti_sim reads what this writes through that header, so the two
 * check each other.
 *
 * Real CUPTI instruments libcuda; this one sets a sink in the simulated
 * driver's tools table (cuda_sim.h) on the first enabled kind and clears it
 * when none is left. Every piece of device work it reports is also a
 * "cuda_device" ground-truth line.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "cuda_sim.h"
#include "simtruth.h"

#define EXPORT __attribute__((visibility("default")))
#define RECORD __attribute__((packed, aligned(8)))	/* CUPTI's PACKED_ALIGNMENT */

typedef int CUptiResult;
enum {
	CUPTI_SUCCESS = 0,
	CUPTI_ERROR_INVALID_PARAMETER = 1,
	CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
	CUPTI_ERROR_INVALID_KIND = 21,
	CUPTI_ERROR_INSUFFICIENT_PRIVILEGES = 35,
	CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39,
	CUPTI_ERROR_UNKNOWN = 999,
};

#define CUPTI_VERSION 130001

enum {
	KIND_MEMCPY = 1,
	KIND_MEMSET = 2,
	KIND_KERNEL = 3,
	KIND_DRIVER = 4,
	KIND_RUNTIME = 5,
	KIND_CONCURRENT_KERNEL = 10,
};
#define KIND_BIT(k) (1u << (k))
#define KINDS_SUPPORTED (KIND_BIT(KIND_MEMCPY) | KIND_BIT(KIND_MEMSET) |	\
			 KIND_BIT(KIND_KERNEL) | KIND_BIT(KIND_DRIVER) |		\
			 KIND_BIT(KIND_RUNTIME) | KIND_BIT(KIND_CONCURRENT_KERNEL))

#define FLUSH_FORCED 1u
#define THREAD_ID_TYPE_DEFAULT 0	/* pthread_self() */
#define THREAD_ID_TYPE_SYSTEM 1		/* the kernel's tid */

/* CUpti_ActivityMemoryKind, CUpti_ActivityFlag. */
#define MEMORY_KIND_PAGEABLE 1
#define MEMORY_KIND_DEVICE 3
#define FLAG_ASYNC 1			/* MEMCPY_ASYNC, MEMSET_ASYNC */

#define DEVICE_ID 0
#define CONTEXT_ID 1
#define REGISTERS_PER_THREAD 32
#define OFFSET_CHECK_NS 1000000000ull
#define OFFSET_STEP_NS 1000000

/* CUpti_ActivityKernel10. */
struct RECORD kernel10 {
	uint32_t kind;
	uint8_t cache_config;
	uint8_t shared_memory_config;
	uint16_t registers_per_thread;
	uint32_t partitioned_global_cache_requested;
	uint32_t partitioned_global_cache_executed;
	uint64_t start;
	uint64_t end;
	uint64_t completed;
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id;
	int32_t grid_x, grid_y, grid_z;
	int32_t block_x, block_y, block_z;
	int32_t static_shared_memory;
	int32_t dynamic_shared_memory;
	uint32_t local_memory_per_thread;
	uint32_t local_memory_total;
	uint32_t correlation_id;
	int64_t grid_id;
	const char *name;
	void *reserved0;
	uint64_t queued;
	uint64_t submitted;
	uint8_t launch_type;
	uint8_t is_shared_memory_carveout_requested;
	uint8_t shared_memory_carveout_requested;
	uint8_t padding;
	uint32_t shared_memory_executed;
	uint64_t graph_node_id;
	uint32_t shmem_limit_config;
	uint32_t graph_id;
	void *access_policy_window;
	uint32_t channel_id;
	uint32_t channel_type;
	uint32_t cluster_x, cluster_y, cluster_z;
	uint32_t cluster_scheduling_policy;
	uint64_t local_memory_total_v2;
	uint32_t max_potential_cluster_size;
	uint32_t max_active_clusters;
	uint8_t is_device_launched;
	uint8_t padding3[7];
};

/* CUpti_ActivityMemcpy6. */
struct RECORD memcpy6 {
	uint32_t kind;
	uint8_t copy_kind;
	uint8_t src_kind;
	uint8_t dst_kind;
	uint8_t flags;
	uint64_t bytes;
	uint64_t start;
	uint64_t end;
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id;
	uint32_t correlation_id;
	uint32_t runtime_correlation_id;
	uint32_t pad;
	void *reserved0;
	uint64_t graph_node_id;
	uint32_t graph_id;
	uint32_t channel_id;
	uint32_t channel_type;
	uint32_t pad2;
	uint64_t copy_count;
};

/* CUpti_ActivityMemset4. */
struct RECORD memset4 {
	uint32_t kind;
	uint32_t value;
	uint64_t bytes;
	uint64_t start;
	uint64_t end;
	uint32_t device_id;
	uint32_t context_id;
	uint32_t stream_id;
	uint32_t correlation_id;
	uint16_t flags;
	uint16_t memory_kind;
	uint32_t pad;
	void *reserved0;
	uint64_t graph_node_id;
	uint32_t graph_id;
	uint32_t channel_id;
	uint32_t channel_type;
	uint32_t pad2;
};

/* CUpti_ActivityAPI. */
struct RECORD api_record {
	uint32_t kind;
	uint32_t cbid;
	uint64_t start;
	uint64_t end;
	uint32_t process_id;
	uint32_t thread_id;
	uint32_t correlation_id;
	uint32_t return_value;
};

_Static_assert(sizeof(struct kernel10) == 216, "CUpti_ActivityKernel10");
_Static_assert(__builtin_offsetof(struct kernel10, correlation_id) == 92, "Kernel10 corr");
_Static_assert(__builtin_offsetof(struct kernel10, name) == 104, "Kernel10 name");
_Static_assert(__builtin_offsetof(struct kernel10, graph_node_id) == 144, "Kernel10 node");
_Static_assert(__builtin_offsetof(struct kernel10, graph_id) == 156, "Kernel10 graphId");
_Static_assert(sizeof(struct memcpy6) == 96, "CUpti_ActivityMemcpy6");
_Static_assert(__builtin_offsetof(struct memcpy6, graph_id) == 72, "Memcpy6 graphId");
_Static_assert(sizeof(struct memset4) == 88, "CUpti_ActivityMemset4");
_Static_assert(sizeof(struct api_record) == 40, "CUpti_ActivityAPI");

typedef void (*buffer_requested_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*buffer_completed_fn)(void *context, uint32_t stream_id, uint8_t *buffer,
				    size_t size, size_t valid_size);
typedef uint64_t (*timestamp_fn)(void);

/* A client buffer: on loan while current, then queued until delivered. */
struct buffer {
	struct buffer *next;
	uint8_t *data;
	size_t size;
	size_t used;			/* offset past the last record */
	size_t max_records, records;
	uint64_t complete_at;		/* CLOCK_MONOTONIC: its last work's end */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake;		/* the worker: something queued */
static pthread_cond_t delivered;	/* the worker finished a delivery */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static buffer_requested_fn requested;	/* under lock */
static buffer_completed_fn completed;	/* under lock */
static struct buffer *current;		/* under lock */
static struct buffer *queue, **queue_tail = &queue;	/* under lock */
static int in_delivery;			/* buffers the worker is handing back */
static bool worker_started;		/* under lock */
static pthread_t worker_thread;
static const struct simdrv_tools_table *driver_tools;	/* under lock */
static uint32_t enabled;		/* KIND_BITs; atomic */
static size_t dropped;			/* atomic */
static timestamp_fn timestamp;		/* atomic */
static int thread_id_type;		/* atomic */

static void init_once(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&wake, &a);
	pthread_cond_init(&delivered, &a);
	pthread_condattr_destroy(&a);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* CUPTI's clock: the client's timestamp callback, else CLOCK_REALTIME. */
static uint64_t cupti_now(void)
{
	timestamp_fn fn = __atomic_load_n(&timestamp, __ATOMIC_ACQUIRE);

	return fn ? fn() : clock_ns(CLOCK_REALTIME);
}

/* CUPTI's clock minus CLOCK_MONOTONIC: the closest of three readings. */
static uint64_t measure_offset(timestamp_fn fn)
{
	uint64_t off = 0, best = UINT64_MAX;

	for (int i = 0; i < 3; i++) {
		uint64_t m0 = clock_ns(CLOCK_MONOTONIC);
		uint64_t c = fn ? fn() : clock_ns(CLOCK_REALTIME);
		uint64_t m1 = clock_ns(CLOCK_MONOTONIC);

		if (m1 - m0 < best) {
			best = m1 - m0;
			off = c - (m0 + (m1 - m0) / 2);
		}
	}
	return off;
}

/*
 * What to add to a CLOCK_MONOTONIC time to have it in CUPTI's clock. One
 * measurement serves while the clock is the same, so that work back to back
 * on a stream stays back to back in CUPTI's clock too (a new measurement
 * would move times by its error, tens of ns); it is checked every second
 * and replaced when the clock stepped by over a millisecond (settimeofday
 * on CLOCK_REALTIME), so times drift from the live clock by at most that.
 */
static uint64_t cupti_offset(void)
{
	static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t offset, checked_at;
	static timestamp_fn measured_with;
	static bool measured;
	timestamp_fn fn = __atomic_load_n(&timestamp, __ATOMIC_ACQUIRE);
	uint64_t now = clock_ns(CLOCK_MONOTONIC), off;

	pthread_mutex_lock(&clock_lock);
	if (!measured || fn != measured_with) {
		offset = measure_offset(fn);
		measured = true;
		measured_with = fn;
		checked_at = now;
	} else if (now - checked_at >= OFFSET_CHECK_NS) {
		off = measure_offset(fn);
		if ((int64_t)(off - offset) > OFFSET_STEP_NS || (int64_t)(offset - off) > OFFSET_STEP_NS)
			offset = off;
		checked_at = now;
	}
	off = offset;
	pthread_mutex_unlock(&clock_lock);
	return off;
}

static uint32_t thread_id(void)
{
	if (__atomic_load_n(&thread_id_type, __ATOMIC_RELAXED) == THREAD_ID_TYPE_SYSTEM)
		return (uint32_t)syscall(SYS_gettid);
	return (uint32_t)(uintptr_t)pthread_self();
}

static size_t record_size(uint32_t kind)
{
	switch (kind) {
	case KIND_KERNEL:
	case KIND_CONCURRENT_KERNEL:
		return sizeof(struct kernel10);
	case KIND_MEMCPY:
		return sizeof(struct memcpy6);
	case KIND_MEMSET:
		return sizeof(struct memset4);
	case KIND_DRIVER:
	case KIND_RUNTIME:
		return sizeof(struct api_record);
	default:
		return 0;
	}
}

static uint8_t *align8(uint8_t *p)
{
	return (uint8_t *)(((uintptr_t)p + 7) & ~(uintptr_t)7);
}

/* ---------------------------------------------------------------- buffers */

/* Under lock. */
static void enqueue(struct buffer *b)
{
	b->next = NULL;
	*queue_tail = b;
	queue_tail = &b->next;
	pthread_cond_signal(&wake);
}

/* A new buffer from the client, or NULL; under lock (as CUPTI does, the
 * request callback runs on the thread whose record needs the space). */
static struct buffer *request(void)
{
	struct buffer *b;
	uint8_t *data = NULL;
	size_t size = 0, max_records = 0;

	if (!requested)
		return NULL;
	requested(&data, &size, &max_records);
	if (!data || !size)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;	/* the client's buffer is lost, as it would be */
	b->data = data;
	b->size = size;
	b->max_records = max_records;
	b->used = (size_t)(align8(data) - data);
	return b;
}

static bool fits(const struct buffer *b, size_t len)
{
	return b->used + len <= b->size && (!b->max_records || b->records < b->max_records);
}

/* Appends one record; false when no buffer could hold it (counted). */
static bool put(const void *rec, size_t len, uint64_t complete_at)
{
	bool ok = false;

	pthread_mutex_lock(&lock);
	if (current && !fits(current, len)) {
		enqueue(current);
		current = NULL;
	}
	if (!current)
		current = request();
	if (current && !fits(current, len)) {
		/* Too small even empty: handed back as it is. */
		enqueue(current);
		current = NULL;
	}
	if (current) {
		memcpy(current->data + current->used, rec, len);
		current->used += len;
		current->records++;
		if (current->complete_at < complete_at)
			current->complete_at = complete_at;
		ok = true;
	} else {
		__atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

/* A record whose work had not ended when a forced flush handed it back has
 * no timestamps, as CUPTI documents ("A value of 0 for both the start and
 * end timestamps indicates that timestamp information could not be
 * collected"). */
static void clear_unfinished(struct buffer *b, uint64_t now)
{
	uint8_t *p = align8(b->data), *end = b->data + b->used;

	while (p + sizeof(uint32_t) <= end) {
		uint32_t kind;
		size_t len;

		memcpy(&kind, p, sizeof(kind));
		len = record_size(kind);
		if (!len || p + len > end)
			break;
		if (kind == KIND_KERNEL || kind == KIND_CONCURRENT_KERNEL) {
			struct kernel10 *k = (struct kernel10 *)p;

			if (k->end > now)
				k->start = k->end = k->completed = 0;
		} else if (kind == KIND_MEMCPY) {
			struct memcpy6 *m = (struct memcpy6 *)p;

			if (m->end > now)
				m->start = m->end = 0;
		} else if (kind == KIND_MEMSET) {
			struct memset4 *m = (struct memset4 *)p;

			if (m->end > now)
				m->start = m->end = 0;
		}
		p += len;
	}
}

/* Hands buffers back, outside the lock; the callback was read under it. */
static void deliver(struct buffer *list, buffer_completed_fn fn)
{
	while (list) {
		struct buffer *next = list->next;

		if (fn)
			fn(NULL, 0, list->data, list->size, list->records ? list->used : 0);
		free(list);
		list = next;
	}
}

/* Takes the queued buffers that are complete (all, when forced); under lock. */
static struct buffer *take(bool forced, uint64_t now)
{
	struct buffer *out = NULL, **out_tail = &out, **pp = &queue;

	while (*pp) {
		struct buffer *b = *pp;

		if (forced || b->complete_at <= now) {
			*pp = b->next;
			b->next = NULL;
			*out_tail = b;
			out_tail = &b->next;
		} else {
			pp = &b->next;
		}
	}
	queue_tail = pp;
	return out;
}

/*
 * The worker: hands back full buffers once their work has ended, waking
 * when one is queued and at least every 100 ms. Flushes do the rest.
 */
static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		uint64_t now = clock_ns(CLOCK_MONOTONIC), until = now + 100000000ull;
		struct buffer *list = take(false, now), *b;
		struct timespec ts;

		if (list) {
			buffer_completed_fn fn = completed;

			in_delivery++;
			pthread_mutex_unlock(&lock);
			deliver(list, fn);
			pthread_mutex_lock(&lock);
			in_delivery--;
			pthread_cond_broadcast(&delivered);
			continue;
		}
		for (b = queue; b; b = b->next)
			if (b->complete_at < until)
				until = b->complete_at;
		ts.tv_sec = (time_t)(until / 1000000000ull);
		ts.tv_nsec = (long)(until % 1000000000ull);
		pthread_cond_timedwait(&wake, &lock, &ts);
	}
	return NULL;
}

/* ---------------------------------------------------------------- the sink */

static void truth_work(const struct sim_work *w, bool was_dropped)
{
	static const char *const kinds[] = {
		[SIM_WORK_KERNEL] = "kernel", [SIM_WORK_MEMCPY] = "memcpy",
		[SIM_WORK_MEMSET] = "memset",
	};
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, "cuda_device");
	tl_str(&l, "kind", kinds[w->kind]);
	if (w->kind == SIM_WORK_KERNEL)
		tl_str(&l, "name", w->name);
	if (w->kind == SIM_WORK_MEMCPY)
		tl_str(&l, "copy", w->copy_kind == SIM_COPY_HTOD ? "h2d" :
				   w->copy_kind == SIM_COPY_DTOH ? "d2h" : "d2d");
	tl_u64(&l, "stream", w->stream_id);
	tl_u64(&l, "corr", w->correlation_id);
	tl_u64(&l, "t_start", w->t_start);
	tl_u64(&l, "t_end", w->t_end);
	tl_u64(&l, "bytes", w->bytes);
	tl_u64(&l, "graph_id", w->graph_id);
	tl_str(&l, "api", sim_api_name(w->api_domain, w->api_cbid));
	tl_u64(&l, "a", w->a);
	tl_u64(&l, "b", w->b);
	tl_bool(&l, "dropped", was_dropped);
	truth_commit(&l);
}

static void on_work(const struct sim_work *w)
{
	uint32_t on = __atomic_load_n(&enabled, __ATOMIC_RELAXED);
	uint64_t off = cupti_offset();
	bool ok;

	switch (w->kind) {
	case SIM_WORK_KERNEL: {
		struct kernel10 k = { 0 };

		if (!(on & (KIND_BIT(KIND_CONCURRENT_KERNEL) | KIND_BIT(KIND_KERNEL))))
			return;
		k.kind = on & KIND_BIT(KIND_CONCURRENT_KERNEL) ? KIND_CONCURRENT_KERNEL
							       : KIND_KERNEL;
		k.registers_per_thread = REGISTERS_PER_THREAD;
		k.start = w->t_start + off;
		k.end = k.completed = w->t_end + off;
		k.device_id = DEVICE_ID;
		k.context_id = CONTEXT_ID;
		k.stream_id = w->stream_id;
		k.grid_x = (int32_t)w->grid[0];
		k.grid_y = (int32_t)w->grid[1];
		k.grid_z = (int32_t)w->grid[2];
		k.block_x = (int32_t)w->block[0];
		k.block_y = (int32_t)w->block[1];
		k.block_z = (int32_t)w->block[2];
		k.dynamic_shared_memory = (int32_t)w->dynamic_smem;
		k.correlation_id = w->correlation_id;
		k.grid_id = w->grid_id;
		k.name = w->name;
		k.graph_node_id = w->graph_node_id;
		k.graph_id = w->graph_id;
		ok = put(&k, sizeof(k), w->t_end);
		break;
	}
	case SIM_WORK_MEMCPY: {
		struct memcpy6 m = { 0 };

		if (!(on & KIND_BIT(KIND_MEMCPY)))
			return;
		m.kind = KIND_MEMCPY;
		m.copy_kind = (uint8_t)w->copy_kind;
		m.src_kind = w->copy_kind == SIM_COPY_HTOD ? MEMORY_KIND_PAGEABLE
							   : MEMORY_KIND_DEVICE;
		m.dst_kind = w->copy_kind == SIM_COPY_DTOH ? MEMORY_KIND_PAGEABLE
							   : MEMORY_KIND_DEVICE;
		m.flags = w->async ? FLAG_ASYNC : 0;
		m.bytes = w->bytes;
		m.start = w->t_start + off;
		m.end = w->t_end + off;
		m.device_id = DEVICE_ID;
		m.context_id = CONTEXT_ID;
		m.stream_id = w->stream_id;
		m.correlation_id = w->correlation_id;
		m.graph_node_id = w->graph_node_id;
		m.graph_id = w->graph_id;
		ok = put(&m, sizeof(m), w->t_end);
		break;
	}
	case SIM_WORK_MEMSET: {
		struct memset4 m = { 0 };

		if (!(on & KIND_BIT(KIND_MEMSET)))
			return;
		m.kind = KIND_MEMSET;
		m.value = w->value;
		m.bytes = w->bytes;
		m.start = w->t_start + off;
		m.end = w->t_end + off;
		m.device_id = DEVICE_ID;
		m.context_id = CONTEXT_ID;
		m.stream_id = w->stream_id;
		m.correlation_id = w->correlation_id;
		m.flags = FLAG_ASYNC;
		m.memory_kind = MEMORY_KIND_DEVICE;
		m.graph_node_id = w->graph_node_id;
		m.graph_id = w->graph_id;
		ok = put(&m, sizeof(m), w->t_end);
		break;
	}
	default:
		return;
	}
	truth_work(w, !ok);
}

static void on_api(const struct sim_api_call *c)
{
	uint32_t kind = c->domain == SIM_DOMAIN_DRIVER ? KIND_DRIVER : KIND_RUNTIME;
	struct api_record r = { 0 };
	uint64_t off;

	if (!(__atomic_load_n(&enabled, __ATOMIC_RELAXED) & KIND_BIT(kind)))
		return;
	off = cupti_offset();
	r.kind = kind;
	r.cbid = c->cbid;
	r.start = c->t_start + off;
	r.end = c->t_end + off;
	r.process_id = (uint32_t)getpid();
	r.thread_id = thread_id();
	r.correlation_id = c->correlation_id;
	r.return_value = (uint32_t)c->result;
	put(&r, sizeof(r), 0);
}

static const struct sim_tools_sink sink = {
	.size = sizeof(sink),
	.work = on_work,
	.api = on_api,
};

/* The driver's tools table, as CUPTI finds libcuda's: the process's
 * cuGetExportTable, or that of a libsimdrv.so opened locally. Under lock. */
static const struct simdrv_tools_table *find_driver(void)
{
	CUresult (*get)(const void **, const void *);
	const void *t = NULL;
	void *h = NULL;

	if (driver_tools)
		return driver_tools;
	get = (CUresult (*)(const void **, const void *))dlsym(RTLD_DEFAULT, "cuGetExportTable");
	if (!get) {
		h = dlopen("libsimdrv.so", RTLD_NOW | RTLD_NOLOAD);
		if (h)
			get = (CUresult (*)(const void **, const void *))dlsym(h, "cuGetExportTable");
	}
	if (get && !get(&t, SIMDRV_TOOLS_ID) && t &&
	    ((const struct simdrv_tools_table *)t)->size >= sizeof(struct simdrv_tools_table))
		driver_tools = t;
	if (h)
		dlclose(h);	/* still loaded: NOLOAD found it loaded */
	return driver_tools;
}

/* ---------------------------------------------------------------- the API */

EXPORT CUptiResult cuptiActivityRegisterCallbacks(buffer_requested_fn req,
						  buffer_completed_fn comp)
{
	if (!req || !comp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&lock);
	requested = req;
	completed = comp;
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

/* SIM_CUPTI_FAIL: how Enable fails on hosts where it would. */
static CUptiResult injected_failure(void)
{
	const char *f = getenv("SIM_CUPTI_FAIL");

	if (!f)
		return CUPTI_SUCCESS;
	if (!strcmp(f, "privileges"))
		return CUPTI_ERROR_INSUFFICIENT_PRIVILEGES;
	if (!strcmp(f, "subscribers"))
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(uint32_t kind)
{
	CUptiResult err = injected_failure();
	const struct simdrv_tools_table *t;
	pthread_t th;

	if (err)
		return err;
	if (kind >= 32 || !(KIND_BIT(kind) & KINDS_SUPPORTED))
		return CUPTI_ERROR_INVALID_KIND;
	pthread_once(&once, init_once);
	pthread_mutex_lock(&lock);
	__atomic_or_fetch(&enabled, KIND_BIT(kind), __ATOMIC_RELAXED);
	t = find_driver();
	if (t)
		t->set_sink(&sink);
	if (!worker_started && !pthread_create(&th, NULL, worker, NULL)) {
		pthread_detach(th);
		worker_thread = th;
		worker_started = true;
	}
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(uint32_t kind)
{
	if (kind >= 32 || !(KIND_BIT(kind) & KINDS_SUPPORTED))
		return CUPTI_ERROR_INVALID_KIND;
	pthread_mutex_lock(&lock);
	if (!__atomic_and_fetch(&enabled, ~KIND_BIT(kind), __ATOMIC_RELAXED) && driver_tools)
		driver_tools->set_sink(NULL);
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

/*
 * Flag 0: the buffers whose records are all complete, the current one too
 * (full or not); FORCED: every buffer, the current one even if empty, with
 * unfinished work's timestamps zero. Returns once they are handed back,
 * and once any the worker was handing back are too.
 */
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	bool forced = flag & FLUSH_FORCED;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	buffer_completed_fn fn;
	struct buffer *list, *b;

	pthread_once(&once, init_once);
	pthread_mutex_lock(&lock);
	if (current && (forced || (current->records && current->complete_at <= now))) {
		enqueue(current);
		current = NULL;
	}
	list = take(forced, now);
	fn = completed;
	pthread_mutex_unlock(&lock);

	if (forced) {
		uint64_t t = cupti_now();

		for (b = list; b; b = b->next)
			if (b->complete_at > now)
				clear_unfinished(b, t);
	}
	deliver(list, fn);

	/* Not from the worker's own delivery (a completed callback that
	 * flushes): it would wait for itself. */
	pthread_mutex_lock(&lock);
	while (in_delivery && !(worker_started && pthread_equal(worker_thread, pthread_self())))
		pthread_cond_wait(&delivered, &lock);
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid_size,
					      void **record)
{
	uint8_t *p, *end;
	uint32_t kind;
	size_t len;

	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	end = buffer + valid_size;
	if (!*record) {
		p = align8(buffer);
	} else {
		memcpy(&kind, *record, sizeof(kind));
		len = record_size(kind);
		if (!len)
			return CUPTI_ERROR_INVALID_KIND;
		p = (uint8_t *)*record + len;
	}
	if (p < buffer || p + sizeof(kind) > end)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	memcpy(&kind, p, sizeof(kind));
	len = record_size(kind);
	if (!len || p + len > end)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = p;
	return CUPTI_SUCCESS;
}

/* The count for the global queue (context NULL, stream 0), reset by the
 * call, as CUPTI documents; other queues have none here. */
EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(void *context, uint32_t stream_id,
						     size_t *out)
{
	if (!out)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*out = !context && !stream_id ? __atomic_exchange_n(&dropped, 0, __ATOMIC_RELAXED) : 0;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(timestamp_fn fn)
{
	__atomic_store_n(&timestamp, fn, __ATOMIC_RELEASE);
	return CUPTI_SUCCESS;
}

/* SIM_CUPTI_TIMESTAMP_STALL_US: a caller descheduled right after reading
 * the clock, on three reads of every four (a busy host's preemption). */
static void stall_after_timestamp(void)
{
	static unsigned int reads;
	const char *us = getenv("SIM_CUPTI_TIMESTAMP_STALL_US");
	struct timespec ts;
	long v;

	if (!us || __atomic_fetch_add(&reads, 1, __ATOMIC_RELAXED) % 4 == 3)
		return;
	v = strtol(us, NULL, 10);
	if (v <= 0 || v > 1000000)
		return;
	ts.tv_sec = 0;
	ts.tv_nsec = v * 1000;
	nanosleep(&ts, NULL);
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
	if (!ts)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*ts = cupti_now();
	stall_after_timestamp();
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSetThreadIdType(uint32_t type)
{
	if (type != THREAD_ID_TYPE_DEFAULT && type != THREAD_ID_TYPE_SYSTEM)
		return CUPTI_ERROR_INVALID_PARAMETER;
	__atomic_store_n(&thread_id_type, (int)type, __ATOMIC_RELAXED);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = CUPTI_VERSION;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	static const struct {
		CUptiResult code;
		const char *name;
	} names[] = {
		{ CUPTI_SUCCESS, "CUPTI_SUCCESS" },
		{ CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER" },
		{ CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED" },
		{ CUPTI_ERROR_INVALID_KIND, "CUPTI_ERROR_INVALID_KIND" },
		{ CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" },
		{ CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
		  "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" },
		{ CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN" },
	};

	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].code == result) {
			*str = names[i].name;
			return CUPTI_SUCCESS;
		}
	}
	*str = NULL;
	return CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiGetCallbackName(uint32_t domain, uint32_t cbid, const char **name)
{
	const char *n = sim_api_name(domain, cbid);

	if (!name || !n)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*name = n;
	return CUPTI_SUCCESS;
}
