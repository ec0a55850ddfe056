/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Steps without markers: a step is one execution of the target's dominant
 * program (the one with the most device time) on each device. Data-parallel
 * jobs run a program of the same name in every process, so every process's
 * executions of that program are steps.
 */
#ifndef ACCELTRACE_STEPS_H
#define ACCELTRACE_STEPS_H

#include <stddef.h>
#include <stdint.h>

/* One device execution of a program, as a candidate for a step. */
struct step_candidate {
	uint32_t pid;
	uint32_t device;
	uint32_t program;	/* the program's name (an interned string id) */
	uint16_t flags;		/* the execution span's flags */
	uint64_t start_ns, end_ns;
	uint64_t launch_id;
};

/* A program run fewer than 1/STEPS_MIN_RUN_SHARE times as often as the
 * most-run one is never the step program. */
#define STEPS_MIN_RUN_SHARE 4

/*
 * The program whose executions are the steps, through *program: the one
 * with the most device time, summed per (pid, program), among those run at
 * least a quarter as often as the most-run one (so a program stalled for
 * minutes, run once beside 499 steps, is not it). 0, -ENOENT when there is
 * no device time at all, -ENOMEM.
 */
int steps_dominant_program(const struct step_candidate *c, size_t n,
			   uint32_t *program);

#endif /* ACCELTRACE_STEPS_H */
