// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuda-app's device memory: a step's tensors (64 KiB << (k % 6) bytes, k =
 * 0 .. allocs_per_step - 1, on every device) are allocated when it begins
 * and freed when it ends; with a leak, device 0 keeps one more tensor each
 * step. How a tensor gets memory is the allocator's (--alloc-mode):
 *
 *   direct   one runtime allocation per tensor, cudaMalloc, cudaMallocManaged
 *            and cudaMallocPitch in turn (driver mode: cuMemAlloc_v2,
 *            cuMemAllocManaged, cuMemAllocPitch_v2), freed by cudaFree
 *   caching  PyTorch's caching allocator in small: tensors up to 1 MiB in
 *            2 MiB blocks, larger ones in 20 MiB blocks (their own block,
 *            rounded to 2 MiB, from 10 MiB), blocks reserved with
 *            cudaMalloc and given back only by empty_cache (at exit)
 *   vmm      expandable segments: one reserved address range per device
 *            (cuMemAddressReserve), grown by cuMemCreate + cuMemMap of 2 MiB
 *            multiples, given back at exit (cuMemUnmap, cuMemRelease)
 *   pool     stream-ordered: cudaMallocAsync/_ptsz and cudaFreeAsync/_ptsz
 *            (driver: cuMemAllocAsync/_ptsz, cuMemAllocFromPoolAsync/_ptsz)
 *
 * Truth: "mem_alloc"/"mem_free" for every call that allocates or frees
 * device memory as the driver or runtime counts it (layer cuda_reserved;
 * api the outermost call the app made), a failed one with "failed" and its
 * result; "mem_tensor" for the tensors the caching and vmm allocators place
 * in what they reserved, which no probe sees.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_app_mem.h"
#include "cuda_sim.h"
#include "simtruth.h"

#define MAX_STEP_TENSORS 256
#define SMALL_TENSOR (1ull << 20)
#define SMALL_BLOCK (2ull << 20)
#define LARGE_BLOCK (20ull << 20)
#define OWN_BLOCK_FROM (10ull << 20)
#define SEGMENT_VA (64ull << 30)
#define MAX_PIECES (1u << 20)		/* blocks or handles per device */
#define TENSOR_ALIGN 512ull

struct tensor {
	uint64_t addr, bytes;
	int block;			/* caching: its block; else -1 */
	unsigned int k;			/* which call made it (direct, pool) */
};

struct block {
	uint64_t base, size, top;
	uint64_t pinned_top;		/* top after its last leaked tensor */
	unsigned int live, leaks;
	bool large;
};

struct handle {
	CUmemGenericAllocationHandle h;
	uint64_t va, bytes;
};

struct dev_mem {
	struct tensor step[MAX_STEP_TENSORS];
	unsigned int nstep;
	struct block *blocks;		/* caching */
	unsigned int nblocks, cap_blocks;
	uint64_t seg_base, seg_mapped, seg_top, seg_floor;	/* vmm */
	struct handle *handles;
	unsigned int nhandles, cap_handles;
};

static struct app_mem_config cfg;
static struct dev_mem *devs;
static int64_t cur_step = -1;

int app_mem__parse_mode(const char *s)
{
	static const char *const names[] = { "none", "direct", "caching", "vmm", "pool" };

	for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* ---------------------------------------------------------------- truth */

static void truth_mem(const char *type, const char *api, int dev, uint64_t addr,
		      uint64_t bytes, uint64_t t_call, int result, bool leak)
{
	uint64_t t_return = truth_now();
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, type);
	tl_str(&l, "api", api);
	tl_str(&l, "layer", "cuda_reserved");
	tl_u64(&l, "device", (uint64_t)dev);
	tl_u64(&l, "addr", addr);
	tl_u64(&l, "bytes", bytes);
	tl_u64(&l, "t_call", t_call);
	tl_u64(&l, "t_return", t_return);
	tl_i64(&l, "step", cur_step);
	if (type[4] == 'a')			/* mem_alloc */
		tl_str(&l, "size_from", "call");
	if (result) {
		tl_bool(&l, "failed", true);
		tl_i64(&l, "result", result);
	}
	if (leak)
		tl_bool(&l, "leak", true);
	truth_commit(&l);
}

static void truth_tensor(const char *op, int dev, uint64_t addr, uint64_t bytes,
			 uint64_t block, bool leak)
{
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, "mem_tensor");
	tl_str(&l, "op", op);
	tl_u64(&l, "device", (uint64_t)dev);
	tl_u64(&l, "addr", addr);
	tl_u64(&l, "bytes", bytes);
	tl_u64(&l, "block", block);
	tl_i64(&l, "step", cur_step);
	tl_u64(&l, "t", truth_now());
	if (leak)
		tl_bool(&l, "leak", true);
	truth_commit(&l);
}

/* ---------------------------------------------------------------- raw calls */

static int set_device(int dev)
{
	CUcontext ctx;
	int r;

	if (!cfg.driver)
		return cudaSetDevice(dev);
	r = cuDevicePrimaryCtxRetain(&ctx, dev);
	return r ? r : cuCtxSetCurrent(ctx);
}

/*
 * One allocation call of `bytes` on the current device `dev`, chosen by k
 * for the direct and pool modes (plain cudaMalloc / cuMemAlloc_v2 for
 * caching blocks, leaks and k = 0 of direct). Writes its truth; returns
 * the call's result, *bytes_out the bytes it allocated.
 */
static int raw_alloc(int dev, uint64_t bytes, unsigned int k, bool leak, uint64_t *addr,
		     uint64_t *bytes_out)
{
	uint64_t t0 = truth_now();
	CUdeviceptr p = 0;
	const char *api;
	size_t pitch = 0;
	int r;

	*bytes_out = bytes;
	if (cfg.mode == ALLOC_POOL) {
		CUstream s = (CUstream)(uintptr_t)0x5100;

		switch (cfg.driver ? k % 4 : k % 2) {
		case 0:
			api = cfg.driver ? "cuMemAllocAsync" : "cudaMallocAsync";
			r = cfg.driver ? cuMemAllocAsync(&p, bytes, s) :
					 cudaMallocAsync((void **)&p, bytes, s);
			break;
		case 1:
			api = cfg.driver ? "cuMemAllocAsync_ptsz" : "cudaMallocAsync_ptsz";
			r = cfg.driver ? cuMemAllocAsync_ptsz(&p, bytes, s) :
					 cudaMallocAsync_ptsz((void **)&p, bytes, s);
			break;
		case 2:
			api = "cuMemAllocFromPoolAsync";
			r = cuMemAllocFromPoolAsync(&p, bytes, NULL, s);
			break;
		default:
			api = "cuMemAllocFromPoolAsync_ptsz";
			r = cuMemAllocFromPoolAsync_ptsz(&p, bytes, NULL, s);
			break;
		}
	} else if (cfg.mode == ALLOC_DIRECT && k % 3 == 1) {
		api = cfg.driver ? "cuMemAllocManaged" : "cudaMallocManaged";
		r = cfg.driver ? cuMemAllocManaged(&p, bytes, 1) :
				 cudaMallocManaged((void **)&p, bytes, 1);
	} else if (cfg.mode == ALLOC_DIRECT && k % 3 == 2) {
		/* Four rows of a quarter each: pitch x 4 = bytes for the
		 * step's sizes (multiples of 2 KiB). */
		api = cfg.driver ? "cuMemAllocPitch_v2" : "cudaMallocPitch";
		r = cfg.driver ? cuMemAllocPitch_v2(&p, &pitch, bytes / 4, 4, 4) :
				 cudaMallocPitch((void **)&p, &pitch, bytes / 4, 4);
		if (!r)
			*bytes_out = (uint64_t)pitch * 4;
	} else {
		api = cfg.driver ? "cuMemAlloc_v2" : "cudaMalloc";
		r = cfg.driver ? cuMemAlloc_v2(&p, bytes) : cudaMalloc((void **)&p, bytes);
	}
	truth_mem("mem_alloc", api, dev, r ? 0 : p, *bytes_out, t0, r, leak);
	*addr = r ? 0 : p;
	return r;
}

static int raw_free(int dev, uint64_t addr, uint64_t bytes, unsigned int k)
{
	CUstream s = (CUstream)(uintptr_t)0x5100;
	uint64_t t0 = truth_now();
	const char *api;
	int r;

	if (cfg.mode == ALLOC_POOL && k % 2 == 0) {
		api = cfg.driver ? "cuMemFreeAsync" : "cudaFreeAsync";
		r = cfg.driver ? cuMemFreeAsync(addr, s) : cudaFreeAsync((void *)addr, s);
	} else if (cfg.mode == ALLOC_POOL) {
		api = cfg.driver ? "cuMemFreeAsync_ptsz" : "cudaFreeAsync_ptsz";
		r = cfg.driver ? cuMemFreeAsync_ptsz(addr, s) :
				 cudaFreeAsync_ptsz((void *)addr, s);
	} else {
		api = cfg.driver ? "cuMemFree_v2" : "cudaFree";
		r = cfg.driver ? cuMemFree_v2(addr) : cudaFree((void *)addr);
	}
	if (r) {
		fprintf(stderr, "cuda-app: %s(0x%llx) failed: %d\n", api,
			(unsigned long long)addr, r);
		return -EIO;
	}
	truth_mem("mem_free", api, dev, addr, bytes, t0, 0, false);
	return 0;
}

/* Grows an array of `size`-byte pieces to hold one more; false past the cap. */
static bool grow(void **arr, unsigned int n, unsigned int *cap, size_t size)
{
	void *p;

	if (n < *cap)
		return true;
	if (*cap >= MAX_PIECES)
		return false;
	p = realloc(*arr, (size_t)(*cap ? *cap * 2 : 16) * size);
	if (!p)
		return false;
	*arr = p;
	*cap = *cap ? *cap * 2 : 16;
	return true;
}

/* ---------------------------------------------------------------- caching */

/* Places a tensor in a block of its pool, reserving a new block when none
 * has room. 0 (t->addr 0 when the reservation failed) or -errno. */
static int caching_alloc(int dev, struct tensor *t, bool leak)
{
	struct dev_mem *m = &devs[dev];
	bool large = t->bytes > SMALL_TENSOR;
	uint64_t size, got;
	struct block *b;
	unsigned int i;

	for (i = 0; i < m->nblocks; i++) {
		b = &m->blocks[i];
		if (b->large == large && b->size - b->top >= t->bytes)
			break;
	}
	if (i == m->nblocks) {
		if (!grow((void **)&m->blocks, m->nblocks, &m->cap_blocks, sizeof(*b)))
			return -ENOSPC;
		size = !large ? SMALL_BLOCK : t->bytes < OWN_BLOCK_FROM ? LARGE_BLOCK :
			round_up(t->bytes, SMALL_BLOCK);
		b = &m->blocks[i];
		*b = (struct block){ .size = size, .large = large };
		if (raw_alloc(dev, size, 0, false, &b->base, &got)) {
			t->addr = 0;
			return 0;
		}
		m->nblocks++;
	}
	b = &m->blocks[i];
	t->addr = b->base + b->top;
	t->block = (int)i;
	b->top += t->bytes;
	b->live++;
	if (leak) {
		b->leaks++;
		b->pinned_top = b->top;
	}
	truth_tensor("alloc", dev, t->addr, t->bytes, b->base, leak);
	return 0;
}

static void caching_free(int dev, const struct tensor *t)
{
	struct block *b = &devs[dev].blocks[t->block];

	truth_tensor("free", dev, t->addr, t->bytes, b->base, false);
	if (--b->live == b->leaks)
		b->top = b->pinned_top;
}

/* empty_cache: every block without a tensor goes back. */
static int caching_empty(int dev)
{
	struct dev_mem *m = &devs[dev];
	unsigned int i, kept = 0;
	int err = 0;

	for (i = 0; i < m->nblocks; i++) {
		struct block *b = &m->blocks[i];

		if (b->live)
			m->blocks[kept++] = *b;
		else if (!err)
			err = raw_free(dev, b->base, b->size, 0);
	}
	m->nblocks = kept;
	return err;
}

/* ---------------------------------------------------------------- vmm */

static int vmm_alloc(int dev, struct tensor *t, bool leak)
{
	struct dev_mem *m = &devs[dev];
	CUmemAllocationProp prop = { .type = 1, .location = { .type = 1, .id = dev } };
	uint64_t t0, chunk;
	struct handle *h;
	int r;

	if (!m->seg_base) {
		r = cuMemAddressReserve(&m->seg_base, SEGMENT_VA, 0, 0, 0);
		if (r) {
			fprintf(stderr, "cuda-app: cuMemAddressReserve failed: %d\n", r);
			return -EIO;
		}
	}
	if (m->seg_top + t->bytes > SEGMENT_VA)
		return -ENOSPC;
	if (m->seg_top + t->bytes > m->seg_mapped) {
		if (!grow((void **)&m->handles, m->nhandles, &m->cap_handles, sizeof(*h)))
			return -ENOSPC;
		h = &m->handles[m->nhandles];
		chunk = round_up(m->seg_top + t->bytes - m->seg_mapped, SIMDRV_VMM_GRANULARITY);
		t0 = truth_now();
		r = cuMemCreate(&h->h, chunk, &prop, 0);
		truth_mem("mem_alloc", "cuMemCreate", dev, r ? 0 : h->h, chunk, t0, r, false);
		if (r) {
			t->addr = 0;
			return 0;
		}
		h->va = m->seg_base + m->seg_mapped;
		h->bytes = chunk;
		r = cuMemMap(h->va, chunk, 0, h->h, 0);
		if (r) {
			fprintf(stderr, "cuda-app: cuMemMap failed: %d\n", r);
			return -EIO;
		}
		m->nhandles++;
		m->seg_mapped += chunk;
	}
	t->addr = m->seg_base + m->seg_top;
	m->seg_top += t->bytes;
	truth_tensor("alloc", dev, t->addr, t->bytes, m->seg_base, leak);
	return 0;
}

/* Unmaps and releases every handle, then the addresses: only at exit, so
 * leaked tensors go with them (the process is ending). */
static int vmm_release(int dev)
{
	struct dev_mem *m = &devs[dev];
	uint64_t t0;
	int r;

	for (unsigned int i = 0; i < m->nhandles; i++) {
		struct handle *h = &m->handles[i];

		r = cuMemUnmap(h->va, h->bytes);
		t0 = truth_now();
		if (!r)
			r = cuMemRelease(h->h);
		if (r) {
			fprintf(stderr, "cuda-app: cuMemUnmap/cuMemRelease failed: %d\n", r);
			return -EIO;
		}
		truth_mem("mem_free", "cuMemRelease", dev, h->h, h->bytes, t0, 0, false);
	}
	m->nhandles = 0;
	m->seg_mapped = m->seg_top = m->seg_floor = 0;
	if (m->seg_base && cuMemAddressFree(m->seg_base, SEGMENT_VA))
		return -EIO;
	m->seg_base = 0;
	return 0;
}

/* ---------------------------------------------------------------- steps */

/* One tensor of `bytes`: 0 with t->addr 0 when its memory could not be had
 * (said in the truth), or -errno. */
static int tensor_alloc(int dev, struct tensor *t, uint64_t bytes, unsigned int k, bool leak)
{
	*t = (struct tensor){ .bytes = round_up(bytes, TENSOR_ALIGN), .block = -1, .k = k };
	switch (cfg.mode) {
	case ALLOC_CACHING:
		return caching_alloc(dev, t, leak);
	case ALLOC_VMM:
		return vmm_alloc(dev, t, leak);
	default:
		raw_alloc(dev, t->bytes, leak ? 0 : k, leak, &t->addr, &t->bytes);
		return 0;
	}
}

static int tensor_free(int dev, const struct tensor *t)
{
	if (!t->addr)
		return 0;
	switch (cfg.mode) {
	case ALLOC_CACHING:
		caching_free(dev, t);
		return 0;
	case ALLOC_VMM:
		truth_tensor("free", dev, t->addr, t->bytes, devs[dev].seg_base, false);
		return 0;
	default:
		return raw_free(dev, t->addr, t->bytes, t->k);
	}
}

/* An allocation bigger than the device, on device 0: it fails with
 * CUDA_ERROR_OUT_OF_MEMORY and changes nothing. */
static void try_oom(void)
{
	uint64_t addr, got, t0 = truth_now();
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp prop = { .type = 1, .location = { .type = 1, .id = 0 } };
	uint64_t bytes = round_up(cfg.device_memory + 1, SIMDRV_VMM_GRANULARITY);
	int r;

	if (cfg.mode != ALLOC_VMM) {
		r = raw_alloc(0, bytes, 0, false, &addr, &got);
	} else {
		r = cuMemCreate(&h, bytes, &prop, 0);
		truth_mem("mem_alloc", "cuMemCreate", 0, r ? 0 : h, bytes, t0, r, false);
	}
	if (!r)
		fprintf(stderr, "cuda-app: the out-of-memory allocation succeeded\n");
}

int app_mem__init(const struct app_mem_config *c)
{
	cfg = *c;
	if (cfg.mode == ALLOC_NONE)
		return 0;
	if (cfg.allocs_per_step > MAX_STEP_TENSORS || cfg.devices < 1 ||
	    cfg.devices > SIMDRV_DEVICES)
		return -EINVAL;
	devs = calloc((size_t)cfg.devices, sizeof(*devs));
	return devs ? 0 : -ENOMEM;
}

int app_mem__step_begin(uint64_t step)
{
	int err = 0;

	if (cfg.mode == ALLOC_NONE)
		return 0;
	cur_step = (int64_t)step;
	for (int d = 0; d < cfg.devices && !err; d++) {
		struct dev_mem *m = &devs[d];
		struct tensor leak;

		if (set_device(d)) {
			fprintf(stderr, "cuda-app: cannot make device %d current\n", d);
			return -EIO;
		}
		if (d == 0 && cfg.leak_bytes)
			err = tensor_alloc(0, &leak, cfg.leak_bytes, 0, true);
		if (d == 0 && cfg.oom_step == (int64_t)step)
			try_oom();
		m->seg_floor = m->seg_top;
		for (m->nstep = 0; m->nstep < cfg.allocs_per_step && !err; m->nstep++)
			err = tensor_alloc(d, &m->step[m->nstep], 64ull << 10 << (m->nstep % 6),
					   m->nstep, false);
	}
	return err;
}

int app_mem__step_end(uint64_t step)
{
	int err = 0;

	(void)step;
	if (cfg.mode == ALLOC_NONE)
		return 0;
	for (int d = 0; d < cfg.devices && !err; d++) {
		struct dev_mem *m = &devs[d];

		if (set_device(d))
			return -EIO;
		while (m->nstep && !err)
			err = tensor_free(d, &m->step[--m->nstep]);
		m->seg_top = m->seg_floor;
	}
	cur_step = -1;
	return err;
}

int app_mem__finish(void)
{
	int err = 0;

	if (cfg.mode != ALLOC_CACHING && cfg.mode != ALLOC_VMM)
		return 0;
	for (int d = 0; d < cfg.devices && !err; d++) {
		if (set_device(d))
			return -EIO;
		err = cfg.mode == ALLOC_CACHING ? caching_empty(d) : vmm_release(d);
	}
	return err;
}
