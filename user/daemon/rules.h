/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Rules that trigger a capture on their own: a step slower than a threshold
 * or than k times its process's recent median, a device stall (work
 * enqueued, no completion for T), a traced process that crashed (killed by
 * a signal). After one fires, none fires again for the cooldown, so that a
 * trainer that stays slow does not fill the disk with captures.
 */
#ifndef ACCELTRACE_RULES_H
#define ACCELTRACE_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct metrics;
struct rules;

struct rules_config {
	uint64_t step_time_over_ns;	/* 0: off */
	double step_time_factor;	/* k x the recent median; 0: off */
	uint64_t device_stall_ns;	/* 0: off */
	bool on_crash;
	uint64_t cooldown_ns;		/* between two rule triggers */
};

/* Steps of a process the median is taken over, and how many it needs. */
#define RULES_MEDIAN_STEPS 64
#define RULES_MEDIAN_MIN_STEPS 16

struct rules *rules__new(const struct rules_config *cfg);
/* A reloaded configuration; what was learnt (medians) stays. */
void rules__configure(struct rules *r, const struct rules_config *cfg);
void rules__free(struct rules *r);

void rules__step(struct rules *r, uint32_t pid, uint64_t step_ns, uint64_t at_ns);
void rules__exit(struct rules *r, uint32_t pid, int32_t exit_code, uint64_t at_ns);
void rules__check_stalls(struct rules *r, const struct metrics *m, uint64_t now_ns);
/* A rule that fired since the last call: true with why it fired. */
bool rules__take(struct rules *r, char *why, size_t len);
/* The process the rule last taken fired for (its capture is about it). */
uint32_t rules__taken_pid(const struct rules *r);

#endif /* ACCELTRACE_RULES_H */
