// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Runtime-library calls (PJRT, TPU C API, libcuda, tf.data): one uprobe body
 * and one uretprobe body for every probe. The attach cookie names the probe;
 * its fetch program (probe-pack data from user space) says which argument
 * fields to read. Entry and return pair here, in the kernel, so a call costs
 * one ring-buffer record; calls in progress live in rt_slots (or, when
 * their slot is taken, rt_pending), which are also the table of open spans
 * user space reads at the window's edges.
 *
 * Records are packed (struct ev_rt_call: only the probe's values, the
 * payload after them). A paired call claims its slot first and is built
 * there in place, completed there at return and copied into the ring once;
 * one whose slot another holds is built in a per-CPU scratch value and
 * kept in rt_pending. An entry-only call is built in ring-buffer space.
 *
 * A device-memory call (its spec's mem.op set) is accounted where it
 * completes, in devmem_account.bpf.h's subprograms; every other probe
 * pays one branch for it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "acceltrace.bpf.h"
#include "devmem_account.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AT_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct rt_probe_spec);
} rt_specs SEC(".maps");

/* Calls in progress: a slot per hash of (thread, probe), claimed with a
 * compare-and-swap; user space reads and frees them through mmap. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, AT_CALL_SLOTS);
	__type(key, __u32);
	__type(value, struct rt_slot);
} rt_slots SEC(".maps");

/* Calls in progress whose slot another call holds. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rt_pending_key);
	__type(value, struct ev_rt_call);
} rt_pending SEC(".maps");

/* Hits per probe by traced processes: per CPU, so counting costs no shared
 * cache line. User space sums them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AT_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} rt_hits SEC(".maps");

/* Room for one block read past its last byte: an op of up to 8 bytes may
 * start at any offset below AT_FETCH_BLOCK_MAX. */
#define BLOCK_ROOM (AT_FETCH_BLOCK_MAX + 8)

/* Scratch space: a record is too big for the 512-byte BPF stack. */
struct rt_scratch {
	struct ev_rt_call rec;
	__u8 blocks[AT_MAX_FETCH_BLOCKS][BLOCK_ROOM];
	struct mem_call mem;	/* a memory call's accounting */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rt_scratch);
} rt_scratch SEC(".maps");

/* libbpf 1.1 stops at the fifth argument register; the sixth per arch. */
#ifndef PT_REGS_PARM6
#if defined(__TARGET_ARCH_x86)
#define PT_REGS_PARM6(x) (((const struct pt_regs *)(x))->r9)
#elif defined(__TARGET_ARCH_arm64)
#define PT_REGS_PARM6(x) (((const struct user_pt_regs *)(x))->regs[5])
#else
#define PT_REGS_PARM6(x) 0
#endif
#endif

static __always_inline int read_sized(__u64 *out, __u32 size, __u64 addr)
{
	*out = 0;
	switch (size) {
	case 1: return bpf_probe_read_user(out, 1, (void *)addr);
	case 2: return bpf_probe_read_user(out, 2, (void *)addr);
	case 4: return bpf_probe_read_user(out, 4, (void *)addr);
	default: return bpf_probe_read_user(out, 8, (void *)addr);
	}
}

/* A little-endian value of @size bytes at @p (inside a block buffer). */
static __always_inline __u64 load_sized(const __u8 *p, __u32 size)
{
	switch (size) {
	case 1: return *p;
	case 2: return *(const __u16 *)p;
	case 4: return *(const __u32 *)p;
	default: return *(const __u64 *)p;
	}
}

/* Block reads done (bit b: blocks[b] holds its bytes) and failed. */
struct block_state {
	__u32 done;
	__u32 failed;
};

/*
 * Op @op's value through its block, or false when the block could not be
 * read (the op is then read alone). The block is read on its first use,
 * when its base (perhaps an earlier op's value) is known.
 */
static __always_inline bool block_value(const struct rt_probe_spec *spec,
					const struct at_fetch_op *op,
					struct rt_scratch *s, struct block_state *bs,
					__u64 base, __u64 *val)
{
	__u32 b = (op->block - 1) & (AT_MAX_FETCH_BLOCKS - 1);
	const struct at_fetch_block *blk = &spec->blocks[b];
	__u32 bit = 1u << b, rel;

	if (!(bs->done & bit) && !(bs->failed & bit)) {
		__u32 len = blk->len;

		if (len > AT_FETCH_BLOCK_MAX)
			len = AT_FETCH_BLOCK_MAX;
		if (!bpf_probe_read_user(s->blocks[b], len, (void *)(base + blk->offset)))
			bs->done |= bit;
		else
			bs->failed |= bit;
	}
	if (!(bs->done & bit))
		return false;
	rel = (__u32)(op->offset - blk->offset) & (AT_FETCH_BLOCK_MAX - 1);
	*val = load_sized(&s->blocks[b][rel], op->size);
	return true;
}

/* The values a record of @spec holds: its ops', at most AT_MAX_FETCH_OPS
 * (the bound the verifier sees for the payload's place and the size). */
static __always_inline __u32 spec_vals(const struct rt_probe_spec *spec)
{
	__u32 n = spec->n_ops;

	return n > AT_MAX_FETCH_OPS ? AT_MAX_FETCH_OPS : n;
}


static __always_inline bool spec_small(const struct rt_probe_spec *spec)
{
	__u32 flags = 0;

	if (spec->n_ops > AT_RT_SMALL_VALS)
		return false;
	for (__u32 i = 0; i < AT_RT_SMALL_VALS; i++)
		if (i < spec->n_ops)
			flags |= spec->ops[i].flags;
	return !(flags & (FETCH_PAYLOAD_STR | FETCH_PAYLOAD_BYTES));
}

/*
 * Runs the ops of @spec whose FETCH_AT_RETURN flag equals @at_return,
 * storing op i's value in rec->vals[i]; at entry the others' values are
 * 0 (until the return runs them), at return they are left as they are.
 * A payload goes right after the values (packed record), n_vals set.
 * @max_ops (a power of two) and @payloads are constants: what @rec has
 * room for, which the verifier checks every store against.
 */
static __always_inline void run_fetch(struct pt_regs *ctx,
				      const struct rt_probe_spec *spec,
				      struct ev_rt_call *rec, struct rt_scratch *s,
				      bool at_return, const __u32 max_ops, const bool payloads)
{
	/*
	 * Registers are read at constant offsets first: the verifier refuses
	 * ctx pointer arithmetic, which a switch on the index compiles into.
	 */
	__u64 regs[8] = {
		PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx),
		PT_REGS_PARM4(ctx), PT_REGS_PARM5(ctx), PT_REGS_PARM6(ctx),
	};
	__u64 sp = PT_REGS_SP(ctx), rc = PT_REGS_RC(ctx);
	struct block_state bs = {};
	__u32 n_vals = spec_vals(spec);
	/* The payload's place in a packed record: past the values. */
	char *payload = (char *)rec->vals + n_vals * sizeof(rec->vals[0]);

	for (__u32 i = 0; i < max_ops; i++) {
		const struct at_fetch_op *op = &spec->ops[i];
		__u64 base = 0, val = 0;
		__u8 src = op->src;

		if (i >= spec->n_ops)
			break;
		if (!!(op->flags & FETCH_AT_RETURN) != at_return) {
			/* Records are not zeroed first (a slot or scratch
			 * holds an earlier call's): a return op's value is 0
			 * until it runs. */
			if (!at_return)
				rec->vals[i & (max_ops - 1)] = 0;
			continue;
		}
		if (src >= FETCH_ARG0 && src <= FETCH_ARG0 + 5)
			base = regs[(src - FETCH_ARG0) & 7];
		else if (src == FETCH_SP)
			base = sp;
		else if (src == FETCH_RET)
			base = rc;
		else if (src >= FETCH_VAL)
			base = rec->vals[(src - FETCH_VAL) & (max_ops - 1)];

		if (payloads && (op->flags & (FETCH_PAYLOAD_STR | FETCH_PAYLOAD_BYTES))) {
			long n;

			if (op->flags & FETCH_PAYLOAD_STR)
				n = bpf_probe_read_user_str(payload, AT_RT_PAYLOAD,
							    (void *)(base + op->offset));
			else
				n = bpf_probe_read_user(payload, AT_RT_PAYLOAD,
							(void *)(base + op->offset)) ?
					-1 : AT_RT_PAYLOAD;
			if (n < 0) {
				rec->fault_mask |= 1u << i;
				n = 0;
			}
			rec->payload_len = n;
			val = n;
		} else if (op->flags & FETCH_DEREF) {
			/* A NULL pointer is a value (no events asked for, say),
			 * not an unreadable argument. */
			if (base && !(op->block && block_value(spec, op, s, &bs, base, &val)) &&
			    read_sized(&val, op->size, base + op->offset)) {
				rec->fault_mask |= 1u << i;
				val = 0;
			}
		} else {
			val = base + op->offset;
		}
		rec->vals[i & (max_ops - 1)] = val;
	}
}

/*
 * A memory call (spec->mem.op set) completed: accounted, and the bytes and
 * in-use it found written into @rec's values the pack reserved for them.
 * @sp: the stack pointer now (entry or return). @max_ops: what @rec has
 * room for (a constant). Returns RT_F_MEM_* flags.
 */
static __always_inline __u32 mem_complete(const struct rt_probe_spec *spec,
					  struct ev_rt_call *rec, struct rt_scratch *s,
					  __u64 pid_tgid, __u64 ret, __u64 sp, const __u32 max_ops)
{
	struct mem_call *m = &s->mem;
	__u32 n = spec_vals(spec), i;

	for (i = 0; i < max_ops; i++)
		if (i < n)
			m->vals[i & (AT_MAX_FETCH_OPS - 1)] = rec->vals[i & (max_ops - 1)];
	m->n_vals = n < max_ops ? n : max_ops;
	m->pid = pid_tgid >> 32;
	m->tid = (__u32)pid_tgid;
	m->ts_ns = rec->h.start_ns;
	/* end_ns: taken at the return before this (the entry's for an
	 * entry-only call): before the caller could pass on what it made. */
	m->done_ns = rec->h.end_ns ? rec->h.end_ns : rec->h.start_ns;
	m->sp = sp;
	m->flags = 0;
	m->bytes = 0;
	m->in_use = 0;
	mem_account(&spec->mem, m, ret);
	i = spec->mem.out_bytes_val;
	if (i < m->n_vals)
		rec->vals[i & (max_ops - 1)] = m->bytes;
	i = spec->mem.out_in_use_val;
	if (i < m->n_vals)
		rec->vals[i & (max_ops - 1)] = m->in_use;
	return m->flags;
}

/* The slot a (thread, probe) hashes to, whoever holds it now. */
static __always_inline struct rt_slot *rt_slot_of(const struct rt_pending_key *key)
{
	__u32 idx = at_rt_slot_index(key->tid, key->probe_id, cfg_slot_mask);

	return bpf_map_lookup_elem(&rt_slots, &idx);
}

/* The call @key keeps, and its slot (NULL when it is in rt_pending); a
 * slot's record is being completed from here on. */
static __always_inline struct ev_rt_call *kept_call(const struct rt_pending_key *key,
						    struct rt_slot **slotp)
{
	__u64 skey = (__u64)key->tid << 32 | key->probe_id;
	struct rt_slot *slot = rt_slot_of(key);

	if (slot && slot->key == skey) {
		SLOT_BEGIN_RELEASE(slot);
		*slotp = slot;
		return &slot->rec;
	}
	*slotp = NULL;
	return HASH_KEPT(&rt_pending, key, rt_in_hash);
}

/* Ends the keeping, in the slot or the hash map. */
static __always_inline void forget_call(const struct rt_pending_key *key,
					struct rt_slot *slot)
{
	if (slot)
		SLOT_END_RELEASE(slot, key);
	else
		HASH_FORGET(&rt_pending, key, rt_in_hash);
}

/* Whole-host mode: a process calling into a runtime becomes traced (with
 * --cgroup, one inside that cgroup). */
static __always_inline bool adopt_caller(__u32 pid, const struct rt_probe_spec *spec)
{
	if (cfg_whole_host && (spec->flags & RT_SPEC_ADOPT) && may_adopt(pid)) {
		trace_pid(pid, TRACED_ADOPTED);
		return true;
	}
	return false;
}

/* Flags every record carries: whether detail was off when it was made. */
static __always_inline __u32 detail_flags(void)
{
	return detail_off ? RT_F_NO_DETAIL : 0;
}

/* A new record's head, at entry. */
static __always_inline void start_record(struct ev_rt_call *rec,
					 const struct rt_probe_spec *spec,
					 __u64 pid_tgid, __u32 probe_id, bool paired)
{
	rec->h.type = EV_RT_CALL;
	rec->h.cpu = bpf_get_smp_processor_id();
	fill_ids(&rec->h, pid_tgid);
	rec->h.start_ns = bpf_ktime_get_ns();
	rec->h.end_ns = paired ? 0 : rec->h.start_ns;
	rec->probe_id = probe_id;
	rec->ret = 0;
	rec->payload_len = 0;
	rec->n_vals = spec_vals(spec);
	rec->fault_mask = 0;
}

/*
 * An entry-only call: built where it is sent, in ring-buffer space, no
 * copy; packed, though a reserve takes only a constant size: the small
 * class (88 bytes), else the full struct. Every value the record holds
 * is written by run_fetch() (nothing is zeroed first).
 */
static __always_inline int entry_only(struct pt_regs *ctx, const struct rt_probe_spec *spec,
				      struct rt_scratch *s, __u64 pid_tgid, __u32 probe_id)
{
	struct ev_rt_call *rec;
	void *ring = NULL;
	__u32 mem_flags = 0;

	if (spec_small(spec)) {
		rec = reserve_record(&ring, RT_CALL_SIZE(AT_RT_SMALL_VALS, 0), EV_RT_CALL);
		if (!rec)
			return 0;
		start_record(rec, spec, pid_tgid, probe_id, false);
		run_fetch(ctx, spec, rec, s, false, AT_RT_SMALL_VALS, false);
		if (spec->mem.op)
			mem_flags = mem_complete(spec, rec, s, pid_tgid, 0, PT_REGS_SP(ctx),
						 AT_RT_SMALL_VALS);
	} else {
		rec = reserve_record(&ring, sizeof(*rec), EV_RT_CALL);
		if (!rec)
			return 0;
		start_record(rec, spec, pid_tgid, probe_id, false);
		run_fetch(ctx, spec, rec, s, false, AT_MAX_FETCH_OPS, true);
		if (spec->mem.op)
			mem_flags = mem_complete(spec, rec, s, pid_tgid, 0, PT_REGS_SP(ctx),
						 AT_MAX_FETCH_OPS);
	}
	if (rec->fault_mask)
		count_loss(LOSS_FETCH_FAULT);
	rec->flags = RT_F_NO_RETURN | (rec->fault_mask ? RT_F_FETCH_FAULT : 0) | detail_flags() |
		     mem_flags;
	if (spec->flags & RT_SPEC_URGENT)
		submit_record_now(rec, EV_RT_CALL);
	else
		submit_record(ring, rec, EV_RT_CALL);
	return 0;
}

static __always_inline int on_rt_entry(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32, probe_id, zero = 0;
	struct rt_pending_key key = { .tid = (__u32)pid_tgid };
	const struct rt_probe_spec *spec;
	struct rt_slot *slot;
	struct ev_rt_call *rec;
	bool traced = pid_traced(pid);
	struct rt_scratch *s;
	__u64 *hits;

	/* Untraced processes leave here, at the cost of one byte load;
	 * only whole-host mode looks further (it may adopt them). */
	if (!traced && !cfg_whole_host)
		return 0;
	probe_id = bpf_get_attach_cookie(ctx);
	spec = bpf_map_lookup_elem(&rt_specs, &probe_id);
	if (!spec || (!traced && !adopt_caller(pid, spec)))
		return 0;
	hits = bpf_map_lookup_elem(&rt_hits, &probe_id);
	if (hits)
		(*hits)++;
	s = bpf_map_lookup_elem(&rt_scratch, &zero);
	if (!s)
		return 0;
	if (!(spec->flags & RT_SPEC_RETURN))
		return entry_only(ctx, spec, s, pid_tgid, probe_id);

	/* Paired: the slot is claimed first and written once, in place; its
	 * seq is odd (readers skip it) until the record is whole. A call
	 * whose slot another holds is built in scratch and kept in
	 * rt_pending. */
	key.probe_id = probe_id;
	slot = rt_slot_of(&key);
	if (SLOT_CLAIM(slot, key, (__u64)key.tid << 32 | probe_id)) {
		__sync_fetch_and_add(&slot->seq, 1);
		rec = &slot->rec;
	} else {
		slot = NULL;
		rec = &s->rec;
	}
	start_record(rec, spec, pid_tgid, probe_id, true);
	run_fetch(ctx, spec, rec, s, false, AT_MAX_FETCH_OPS, true);
	if (rec->fault_mask)
		count_loss(LOSS_FETCH_FAULT);
	rec->flags = 0;
	/* An outer layer's memory call: the driver calls it makes are its. */
	if (spec->mem.op && (spec->mem.flags & MEM_F_OUTER))
		mem_outer_enter(key.tid, PT_REGS_SP(ctx));
	if (slot) {
		__sync_fetch_and_add(&slot->seq, 1);
		/* An older call of this (thread, probe) whose return was never
		 * seen would read as open forever. */
		HASH_FORGET(&rt_pending, &key, rt_in_hash);
		return 0;
	}
	HASH_KEEP(&rt_pending, &key, rec, rt_in_hash);
	return 0;
}

/*
 * Sends the finished call @rec (a slot's or rt_pending's): reserved at a
 * constant size (the small class when it fits, else the full struct) and
 * copied once, which measured cheaper than bpf_ringbuf_output() of the
 * packed bytes.
 */
static __always_inline void send_call(struct ev_rt_call *rec, bool urgent)
{
	struct ev_rt_call *dst;
	void *ring = NULL;

	rec->h.cpu = bpf_get_smp_processor_id();
	if (rec->n_vals <= AT_RT_SMALL_VALS && !rec->payload_len) {
		dst = reserve_record(&ring, RT_CALL_SIZE(AT_RT_SMALL_VALS, 0), EV_RT_CALL);
		if (!dst)
			return;
		__builtin_memcpy(dst, rec, RT_CALL_SIZE(AT_RT_SMALL_VALS, 0));
	} else {
		dst = reserve_record(&ring, sizeof(*dst), EV_RT_CALL);
		if (!dst)
			return;
		__builtin_memcpy(dst, rec, sizeof(*dst));
	}
	if (urgent)
		submit_record_now(dst, EV_RT_CALL);
	else
		submit_record(ring, dst, EV_RT_CALL);
}

/*
 * @detail: a detail probe's return, whose entry the switch may have turned
 * away: a return without its entry is then no loss.
 */
static __always_inline int on_rt_return(struct pt_regs *ctx, bool detail)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	/* Read ctx at a constant offset here: later, clang may fold it into
	 * pointer arithmetic on ctx, which the verifier refuses. */
	__u64 rc = PT_REGS_RC(ctx), sp = PT_REGS_SP(ctx), now;
	struct rt_pending_key key = { .tid = (__u32)pid_tgid };
	const struct rt_probe_spec *spec;
	struct rt_slot *slot;
	struct ev_rt_call *rec;
	struct rt_scratch *s;
	__u32 before, zero = 0;

	/* Every process mapping the library hits this; only traced ones have
	 * calls kept (whole-host mode adopts a process at entry), and the
	 * others leave before the clock and the cookie are read. */
	if (!pid_traced(pid_tgid >> 32))
		return 0;
	now = bpf_ktime_get_ns();
	key.probe_id = bpf_get_attach_cookie(ctx);
	rec = kept_call(&key, &slot);
	if (!rec) {
		/* Entered before the probes existed, or the entry was lost
		 * (or, for detail, turned away by the switch). */
		if (!detail)
			count_loss(LOSS_RETURN_UNMATCHED);
		return 0;
	}
	spec = bpf_map_lookup_elem(&rt_specs, &key.probe_id);
	s = bpf_map_lookup_elem(&rt_scratch, &zero);
	if (!spec || !s) {
		forget_call(&key, slot);
		return 0;
	}
	before = rec->fault_mask;
	run_fetch(ctx, spec, rec, s, true, AT_MAX_FETCH_OPS, true);
	if (rec->fault_mask != before)
		count_loss(LOSS_FETCH_FAULT);
	rec->h.end_ns = now;
	rec->ret = rc;
	rec->flags = (rec->fault_mask ? RT_F_FETCH_FAULT : 0) | detail_flags();
	if (spec->mem.op) {
		if (spec->mem.flags & MEM_F_OUTER)
			mem_outer_leave(key.tid, sp);
		rec->flags |= mem_complete(spec, rec, s, pid_tgid, rc, sp, AT_MAX_FETCH_OPS);
	}
	send_call(rec, spec->flags & RT_SPEC_URGENT);
	forget_call(&key, slot);
	return 0;
}

/* ---- the programs: core probes, and detail probes behind the switch ----- */

SEC("uprobe")
int BPF_KPROBE(rt_entry)
{
	return on_rt_entry(ctx);
}

SEC("uretprobe")
int BPF_KRETPROBE(rt_return)
{
	return on_rt_return(ctx, false);
}

/* A detail probe asks the switch first: turned away, it costs a load, and
 * a traced process's skipped-hit count. */
SEC("uprobe")
int BPF_KPROBE(rt_entry_detail)
{
	if (detail_off) {
		__u32 pid = bpf_get_current_pid_tgid() >> 32;

		if (pid_traced(pid))
			agg_add(pid, AGG_DETAIL_SKIPPED, 1);
		return 0;
	}
	return on_rt_entry(ctx);
}

/* The return still looks for a call its entry kept while the switch was
 * on (an array slot), so that no call stays open. */
SEC("uretprobe")
int BPF_KRETPROBE(rt_return_detail)
{
	return on_rt_return(ctx, true);
}
