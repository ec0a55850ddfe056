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

struct runtime_probe {
	struct bpf_link *entry;
	struct bpf_link *ret;
	bool used;
};

struct probe_session {
	struct acceltrace *skel;
	struct ring_buffer *rb;
	int ring_fds[AT_MAX_RINGS];
	uint32_t nr_rings;
	probe_record_fn fn;
	void *ctx;
	enum probe_mechanism mech[PROBE__COUNT];
	bool attached;
	struct runtime_probe probes[AT_MAX_PROBES];
	uint32_t n_probes;	/* high-water mark of probe ids */
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

#endif /* ACCELTRACE_PROBE_SESSION_INTERNAL_H */
