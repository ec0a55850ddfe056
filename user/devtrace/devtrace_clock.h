/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Device clock -> host CLOCK_MONOTONIC: host = a + b * ts, fitted over the
 * most recent clock pairs (a devtrace header's creation pair, CLOCK_SYNC
 * records) and refitted as pairs arrive. One object per clock domain: all
 * cores of one (device_id, run_id) share it.
 *
 * Robust to outlier pairs: a median-of-slopes line (Theil-Sen) finds the
 * bulk, pairs whose residual is far beyond the median residual are
 * rejected, and least squares over the rest gives the fit. The error bound
 * of a conversion is the worst inlier residual plus one tick, widened by the
 * worst slope the inliers allow times the distance from the pairs' span.
 */
#ifndef ACCELTRACE_DEVTRACE_CLOCK_H
#define ACCELTRACE_DEVTRACE_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

#define DEVTRACE_CLOCK_WINDOW 32	/* pairs a fit uses, most recent */

struct devtrace_clock_fit {
	bool valid;		/* at least one pair */
	uint64_t ts0;		/* reference point: host = host0 + ns_per_tick * (ts - ts0) */
	uint64_t host0;
	double ns_per_tick;
	double drift_ppm;	/* true rate against the nominal one */
	double max_residual_ns;	/* worst inlier residual */
	double bound_ns;	/* error bound inside the pairs' span */
	uint64_t ts_min, ts_max;	/* span of the inlier pairs */
	uint32_t pairs;		/* pairs in the window */
	uint32_t inliers;
	uint64_t pairs_total;	/* pairs ever added */
	uint64_t rejected_total;	/* pairs ever rejected as outliers */
};

struct devtrace_clock;

/* NULL and errno on failure. @rate_hz: the nominal rate (header). */
struct devtrace_clock *devtrace_clock__new(uint64_t rate_hz);
void devtrace_clock__free(struct devtrace_clock *c);
/* Adds a pair (device ticks, host ns) and refits; an exact duplicate of a
 * pair in the window is ignored. */
void devtrace_clock__add_pair(struct devtrace_clock *c, uint64_t ts, uint64_t host_ns);
/* Host ns of device tick @ts; its error bound in *bound_ns (may be NULL).
 * With no pair yet: 0 and an infinite bound. */
uint64_t devtrace_clock__to_host(const struct devtrace_clock *c, uint64_t ts, double *bound_ns);
void devtrace_clock__fit(const struct devtrace_clock *c, struct devtrace_clock_fit *out);

#endif /* ACCELTRACE_DEVTRACE_CLOCK_H */
