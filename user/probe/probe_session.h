/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel side of one acceltrace run: the BPF object (loaded with the
 * attach flavours this kernel supports), its ring-buffer shards, the traced
 * set, the fd and irq tables, and every probe attached. One lifecycle:
 * probe_session__open() -> attach_kernel() -> add targets and runtime probes
 * -> poll() ... -> probe_session__free().
 */
#ifndef ACCELTRACE_PROBE_SESSION_H
#define ACCELTRACE_PROBE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "acceltrace/events.h"
#include "probe/kernel_features.h"

struct probe_session;

struct probe_session_opts {
	size_t sz;
	/* Kernel features, already probed (mechanisms are chosen from them). */
	const struct features *features;
	bool whole_host;	/* -a: adopt processes that use a runtime */
	bool children;		/* --children: descendants of traced processes */
	bool sched_switch;	/* on/off-CPU records for traced threads */
	bool irqs;		/* device interrupt handlers */
	bool io_uring;		/* io_uring read requests of traced threads */
	/* Bytes per ring-buffer shard (power of two; 0: 8 MiB). */
	uint64_t ring_bytes;
	uint32_t cpus_per_ring;	/* 0: 4 */
	/* Device-node path prefixes matched in the kernel on open. */
	const char *const *dev_prefixes;
	size_t n_dev_prefixes;
	/* Slots for calls in progress, each kind (power of two up to
	 * AT_CALL_SLOTS; 0: that). Calls whose slot is taken use a hash map:
	 * tests make them share slots with a small number. */
	uint32_t call_slots;
	/* With whole_host: adopt only processes inside this cgroup v2
	 * directory's subtree (an fd open on it; the daemon's --cgroup). */
	bool cgroup_scoped;
	int cgroup_fd;
	/* `record --pid`: runtime probes for these processes only (see
	 * probe_session__set_pid_scope); none: for every process. */
	const int *scope_pids;
	size_t n_scope_pids;
	/* Most time one poll spends handing records on (0: 20 ms); see
	 * probe_session__poll. */
	uint64_t poll_budget_ns;
	/* Device memory's live-allocation table, all processes (0:
	 * AT_MEM_LIVE_MAX), and the most entries one process may hold (0:
	 * a quarter of the table; at most all of it). */
	uint32_t mem_live_max;
	uint32_t mem_live_proc_max;
};
#define probe_session_opts__last_field mem_live_proc_max

/* Most processes runtime probes are attached for one by one; beyond, for
 * every process (each costs a link per probe on perf uprobes). */
#define PROBE_SESSION_MAX_PIDS 8

/* Called for every record, in ring order per shard. Nonzero stops a poll. */
typedef int (*probe_record_fn)(void *ctx, const void *data, size_t size);

/* Opens, configures and loads; NULL and errno (message logged) on failure. */
struct probe_session *probe_session__open(const struct probe_session_opts *opts,
					  probe_record_fn fn, void *ctx);
void probe_session__free(struct probe_session *ps);

/* Attaches the syscall, task and irq programs. */
int probe_session__attach_kernel(struct probe_session *ps);

/* The traced set. */
int probe_session__trace_pid(struct probe_session *ps, uint32_t pid, uint32_t flags);
int probe_session__untrace_pid(struct probe_session *ps, uint32_t pid);
bool probe_session__pid_traced(const struct probe_session *ps, uint32_t pid);

/* What an fd of a traced process is (found at attach from /proc). */
int probe_session__set_fd(struct probe_session *ps, uint32_t pid, uint32_t fd,
			  enum fd_kind kind);
/* Drops a dead process's fd kinds: how many went, or -errno. */
int probe_session__forget_pid_fds(struct probe_session *ps, uint32_t pid);
int probe_session__trace_irq(struct probe_session *ps, uint32_t irq, uint32_t idx);

/*
 * Runtime probes are attached for these processes only from now on: the
 * kernel installs their breakpoints in no other process, so the rest of
 * the host pays nothing for them (without a scope, every process that maps
 * the file traps, and the BPF side turns the untraced away). More than
 * PROBE_SESSION_MAX_PIDS, or none: every process. Returns how many
 * processes the scope holds (0: every process).
 */
int probe_session__set_pid_scope(struct probe_session *ps, const int *pids, size_t n);
/* The scope: how many processes (0: every process), copied to @pids. */
size_t probe_session__pid_scope(const struct probe_session *ps,
				int pids[PROBE_SESSION_MAX_PIDS]);
/* uprobe_multi links (else one perf uprobe per probe and process). */
bool probe_session__uprobe_multi(const struct probe_session *ps);

/*
 * Attaches a runtime probe: a uprobe at (path, offset), and a uretprobe
 * there too when spec->flags has RT_SPEC_RETURN, both carrying the probe id
 * as their cookie. pid -1: for the processes of the scope (or, without
 * one, every process that maps the file: the BPF side filters by the
 * traced set); pid >= 0: for that process. Returns the probe id (>= 0) or
 * -errno.
 */
int probe_session__attach_runtime(struct probe_session *ps,
				  const struct rt_probe_spec *spec,
				  const char *path, uint64_t offset, int pid);
/*
 * Attaches @n runtime probes in one file @path at once, for the scope's
 * processes: with uprobe_multi, one link per program (entry, return, core
 * or detail) and process for all of them, else one by one. @ids[i]: probe
 * i's id or -errno. Probes attached together should be detached together:
 * one detached alone keeps its id held until the others go. Returns how
 * many were attached.
 */
size_t probe_session__attach_runtime_many(struct probe_session *ps,
					  const struct rt_probe_spec *const *specs,
					  const char *path, const uint64_t *offsets,
					  size_t n, int *ids);
int probe_session__detach_runtime(struct probe_session *ps, int probe_id);
/* The fd of the program a runtime probe with @spec_flags runs at entry or
 * at return (RT_SPEC_DETAIL picks the switch-first ones): for statistics. */
int probe_session__runtime_prog_fd(const struct probe_session *ps, uint32_t spec_flags,
				   bool at_return);
/* Detaches several at once (their kernel grace periods overlap). */
void probe_session__detach_runtime_many(struct probe_session *ps,
					const int *probe_ids, size_t n);
size_t probe_session__runtime_probes(const struct probe_session *ps);
/* How often a runtime probe fired in a traced process. */
uint64_t probe_session__runtime_hits(const struct probe_session *ps, int probe_id);

/*
 * Consumes records: waits up to timeout_ms for data (the BPF side wakes us
 * only when a shard fills past a threshold, so callers poll on a short
 * timer). Returns records consumed, or -errno.
 *
 * A poll hands records on for at most the poll budget past its wait, then
 * returns, leaving the rest for the next: the caller's tick (rescans, its
 * CPU-priority check, its progress line) runs even when the producers
 * outpace it. libbpf reads a shard until it is empty, and a consumer
 * starved of CPU (SCHED_IDLE on a busy host) never finds it empty.
 * probe_session__drain has no budget: it is for closes and tests.
 */
int probe_session__poll(struct probe_session *ps, int timeout_ms);
int probe_session__drain(struct probe_session *ps);
/* Polls that returned with records still waiting, their budget spent. */
uint64_t probe_session__polls_cut(const struct probe_session *ps);

/*
 * Device memory kept in the kernel (include/acceltrace/events.h): calls fn
 * with each (pid, layer, device) aggregate, summed where the map keeps a
 * copy per CPU; a nonzero return stops the walk and is returned. Returns 0
 * or -errno.
 */
typedef int (*probe_mem_agg_fn)(void *ctx, const struct at_mem_agg_key *key,
				const struct at_mem_agg *agg);
int probe_session__mem_for_each(struct probe_session *ps, probe_mem_agg_fn fn, void *ctx);
/* Drops @pid's live allocations, aggregates and contexts' devices (it
 * exited, and its pid may come back as another process); its threads'
 * current devices go in the kernel, at each thread's exit. Returns the
 * entries dropped. */
int probe_session__mem_forget_pid(struct probe_session *ps, uint32_t pid);
/* @pid's count of live-table entries and of those refused it (its cap, or
 * the table full): -ENOENT where it has made none. */
int probe_session__mem_proc(struct probe_session *ps, uint32_t pid, struct at_mem_proc *out);

/*
 * Calls still in progress (the open-span tables): each is handed to fn as a
 * record of its type with h.end_ns == 0 (runtime calls also carry
 * RT_F_OPEN). Lets a capture include spans that began before its window and
 * had not ended by its stop.
 */
int probe_session__for_each_open(struct probe_session *ps, probe_record_fn fn,
				 void *ctx);
/* Drops open-span entries of a dead process: how many went, or -errno. */
int probe_session__forget_pid_calls(struct probe_session *ps, uint32_t pid);
/* Calls in progress kept in the hash maps, their slot being taken. */
void probe_session__calls_in_hash(const struct probe_session *ps, uint64_t *rt,
				  uint64_t *sys);

/*
 * The detail switch: on (the default) records everything; off turns the
 * detail probes away at their first test (RT_SPEC_DETAIL uprobes, reads
 * and ioctls, sched, irqs) while core probes go on, and detaches the
 * kernel programs that record only detail (their per-syscall tracepoints,
 * io_uring's, interrupts', sched_switch), so they cost nothing while off.
 * On again attaches them: -errno of the first that failed (logged), the
 * others attached. Takes effect at the next probe hit.
 */
int probe_session__set_detail(struct probe_session *ps, bool on);
bool probe_session__detail(const struct probe_session *ps);
/* Kernel program links attached now: the detail-only ones, or the rest. */
uint32_t probe_session__kernel_links(const struct probe_session *ps, bool detail);
/*
 * A traced process's aggregates (enum agg_counter), summed over CPUs:
 * 0, or -ENOENT when it has none (yet), or -errno.
 */
int probe_session__proc_aggregates(const struct probe_session *ps, uint32_t pid,
				   uint64_t out[AGG_MAX]);
/* Drops a dead process's aggregates: 1 if it had some, 0, or -errno. */
int probe_session__forget_pid_aggregates(struct probe_session *ps, uint32_t pid);
/* Drops a dead process's entries from every table (its calls, fds,
 * aggregates, device memory): 0, or the first -errno. */
int probe_session__forget_pid(struct probe_session *ps, uint32_t pid);

/* Loss counters and per-type totals from the BPF side. */
void probe_session__losses(const struct probe_session *ps,
			   uint64_t losses[LOSS_KIND_MAX]);
uint64_t probe_session__emitted(const struct probe_session *ps, enum ev_type t);
/*
 * Probe hits the kernel ran no program for: its recursion guard skips a
 * kprobe/uprobe/tracepoint program while another such program is active on
 * the CPU (which a preempted syscall-tracepoint program can be, on kernels
 * where those tracepoints are preemptible). Summed over runtime programs and
 * over kernel programs.
 */
void probe_session__skipped(const struct probe_session *ps, uint64_t *runtime,
			    uint64_t *kernel);
const char *loss_kind_name(enum loss_kind kind);

/* The mechanism used for each class, for reports. */
enum probe_mechanism probe_session__mechanism(const struct probe_session *ps,
					      enum probe_class pc);

#endif /* ACCELTRACE_PROBE_SESSION_H */
