// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Runtime-library calls (PJRT, TPU C API, libcuda, tf.data): one uprobe body
 * and one uretprobe body for every probe. The attach cookie names the probe;
 * its fetch program (probe-pack data from user space) says which argument
 * fields to read. Entry and return pair here, in the kernel, so a call costs
 * one ring-buffer record; calls in progress live in rt_pending, which is also
 * the table of open spans user space reads at the window's edges.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "acceltrace.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AT_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct rt_probe_spec);
} rt_specs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct rt_pending_key);
	__type(value, struct rt_pending);
} rt_pending SEC(".maps");

/* Hits per probe, before any filtering: per CPU, so counting costs no
 * shared cache line. User space sums them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, AT_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} rt_hits SEC(".maps");

/* Scratch space: an rt_pending is too big for the 512-byte BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rt_pending);
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

/*
 * Runs the ops of @spec whose FETCH_AT_RETURN flag equals @at_return,
 * storing op i's value in p->vals[i].
 */
static __always_inline void run_fetch(struct pt_regs *ctx,
				      const struct rt_probe_spec *spec,
				      struct rt_pending *p, bool at_return)
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

	for (__u32 i = 0; i < AT_MAX_FETCH_OPS; i++) {
		const struct at_fetch_op *op = &spec->ops[i];
		__u64 base = 0, val = 0;
		__u8 src = op->src;

		if (i >= spec->n_ops)
			break;
		if (!!(op->flags & FETCH_AT_RETURN) != at_return)
			continue;
		if (src >= FETCH_ARG0 && src <= FETCH_ARG0 + 5)
			base = regs[(src - FETCH_ARG0) & 7];
		else if (src == FETCH_SP)
			base = sp;
		else if (src == FETCH_RET)
			base = rc;
		else if (src >= FETCH_VAL)
			base = p->vals[(src - FETCH_VAL) & (AT_MAX_FETCH_OPS - 1)];

		if (op->flags & (FETCH_PAYLOAD_STR | FETCH_PAYLOAD_BYTES)) {
			long n;

			if (op->flags & FETCH_PAYLOAD_STR)
				n = bpf_probe_read_user_str(p->payload, AT_RT_PAYLOAD,
							    (void *)(base + op->offset));
			else
				n = bpf_probe_read_user(p->payload, AT_RT_PAYLOAD,
							(void *)(base + op->offset)) ?
					-1 : AT_RT_PAYLOAD;
			if (n < 0) {
				p->fault_mask |= 1u << i;
				n = 0;
			}
			p->payload_len = n;
			val = n;
		} else if (op->flags & FETCH_DEREF) {
			/* A NULL pointer is a value (no events asked for, say),
			 * not an unreadable argument. */
			if (base && read_sized(&val, op->size, base + op->offset)) {
				p->fault_mask |= 1u << i;
				val = 0;
			}
		} else {
			val = base + op->offset;
		}
		p->vals[i & (AT_MAX_FETCH_OPS - 1)] = val;
	}
}

/* Is this call one we trace? Whole-host mode adopts runtime users. */
static __always_inline bool rt_caller_traced(__u32 pid, const struct rt_probe_spec *spec)
{
	if (pid_traced(pid))
		return true;
	if (cfg_whole_host && (spec->flags & RT_SPEC_ADOPT) && pid != cfg_self_pid) {
		trace_pid(pid, TRACED_ADOPTED);
		return true;
	}
	return false;
}

static __always_inline void emit_call(struct rt_pending *p, __u32 probe_id,
				      __u64 pid_tgid, __u64 end_ns, __u64 ret,
				      __u32 flags, bool urgent)
{
	struct ev_rt_call *rec;
	void *ring;

	rec = reserve_record(&ring, sizeof(*rec), EV_RT_CALL);
	if (!rec)
		return;
	fill_ids(&rec->h, pid_tgid);
	rec->h.start_ns = p->start_ns;
	rec->h.end_ns = end_ns;
	rec->probe_id = probe_id;
	rec->flags = flags | (p->fault_mask ? RT_F_FETCH_FAULT : 0);
	rec->ret = ret;
	rec->fault_mask = p->fault_mask;
	rec->payload_len = p->payload_len;
	__builtin_memcpy(rec->vals, p->vals, sizeof(rec->vals));
	__builtin_memcpy(rec->payload, p->payload, sizeof(rec->payload));
	if (urgent) {
		__sync_fetch_and_add(&events_emitted[EV_RT_CALL], 1);
		bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
		return;
	}
	submit_record(ring, rec, EV_RT_CALL);
}

SEC("uprobe")
int BPF_KPROBE(rt_entry)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 probe_id = bpf_get_attach_cookie(ctx);
	const struct rt_probe_spec *spec;
	struct rt_pending *p;
	__u32 zero = 0;
	__u64 *hits;

	hits = bpf_map_lookup_elem(&rt_hits, &probe_id);
	if (hits)
		(*hits)++;
	spec = bpf_map_lookup_elem(&rt_specs, &probe_id);
	if (!spec || !rt_caller_traced(pid_tgid >> 32, spec))
		return 0;
	p = bpf_map_lookup_elem(&rt_scratch, &zero);
	if (!p)
		return 0;
	p->start_ns = bpf_ktime_get_ns();
	p->pid = pid_tgid >> 32;
	p->cpu = bpf_get_smp_processor_id();
	p->payload_len = 0;
	p->fault_mask = 0;
	__builtin_memset(p->vals, 0, sizeof(p->vals));
	run_fetch(ctx, spec, p, false);
	if (p->fault_mask)
		count_loss(LOSS_FETCH_FAULT);

	if (!(spec->flags & RT_SPEC_RETURN)) {
		emit_call(p, probe_id, pid_tgid, p->start_ns, 0, RT_F_NO_RETURN,
			  spec->flags & RT_SPEC_URGENT);
		return 0;
	}
	{
		struct rt_pending_key key = { .tid = (__u32)pid_tgid, .probe_id = probe_id };

		if (bpf_map_update_elem(&rt_pending, &key, p, BPF_ANY))
			count_loss(LOSS_PENDING_FULL);
	}
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(rt_return)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct rt_pending_key key = {
		.tid = (__u32)pid_tgid,
		.probe_id = bpf_get_attach_cookie(ctx),
	};
	const struct rt_probe_spec *spec;
	struct rt_pending *p;
	__u64 now = bpf_ktime_get_ns();
	/* Read ctx at a constant offset here: later, clang may fold it into
	 * pointer arithmetic on ctx, which the verifier refuses. */
	__u64 rc = PT_REGS_RC(ctx);
	__u32 before;

	p = bpf_map_lookup_elem(&rt_pending, &key);
	if (!p) {
		/* Entered before the probes existed, or the entry was lost. */
		if (pid_traced(pid_tgid >> 32))
			count_loss(LOSS_RETURN_UNMATCHED);
		return 0;
	}
	spec = bpf_map_lookup_elem(&rt_specs, &key.probe_id);
	if (spec) {
		before = p->fault_mask;
		run_fetch(ctx, spec, p, true);
		if (p->fault_mask != before)
			count_loss(LOSS_FETCH_FAULT);
	}
	emit_call(p, key.probe_id, pid_tgid, now, rc, 0,
		  spec && (spec->flags & RT_SPEC_URGENT));
	bpf_map_delete_elem(&rt_pending, &key);
	return 0;
}
