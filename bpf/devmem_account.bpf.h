/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Device memory accounting: what a memory call (its spec's struct
 * at_mem_desc) does to the maps of devmem.bpf.h, done where the call
 * completes (runtime.bpf.c: a paired call at its return, an entry-only one
 * at entry). Every value read here came from the traced process: sizes are
 * bounded (AT_MEM_MAX_BYTES), dims counted (AT_MEM_MAX_DIMS), indexes
 * checked against the record's values.
 *
 * The work is in subprograms (__noinline): the runtime programs carry one
 * call, and a probe with no memory effect pays one branch.
 */
#ifndef ACCELTRACE_DEVMEM_ACCOUNT_BPF_H
#define ACCELTRACE_DEVMEM_ACCOUNT_BPF_H

#include "devmem.bpf.h"

#ifndef EEXIST
#define EEXIST 17	/* errno.h's: bpf_map_update_elem()'s BPF_NOEXIST refusal */
#endif
#ifndef ENOSPC
#define ENOSPC 28	/* errno.h's: no room (a process at its cap) */
#endif

/* One memory call's inputs and results; in per-CPU scratch (the record's
 * values are copied here: the record's own size is known only to the
 * caller, the verifier needs one here). */
struct mem_call {
	__u64 vals[AT_MAX_FETCH_OPS];
	__u32 n_vals;
	__u32 pid;
	__u32 tid;
	__u32 flags;		/* out: enum rt_call_flags, RT_F_MEM_* */
	__u64 ts_ns;		/* the call's entry */
	__u64 done_ns;		/* when it completed: its return, else its entry */
	__u64 sp;		/* the stack pointer where it is accounted */
	__u64 bytes;		/* out: allocated, freed or sized */
	__u64 in_use;		/* out: in use on that device after */
	/* The call's allocation, as the op found it. */
	__u64 addr;
	__u64 size;
	__u64 device;
	__u32 sized;		/* size is known */
	__u32 pad;
};

/* Element bytes of PJRT_Buffer_Type @type (AT_PJRT_ELEM_LOG2_*, events.h). */
static __always_inline __u64 pjrt_elem_bytes(__u64 type)
{
	__u64 code;

	if (type >= 32)
		return 0;
	code = (type < 16 ? AT_PJRT_ELEM_LOG2_LO >> (type * 4) :
			    AT_PJRT_ELEM_LOG2_HI >> ((type - 16) * 4)) & 0xf;
	return code ? 1ull << (code - 1) : 0;
}

static __always_inline __u64 mem_val(const struct mem_call *m, __u32 idx)
{
	return idx < m->n_vals ? m->vals[idx & (AT_MAX_FETCH_OPS - 1)] : 0;
}

/* a * b, or AT_MEM_MAX_BYTES + 1 (too big) where it would pass that. */
static __always_inline __u64 mem_mul(__u64 a, __u64 b)
{
	if (a > AT_MEM_MAX_BYTES || b > AT_MEM_MAX_BYTES || (a && b > AT_MEM_MAX_BYTES / a))
		return AT_MEM_MAX_BYTES + 1;
	return a * b;
}

/* The call's size into m->size, m->sized (enum at_mem_size_kind). */
static __always_inline void mem_size_of(const struct at_mem_desc *d, struct mem_call *m)
{
	__u64 a = mem_val(m, d->size_val), bytes = 0, n;

	m->sized = 0;
	switch (d->size_kind) {
	case MEM_SIZE_VAL:
		bytes = a;
		break;
	case MEM_SIZE_PRODUCT:
		bytes = mem_mul(a, mem_val(m, d->dims_val));
		break;
	case MEM_SIZE_SHAPE:
		n = mem_val(m, d->ndims_val);
		if (n > AT_MEM_MAX_DIMS)
			return;
		bytes = pjrt_elem_bytes(a);
		if (!bytes)
			return;
		for (__u32 i = 0; i < AT_MEM_MAX_DIMS; i++) {
			if (i >= n)
				break;
			bytes = mem_mul(bytes, mem_val(m, d->dims_val + i));
		}
		break;
	default:
		return;
	}
	if (bytes > AT_MEM_MAX_BYTES)
		return;
	m->size = bytes;
	m->sized = 1;
}

/* The device the call's memory is on: its value, or the thread's current
 * one, else 0 (guessed). */
static __always_inline __u64 mem_device_of(const struct at_mem_desc *d, struct mem_call *m)
{
	__u64 *dev;

	if (d->flags & MEM_F_THREAD_DEVICE) {
		dev = HASH_KEPT(&mem_thread_dev, &m->tid, mem_thread_in_hash);
		if (dev)
			return *dev;
	} else if (d->dev_val != AT_MEM_NO_VAL) {
		/* An ordinal is an int: the register's upper half is not its. */
		return d->flags & MEM_F_DEVICE_HANDLE ? mem_val(m, d->dev_val) :
							(__u32)mem_val(m, d->dev_val);
	}
	m->flags |= RT_F_MEM_DEVICE_GUESSED;
	return 0;
}

/* The (pid, layer, device) aggregate, made on first use. */
static __noinline struct at_mem_agg *mem_agg_of(__u32 pid, __u32 layer, __u32 flags,
						__u64 device)
{
	struct at_mem_agg_key key = {
		.pid = pid, .layer = layer, .flags = flags & MEM_F_DEVICE_HANDLE,
		.device = device,
	};
	struct at_mem_agg zero = {}, *a;

	a = bpf_map_lookup_elem(&mem_agg, &key);
	if (a)
		return a;
	bpf_map_update_elem(&mem_agg, &key, &zero, BPF_NOEXIST);
	a = bpf_map_lookup_elem(&mem_agg, &key);
	if (!a)
		count_loss(LOSS_MEM_TABLE_FULL);
	return a;
}

/*
 * Raises the peak to @after. The peak only rises (compare-and-swap): a CPU
 * that loses every try leaves a peak another raised. peak_ns is the
 * winner's, written after it won.
 */
static __always_inline void mem_raise_peak(struct at_mem_agg *a, __u64 after, __u64 now)
{
	for (int i = 0; i < 8; i++) {
		__u64 peak = a->peak;

		if (after <= peak)
			break;
		if (__sync_val_compare_and_swap(&a->peak, peak, after) == peak) {
			a->peak_ns = now;
			break;
		}
	}
}

/* Adds @bytes in use; returns the bytes in use after. */
static __always_inline __u64 mem_add_in_use(struct at_mem_agg *a, __u64 bytes, __u64 now)
{
	__u64 after = __sync_fetch_and_add(&a->in_use, bytes) + bytes;

	mem_raise_peak(a, after, now);
	return after;
}

/* Puts @val under the thread @tid in a per-thread table, counting a new
 * entry in @in_hash (HASH_FORGET takes it out). */
static __always_inline long mem_thread_put(void *map, __u32 *tid, __u64 *val, __u64 *in_hash)
{
	if (!bpf_map_update_elem(map, tid, val, BPF_NOEXIST)) {
		__sync_fetch_and_add(in_hash, 1);
		return 0;
	}
	return bpf_map_update_elem(map, tid, val, BPF_EXIST);
}

/* The process's count of live entries, made on first use. */
static __noinline struct at_mem_proc *mem_proc_of(__u32 pid)
{
	struct at_mem_proc zero = {}, *p = bpf_map_lookup_elem(&mem_proc, &pid);

	if (p)
		return p;
	bpf_map_update_elem(&mem_proc, &pid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&mem_proc, &pid);
}

/*
 * Every live entry goes in and out through these two, so that a process's
 * count stays its entries' (user space drops both at its exit). Insert:
 * 0, -EEXIST (the key is live), else no room: the process at its cap
 * (-ENOSPC) or the table full, counted refused to it. CPUs racing at the
 * cap may pass it by one each.
 */
static __noinline long mem_live_insert(const struct at_mem_live_key *key,
				       const struct at_mem_live *entry)
{
	struct at_mem_proc *p = mem_proc_of(key->pid);
	long err;

	if (!p)
		return -ENOSPC;
	if (p->live >= cfg_mem_live_proc_max) {
		__sync_fetch_and_add(&p->refused, 1);
		return -ENOSPC;
	}
	err = bpf_map_update_elem(&mem_live, key, entry, BPF_NOEXIST);
	if (!err)
		__sync_fetch_and_add(&p->live, 1);
	else if (err != -EEXIST)
		__sync_fetch_and_add(&p->refused, 1);
	return err;
}

/* 0 where this call removed the entry (another CPU's delete may win). */
static __noinline long mem_live_delete(const struct at_mem_live_key *key)
{
	struct at_mem_proc *p;
	long err = bpf_map_delete_elem(&mem_live, key);

	if (err)
		return err;
	p = bpf_map_lookup_elem(&mem_proc, &key->pid);
	if (p)
		__sync_fetch_and_sub(&p->live, 1);
	return 0;
}

/* A live entry's memory leaves its aggregate: counted as a free. */
static __noinline void mem_release(struct mem_call *m, __u64 bytes, __u64 device,
				   __u32 flags, __u32 layer)
{
	struct at_mem_agg *a = mem_agg_of(m->pid, layer, flags, device);

	if (!a)
		return;
	__sync_fetch_and_add(&a->frees, 1);
	__sync_fetch_and_add(&a->free_bytes, bytes);
	if (flags & MEM_F_RESERVED)
		__sync_fetch_and_sub(&a->reserved_in_use, bytes);
	m->in_use = __sync_fetch_and_sub(&a->in_use, bytes) - bytes;
	m->bytes = bytes;
}

/* The address is live already: its free was missed (or its entry outlived
 * a handle). It goes first, counted freed, so in_use stays true. */
static __noinline void mem_drop_stale(struct mem_call *m, const struct at_mem_live_key *key)
{
	struct at_mem_live *old = bpf_map_lookup_elem(&mem_live, key), o;

	if (!old)
		return;
	o = *old;
	if (!mem_live_delete(key) && !(o.flags & AT_MEM_LIVE_DELETED))
		mem_release(m, o.bytes, o.device, o.flags, o.layer);
	m->bytes = 0;
}

/* A new live allocation: m->addr, m->size (m->sized), m->device. */
static __noinline void mem_alloc(const struct at_mem_desc *d, struct mem_call *m)
{
	struct at_mem_live_key key = { .pid = m->pid, .addr = m->addr };
	struct at_mem_live entry = {
		.bytes = m->sized ? m->size : 0, .device = m->device, .ts_ns = m->done_ns,
		.flags = d->flags, .layer = d->layer,
	};
	struct at_mem_agg *a;
	long err;

	a = mem_agg_of(m->pid, d->layer, d->flags, m->device);
	if (!a) {
		m->flags |= RT_F_MEM_TABLE_FULL;
		return;
	}
	/* Inserted only where absent: the common case costs no lookup. */
	err = mem_live_insert(&key, &entry);
	if (err == -EEXIST) {
		mem_drop_stale(m, &key);
		err = mem_live_insert(&key, &entry);
	}
	__sync_fetch_and_add(&a->allocs, 1);
	if (!m->sized) {
		__sync_fetch_and_add(&a->allocs_unsized, 1);
		m->flags |= RT_F_MEM_UNSIZED;
	}
	if (err) {
		/* Counted, not in in_use: its free will not find it. */
		count_loss(LOSS_MEM_TABLE_FULL);
		m->flags |= RT_F_MEM_TABLE_FULL;
		__sync_fetch_and_add(&a->untracked, 1);
		if (m->sized) {
			__sync_fetch_and_add(&a->alloc_bytes, m->size);
			__sync_fetch_and_add(&a->untracked_bytes, m->size);
		}
		m->bytes = m->sized ? m->size : 0;
		m->in_use = a->in_use;
		return;
	}
	if (!m->sized) {
		m->in_use = a->in_use;
		return;
	}
	__sync_fetch_and_add(&a->alloc_bytes, m->size);
	if (d->flags & MEM_F_RESERVED)
		__sync_fetch_and_add(&a->reserved_in_use, m->size);
	m->in_use = mem_add_in_use(a, m->size, m->done_ns);
	m->bytes = m->size;
}

/* A free of m->addr: its size from the live table. */
static __noinline void mem_free(const struct at_mem_desc *d, struct mem_call *m)
{
	struct at_mem_live_key key = { .pid = m->pid, .addr = m->addr };
	struct at_mem_live *e, copy;
	struct at_mem_agg *a;

	if (!m->addr)		/* free(NULL), cudaFree(0): nothing */
		return;
	e = bpf_map_lookup_elem(&mem_live, &key);
	if (!e) {
		/* Made before the probes (or lost): counted, never sized. */
		m->device = mem_device_of(d, m);
		a = mem_agg_of(m->pid, d->layer, d->flags, m->device);
		m->flags |= RT_F_MEM_UNKNOWN;
		if (!a)
			return;
		__sync_fetch_and_add(&a->frees_unknown, 1);
		m->in_use = a->in_use;
		if (d->flags & MEM_F_KEEP_HANDLE) {
			/* So the handle's own free later is no second one. */
			struct at_mem_live mark = {
				.device = m->device, .ts_ns = m->done_ns,
				.flags = d->flags | AT_MEM_LIVE_DELETED, .layer = d->layer,
			};

			mem_live_insert(&key, &mark);
		}
		return;
	}
	if (e->ts_ns > m->ts_ns) {
		/* Made after this free was called: the runtime reused the
		 * handle for a new allocation on another thread, which completed
		 * first. The buffer this free names went then (mem_drop_stale,
		 * counted freed); the new one is not this call's to free. */
		m->flags |= RT_F_MEM_HANDLE_ONLY;
		return;
	}
	if (e->flags & AT_MEM_LIVE_DELETED) {
		/* Its memory was freed already: the handle goes silently. */
		m->flags |= RT_F_MEM_HANDLE_ONLY;
		if (!(d->flags & MEM_F_KEEP_HANDLE))
			mem_live_delete(&key);
		return;
	}
	copy = *e;
	if (d->flags & MEM_F_KEEP_HANDLE) {
		/* The first of racing frees marks it; the others find it so. */
		if (__sync_fetch_and_or(&e->flags, AT_MEM_LIVE_DELETED) & AT_MEM_LIVE_DELETED) {
			m->flags |= RT_F_MEM_HANDLE_ONLY;
			return;
		}
		e->bytes = 0;
	} else if (mem_live_delete(&key)) {
		m->flags |= RT_F_MEM_HANDLE_ONLY;
		return;		/* another free of it won */
	}
	mem_release(m, copy.bytes, copy.device, copy.flags, copy.layer);
}

/* Sizes an allocation seen without one; one the table lacks is added. */
static __noinline void mem_size(const struct at_mem_desc *d, struct mem_call *m)
{
	struct at_mem_live_key key = { .pid = m->pid, .addr = m->addr };
	struct at_mem_live *e;
	struct at_mem_agg *a;

	if (!m->sized || !m->addr) {
		m->flags |= RT_F_MEM_UNSIZED;
		return;
	}
	e = bpf_map_lookup_elem(&mem_live, &key);
	if (!e) {
		m->device = mem_device_of(d, m);
		mem_alloc(d, m);
		return;
	}
	/* Sized already (the call repeats), or freed: nothing. The first of
	 * racing sizings takes the entry; the others leave it. */
	if (e->bytes || (e->flags & AT_MEM_LIVE_DELETED) ||
	    (__sync_fetch_and_or(&e->flags, AT_MEM_LIVE_SIZING) & AT_MEM_LIVE_SIZING))
		return;
	a = mem_agg_of(m->pid, e->layer, e->flags, e->device);
	if (!a)
		return;
	/* In use first, then the size on the entry, so that a free reading
	 * the size releases bytes already counted. The other order let a
	 * racing free subtract them first: in_use wrapped below zero for an
	 * instant, and a capture said 8192 PiB. */
	__sync_fetch_and_add(&a->alloc_bytes, m->size);
	if (e->flags & MEM_F_RESERVED)
		__sync_fetch_and_add(&a->reserved_in_use, m->size);
	m->in_use = mem_add_in_use(a, m->size, m->done_ns);
	m->bytes = m->size;
	__sync_val_compare_and_swap(&e->bytes, 0, m->size);
}

/* The thread's current device: set, or that of the context it made current. */
static __always_inline void mem_set_device(const struct at_mem_desc *d, struct mem_call *m)
{
	struct at_mem_live_key key = { .pid = m->pid, .addr = mem_val(m, d->addr_val) };
	__u64 dev, *ctx_dev;

	switch (d->op) {
	case MEM_OP_SET_DEVICE:
		dev = (__u32)mem_val(m, d->dev_val);
		break;
	case MEM_OP_CTX_DEVICE:
		dev = (__u32)mem_val(m, d->dev_val);
		if (key.addr && bpf_map_update_elem(&mem_ctx_dev, &key, &dev, BPF_ANY))
			count_loss(LOSS_MEM_TABLE_FULL);
		return;
	default:	/* MEM_OP_SET_CTX */
		ctx_dev = bpf_map_lookup_elem(&mem_ctx_dev, &key);
		if (!ctx_dev)
			return;
		dev = *ctx_dev;
		break;
	}
	if (mem_thread_put(&mem_thread_dev, &m->tid, &dev, &mem_thread_in_hash))
		count_loss(LOSS_MEM_TABLE_FULL);
}

/*
 * Outer-layer calls (MEM_F_OUTER) mark their thread with their entry's
 * stack pointer (it points at their return address). A call made inside
 * one runs deeper: below it. A call at or above it is not inside: the
 * outer one's return was missed (a uretprobe missed, a longjmp out), and
 * the stale mark goes, so that it cannot silence the thread's own calls.
 */
static __always_inline bool mem_in_outer(struct mem_call *m)
{
	__u64 *outer_sp = HASH_KEPT(&mem_outer, &m->tid, mem_outer_in_hash);

	if (!outer_sp)
		return false;
	if (m->sp < *outer_sp)
		return true;
	HASH_FORGET(&mem_outer, &m->tid, mem_outer_in_hash);
	return false;
}

/* Entered: the outermost live mark stays (an outer call inside another,
 * or a stale mark above, is replaced only by one further up). */
static __always_inline void mem_outer_enter(__u32 tid, __u64 sp)
{
	__u64 *outer_sp = bpf_map_lookup_elem(&mem_outer, &tid);

	if (!outer_sp || *outer_sp <= sp)
		mem_thread_put(&mem_outer, &tid, &sp, &mem_outer_in_hash);
}

/* Returned (@sp: past the return address its entry's sp pointed at): its
 * own mark goes (or a stale one below), not an outer one's above. */
static __always_inline void mem_outer_leave(__u32 tid, __u64 sp)
{
	__u64 *outer_sp = HASH_KEPT(&mem_outer, &tid, mem_outer_in_hash);

	if (outer_sp && *outer_sp + 8 <= sp)
		HASH_FORGET(&mem_outer, &tid, mem_outer_in_hash);
}

/*
 * A memory call completed (@ret: its return value; 0 for an entry-only
 * call): what it did, by its descriptor @d. Results in m->flags, m->bytes,
 * m->in_use.
 */
static __noinline void mem_account(const struct at_mem_desc *d, struct mem_call *m, __u64 ret)
{
	__u32 op = d->op;
	bool failed = d->layer == MEM_LAYER_CUDA ? (__u32)ret != 0 : ret != 0;

	if (failed) {
		m->flags |= RT_F_MEM_FAILED;
		return;
	}
	if (op == MEM_OP_SET_DEVICE || op == MEM_OP_CTX_DEVICE || op == MEM_OP_SET_CTX) {
		mem_set_device(d, m);
		return;
	}
	/* Inside an outer layer's call (a driver call cudaMalloc made):
	 * the outer one counts it. Only CUDA has two layers of one memory. */
	if (d->layer == MEM_LAYER_CUDA && !(d->flags & MEM_F_OUTER) && mem_in_outer(m)) {
		m->flags |= RT_F_MEM_NESTED;
		return;
	}
	m->addr = d->addr_val == AT_MEM_NO_VAL ? 0 : mem_val(m, d->addr_val);
	m->sized = 0;
	m->size = 0;
	if (op == MEM_OP_ALLOC || op == MEM_OP_SIZE)
		mem_size_of(d, m);
	/* A free's or a sizing's device is its allocation's: asked only
	 * where that is not known (mem_free, mem_size). */
	if (op == MEM_OP_ALLOC)
		m->device = mem_device_of(d, m);
	switch (op) {
	case MEM_OP_ALLOC:
		mem_alloc(d, m);
		break;
	case MEM_OP_FREE:
		mem_free(d, m);
		break;
	case MEM_OP_SIZE:
		mem_size(d, m);
		break;
	default:
		break;
	}
}

#endif /* ACCELTRACE_DEVMEM_ACCOUNT_BPF_H */
