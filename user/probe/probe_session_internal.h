/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The inside of a probe session, shared by probe_session.c (load, attach,
 * traced set, rings, counters) and open_calls.c (the open-call tables and
 * forgetting a dead process's entries). Private to those files; everything
 * else uses probe_session.h. Users of skel include "acceltrace.skel.h".
 */
#ifndef ACCELTRACE_PROBE_SESSION_INTERNAL_H
#define ACCELTRACE_PROBE_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "probe/probe_session.h"

#define MAX_KERNEL_LINKS 64

struct acceltrace;
struct bpf_program;
struct bpf_link;
struct ring_buffer;

/*
 * One kernel link of runtime probes: a perf uprobe's (one probe, one
 * process or all) or a uprobe_multi link's (several probes of one file),
 * shared by the probes in it and closed when the last of them is detached.
 */
struct rt_link {
	struct bpf_link *perf;
	int fd;			/* the uprobe_multi link; -1 for perf */
	unsigned int refs;
};

#define RT_MAX_LINKS (2 * PROBE_SESSION_MAX_PIDS)

struct runtime_probe {
	struct rt_link *links[RT_MAX_LINKS];	/* entry and return, per process */
	uint8_t n_links;
	bool used;
	/* Detached while a shared link still carries its cookie: the id is
	 * not given to another probe (runtime_links.c). */
	bool held;
};

struct probe_session {
	struct acceltrace *skel;
	struct ring_buffer *rb;
	int ring_fds[AT_MAX_RINGS];
	uint32_t nr_rings;
	probe_record_fn fn;
	void *ctx;
	/* probe_session__poll's budget: the clock read every POLL_CLOCK_EVERY
	 * records against the deadline (0: none, as in a drain). */
	uint64_t poll_budget_ns;
	uint64_t poll_deadline_ns;
	uint32_t poll_records;
	bool poll_cut;
	uint64_t polls_cut;
	enum probe_mechanism mech[PROBE__COUNT];
	bool attached;
	struct runtime_probe probes[AT_MAX_PROBES];
	uint32_t n_probes;	/* high-water mark of probe ids */
	/* Runtime programs loaded for uprobe_multi links (else perf uprobes). */
	bool uprobe_multi;
	/* Processes runtime probes are attached for; none: every process. */
	int scope_pids[PROBE_SESSION_MAX_PIDS];
	uint32_t n_scope_pids;
	struct bpf_link *kernel_links[MAX_KERNEL_LINKS];
	/* Each link's program: those that record only detail
	 * (kernel_prog_is_detail) are linked only while the switch is on. */
	struct bpf_program *kernel_progs[MAX_KERNEL_LINKS];
	uint32_t n_kernel_links;
	/* The traced-process table (a byte per pid), mapped from BPF. */
	volatile uint8_t *traced;
	/* The syscall slots, mapped read-only from BPF. */
	const volatile struct sys_slot *sys_slots;
	/* The runtime-call slots, mapped from BPF (freed here for processes
	 * that exit mid-call). */
	volatile struct rt_slot *rt_slots;
	uint32_t n_slots;
};

/* runtime_links.c: closes every runtime probe's links and @more (the
 * kernel programs' links), all at once (at free). */
void runtime_links__release_all(struct probe_session *ps, struct bpf_link **more,
				size_t n_more);
/* runtime_links.c: before load, the runtime programs' attach type. */
void runtime_links__prepare_load(struct probe_session *ps);

/* Values of the maps map_delete_matching() walks, as read for a match. */
union map_value {
	struct ev_header h;
	struct ev_rt_call rt;
	struct ev_syscall sc;
};

typedef bool (*map_match_fn)(const void *key, const union map_value *val, uint32_t pid);

/*
 * map_walk.c: deletes every entry of @map_fd for which @match(key, value,
 * pid) says yes (the value is read only when @val_size is not 0), counting
 * each off *@in_hash when set. Returns how many went.
 */
int map_delete_matching(int map_fd, size_t key_size, size_t val_size, map_match_fn match,
			uint32_t pid, __u64 *in_hash);
/* A match for maps whose key begins with the pid (fd_key, memory keys). */
bool map_key_pid_is(const void *key, const union map_value *val, uint32_t pid);
/* The two ways it walks (tests call each): in batches, 0 or -errno with
 * *@deleted what went before a failure; key by key, how many went. */
int map_delete_batched(int map_fd, size_t key_size, size_t val_size, map_match_fn match,
		       uint32_t pid, __u64 *in_hash, int *deleted);
int map_delete_key_by_key(int map_fd, size_t key_size, size_t val_size, map_match_fn match,
			  uint32_t pid, __u64 *in_hash);

#endif /* ACCELTRACE_PROBE_SESSION_INTERNAL_H */
