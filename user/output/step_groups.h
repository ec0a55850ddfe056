/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Steps numbered the way XProf groups them (xprof-contract.md §10.8): each
 * step (an execution, by its correlation id, on every core that ran it)
 * gets one number, in the order the steps began within the window. The
 * writer puts it as `step_num` on the Steps events and as `group_id` on
 * every event of the same launch (host launch, modules, ops), and declares
 * `group_id` on every host and device plane, so XProf takes the capture as
 * grouped and its Overview and Input Pipeline pages show our steps.
 */
#ifndef ACCELTRACE_STEP_GROUPS_H
#define ACCELTRACE_STEP_GROUPS_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/u64_map.h"

struct capture;

/* A step's extent: its earliest start and latest end over its cores. */
struct step_range {
	uint32_t pid, step;
	uint64_t start_ns, end_ns;
	uint64_t max_end_ns;	/* the latest end of @pid's steps up to this one */
};

struct step_groups {
	struct u64_map by_corr;	/* (pid, correlation id) -> step number */
	uint32_t n;
	struct step_range *ranges;	/* n of them, by (pid, start) */
};

/* Numbers the capture's device steps overlapping [ws, we]. 0 or -ENOMEM. */
int step_groups__build(struct step_groups *g, const struct capture *c,
		       uint64_t ws, uint64_t we);
/* The step number of @pid's launch @corr; false when it is not a step's
 * (launch ids are per process: two processes' steps never share one). */
bool step_groups__find(const struct step_groups *g, uint32_t pid, uint64_t corr,
		       int64_t *step);
/* The step of @pid whose extent holds time @t (the latest begun, when
 * steps overlap); false between steps, or for a process without any. */
bool step_groups__at(const struct step_groups *g, uint32_t pid, uint64_t t, int64_t *step);
void step_groups__free(struct step_groups *g);

#endif /* ACCELTRACE_STEP_GROUPS_H */
