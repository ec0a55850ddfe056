/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records of the feature-probing BPF object: each program, when it fires for
 * the probing process, sends one of these through the ring buffer so that
 * user space sees the mechanism work end to end (attach, fire, deliver).
 */
#ifndef ACCELTRACE_FEATURE_PROBE_H
#define ACCELTRACE_FEATURE_PROBE_H

enum fp_kind {
	FP_UPROBE = 1,
	FP_SYSCALL_TP = 2,
	FP_RAW_TP = 3,
	FP_TP_BTF = 4,
	FP_FENTRY = 5,
	FP_KPROBE = 6,
	FP_KIND_MAX = 7,
};

struct fp_record {
	__u32 type;		/* enum fp_kind */
	__u32 tid;
	__u32 tgid;
	__u32 cpu;
	__u64 ts_ns;		/* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 seq;		/* per-kind hit number, from 1 */
};

#endif /* ACCELTRACE_FEATURE_PROBE_H */
