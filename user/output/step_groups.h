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

struct step_groups {
	struct u64_map by_corr;	/* (pid, correlation id) -> step number */
	uint32_t n;
};

/* Numbers the capture's device steps overlapping [ws, we]. 0 or -ENOMEM. */
int step_groups__build(struct step_groups *g, const struct capture *c,
		       uint64_t ws, uint64_t we);
/* The step number of @pid's launch @corr; false when it is not a step's
 * (launch ids are per process: two processes' steps never share one). */
bool step_groups__find(const struct step_groups *g, uint32_t pid, uint64_t corr,
		       int64_t *step);
void step_groups__free(struct step_groups *g);

#endif /* ACCELTRACE_STEP_GROUPS_H */
