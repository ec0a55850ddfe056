// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory kept in the kernel (bpf/devmem_account.bpf.h), through the
 * real probe-pack entries (their struct at_mem_desc) on fake allocators in
 * this binary with the CUDA and PJRT signatures: exact aggregates (in use,
 * a peak that never goes back, counts), a failed call changing nothing, a
 * free of an allocation made before the probes counted unknown and not
 * sized, a driver call inside a runtime call counted once, the thread's
 * current device (set, or its context's), cuMemCreate's device from its
 * properties, shapes sized and hostile ones not, PJRT's Delete then
 * Destroy counted once, a Destroy (counted at its entry) whose handle
 * another thread's new buffer took before it returned freeing only the old
 * one, the values and flags
 * written into the records, a process at its share of the live table and
 * the table full (allocations counted, said untracked, not in use), and a
 * dead process's entries forgotten.
 */
#include <pthread.h>
#include <setjmp.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf_test.h"
#include "self_offset.h"
#include "lib/log.h"
#include "discover/probe_packs.h"
#include "probe/packed_records.h"
#include "probe/probe_session.h"

/* ---- the fake runtime: CUDA's and PJRT's signatures ---------------------- */

static volatile int fail_next;		/* the next call returns an error */
/* Calls per fake: each body its own, so the compiler folds none into
 * another (identical code folding would put two probes on one address). */
static volatile int calls[16];
static uint64_t next_addr = 0x7f0000000000ull;

__attribute__((noinline, noipa)) int fake_cuMemAlloc_v2(uint64_t *dptr, size_t size)
{
	asm volatile("" ::: "memory");
	calls[1]++;
	if (fail_next) {
		fail_next = 0;
		return 2;	/* CUDA_ERROR_OUT_OF_MEMORY */
	}
	*dptr = __atomic_fetch_add(&next_addr, 1ull << 20, __ATOMIC_RELAXED);
	(void)size;
	return 0;
}

__attribute__((noinline, noipa)) int fake_cuMemFree_v2(uint64_t dptr)
{
	asm volatile("" ::: "memory");
	calls[2]++;
	(void)dptr;
	return 0;
}

__attribute__((noinline, noipa)) int fake_cuMemAllocPitch_v2(uint64_t *dptr, size_t *pitch,
						      size_t width, size_t height,
						      unsigned int elem)
{
	asm volatile("" ::: "memory");
	calls[3]++;
	*pitch = (width + 127) & ~(size_t)127;
	*dptr = __atomic_fetch_add(&next_addr, 1ull << 20, __ATOMIC_RELAXED);
	(void)elem;
	(void)height;
	return 0;
}

static jmp_buf jump_back;
static volatile int jump_out;	/* cudaMalloc leaves by longjmp: no return */

/* The runtime calls the driver's exported function, as libcudart does. */
__attribute__((noinline, noipa)) int fake_cudaMalloc(void **p, size_t size)
{
	uint64_t d;
	int err;

	asm volatile("" ::: "memory");
	calls[4]++;
	err = fake_cuMemAlloc_v2(&d, size);
	*p = err ? NULL : (void *)d;
	if (jump_out) {
		jump_out = 0;
		longjmp(jump_back, 1);
	}
	return err;
}

__attribute__((noinline, noipa)) int fake_cudaSetDevice(int dev)
{
	asm volatile("" ::: "memory");
	calls[5]++;
	(void)dev;
	return 0;
}

__attribute__((noinline, noipa)) int fake_cuDevicePrimaryCtxRetain(uint64_t *pctx, int dev)
{
	asm volatile("" ::: "memory");
	calls[11]++;
	*pctx = 0xc0c0000ull + dev;
	return 0;
}

__attribute__((noinline, noipa)) int fake_cuCtxSetCurrent(uint64_t ctx)
{
	asm volatile("" ::: "memory");
	calls[12]++;
	(void)ctx;
	return 0;
}

/* Probed entry-only: a free counted at its entry, in a small record. */
__attribute__((noinline, noipa)) int fake_free_entry_only(uint64_t dptr)
{
	asm volatile("" ::: "memory");
	calls[15]++;
	(void)dptr;
	return 0;
}

/* CUmemAllocationProp: type @0, handle types @4, location {type @8, id @12}. */
struct fake_mem_prop {
	uint32_t type, handle_types, loc_type, loc_id;
	uint64_t win32, flags;
};

__attribute__((noinline, noipa)) int fake_cuMemCreate(uint64_t *handle, size_t size,
						      const struct fake_mem_prop *prop,
						      unsigned long long flags)
{
	asm volatile("" ::: "memory");
	calls[13]++;
	*handle = __atomic_fetch_add(&next_addr, 1ull << 21, __ATOMIC_RELAXED);
	(void)size;
	(void)prop;
	(void)flags;
	return 0;
}

__attribute__((noinline, noipa)) int fake_cuMemRelease(uint64_t handle)
{
	asm volatile("" ::: "memory");
	calls[14]++;
	(void)handle;
	return 0;
}

/* PJRT_Client_BufferFromHostBuffer_Args' fields at their offsets. */
struct fake_h2d_args {
	uint64_t struct_size, ext, client, data;
	uint32_t type, pad;		/* @32 */
	const int64_t *dims;		/* @40 */
	uint64_t num_dims;		/* @48 */
	uint64_t strides, num_strides, semantics;
	uint64_t device;		/* @80 */
	uint64_t memory, layout;
	uint64_t done_event;		/* @104 */
	uint64_t buffer;		/* @112 */
};

struct fake_buffer_args {
	uint64_t struct_size, ext;
	uint64_t buffer;		/* @16 */
	uint64_t size;			/* @24: OnDeviceSizeInBytes' out */
};

/* Set: the next buffer made gets this handle (a runtime reusing one). */
static volatile uint64_t reuse_handle;
/* Set: the next Destroy hands its handle to another thread's new buffer,
 * whose call completes before Destroy returns (the plugin's reuse,
 * raced: the new buffer's return probe runs before Destroy's). */
static volatile int destroy_races_reuse;

__attribute__((noinline, noipa)) void *fake_BufferFromHostBuffer(struct fake_h2d_args *a)
{
	asm volatile("" ::: "memory");
	calls[6]++;
	a->buffer = reuse_handle ? reuse_handle :
				   __atomic_fetch_add(&next_addr, 4096, __ATOMIC_RELAXED);
	reuse_handle = 0;
	return NULL;
}

/* f32[5] on 0xd0d0, at the handle @arg. */
static void *reuse_on_new_thread(void *arg)
{
	static const int64_t dims[1] = { 5 };
	struct fake_h2d_args h = { .type = 11 /* F32 */, .dims = dims, .num_dims = 1,
				   .device = 0xd0d0 };

	reuse_handle = (uint64_t)(uintptr_t)arg;
	fake_BufferFromHostBuffer(&h);
	return NULL;
}

__attribute__((noinline, noipa)) void *fake_Buffer_Delete(struct fake_buffer_args *a)
{
	asm volatile("" ::: "memory");
	calls[7]++;
	(void)a;
	return NULL;
}

__attribute__((noinline, noipa)) void *fake_Buffer_Destroy(struct fake_buffer_args *a)
{
	pthread_t t;

	asm volatile("" ::: "memory");
	calls[8]++;
	if (destroy_races_reuse) {
		destroy_races_reuse = 0;
		if (!pthread_create(&t, NULL, reuse_on_new_thread, (void *)(uintptr_t)a->buffer))
			pthread_join(t, NULL);
	}
	return NULL;
}

__attribute__((noinline, noipa)) void *fake_Buffer_OnDeviceSizeInBytes(struct fake_buffer_args *a)
{
	asm volatile("" ::: "memory");
	calls[9]++;
	a->size = 12345;
	return NULL;
}

/* ---- records and aggregates seen ----------------------------------------- */

struct last {
	uint32_t flags;
	uint64_t vals[AT_MAX_FETCH_OPS];
	int n;
};

static struct last seen[AT_MAX_PROBES];

static int on_record(void *ctx, const void *data, size_t size)
{
	const struct ev_header *h = data;
	struct ev_rt_call r;

	(void)ctx;
	if (size < sizeof(*h) || h->type != EV_RT_CALL || h->pid != (uint32_t)getpid() ||
	    rt_record__unpack(&r, data, size) || r.probe_id >= AT_MAX_PROBES)
		return 0;
	seen[r.probe_id].flags = r.flags;
	memcpy(seen[r.probe_id].vals, r.vals, sizeof(r.vals));
	seen[r.probe_id].n++;
	return 0;
}

struct agg_find {
	struct at_mem_agg_key key;
	struct at_mem_agg agg;
	int found, mine;
};

static int find_agg(void *ctx, const struct at_mem_agg_key *key, const struct at_mem_agg *agg)
{
	struct agg_find *f = ctx;

	if (key->pid != f->key.pid)
		return 0;
	f->mine++;
	if (key->layer == f->key.layer && key->flags == f->key.flags &&
	    key->device == f->key.device) {
		f->agg = *agg;
		f->found = 1;
	}
	return 0;
}

static struct at_mem_agg agg_of_pid(struct probe_session *ps, uint32_t pid, int layer, int flags,
				    uint64_t dev)
{
	struct agg_find f = { .key = { .pid = pid, .layer = layer, .flags = flags,
				      .device = dev } };

	ASSERT_OK(probe_session__mem_for_each(ps, find_agg, &f), "walk the aggregates");
	ASSERT_TRUE(f.found, "the aggregate exists");
	return f.agg;
}

static struct at_mem_agg agg_of(struct probe_session *ps, int layer, int flags, uint64_t dev)
{
	return agg_of_pid(ps, getpid(), layer, flags, dev);
}

static int my_aggs(struct probe_session *ps)
{
	struct agg_find f = { .key = { .pid = getpid() } };

	probe_session__mem_for_each(ps, find_agg, &f);
	return f.mine;
}

/* Attaches the pack entry @name to @fn; the probe id. */
static int attach(struct probe_session *ps, const char *name, void *fn)
{
	const struct rt_pack_entry *e = rt_pack_entry_named(name);
	struct rt_probe_spec spec;
	int id;

	if (!ASSERT_OK_PTR((void *)e, name))
		return -1;
	rt_pack_entry__spec(e, &spec);
	id = probe_session__attach_runtime(ps, &spec, "/proc/self/exe", self_file_offset(fn), -1);
	ASSERT_GE(id, 0, name);
	return id;
}

enum {
	P_ALLOC, P_FREE, P_PITCH, P_MALLOC, P_SETDEV, P_H2D, P_DELETE, P_DESTROY, P_SIZE,
	P_CTX_RETAIN, P_CTX_SET, P_CREATE, P_RELEASE, P__N
};

static int ids[P__N];
static int entry_only_id;

static void *alloc_on_new_thread(void *arg)
{
	uint64_t d;

	fake_cuMemAlloc_v2(&d, (size_t)(uintptr_t)arg);
	return NULL;
}

/* ---- the checks ---------------------------------------------------------- */

static void check_cuda(struct probe_session *ps, uint64_t before_probes)
{
	struct at_mem_agg a;
	uint64_t d1, d2, d3, dp;
	size_t pitch;
	void *p;
	pthread_t t;

	fake_cudaSetDevice(1);
	fake_cuMemAlloc_v2(&d1, 1000);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_ALLOC]].vals[V_MALLOC_BYTES], 1000, "the record says its bytes");
	ASSERT_EQ(seen[ids[P_ALLOC]].vals[V_MALLOC_IN_USE], 1000, "and the bytes in use after");
	ASSERT_EQ(seen[ids[P_ALLOC]].flags & ~RT_F_NO_DETAIL, 0, "no memory flags");
	fake_cuMemAlloc_v2(&d2, 500);
	fake_cuMemFree_v2(d1);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_FREE]].vals[V_MFREE_BYTES], 1000, "a free's bytes from the table");
	ASSERT_EQ(seen[ids[P_FREE]].vals[V_MFREE_IN_USE], 500, "in use after the free");
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 1);
	ASSERT_EQ(a.in_use, 500, "in use: 1000 + 500 - 1000");
	ASSERT_EQ(a.peak, 1500, "the peak stays at its most");
	ASSERT_TRUE(a.peak_ns > 0, "and says when");
	ASSERT_EQ(a.allocs, 2, "two allocations");
	ASSERT_EQ(a.alloc_bytes, 1500, "of 1500 bytes");
	ASSERT_EQ(a.frees, 1, "one free");
	ASSERT_EQ(a.free_bytes, 1000, "of 1000 bytes");
	ASSERT_EQ(a.reserved_in_use, 500, "the driver's memory is reserved memory");

	fail_next = 1;
	fake_cuMemAlloc_v2(&d3, 99999);
	probe_session__drain(ps);
	ASSERT_TRUE(seen[ids[P_ALLOC]].flags & RT_F_MEM_FAILED, "a failed call is flagged");
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 1);
	ASSERT_EQ(a.allocs, 2, "and changes nothing");
	ASSERT_EQ(a.in_use, 500, "in use unchanged");

	fake_cuMemFree_v2(before_probes);
	probe_session__drain(ps);
	ASSERT_TRUE(seen[ids[P_FREE]].flags & RT_F_MEM_UNKNOWN, "a pre-attach free is unknown");
	ASSERT_EQ(seen[ids[P_FREE]].vals[V_MFREE_BYTES], 0, "and not sized");
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 1);
	ASSERT_EQ(a.frees_unknown, 1, "counted as unknown");
	ASSERT_EQ(a.frees, 1, "not as a free");
	ASSERT_EQ(a.in_use, 500, "nothing subtracted");

	fake_cudaMalloc(&p, 700);
	probe_session__drain(ps);
	ASSERT_TRUE(seen[ids[P_ALLOC]].flags & RT_F_MEM_NESTED, "the driver call inside is nested");
	ASSERT_EQ(seen[ids[P_MALLOC]].vals[V_MALLOC_BYTES], 700, "the runtime call counts it");
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 1);
	ASSERT_EQ(a.allocs, 3, "once");
	ASSERT_EQ(a.in_use, 1200, "in use 500 + 700");
	ASSERT_EQ(a.peak, 1500, "below the peak: it stays");

	fake_cuMemAllocPitch_v2(&dp, &pitch, 100, 10, 4);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_PITCH]].vals[V_MPITCH_BYTES], 1280, "pitch 128 * height 10");
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 1);
	ASSERT_EQ(a.in_use, 2480, "in use 1200 + 1280");
	ASSERT_EQ(a.peak, 2480, "a new peak");
	fake_cuMemFree_v2(dp);
	fake_cuMemFree_v2((uint64_t)p);
	fake_cuMemFree_v2(d2);
	fake_cuMemFree_v2(0);
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 1);
	ASSERT_EQ(a.in_use, 0, "all freed");
	ASSERT_EQ(a.frees, 4, "free(0) is no free");
	ASSERT_EQ(a.peak, 2480, "the peak stays");

	/* A runtime call whose return never comes (a longjmp out of it; a
	 * missed uretprobe alike): its mark on the thread must not silence
	 * the thread's driver calls after it. */
	jump_out = 1;
	if (!setjmp(jump_back))
		fake_cudaMalloc(&p, 100);
	fake_cuMemAlloc_v2(&d3, 900);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_ALLOC]].flags & RT_F_MEM_NESTED, 0,
		  "after a runtime call left by longjmp, a driver call counts");
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 1);
	ASSERT_EQ(a.in_use, 900, "its 900 bytes (the lost call's 100: never seen)");
	/* An entry-only free: counted at its entry, its small record
	 * carrying the bytes (probe_entry_only, attached below). */
	fake_free_entry_only(d3);
	probe_session__drain(ps);
	ASSERT_TRUE(seen[entry_only_id].flags & RT_F_NO_RETURN, "an entry-only record");
	ASSERT_EQ(seen[entry_only_id].vals[V_MFREE_BYTES], 900, "its bytes, at entry");
	ASSERT_EQ(seen[entry_only_id].vals[V_MFREE_IN_USE], 0, "in use after it");
	fake_cuMemFree_v2((uint64_t)p);

	/* A thread that never set its device: 0, guessed. */
	ASSERT_OK(pthread_create(&t, NULL, alloc_on_new_thread, (void *)(uintptr_t)64), "thread");
	pthread_join(t, NULL);
	probe_session__drain(ps);
	ASSERT_TRUE(seen[ids[P_ALLOC]].flags & RT_F_MEM_DEVICE_GUESSED, "its device is guessed");
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 0);
	ASSERT_EQ(a.in_use, 64, "on device 0");
}

static void check_pjrt(struct probe_session *ps)
{
	int64_t dims[AT_MEM_MAX_DIMS + 1] = { 3, 4 };
	struct fake_h2d_args h = { .type = 11 /* F32 */, .dims = dims, .num_dims = 2,
				   .device = 0xd0d0 };
	struct fake_buffer_args b = { 0 };
	struct at_mem_agg a;
	uint64_t buf;

	fake_BufferFromHostBuffer(&h);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_H2D]].vals[V_MSHAPE_BYTES], 48, "f32[3,4]: 48 bytes");
	a = agg_of(ps, MEM_LAYER_PJRT, MEM_F_DEVICE_HANDLE, 0xd0d0);
	ASSERT_EQ(a.in_use, 48, "on its PJRT_Device");
	buf = h.buffer;

	/* Delete frees the memory; Destroy then drops the handle silently. */
	b.buffer = buf;
	fake_Buffer_Delete(&b);
	fake_Buffer_Destroy(&b);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_DELETE]].vals[V_MFREE_BYTES], 48, "Delete frees its bytes");
	ASSERT_EQ(seen[ids[P_DESTROY]].flags & RT_F_MEM_UNKNOWN, 0, "Destroy after it: no unknown");
	ASSERT_TRUE(seen[ids[P_DESTROY]].flags & RT_F_MEM_HANDLE_ONLY,
		    "but said to move no memory (user space makes no free of it)");
	a = agg_of(ps, MEM_LAYER_PJRT, MEM_F_DEVICE_HANDLE, 0xd0d0);
	ASSERT_EQ(a.in_use, 0, "freed once");
	ASSERT_EQ(a.frees, 1, "counted once");
	ASSERT_EQ(a.frees_unknown, 0, "never unknown");

	/* Destroy's handle reused by another thread's new buffer before
	 * Destroy returns: counted at its entry, Destroy frees the old one
	 * before the runtime could hand the handle on, and the new one stays
	 * live until its own Destroy. */
	fake_BufferFromHostBuffer(&h);
	b.buffer = h.buffer;
	destroy_races_reuse = 1;
	fake_Buffer_Destroy(&b);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_DESTROY]].vals[V_MFREE_BYTES], 48,
		  "the raced Destroy frees the old buffer, at its entry");
	ASSERT_TRUE(seen[ids[P_DESTROY]].flags & RT_F_NO_RETURN, "no return probe");
	ASSERT_FALSE(seen[ids[P_H2D]].flags & RT_F_MEM_TABLE_FULL, "the new one is kept");
	a = agg_of(ps, MEM_LAYER_PJRT, MEM_F_DEVICE_HANDLE, 0xd0d0);
	ASSERT_EQ(a.in_use, 20, "the old buffer freed, the new f32[5] in use");
	ASSERT_EQ(a.frees, 2, "the old one counted freed once");
	fake_Buffer_Destroy(&b);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_DESTROY]].vals[V_MFREE_BYTES], 20, "the new one's Destroy frees it");
	a = agg_of(ps, MEM_LAYER_PJRT, MEM_F_DEVICE_HANDLE, 0xd0d0);
	ASSERT_EQ(a.in_use, 0, "none in use");
	ASSERT_EQ(a.frees_unknown, 0, "and no free unknown");

	/* Hostile shapes: too many dims, a product past any device. */
	h.num_dims = AT_MEM_MAX_DIMS + 1;
	fake_BufferFromHostBuffer(&h);
	probe_session__drain(ps);
	ASSERT_TRUE(seen[ids[P_H2D]].flags & RT_F_MEM_UNSIZED, "9 dims: not sized");
	h.num_dims = 3;
	dims[0] = dims[1] = dims[2] = 1ll << 30;
	fake_BufferFromHostBuffer(&h);
	probe_session__drain(ps);
	ASSERT_TRUE(seen[ids[P_H2D]].flags & RT_F_MEM_UNSIZED, "2^90 bytes: not sized");
	h.num_dims = 1;
	dims[0] = -1;
	fake_BufferFromHostBuffer(&h);
	probe_session__drain(ps);
	ASSERT_TRUE(seen[ids[P_H2D]].flags & RT_F_MEM_UNSIZED, "a negative dim: not sized");
	a = agg_of(ps, MEM_LAYER_PJRT, MEM_F_DEVICE_HANDLE, 0xd0d0);
	ASSERT_EQ(a.allocs_unsized, 3, "three allocations of no size");
	ASSERT_EQ(a.in_use, 0, "none in use");

	/* An unsized one gets its size; one never seen is added by it. */
	b.buffer = h.buffer;
	fake_Buffer_OnDeviceSizeInBytes(&b);
	probe_session__drain(ps);
	ASSERT_FALSE(seen[ids[P_SIZE]].flags & RT_F_MEM_DEVICE_GUESSED,
		     "a known buffer's device: its allocation's, not guessed");
	fake_Buffer_OnDeviceSizeInBytes(&b);
	a = agg_of(ps, MEM_LAYER_PJRT, MEM_F_DEVICE_HANDLE, 0xd0d0);
	ASSERT_EQ(a.in_use, 12345, "sized once, though asked twice");
	b.buffer = 0xabc000;
	fake_Buffer_OnDeviceSizeInBytes(&b);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_SIZE]].vals[V_MSIZE_BYTES], 12345, "an execution output sized");
	ASSERT_TRUE(seen[ids[P_SIZE]].flags & RT_F_MEM_DEVICE_GUESSED, "on no known device");
	a = agg_of(ps, MEM_LAYER_PJRT, MEM_F_DEVICE_HANDLE, 0);
	ASSERT_EQ(a.allocs, 1, "first seen by its size");
	ASSERT_EQ(a.in_use, 12345, "and in use");
	fake_Buffer_Destroy(&b);
	a = agg_of(ps, MEM_LAYER_PJRT, MEM_F_DEVICE_HANDLE, 0);
	ASSERT_EQ(a.in_use, 0, "its Destroy frees it");
}

/* A context's device becomes the thread's; virtual memory's physical
 * allocations on the device their properties name. */
static void *ctx_thread(void *arg)
{
	uint64_t ctx, d;

	(void)arg;
	fake_cuDevicePrimaryCtxRetain(&ctx, 3);
	fake_cuCtxSetCurrent(ctx);
	fake_cuMemAlloc_v2(&d, 333);
	return NULL;
}

static void check_contexts(struct probe_session *ps)
{
	struct fake_mem_prop prop = { .loc_id = 5 };
	struct at_mem_agg a;
	uint64_t handle;
	pthread_t t;

	ASSERT_OK(pthread_create(&t, NULL, ctx_thread, NULL), "thread");
	pthread_join(t, NULL);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_ALLOC]].flags & RT_F_MEM_DEVICE_GUESSED, 0, "the context's device");
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 3);
	ASSERT_EQ(a.in_use, 333, "on device 3, the context's");

	fake_cuMemCreate(&handle, 2 << 20, &prop, 0);
	probe_session__drain(ps);
	ASSERT_EQ(seen[ids[P_CREATE]].vals[V_MCREATE_BYTES], 2 << 20, "cuMemCreate's size");
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 5);
	ASSERT_EQ(a.in_use, 2 << 20, "on prop->location.id");
	ASSERT_EQ(a.reserved_in_use, 2 << 20, "reserved memory");
	fake_cuMemRelease(handle);
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 5);
	ASSERT_EQ(a.in_use, 0, "cuMemRelease frees it");
	ASSERT_EQ(a.reserved_in_use, 0, "and its reservation");
}

/* The session's live table and a process's share of it: small, so that
 * both fill in a test. */
#define TEST_LIVE_MAX 6144
#define TEST_PROC_MAX 4096

static struct at_mem_proc proc_of(struct probe_session *ps, uint32_t pid)
{
	struct at_mem_proc p = {};

	ASSERT_OK(probe_session__mem_proc(ps, pid, &p), "the process's count");
	return p;
}

/* A process at its cap: its next allocation is counted and said untracked,
 * not in in_use; a free makes room again. */
static void check_process_cap(struct probe_session *ps)
{
	uint64_t losses[LOSS_KIND_MAX], d, first = 0;
	struct at_mem_proc before, p;
	struct at_mem_agg a;
	int i, room;

	fake_cudaSetDevice(2);
	before = proc_of(ps, getpid());
	room = TEST_PROC_MAX - (int)before.live;
	ASSERT_GE(room, 1, "room below the cap");
	for (i = 0; i < room; i++) {
		fake_cuMemAlloc_v2(&d, 1);
		if (!first)
			first = d;
		if (i % 1024 == 0)
			probe_session__drain(ps);
	}
	probe_session__drain(ps);
	p = proc_of(ps, getpid());
	ASSERT_EQ(p.live, TEST_PROC_MAX, "its entries reach its cap");
	ASSERT_EQ(p.refused, before.refused, "none refused below it");
	ASSERT_FALSE(seen[ids[P_ALLOC]].flags & RT_F_MEM_TABLE_FULL, "the last one below is kept");

	fake_cuMemAlloc_v2(&d, 1000);
	probe_session__drain(ps);
	ASSERT_TRUE(seen[ids[P_ALLOC]].flags & RT_F_MEM_TABLE_FULL, "the one past it is not");
	ASSERT_EQ(proc_of(ps, getpid()).refused, before.refused + 1, "refused to it");
	probe_session__losses(ps, losses);
	ASSERT_GE(losses[LOSS_MEM_TABLE_FULL], 1, "a loss counted");
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 2);
	ASSERT_EQ(a.untracked, 1, "said untracked");
	ASSERT_EQ(a.untracked_bytes, 1000, "with its bytes");
	ASSERT_EQ(a.allocs, a.alloc_bytes - 999, "every allocation counted");
	ASSERT_EQ(a.in_use + a.untracked_bytes, a.alloc_bytes - a.free_bytes,
		  "in use short by the untracked bytes, no more");
	fake_cuMemFree_v2(d);
	a = agg_of(ps, MEM_LAYER_CUDA, 0, 2);
	ASSERT_GE(a.frees_unknown, 1, "its free is unknown, nothing subtracted");

	fake_cuMemFree_v2(first);
	ASSERT_GE(agg_of(ps, MEM_LAYER_CUDA, 0, 2).frees, 1, "a kept one frees");
	ASSERT_EQ(proc_of(ps, getpid()).live, TEST_PROC_MAX - 1, "and leaves the count");
	fake_cuMemAlloc_v2(&d, 7);
	probe_session__drain(ps);
	ASSERT_FALSE(seen[ids[P_ALLOC]].flags & RT_F_MEM_TABLE_FULL, "room again for one");
	ASSERT_EQ(proc_of(ps, getpid()).live, TEST_PROC_MAX, "at the cap again");
}

/* The table full: a child's allocations past the room the parent left are
 * refused to it, below its own cap; its exit's forget drops its entries. */
static void check_table_full(struct probe_session *ps)
{
	const int room = TEST_LIVE_MAX - TEST_PROC_MAX, extra = 100;
	struct at_mem_proc p;
	struct at_mem_agg a;
	int status = 0;
	pid_t child;

	child = fork();
	if (child == 0) {
		uint64_t d;

		fake_cudaSetDevice(3);
		for (int i = 0; i < room + extra; i++)
			fake_cuMemAlloc_v2(&d, 10);
		_exit(0);
	}
	if (!ASSERT_GE(child, 1, "fork"))
		return;
	waitpid(child, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child ran");
	probe_session__drain(ps);
	p = proc_of(ps, child);
	ASSERT_EQ(p.live, room, "the child filled the table's room");
	ASSERT_EQ(p.refused, extra, "the rest refused to it, below its cap");
	a = agg_of_pid(ps, child, MEM_LAYER_CUDA, 0, 3);
	ASSERT_EQ(a.allocs, room + extra, "every allocation counted");
	ASSERT_EQ(a.untracked, extra, "those refused said untracked");
	ASSERT_EQ(a.in_use, 10 * room, "those kept in use");
	ASSERT_EQ(probe_session__mem_forget_pid(ps, child), room + 1,
		  "its entries and aggregate forgotten");
	ASSERT_EQ(probe_session__mem_proc(ps, child, &p), -ENOENT, "no count left");
	ASSERT_EQ(proc_of(ps, getpid()).live, TEST_PROC_MAX, "the parent's untouched");
}

int main(void)
{
	struct probe_session_opts opts = { .sz = sizeof(opts) };
	struct probe_session *ps;
	struct features f;
	uint64_t before;
	void *fns[P__N] = {
		fake_cuMemAlloc_v2, fake_cuMemFree_v2, fake_cuMemAllocPitch_v2,
		fake_cudaMalloc, fake_cudaSetDevice, fake_BufferFromHostBuffer,
		fake_Buffer_Delete, fake_Buffer_Destroy, fake_Buffer_OnDeviceSizeInBytes,
		fake_cuDevicePrimaryCtxRetain, fake_cuCtxSetCurrent, fake_cuMemCreate,
		fake_cuMemRelease,
	};
	const char *names[P__N] = {
		"cuMemAlloc_v2", "cuMemFree_v2", "cuMemAllocPitch_v2", "cudaMalloc",
		"cudaSetDevice", "PJRT_Client_BufferFromHostBuffer (memory)",
		"PJRT_Buffer_Delete", "PJRT_Buffer_Destroy", "PJRT_Buffer_OnDeviceSizeInBytes",
		"cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuMemCreate", "cuMemRelease",
	};

	if (!test_require_bpf(&f))
		return TEST_SKIP;
	fake_cuMemAlloc_v2(&before, 4096);	/* made before the probes */
	opts.features = &f;
	opts.ring_bytes = 8 << 20;
	opts.children = true;		/* check_table_full's child */
	opts.mem_live_max = TEST_LIVE_MAX;
	opts.mem_live_proc_max = TEST_PROC_MAX;
	ps = probe_session__open(&opts, on_record, NULL);
	if (!ASSERT_OK_PTR(ps, "open and load"))
		return test_exit();
	ASSERT_OK(probe_session__attach_kernel(ps), "attach kernel programs");
	ASSERT_OK(probe_session__trace_pid(ps, getpid(), TRACED_TARGET), "trace self");
	for (int i = 0; i < P__N; i++)
		ids[i] = attach(ps, names[i], fns[i]);
	{
		struct rt_probe_spec spec;

		rt_pack_entry__spec(rt_pack_entry_named("cuMemFree_v2"), &spec);
		spec.flags &= ~RT_SPEC_RETURN;
		entry_only_id = probe_session__attach_runtime(ps, &spec, "/proc/self/exe",
							      self_file_offset(fake_free_entry_only), -1);
		ASSERT_GE(entry_only_id, 0, "an entry-only free attached");
	}
	if (test_failures)
		goto out;
	check_cuda(ps, before);
	check_pjrt(ps);
	check_contexts(ps);
	check_process_cap(ps);
	check_table_full(ps);
	ASSERT_TRUE(probe_session__mem_forget_pid(ps, getpid()) > TEST_PROC_MAX, "forget the pid");
	ASSERT_EQ(probe_session__mem_proc(ps, getpid(), &(struct at_mem_proc){ 0 }), -ENOENT,
		  "and its count");
	ASSERT_EQ(my_aggs(ps), 0, "no aggregate of it left");
out:
	probe_session__free(ps);
	return test_exit();
}
