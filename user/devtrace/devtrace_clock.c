// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device clock fit; see devtrace_clock.h. Coordinates are taken
 * relative to the newest pair so doubles keep sub-ns precision over hours.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "devtrace/devtrace_clock.h"

#define W DEVTRACE_CLOCK_WINDOW
/* Residuals beyond this many robust standard deviations are outliers ... */
#define OUTLIER_SIGMAS 6.0
/* ... and never below this many ns (exact pairs have residuals of ~0). */
#define OUTLIER_FLOOR_NS 200.0

struct pair {
	uint64_t ts, host;
};

struct devtrace_clock {
	double nominal_ns_per_tick;
	struct pair pairs[W];
	unsigned int n, head;		/* ring of the last W pairs */
	bool inlier[W];
	struct devtrace_clock_fit fit;
};

struct devtrace_clock *devtrace_clock__new(uint64_t rate_hz)
{
	struct devtrace_clock *c;

	if (!rate_hz) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->nominal_ns_per_tick = 1e9 / (double)rate_hz;
	return c;
}

void devtrace_clock__free(struct devtrace_clock *c)
{
	free(c);
}

static void swap(double *a, double *b)
{
	double t = *a;

	*a = *b;
	*b = t;
}

/* The k-th smallest of v[0..n) (reordering v), by quickselect: a fit
 * takes the medians of ~500 slopes at every clock pair, and sorting them
 * was most of a reader's time. */
static double kth(double *v, size_t n, size_t k)
{
	long lo = 0, hi = (long)n - 1, want = (long)k;

	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		long i = lo, j = hi;

		/* Hoare: v[lo..j] <= pivot <= v[i..hi], and j < i. */
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j)
				swap(&v[i++], &v[j--]);
		}
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			break;		/* between: equal to the pivot */
	}
	return v[want];
}

static double median(double *v, size_t n)
{
	double upper = kth(v, n, n / 2), lower = upper;

	/* Even: the largest of the lower half, which select left below. */
	if (n % 2 == 0) {
		lower = v[0];
		for (size_t i = 1; i < n / 2; i++)
			if (v[i] > lower)
				lower = v[i];
	}
	return (lower + upper) / 2;
}

static void refit(struct devtrace_clock *c)
{
	struct devtrace_clock_fit *f = &c->fit;
	double x[W], y[W], tmp[W * (W - 1) / 2], slope, icept, sigma, cut;
	double sx = 0, sy = 0, sxx = 0, sxy = 0, xm, ym, maxr = 0;
	uint64_t ref_ts = c->pairs[(c->head + W - 1) % W].ts;
	uint64_t ref_host = c->pairs[(c->head + W - 1) % W].host;
	uint64_t tmin = UINT64_MAX, tmax = 0;
	unsigned int n = c->n, m = 0, k = 0;

	for (unsigned int i = 0; i < n; i++) {
		x[i] = (double)(int64_t)(c->pairs[i].ts - ref_ts);
		y[i] = (double)(int64_t)(c->pairs[i].host - ref_host);
	}
	/* Theil-Sen: the median of the pairwise slopes, then the median
	 * intercept; both ignore a minority of wild pairs. */
	for (unsigned int i = 0; i < n; i++)
		for (unsigned int j = i + 1; j < n; j++)
			if (x[j] != x[i])
				tmp[k++] = (y[j] - y[i]) / (x[j] - x[i]);
	slope = k ? median(tmp, k) : c->nominal_ns_per_tick;
	for (unsigned int i = 0; i < n; i++)
		tmp[i] = y[i] - slope * x[i];
	icept = median(tmp, n);
	for (unsigned int i = 0; i < n; i++)
		tmp[i] = fabs(y[i] - icept - slope * x[i]);
	sigma = 1.4826 * median(tmp, n);
	cut = OUTLIER_SIGMAS * sigma;
	if (cut < OUTLIER_FLOOR_NS)
		cut = OUTLIER_FLOOR_NS;
	/* Least squares over the pairs that agree with the robust line. */
	for (unsigned int i = 0; i < n; i++) {
		c->inlier[i] = n < 3 || fabs(y[i] - icept - slope * x[i]) <= cut;
		if (!c->inlier[i])
			continue;
		m++;
		sx += x[i];
		sy += y[i];
		if (c->pairs[i].ts < tmin)
			tmin = c->pairs[i].ts;
		if (c->pairs[i].ts > tmax)
			tmax = c->pairs[i].ts;
	}
	xm = sx / m;
	ym = sy / m;
	for (unsigned int i = 0; i < n; i++) {
		if (!c->inlier[i])
			continue;
		sxx += (x[i] - xm) * (x[i] - xm);
		sxy += (x[i] - xm) * (y[i] - ym);
	}
	slope = sxx > 0 ? sxy / sxx : c->nominal_ns_per_tick;
	icept = ym - slope * xm;
	for (unsigned int i = 0; i < n; i++)
		if (c->inlier[i] && fabs(y[i] - icept - slope * x[i]) > maxr)
			maxr = fabs(y[i] - icept - slope * x[i]);

	f->valid = true;
	f->ts0 = ref_ts;
	f->host0 = ref_host + (int64_t)llround(icept);
	f->ns_per_tick = slope;
	f->drift_ppm = (c->nominal_ns_per_tick / slope - 1.0) * 1e6;
	f->max_residual_ns = maxr;
	/* A pair is exact to one tick of either clock, so the fit can be off
	 * by one tick (and one ns) more than its residuals show. */
	f->bound_ns = maxr + slope + 1.0;
	f->ts_min = tmin;
	f->ts_max = tmax;
	f->pairs = n;
	f->inliers = m;
	/* The rounding of host0 to whole ns. */
	f->bound_ns += 0.5;
}

void devtrace_clock__add_pair(struct devtrace_clock *c, uint64_t ts, uint64_t host_ns)
{
	unsigned int slot;

	for (unsigned int i = 0; i < c->n; i++)
		if (c->pairs[i].ts == ts && c->pairs[i].host == host_ns)
			return;
	slot = c->head;
	c->pairs[slot] = (struct pair){ ts, host_ns };
	c->head = (c->head + 1) % W;
	if (c->n < W)
		c->n++;
	c->fit.pairs_total++;
	refit(c);
	/* Count a pair as rejected once: when it arrives and does not fit. */
	if (c->n >= 3 && !c->inlier[slot])
		c->fit.rejected_total++;
}

uint64_t devtrace_clock__to_host(const struct devtrace_clock *c, uint64_t ts, double *bound_ns)
{
	const struct devtrace_clock_fit *f = &c->fit;
	double dx, out = 0, span;

	if (!f->valid) {
		if (bound_ns)
			*bound_ns = INFINITY;
		return 0;
	}
	dx = (double)(int64_t)(ts - f->ts0);
	if (bound_ns) {
		*bound_ns = f->bound_ns;
		/* Outside the pairs' span a wrong slope grows the error: the
		 * worst slope the inliers allow is off by 2 * bound / span. */
		if (ts < f->ts_min)
			out = (double)(f->ts_min - ts);
		else if (ts > f->ts_max)
			out = (double)(ts - f->ts_max);
		span = (double)(f->ts_max - f->ts_min);
		if (out > 0)
			*bound_ns += span > 0 ? 2.0 * f->bound_ns * out / span
					      : out * f->ns_per_tick * 500e-6; /* one pair: 500 ppm */
	}
	return f->host0 + (int64_t)llround(f->ns_per_tick * dx);
}

void devtrace_clock__fit(const struct devtrace_clock *c, struct devtrace_clock_fit *out)
{
	*out = c->fit;
}
