// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One small program per probe mechanism. User space enables one at a time
 * (autoload), attaches it, triggers it from its own process and checks what
 * arrives in the ring buffer: a mechanism is "available" only when that whole
 * path works on the running kernel.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "acceltrace/feature_probe.h"

/* Set before load: only the probing process counts. */
const volatile __u32 target_tgid;
/* getppid's syscall number, for the programs that see every syscall. */
const volatile __u64 trigger_syscall_nr;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} fp_events SEC(".maps");

__u64 hits[FP_KIND_MAX];
__u64 ringbuf_drops;

static __always_inline void emit(enum fp_kind kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct fp_record *rec;
	__u64 seq;

	if ((id >> 32) != target_tgid)
		return;
	seq = __sync_fetch_and_add(&hits[kind], 1) + 1;
	rec = bpf_ringbuf_reserve(&fp_events, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&ringbuf_drops, 1);
		return;
	}
	rec->type = kind;
	rec->tid = (__u32)id;
	rec->tgid = id >> 32;
	rec->cpu = bpf_get_smp_processor_id();
	rec->ts_ns = bpf_ktime_get_ns();
	rec->seq = seq;
	bpf_ringbuf_submit(rec, 0);
}

SEC("uprobe")
int BPF_KPROBE(fp_uprobe)
{
	emit(FP_UPROBE);
	return 0;
}

SEC("tp/syscalls/sys_enter_getppid")
int fp_syscall_tp(void *ctx)
{
	emit(FP_SYSCALL_TP);
	return 0;
}

SEC("raw_tp/sys_enter")
int fp_raw_tp(struct bpf_raw_tracepoint_args *ctx)
{
	if (ctx->args[1] == trigger_syscall_nr)
		emit(FP_RAW_TP);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(fp_tp_btf, struct pt_regs *regs, long id)
{
	if ((__u64)id == trigger_syscall_nr)
		emit(FP_TP_BTF);
	return 0;
}

SEC("fentry/__do_sys_getppid")
int BPF_PROG(fp_fentry)
{
	emit(FP_FENTRY);
	return 0;
}

SEC("kprobe/__do_sys_getppid")
int BPF_KPROBE(fp_kprobe)
{
	emit(FP_KPROBE);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
