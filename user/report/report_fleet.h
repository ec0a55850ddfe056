/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A fleet: the hosts of one multi-host session (several <host>.xplane.pb in
 * one session directory, XProf's layout) side by side. Which host is the
 * slowest, by how much, how far apart the hosts' step times are, and
 * whether the slowest is a straggler (the rule: docs/report.md, Fleet).
 * Fed each host's steps from its own report; knows nothing of XSpace.
 */
#ifndef ACCELTRACE_REPORT_FLEET_H
#define ACCELTRACE_REPORT_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A straggler's median step is more than this much over the others'. */
#define FLEET_STRAGGLER_MIN_PCT 5.0

struct fleet_host {
	char *host, *file;
	size_t n_steps;			/* measured steps (0: no step time) */
	int64_t *step_ns;		/* their times, in capture order */
	int64_t *step_num;		/* their step numbers, or NULL */
	double device_idle_pct, input_bound_pct;	/* NaN when unknown */
	/* Computed by fleet__compute; NaN without steps. */
	double mean_ns, median_ns, p90_ns;
	double noise_ns;		/* robust stddev: interquartile range / 1.349 */
	size_t slowest_steps;		/* aligned steps on which it was the slowest */
};

struct fleet {
	char *session;
	struct fleet_host *hosts;
	size_t n_hosts, hosts_cap;
	/* Computed by fleet__compute over the hosts with steps. */
	size_t n_with_steps;
	int slowest, fastest;		/* by median step time; -1 with no host with steps */
	int straggler;			/* the slowest when the rule holds, else -1 */
	double others_median_ns;	/* median of the other hosts' medians */
	double gap_ns, gap_pct;		/* the slowest's median over others_median_ns */
	double noise_ns;		/* median of the hosts' noise_ns */
	double spread_ns;		/* max - min of the hosts' means */
	double cv;			/* stddev / mean of the hosts' means */
	size_t n_aligned;		/* step numbers every host with steps measured */
};

struct fleet *fleet__new(const char *session);
void fleet__free(struct fleet *f);
/*
 * A host's numbers, copied. step_num (NULL when the capture has none) runs
 * parallel to step_ns. 0, or -ENOMEM.
 */
int fleet__add_host(struct fleet *f, const char *host, const char *file,
		    const int64_t *step_ns, const int64_t *step_num, size_t n_steps,
		    double device_idle_pct, double input_bound_pct);
/* The fleet's statistics and verdict, from the hosts added. 0, or -ENOMEM. */
int fleet__compute(struct fleet *f);

/* The Fleet section for the terminal, and the "fleet" JSON object. */
void fleet_print_text(const struct fleet *f, FILE *out);
struct json_writer;
void fleet_print_json(const struct fleet *f, struct json_writer *jw);

#endif /* ACCELTRACE_REPORT_FLEET_H */
