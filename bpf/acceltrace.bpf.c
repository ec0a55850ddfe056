// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The definitions behind acceltrace.bpf.h: configuration set by user space
 * between open and load, and the loss and emit counters user space reports.
 * The probe programs live in runtime.bpf.c, syscalls.bpf.c, task.bpf.c and
 * irq.bpf.c; the Makefile links them into one object and one skeleton.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "acceltrace.bpf.h"

const volatile __u32 cfg_whole_host;
const volatile __u32 cfg_children;
const volatile __u32 cfg_cgroup_scoped;
const volatile __u32 cfg_cpus_per_ring = 4;
const volatile __u32 cfg_nr_rings = 1;
const volatile __u64 cfg_wakeup_bytes = 64 * 1024;
const volatile __u32 cfg_self_pid;
const volatile __u32 cfg_slot_mask = AT_CALL_SLOTS - 1;
const volatile __u32 cfg_mem_live_proc_max = AT_MEM_LIVE_PROC_MAX;

volatile __u32 detail_off;
volatile __u64 detail_on_ns;

__u64 rt_in_hash, sys_in_hash;
__u64 mem_thread_in_hash, mem_outer_in_hash;

char LICENSE[] SEC("license") = "Dual BSD/GPL";
