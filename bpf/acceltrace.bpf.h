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
/* Adoption only inside the cgroup in scope_cgroup (the daemon's --cgroup). */
extern const volatile __u32 cfg_cgroup_scoped;
/* CPUs per ring buffer shard (>= 1). */
extern const volatile __u32 cfg_cpus_per_ring;
extern const volatile __u32 cfg_nr_rings;
/* Wake the consumer only when a shard holds at least this many bytes. */
extern const volatile __u64 cfg_wakeup_bytes;
/* The collector's own tgid: never traced, even in whole-host mode. */
extern const volatile __u32 cfg_self_pid;
/* Slots for calls in progress, less one (sys_slots, rt_slots). */
extern const volatile __u32 cfg_slot_mask;

/*
 * The detail switch (.bss, written by user space through its mmap): 0
 * records everything (record's default); nonzero turns detail probes
 * (RT_SPEC_DETAIL uprobes, file reads and ioctls, sched, irqs) away at
 * their first test, while core ones (Execute, task lifecycle, opens,
 * mappings) and the per-process aggregates go on.
 */
extern volatile __u32 detail_off;
/*
 * When the switch last turned on (bpf_ktime_get_ns()'s clock), written
 * before detail_off clears: a read or ioctl entered before it has lost its
 * exit tracepoint meanwhile (detached between the daemon's slices).
 */
extern volatile __u64 detail_on_ns;

/* Calls kept in the hash maps (their slot was taken), or more: while
 * zero, a call that takes its slot need not look for a stale entry of
 * its own there. */
extern __u64 rt_in_hash, sys_in_hash;

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

/*
 * The daemon's --cgroup: one cgroup v2 directory, set by user space after
 * load and before any program attaches. Whole-host adoption asks it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} scope_cgroup SEC(".maps") __weak;

/*
 * The traced-process set: a byte per tgid (enum traced_flags; 0: not
 * traced). Every probe asks this first, most of them about processes that
 * are not traced; an array element and a byte load answer in a few
 * nanoseconds where a hash lookup took tens. Byte stores need no atomics, so
 * user space (through mmap) and BPF write it alike.
 */
struct pid_chunk {
	__u8 flags[AT_PID_CHUNK];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, AT_PID_SPACE / AT_PID_CHUNK);
	__type(key, __u32);
	__type(value, struct pid_chunk);
} traced_table SEC(".maps") __weak;

/* Syscalls in progress, a slot per tid modulo their number (struct
 * sys_slot; user space may size the map down): written by syscalls.bpf.c,
 * freed by task.bpf.c when a thread dies in one, read by user space
 * through mmap. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, AT_CALL_SLOTS);
	__type(key, __u32);
	__type(value, struct sys_slot);
} sys_slots SEC(".maps") __weak;

/* Syscalls in progress whose thread's slot another thread holds. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct ev_syscall);
} sys_pending SEC(".maps") __weak;

/* Device-node and eventfd fds of traced processes. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct fd_key);
	__type(value, __u32);	/* enum fd_kind */
} fd_kinds SEC(".maps") __weak;

/* Per-process aggregates (enum agg_counter), per CPU so that counting
 * shares no cache line; user space sums the CPUs and deletes a process's
 * entry when it exits. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, AT_MAX_AGG_PROCS);
	__type(key, __u32);
	__type(value, struct at_proc_agg);
} proc_aggs SEC(".maps") __weak;

/*
 * Losses and records emitted, per CPU: an atomic add on a counter every CPU
 * shares cost each record a locked instruction and a contended cache line;
 * this CPU's copy is a plain add. User space sums the CPUs
 * (probe_session__losses(), probe_session__emitted()).
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct at_counters);
} counters SEC(".maps") __weak;

/* ---- helpers ------------------------------------------------------------- */

static __always_inline struct at_counters *my_counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&counters, &zero);
}

static __always_inline void count_loss(enum loss_kind kind)
{
	struct at_counters *c = my_counters();

	if (c && kind < LOSS_KIND_MAX)
		c->losses[kind]++;
}

static __always_inline void count_emitted(enum ev_type type)
{
	struct at_counters *c = my_counters();

	if (c && type < EV_TYPE_MAX)
		c->emitted[type]++;
}

/* @pid's aggregates (this CPU's copy), made on first use; NULL and a
 * counted loss when the table is full. */
static __always_inline struct at_proc_agg *agg_of(__u32 pid)
{
	struct at_proc_agg *a = bpf_map_lookup_elem(&proc_aggs, &pid), zero = {};

	if (a)
		return a;
	/* BPF_NOEXIST: another CPU may have made it meanwhile (-EEXIST). */
	bpf_map_update_elem(&proc_aggs, &pid, &zero, BPF_NOEXIST);
	a = bpf_map_lookup_elem(&proc_aggs, &pid);
	if (!a)
		count_loss(LOSS_AGG_FULL);
	return a;
}

/* Adds @n to @pid's aggregate @counter: this CPU's copy, no atomics. */
static __always_inline void agg_add(__u32 pid, __u32 counter, __u64 n)
{
	struct at_proc_agg *a = agg_of(pid);

	if (a && counter < AGG_MAX)
		a->v[counter] += n;
}

/* @pid's byte in the traced-process table, or NULL past its end. */
static __always_inline __u8 *traced_slot(__u32 pid)
{
	__u32 chunk = pid / AT_PID_CHUNK;
	struct pid_chunk *c = bpf_map_lookup_elem(&traced_table, &chunk);

	return c ? &c->flags[pid & (AT_PID_CHUNK - 1)] : NULL;
}

static __always_inline bool pid_traced(__u32 pid)
{
	__u8 *slot = traced_slot(pid);
	__u32 traced = slot && *slot;

	/* A scalar from here on: clang would otherwise OR two lookups'
	 * pointers together (pt || nt), which the verifier refuses. */
	asm volatile("" : "+r"(traced));
	return traced;
}

/*
 * May whole-host mode adopt the current task? Not acceltrace itself, and
 * with --cgroup only a task inside that cgroup's subtree (an empty map
 * answers an error: nobody).
 */
static __always_inline bool may_adopt(__u32 pid)
{
	if (pid == cfg_self_pid)
		return false;
	return !cfg_cgroup_scoped || bpf_current_task_under_cgroup(&scope_cgroup, 0) == 1;
}

/* Adds a process to the traced set (whole-host adoption, children). */
static __always_inline void trace_pid(__u32 pid, __u8 flags)
{
	__u8 *slot;

	if (pid == cfg_self_pid)
		return;
	slot = traced_slot(pid);
	if (!slot)
		count_loss(LOSS_TRACED_FULL);
	else if (!*slot)
		*slot = flags;
}

/* Takes a process out of the traced set (it exited: its pid may be reused). */
static __always_inline void untrace_pid(__u32 pid)
{
	__u8 *slot = traced_slot(pid);

	if (slot)
		*slot = 0;
}

/* The slot of @tid's syscalls, whoever holds it now. */
static __always_inline struct sys_slot *sys_slot_of(__u32 tid)
{
	__u32 idx = tid & cfg_slot_mask;

	return bpf_map_lookup_elem(&sys_slots, &idx);
}

/*
 * Calls in progress, syscalls (sys_slots, sys_pending) and runtime calls
 * (rt_slots, rt_pending) alike: a slot (struct sys_slot, struct rt_slot)
 * whose @owner_field is the tid or (tid, probe) key, or a hash-map entry
 * counted in @in_hash. Atomic operations are full barriers, so user space
 * never takes a record half written.
 */

/* Whether @slot is now @owner's: it was free, or its own already (left by
 * a call whose return never came). */
#define SLOT_CLAIM(slot, owner_field, owner)					\
	((slot) && ((slot)->owner_field == (owner) ||				\
		    __sync_val_compare_and_swap(&(slot)->owner_field, 0, (owner)) == 0))

/* Copies @src (@size bytes) into a slot just claimed, its seq odd meanwhile. */
#define SLOT_FILL(slot, src, size) do {					\
	__sync_fetch_and_add(&(slot)->seq, 1);				\
	__builtin_memcpy(&(slot)->rec, (src), (size));			\
	__sync_fetch_and_add(&(slot)->seq, 1);				\
} while (0)

/* Before a kept call's record is completed in its slot: readers skip it
 * from here on. */
#define SLOT_BEGIN_RELEASE(slot) __sync_fetch_and_add(&(slot)->seq, 1)

/* Gives the slot back: its record loses its start, the slot its owner. */
#define SLOT_END_RELEASE(slot, owner_field) do {			\
	(slot)->rec.h.start_ns = 0;					\
	__sync_lock_test_and_set(&(slot)->owner_field, 0);		\
	__sync_fetch_and_add(&(slot)->seq, 1);				\
} while (0)

/* Keeps @rec under @key in a hash map (its slot being taken); a new entry
 * is counted, one replaced (its return never came) is not. */
#define HASH_KEEP(map, key, rec, in_hash) do {				\
	if (!bpf_map_update_elem(map, key, rec, BPF_NOEXIST))		\
		__sync_fetch_and_add(&(in_hash), 1);			\
	else if (bpf_map_update_elem(map, key, rec, BPF_EXIST))		\
		count_loss(LOSS_PENDING_FULL);				\
} while (0)

/* The call kept under @key in a hash map, or NULL; no lookup while the
 * map holds none. */
#define HASH_KEPT(map, key, in_hash)					\
	((in_hash) ? bpf_map_lookup_elem(map, key) : NULL)

/* Forgets the call kept under @key in a hash map, if there is one. */
#define HASH_FORGET(map, key, in_hash) do {				\
	if ((in_hash) && !bpf_map_delete_elem(map, key))		\
		__sync_fetch_and_add(&(in_hash), -1);			\
} while (0)

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
	count_emitted(type);
	bpf_ringbuf_submit(rec, flags);
}

/* Commits a record the consumer must see at once (GetPjrtApi: user space
 * probes the table it returns before the runtime uses it). */
static __always_inline void submit_record_now(void *rec, enum ev_type type)
{
	count_emitted(type);
	bpf_ringbuf_submit(rec, BPF_RB_FORCE_WAKEUP);
}

static __always_inline void fill_ids(struct ev_header *h, __u64 pid_tgid)
{
	h->pid = pid_tgid >> 32;
	h->tid = (__u32)pid_tgid;
}

#endif /* ACCELTRACE_BPF_H */
