/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Device memory kept in the kernel (include/acceltrace/events.h, "device
 * memory"): the maps runtime.bpf.c's memory calls update and user space
 * samples (probe/probe_mem.c). Declared __weak, as acceltrace.bpf.h's maps:
 * runtime.bpf.c updates them, task.bpf.c drops a thread's entries at exit.
 */
#ifndef ACCELTRACE_DEVMEM_BPF_H
#define ACCELTRACE_DEVMEM_BPF_H

#include "acceltrace/events.h"

/* Live allocations of every traced process: a free finds its size here.
 * Not preallocated: a host's processes rarely hold more than thousands,
 * and a million preallocated entries would cost ~110 MB of kernel memory
 * on every host, where this costs its buckets (16 MiB) and the entries in
 * use (user space may size it: probe_session_opts). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, AT_MEM_LIVE_MAX);
	__type(key, struct at_mem_live_key);
	__type(value, struct at_mem_live);
} mem_live SEC(".maps") __weak;

/* Each process's count of mem_live entries, against its cap
 * (cfg_mem_live_proc_max). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AT_MEM_AGG_MAX);
	__type(key, __u32);
	__type(value, struct at_mem_proc);
} mem_proc SEC(".maps") __weak;

/* Entries of mem_thread_dev and mem_outer, or more: every thread of the
 * host leaves through task.bpf.c's exit, which looks them up only while
 * some are held (HASH_FORGET). Counted in by mem_thread_put. */
extern __u64 mem_thread_in_hash, mem_outer_in_hash;

/* Most mem_live entries one process may hold (AT_MEM_LIVE_PROC_MAX). */
extern const volatile __u32 cfg_mem_live_proc_max;

/* Per (pid, layer, device): in use, peak, counts. One shared copy, not per
 * CPU: the peak needs the sum at the moment it is reached. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AT_MEM_AGG_MAX);
	__type(key, struct at_mem_agg_key);
	__type(value, struct at_mem_agg);
} mem_agg SEC(".maps") __weak;

/* A thread's current device (MEM_OP_SET_DEVICE, MEM_OP_SET_CTX), by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AT_MEM_THREAD_MAX);
	__type(key, __u32);
	__type(value, __u64);
} mem_thread_dev SEC(".maps") __weak;

/* Which device a context is (MEM_OP_CTX_DEVICE): key (pid, context). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct at_mem_live_key);
	__type(value, __u64);
} mem_ctx_dev SEC(".maps") __weak;

/* Threads inside an outer layer's memory call (MEM_F_OUTER), by tid: the
 * stack pointer at its entry (a mark whose return was missed is known
 * stale by it: devmem_account.bpf.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, AT_MEM_THREAD_MAX);
	__type(key, __u32);
	__type(value, __u64);
} mem_outer SEC(".maps") __weak;

#endif /* ACCELTRACE_DEVMEM_BPF_H */
