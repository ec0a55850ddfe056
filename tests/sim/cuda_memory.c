// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsimdrv.so's device memory: SIMDRV_DEVICES GPUs of SIMDRV_DEVICE_MEMORY
 * bytes each, contexts, and the driver's allocation API with the real
 * signatures (cuda_sim.h). Nothing is backed by host memory: an allocation
 * is an address range and a count of bytes on its device, so a run can
 * "leak" gigabytes.
 *
 * What a tracer relies on, and the simulator keeps: an allocation charges
 * exactly the bytes of its call (pitch x height for a pitched one) to the
 * calling thread's current device, and its free gives back exactly those;
 * a call that fails (out of memory, a bad pointer, no context) changes
 * nothing and returns nonzero. Virtual memory follows CUDA's model:
 * cuMemAddressReserve takes addresses only, cuMemCreate takes the memory
 * (device = prop->location.id, size a multiple of the 2 MiB granularity),
 * cuMemMap/cuMemUnmap bind one to the other, cuMemRelease gives the memory
 * back. Stream-ordered calls (the async ones) take effect at once.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cuda_sim.h"

#define EXPORT __attribute__((visibility("default")))
#define IMPL static __attribute__((noinline))

#define ALLOC_ALIGN 512ull
/* Device d's addresses: [(d + 1) << 40, (d + 2) << 40), handed out in
 * order and wrapping around, so freed addresses come back (as real
 * allocators reuse them) and a tracer's table must cope. */
#define VA_DEVICE_SPAN (1ull << 40)
#define HANDLE_BASE 0x1000ull
#define BUCKETS 4096

struct sim_cu_ctx {
	int device;
};

enum live_kind { LIVE_ALLOC = 1, LIVE_HANDLE, LIVE_RESERVE, LIVE_MAP };

/* One live object: an allocation (its pointer), a cuMemCreate handle, a
 * reserved address range or a mapping (its address). */
struct live {
	struct live *next;
	uint64_t key;
	uint64_t bytes;
	int device;
	enum live_kind kind;
};

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t mem_once = PTHREAD_ONCE_INIT;
static struct live *table[BUCKETS];
static uint64_t capacity;
static uint64_t in_use[SIMDRV_DEVICES];
static uint64_t next_va[SIMDRV_DEVICES];
static uint64_t next_handle = HANDLE_BASE;
static struct sim_cu_ctx primary[SIMDRV_DEVICES];
static __thread struct sim_cu_ctx *current;

static void mem_init(void)
{
	const char *s = getenv("SIMDRV_DEVICE_MEMORY");
	char *end;

	capacity = SIMDRV_DEFAULT_MEMORY;
	if (s && *s) {
		unsigned long long v = strtoull(s, &end, 0);

		if (!*end && v)
			capacity = v;
	}
	for (int d = 0; d < SIMDRV_DEVICES; d++) {
		primary[d].device = d;
		next_va[d] = (uint64_t)(d + 1) * VA_DEVICE_SPAN;
	}
}

static unsigned int bucket(uint64_t key)
{
	return (unsigned int)((key * 0x9e3779b97f4a7c15ull) >> 52) % BUCKETS;
}

/* Under mem_lock. */
static struct live **find(uint64_t key, enum live_kind kind)
{
	struct live **p = &table[bucket(key)];

	for (; *p; p = &(*p)->next)
		if ((*p)->key == key && (*p)->kind == kind)
			return p;
	return NULL;
}

static bool key_live(uint64_t key)
{
	return find(key, LIVE_ALLOC) || find(key, LIVE_RESERVE) || find(key, LIVE_MAP);
}

/* Under mem_lock: the next `bytes` of the device's addresses whose start
 * no live object has. */
static uint64_t take_va(int device, uint64_t bytes)
{
	uint64_t span = (bytes + ALLOC_ALIGN - 1) & ~(ALLOC_ALIGN - 1);
	uint64_t lo = (uint64_t)(device + 1) * VA_DEVICE_SPAN, va;

	if (span > VA_DEVICE_SPAN / 2)
		span = VA_DEVICE_SPAN / 2;
	do {
		if (next_va[device] + span > lo + VA_DEVICE_SPAN)
			next_va[device] = lo;
		va = next_va[device];
		next_va[device] += span;
	} while (key_live(va));
	return va;
}

/* Charges `bytes` to `device` and records the object; 0 or a CUresult. */
static CUresult charge(enum live_kind kind, int device, uint64_t bytes, uint64_t *key)
{
	struct live *l = malloc(sizeof(*l));
	CUresult r = 0;

	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&mem_lock);
	if (kind != LIVE_RESERVE && bytes > capacity - in_use[device]) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if (kind == LIVE_HANDLE)
		*key = next_handle++;
	else
		*key = take_va(device, bytes);
	if (kind != LIVE_RESERVE)
		in_use[device] += bytes;
	l->key = *key;
	l->bytes = bytes;
	l->device = device;
	l->kind = kind;
	l->next = table[bucket(*key)];
	table[bucket(*key)] = l;
	l = NULL;
out:
	pthread_mutex_unlock(&mem_lock);
	free(l);
	return r;
}

/* Removes the object and gives its bytes back; CUDA_ERROR_INVALID_VALUE
 * for one that is not live. */
static CUresult release(uint64_t key, enum live_kind kind)
{
	struct live **p, *l = NULL;

	pthread_mutex_lock(&mem_lock);
	p = find(key, kind);
	if (p) {
		l = *p;
		*p = l->next;
		if (kind == LIVE_ALLOC || kind == LIVE_HANDLE)
			in_use[l->device] -= l->bytes;
	}
	pthread_mutex_unlock(&mem_lock);
	free(l);
	return l ? 0 : CUDA_ERROR_INVALID_VALUE;
}

static CUresult current_device(int *device)
{
	pthread_once(&mem_once, mem_init);
	if (!current)
		return CUDA_ERROR_INVALID_CONTEXT;
	*device = current->device;
	return 0;
}

IMPL CUresult mem_alloc(CUdeviceptr *dptr, uint64_t bytes)
{
	int device;
	CUresult r;

	if (!dptr || !bytes)
		return CUDA_ERROR_INVALID_VALUE;
	r = current_device(&device);
	if (!r)
		r = charge(LIVE_ALLOC, device, bytes, dptr);
	return r;
}

IMPL CUresult mem_free(CUdeviceptr dptr)
{
	pthread_once(&mem_once, mem_init);
	return release(dptr, LIVE_ALLOC);
}

/* ---------------------------------------------------------------- contexts */

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	pthread_once(&mem_once, mem_init);
	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	if (dev < 0 || dev >= SIMDRV_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	*pctx = &primary[dev];
	return 0;
}

IMPL CUresult set_current(CUcontext ctx)
{
	if (ctx && (ctx < &primary[0] || ctx >= &primary[SIMDRV_DEVICES]))
		return CUDA_ERROR_INVALID_CONTEXT;
	current = ctx;
	return 0;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	return set_current(ctx);
}

/* No context stack: pushing makes ctx current, which is what allocations
 * look at. */
EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
	return ctx ? set_current(ctx) : CUDA_ERROR_INVALID_VALUE;
}

/* ---------------------------------------------------------------- allocation */

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
	return mem_alloc(dptr, bytesize);
}

/* Rows padded to 512 bytes; the allocation is pitch x height. */
IMPL CUresult mem_alloc_pitch(CUdeviceptr *dptr, size_t *pitch, size_t width_bytes,
			      size_t height, unsigned int element_size_bytes)
{
	size_t p;

	if (!pitch || !width_bytes || !height ||
	    (element_size_bytes != 4 && element_size_bytes != 8 && element_size_bytes != 16))
		return CUDA_ERROR_INVALID_VALUE;
	p = (width_bytes + ALLOC_ALIGN - 1) & ~(size_t)(ALLOC_ALIGN - 1);
	if (height > SIZE_MAX / p)
		return CUDA_ERROR_INVALID_VALUE;
	*pitch = p;
	return mem_alloc(dptr, p * height);
}

/* A call only, so the prologue stays first (the checks above get
 * scheduled before the push when inlined here). */
EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pitch, size_t width_bytes,
				   size_t height, unsigned int element_size_bytes)
{
	return mem_alloc_pitch(dptr, pitch, width_bytes, height, element_size_bytes);
}

/* Managed memory is charged to the current device, as if resident there. */
EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags)
{
	if (flags != 1 && flags != 2)	/* CU_MEM_ATTACH_GLOBAL, _HOST */
		return CUDA_ERROR_INVALID_VALUE;
	return mem_alloc(dptr, bytesize);
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream stream)
{
	(void)stream;
	return mem_alloc(dptr, bytesize);
}

EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize, CUstream stream)
{
	(void)stream;
	return mem_alloc(dptr, bytesize);
}

EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize,
					CUmemoryPool pool, CUstream stream)
{
	(void)pool;
	(void)stream;
	return mem_alloc(dptr, bytesize);
}

EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
					     CUmemoryPool pool, CUstream stream)
{
	(void)pool;
	(void)stream;
	return mem_alloc(dptr, bytesize);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
	return mem_free(dptr);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream)
{
	(void)stream;
	return mem_free(dptr);
}

EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream)
{
	(void)stream;
	return mem_free(dptr);
}

/* ---------------------------------------------------------------- virtual memory */

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
			    const CUmemAllocationProp *prop, unsigned long long flags)
{
	uint64_t key;
	CUresult r;

	pthread_once(&mem_once, mem_init);
	if (!handle || !prop || flags || !size || size % SIMDRV_VMM_GRANULARITY ||
	    prop->location.type != 1)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.id < 0 || prop->location.id >= SIMDRV_DEVICES)
		return CUDA_ERROR_INVALID_DEVICE;
	r = charge(LIVE_HANDLE, prop->location.id, size, &key);
	if (!r)
		*handle = key;
	return r;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	pthread_once(&mem_once, mem_init);
	return release(handle, LIVE_HANDLE);
}

/* Addresses only, on the current device's range (device 0 without one). */
EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
				    CUdeviceptr addr, unsigned long long flags)
{
	int device = 0;

	(void)addr;
	(void)alignment;
	pthread_once(&mem_once, mem_init);
	if (!ptr || !size || flags || size % SIMDRV_VMM_GRANULARITY)
		return CUDA_ERROR_INVALID_VALUE;
	if (current)
		device = current->device;
	return charge(LIVE_RESERVE, device, size, ptr);
}

EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	(void)size;
	pthread_once(&mem_once, mem_init);
	return release(ptr, LIVE_RESERVE);
}

/* Binds a live handle at ptr: the memory is the handle's, charged at
 * cuMemCreate; a mapping is only remembered so cuMemUnmap can check it. */
EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			 CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct live *m = malloc(sizeof(*m)), **h;
	CUresult r = 0;

	pthread_once(&mem_once, mem_init);
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&mem_lock);
	h = find(handle, LIVE_HANDLE);
	if (!h || flags || !size || offset + size > (*h)->bytes || find(ptr, LIVE_MAP)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	m->key = ptr;
	m->bytes = size;
	m->device = (*h)->device;
	m->kind = LIVE_MAP;
	m->next = table[bucket(ptr)];
	table[bucket(ptr)] = m;
	m = NULL;
out:
	pthread_mutex_unlock(&mem_lock);
	free(m);
	return r;
}

EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	(void)size;
	pthread_once(&mem_once, mem_init);
	return release(ptr, LIVE_MAP);
}
