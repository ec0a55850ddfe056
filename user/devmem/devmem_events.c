// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device-memory records into MemoryAllocation / MemoryDeallocation events
 * (see devmem_events.h). Every value index comes from a probe pack and
 * every value from the traced process: indexes are checked against the
 * record, dims bounded, products saturated.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "devmem/devmem_events.h"
#include "devmem/devmem_names.h"
#include "discover/probe_packs.h"
#include "lib/hashmap.h"

struct devmem_events {
	/* (pid, layer << 32 | device) -> uint64_t peak, malloc'd */
	struct hashmap *peaks;
	/* (pid, tid) -> device + 1: the thread's current device */
	struct hashmap *thread_dev;
	/* (pid, CUcontext) -> device + 1 */
	struct hashmap *ctx_dev;
	/* (pid | layer << 32, address) -> device + 1: a live allocation's
	 * device, for its free (cuMemFree names none, and the thread's
	 * current device may have changed since) */
	struct hashmap *live;
	struct devmem_events_stats st;
};

struct devmem_events *devmem_events__new(void)
{
	struct devmem_events *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->peaks = hashmap__new();
	d->thread_dev = hashmap__new();
	d->ctx_dev = hashmap__new();
	d->live = hashmap__new();
	if (!d->peaks || !d->thread_dev || !d->ctx_dev || !d->live) {
		devmem_events__free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void devmem_events__free(struct devmem_events *d)
{
	if (!d)
		return;
	hashmap__free(d->peaks, free);
	hashmap__free(d->thread_dev, NULL);
	hashmap__free(d->ctx_dev, NULL);
	hashmap__free(d->live, NULL);
	free(d);
}

const struct devmem_events_stats *devmem_events__stats(const struct devmem_events *d)
{
	return &d->st;
}

/* vals[i], when the record holds it. */
static bool val(const struct ev_rt_call *r, uint32_t i, uint64_t *v)
{
	if (i == AT_MEM_NO_VAL || i >= r->n_vals || i >= AT_MAX_FETCH_OPS)
		return false;
	*v = r->vals[i];
	return true;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t p;

	return __builtin_mul_overflow(a, b, &p) ? UINT64_MAX : p;
}

/* The device as a value (capped: the traced process chose it). */
static void set_device(struct devmem_events *d, struct hashmap *h, uint64_t a, uint64_t b,
		       uint64_t device)
{
	/* Stored plus one (0 is "absent"): every uint32, the unknown device
	 * (UINT32_MAX) too, fits a 64-bit pointer. */
	uintptr_t v = (uintptr_t)(device > UINT32_MAX ? UINT32_MAX : device) + 1;
	size_t max = h == d->live ? DEVMEM_MAX_LIVE : DEVMEM_MAX_THREADS;

	if (!hashmap__get(h, a, b) && hashmap__count(h) >= max) {
		d->st.untracked++;
		return;
	}
	if (hashmap__put(h, a, b, (void *)v, NULL))
		d->st.untracked++;
}

static bool get_device(struct hashmap *h, uint64_t a, uint64_t b, uint32_t *device)
{
	uintptr_t v = (uintptr_t)hashmap__get(h, a, b);

	if (!v)
		return false;
	*device = (uint32_t)(v - 1);
	return true;
}

bool devmem_events__thread_device(const struct devmem_events *d, uint32_t pid, uint32_t tid,
				  uint32_t *device)
{
	return get_device(d->thread_dev, pid, tid, device);
}

static uint64_t live_key(uint32_t pid, uint32_t layer)
{
	return (uint64_t)layer << 32 | pid;
}

static void live_remember(struct devmem_events *d, uint32_t pid, uint32_t layer, uint64_t addr,
			  uint32_t device)
{
	/* set_device bounds the table and counts what it cannot keep. */
	set_device(d, d->live, live_key(pid, layer), addr, device);
}

static bool live_device(const struct devmem_events *d, uint32_t pid, uint32_t layer,
			uint64_t addr, uint32_t *device)
{
	return get_device(d->live, live_key(pid, layer), addr, device);
}

static void live_forget(struct devmem_events *d, uint32_t pid, uint32_t layer, uint64_t addr)
{
	hashmap__remove(d->live, live_key(pid, layer), addr);
}

/* SET_DEVICE, CTX_DEVICE, SET_CTX: they only place later calls. */
static int device_change(struct devmem_events *d, const struct ev_rt_call *r,
			 const struct at_mem_desc *m)
{
	uint64_t addr = 0, dev = 0;
	uint32_t ctx_dev;

	d->st.device_changes++;
	if (r->flags & RT_F_MEM_FAILED)
		return 0;
	switch (m->op) {
	case MEM_OP_SET_DEVICE:
		if (!val(r, m->dev_val, &dev))
			goto bad;
		set_device(d, d->thread_dev, r->h.pid, r->h.tid, dev);
		break;
	case MEM_OP_CTX_DEVICE:
		if (!val(r, m->addr_val, &addr) || !val(r, m->dev_val, &dev))
			goto bad;
		set_device(d, d->ctx_dev, r->h.pid, addr, dev);
		break;
	case MEM_OP_SET_CTX:
		if (!val(r, m->addr_val, &addr))
			goto bad;
		if (get_device(d->ctx_dev, r->h.pid, addr, &ctx_dev))
			set_device(d, d->thread_dev, r->h.pid, r->h.tid, ctx_dev);
		break;
	}
	return 0;
bad:
	d->st.bad_records++;
	return -EINVAL;
}

/* The allocator's peak, @in_use included; @in_use itself when not kept. */
static uint64_t peak_of(struct devmem_events *d, const struct capture_mem_allocator *a,
			uint64_t in_use)
{
	uint64_t b = (uint64_t)a->layer << 32 | a->device;
	uint64_t *p = hashmap__get(d->peaks, a->pid, b);

	if (!p) {
		if (hashmap__count(d->peaks) >= DEVMEM_MAX_ALLOCATORS ||
		    !(p = malloc(sizeof(*p)))) {
			d->st.untracked++;
			return in_use;
		}
		*p = 0;
		if (hashmap__put(d->peaks, a->pid, b, p, NULL)) {
			free(p);
			d->st.untracked++;
			return in_use;
		}
	}
	if (in_use > *p)
		*p = in_use;
	return *p;
}

/* What the call asked for, per its size kind (0: it does not say), and
 * its shape when it gives one. */
static int requested(const struct ev_rt_call *r, const struct at_mem_desc *m,
		     uint64_t *bytes, uint64_t *dims, uint32_t *ndims)
{
	uint64_t size = 0, n = 0, d0 = 0;

	*bytes = 0;
	*ndims = 0;
	switch (m->size_kind) {
	case MEM_SIZE_VAL:
		if (!val(r, m->size_val, bytes))
			return -EINVAL;
		return 0;
	case MEM_SIZE_PRODUCT:
		if (!val(r, m->size_val, &size) || !val(r, m->dims_val, &d0))
			return -EINVAL;
		*bytes = mul_sat(size, d0);
		return 0;
	case MEM_SIZE_SHAPE:
		if (!val(r, m->size_val, &size) || !val(r, m->ndims_val, &n))
			return -EINVAL;
		if (n > AT_MEM_MAX_DIMS)
			return -EINVAL;
		*bytes = pjrt_buffer_type_size(size > UINT32_MAX ? 0 : (unsigned int)size);
		for (uint32_t i = 0; i < n; i++) {
			if (m->dims_val == AT_MEM_NO_VAL || !val(r, m->dims_val + i, &dims[i]))
				return -EINVAL;
			*bytes = mul_sat(*bytes, dims[i]);
		}
		*ndims = (uint32_t)n;
		return 0;
	default:
		return 0;	/* MEM_SIZE_UNKNOWN: sized later, or never */
	}
}

/* "f32[128,256]" interned, 0 when the type has no name. */
static uint32_t shape_name(struct capture *cap, uint64_t type, const uint64_t *dims,
			   uint32_t ndims)
{
	const char *t = pjrt_buffer_type_name(type);
	char buf[16 + DEVMEM_SHAPE_MAX];
	size_t len;

	if (!t)
		return 0;
	len = strlen(t);
	memcpy(buf, t, len);
	if (devmem_shape_string(buf + len, sizeof(buf) - len, dims, ndims) < 0)
		return 0;
	return capture__intern(cap, buf);
}

int devmem_events__make(struct devmem_events *d, struct capture *cap,
			const struct devmem_call *call, struct capture_mem_event *out)
{
	const struct ev_rt_call *r = call->rec;
	const struct at_mem_desc *m = call->mem;
	uint64_t dims[AT_MEM_MAX_DIMS], bytes = 0, in_use = 0, addr = 0, dev = 0;
	char name[DEVMEM_ALLOCATOR_NAME_MAX];
	uint32_t ndims = 0, device = 0;
	int err;

	if (m->op == MEM_OP_SET_DEVICE || m->op == MEM_OP_CTX_DEVICE || m->op == MEM_OP_SET_CTX)
		return device_change(d, r, m);
	if (m->op != MEM_OP_ALLOC && m->op != MEM_OP_FREE && m->op != MEM_OP_SIZE)
		return 0;
	if (r->flags & RT_F_MEM_FAILED) {
		d->st.failed++;
		return 0;
	}
	if (r->flags & RT_F_MEM_NESTED) {
		d->st.nested++;
		return 0;
	}
	if (r->flags & RT_F_MEM_HANDLE_ONLY) {
		d->st.handle_only++;
		return 0;
	}
	if (m->op == MEM_OP_ALLOC && (r->flags & RT_F_MEM_UNSIZED)) {
		d->st.unsized++;
		return 0;
	}
	if (!val(r, m->addr_val, &addr) || !val(r, m->out_bytes_val, &bytes) ||
	    !val(r, m->out_in_use_val, &in_use)) {
		d->st.bad_records++;
		return -EINVAL;
	}
	if (m->op == MEM_OP_SIZE && !bytes) {
		d->st.already_sized++;
		return 0;
	}

	memset(out, 0, sizeof(*out));
	out->op = m->op == MEM_OP_FREE ? CAPTURE_MEM_FREE : CAPTURE_MEM_ALLOC;
	/* The kernel counts a paired call at its return, an entry-only one
	 * at its entry: the event is where in_use_after became true. */
	out->ts_ns = r->flags & RT_F_NO_RETURN ? r->h.start_ns : r->h.end_ns;
	out->tid = r->h.tid;
	out->addr = addr;
	out->bytes = bytes;
	out->in_use_after = in_use;

	if (m->op == MEM_OP_ALLOC) {
		if (requested(r, m, &out->requested_bytes, dims, &ndims)) {
			d->st.bad_records++;
			return -EINVAL;
		}
		if (m->size_kind == MEM_SIZE_SHAPE) {
			out->flags |= CAPTURE_MEM_F_SIZE_FROM_SHAPE;
			out->shape = shape_name(cap, r->vals[m->size_val], dims, ndims);
		}
	} else if (m->op == MEM_OP_SIZE) {
		out->flags |= CAPTURE_MEM_F_SIZE_QUERIED;
		out->requested_bytes = bytes;
	} else {
		out->requested_bytes = bytes;
		if (r->flags & RT_F_MEM_UNKNOWN) {
			out->flags |= CAPTURE_MEM_F_SIZE_UNKNOWN;
			out->bytes = out->requested_bytes = 0;
			d->st.unknown_frees++;
		}
	}
	if (m->flags & MEM_F_RESERVED)
		out->flags |= CAPTURE_MEM_F_RESERVED;
	if (r->flags & RT_F_MEM_TABLE_FULL) {
		out->flags |= CAPTURE_MEM_F_UNTRACKED;
		d->st.table_full++;
	}

	/* The device: a PJRT_Device the caller resolved, an ordinal in the
	 * call, for a free its allocation's, or the thread's current one. */
	if ((m->flags & MEM_F_DEVICE_HANDLE) && call->device_resolved) {
		device = call->device;
	} else if (!(m->flags & MEM_F_DEVICE_HANDLE) && val(r, m->dev_val, &dev)) {
		device = dev > UINT32_MAX ? UINT32_MAX : (uint32_t)dev;
	} else if (m->op == MEM_OP_FREE && live_device(d, r->h.pid, m->layer, addr, &device)) {
		/* found: the kernel's live table had it too */
	} else if (m->flags & MEM_F_DEVICE_HANDLE) {
		/* A PJRT buffer first seen by its size names no device. */
		device = CAPTURE_MEM_DEVICE_UNKNOWN;
	} else if (!devmem_events__thread_device(d, r->h.pid, r->h.tid, &device)) {
		out->flags |= CAPTURE_MEM_F_DEVICE_GUESSED;
	}
	if (r->flags & RT_F_MEM_DEVICE_GUESSED)
		out->flags |= CAPTURE_MEM_F_DEVICE_GUESSED;
	if (m->op == MEM_OP_FREE)
		live_forget(d, r->h.pid, m->layer, addr);
	else
		live_remember(d, r->h.pid, m->layer, addr, device);

	out->alloc.pid = r->h.pid;
	out->alloc.device = device;
	out->alloc.layer = m->layer;
	err = devmem_allocator_name(name, sizeof(name), call->platform, device, m->layer);
	if (err < 0) {
		d->st.bad_records++;	/* a layer the pack should not name */
		return -EINVAL;
	}
	out->alloc.name = capture__intern(cap, name);
	out->api = call->api ? capture__intern(cap, call->api) : 0;
	if (!out->alloc.name)
		return -ENOMEM;
	out->peak_in_use = peak_of(d, &out->alloc, in_use);
	d->st.events++;
	return 1;
}

static int of_pid(uint64_t pid, uint64_t b, void *value, void *ctx)
{
	(void)b;
	(void)value;
	return pid == *(const uint32_t *)ctx;
}

static int live_of_pid(uint64_t a, uint64_t b, void *value, void *ctx)
{
	(void)b;
	(void)value;
	return (uint32_t)a == *(const uint32_t *)ctx;
}

static int peak_of_pid(uint64_t pid, uint64_t b, void *value, void *ctx)
{
	(void)b;
	if (pid != *(const uint32_t *)ctx)
		return 0;
	free(value);
	return 1;
}

void devmem_events__forget_pid(struct devmem_events *d, uint32_t pid)
{
	hashmap__filter(d->peaks, peak_of_pid, &pid);
	hashmap__filter(d->thread_dev, of_pid, &pid);
	hashmap__filter(d->ctx_dev, of_pid, &pid);
	hashmap__filter(d->live, live_of_pid, &pid);
}
