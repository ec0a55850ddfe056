/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Planning a runtime probe's fetch program: which of its dereferences share
 * one user-memory read. Every bpf_probe_read_user() costs about as much as
 * the rest of a probe hit together (docs/performance.md), and probe packs
 * read several fields of one Args struct: PJRT Execute reads six at entry
 * and eight event pointers at return, which become two block reads.
 */
#ifndef ACCELTRACE_FETCH_PLAN_H
#define ACCELTRACE_FETCH_PLAN_H

#include <linux/types.h>

#include "acceltrace/events.h"

/*
 * Sets spec->blocks and each op's block: dereferences with the same source
 * and phase whose bytes fit in AT_FETCH_BLOCK_MAX together share a block.
 * Payload copies and lone dereferences stay single reads, as do ops past
 * AT_MAX_FETCH_BLOCKS blocks. Ops' values and order do not change.
 */
void fetch_plan__blocks(struct rt_probe_spec *spec);

/*
 * 0 when every op in a block reads 1, 2, 4 or 8 bytes and its block exists
 * and covers them, from the same source and phase; else -EINVAL. The BPF
 * side trusts the plan: a block never read, or bytes past it, would hand
 * an op another probe's data.
 */
int fetch_plan__check(const struct rt_probe_spec *spec);

#endif /* ACCELTRACE_FETCH_PLAN_H */
