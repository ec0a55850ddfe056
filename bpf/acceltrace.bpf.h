/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every acceltrace BPF file shares: configuration (read-only data set
 * between open and load), the maps (declared __weak here so the BPF linker
 * merges them into one), loss counters, and the helpers that decide whether
 * an event is ours and put it in a ring buffer.
 */
#ifndef ACCELTRACE_BPF_H
#define ACCELTRACE_BPF_H

#include "acceltrace/events.h"

/* ---- configuration: defined in acceltrace.bpf.c ------------------------ */

/* Whole-host mode: processes become traced when they use a runtime. */
extern const volatile __u32 cfg_whole_host;
/* Children of traced processes become traced (--children). */
extern const volatile __u32 cfg_children;
/* CPUs per ring buffer shard (>= 1). */
extern const volatile __u32 cfg_cpus_per_ring;
extern const volatile __u32 cfg_nr_rings;
/* Wake the consumer only when a shard holds at least this many bytes. */
extern const volatile __u64 cfg_wakeup_bytes;
/* The collector's own tgid: never traced, even in whole-host mode. */
extern const volatile __u32 cfg_self_pid;

extern __u64 losses[LOSS_KIND_MAX];
extern __u64 events_emitted[EV_TYPE_MAX];

/* ---- maps ---------------------------------------------------------------- */

/* Template for the ring buffer shards; user space sizes and creates them. */
struct ring_shard {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, AT_MAX_RINGS);
	__type(key, __u32);
	__array(values, struct ring_shard);
} rings SEC(".maps") __weak;

/* The traced-process set: tgid -> enum traced_flags. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} traced_pids SEC(".maps") __weak;

/* Device-node and eventfd fds of traced processes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct fd_key);
	__type(value, __u32);	/* enum fd_kind */
} fd_kinds SEC(".maps") __weak;

/* ---- helpers ------------------------------------------------------------- */

static __always_inline void count_loss(enum loss_kind kind)
{
	if (kind < LOSS_KIND_MAX)
		__sync_fetch_and_add(&losses[kind], 1);
}

static __always_inline bool pid_traced(__u32 pid)
{
	__u32 traced = bpf_map_lookup_elem(&traced_pids, &pid) != NULL;

	/* A scalar from here on: clang would otherwise OR two lookups'
	 * pointers together (pt || nt), which the verifier refuses. */
	asm volatile("" : "+r"(traced));
	return traced;
}

/* Adds a process to the traced set (whole-host adoption, children). */
static __always_inline void trace_pid(__u32 pid, __u32 flags)
{
	if (pid == cfg_self_pid)
		return;
	if (bpf_map_update_elem(&traced_pids, &pid, &flags, BPF_NOEXIST) &&
	    !pid_traced(pid))
		count_loss(LOSS_TRACED_FULL);
}

/* The ring buffer shard for this CPU. */
static __always_inline void *ring_for_cpu(__u32 cpu)
{
	__u32 per = cfg_cpus_per_ring ? cfg_cpus_per_ring : 1;
	__u32 idx = cpu / per;

	if (cfg_nr_rings && idx >= cfg_nr_rings)
		idx %= cfg_nr_rings;
	return bpf_map_lookup_elem(&rings, &idx);
}

/*
 * Reserves a record of @size bytes with its header filled, or NULL (and the
 * loss counted). @ring_out receives the shard for submit_record().
 */
static __always_inline void *reserve_record(void **ring_out, __u64 size,
					    enum ev_type type)
{
	__u32 cpu = bpf_get_smp_processor_id();
	void *ring = ring_for_cpu(cpu);
	struct ev_header *h;

	if (!ring) {
		count_loss(LOSS_RINGBUF_FULL);
		return NULL;
	}
	h = bpf_ringbuf_reserve(ring, size, 0);
	if (!h) {
		count_loss(LOSS_RINGBUF_FULL);
		return NULL;
	}
	h->type = type;
	h->cpu = cpu;
	*ring_out = ring;
	return h;
}

/*
 * Commits a record, waking the consumer only when enough has piled up:
 * a wakeup per record caps throughput near 1 M/s; the consumer also polls
 * on a short timer, so nothing waits long.
 */
static __always_inline void submit_record(void *ring, void *rec, enum ev_type type)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) >= cfg_wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	if (type < EV_TYPE_MAX)
		__sync_fetch_and_add(&events_emitted[type], 1);
	bpf_ringbuf_submit(rec, flags);
}

static __always_inline void fill_ids(struct ev_header *h, __u64 pid_tgid)
{
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
}

#endif /* ACCELTRACE_BPF_H */
