// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device clock fit against the simulator's clock model
 * (tests/sim/devclock.c): a device clock 73 ppm fast (and one 61 ppm slow)
 * whose origin is seconds away from the host's, pairs exact to one tick as
 * the format promises. Converted times are within 10 us of the truth, the
 * bound the fit states covers the actual error everywhere (inside the
 * pairs' span, seconds after it, ten minutes before it), an outlier pair is
 * rejected without moving the fit, and pairs arriving from several cores
 * out of order serve one fit.
 */
#include <math.h>

#include "test.h"
#include "devclock.h"
#include "devtrace/devtrace_clock.h"

/* The truth model holds from its epoch on: pairs start 700 s later. */
static uint64_t truth_pair(const struct devclock *d, uint64_t host, uint64_t *ts)
{
	*ts = devclock_to_device(d, host);
	return host;
}

/* Worst |error| - bound over conversions around @host_at (positive: the
 * bound failed); the worst error itself in *worst. */
static double check_span(const struct devtrace_clock *c, const struct devclock *d,
			 uint64_t from_host, uint64_t to_host, double *worst)
{
	double margin = -INFINITY;

	for (int i = 0; i <= 200; i++) {
		uint64_t h = from_host + (to_host - from_host) / 200 * i, ts, got;
		double bound, err;

		ts = devclock_to_device(d, h);
		got = devtrace_clock__to_host(c, ts, &bound);
		err = fabs((double)(int64_t)(got - devclock_to_host(d, ts)));
		if (err > *worst)
			*worst = err;
		if (err - bound > margin)
			margin = err - bound;
	}
	return margin;
}

static void run_clock(uint64_t rate, int64_t drift_ppb, double offset_s)
{
	uint64_t epoch = 5000000000000ull;	/* host: 5000 s after boot */
	struct devclock d = { .epoch_ns = epoch, .rate_hz = rate, .drift_ppb = drift_ppb,
			      .offset_ticks = (uint64_t)(offset_s * rate) };
	struct devtrace_clock *c = devtrace_clock__new(rate);
	struct devtrace_clock_fit f;
	uint64_t ts, h, last = 0, base = epoch + 700000000000ull;
	double worst = 0;

	if (!ASSERT_OK_PTR(c, "clock"))
		return;
	/* Before any pair: no answer, infinite bound. */
	{
		double b;

		devtrace_clock__to_host(c, 123, &b);
		ASSERT_TRUE(isinf(b), "no pair: unbounded");
	}
	/* The header pair, then CLOCK_SYNC every 10 ms for 2 s, from four
	 * cores whose pairs arrive interleaved and slightly out of order. */
	h = truth_pair(&d, base + 1000, &ts);
	devtrace_clock__add_pair(c, ts, h);
	for (int i = 1; i <= 200; i++) {
		uint64_t hh = base + i * 10000000ull + (i % 4) * 1777;

		if (i % 7 == 0 && i > 1) {
			/* a later core's pair first */
			uint64_t h2 = hh + 10000000ull;

			devtrace_clock__add_pair(c, devclock_to_device(&d, h2), h2);
			devtrace_clock__add_pair(c, devclock_to_device(&d, hh), hh);
			i++;
			last = h2;
			continue;
		}
		devtrace_clock__add_pair(c, devclock_to_device(&d, hh), hh);
		last = hh;
	}
	devtrace_clock__fit(c, &f);
	ASSERT_TRUE(f.valid, "fit");
	ASSERT_LE(fabs(f.drift_ppm - drift_ppb / 1000.0) * 1000, 500, "drift within 0.5 ppm");
	ASSERT_LE(f.bound_ns, 10, "exact pairs: bound of a few ns");
	/* inside the recent pairs' span */
	ASSERT_LE(check_span(c, &d, last - 300000000ull, last, &worst), 0, "bound covers: inside");
	/* seconds after the last pair (records written since) */
	ASSERT_LE(check_span(c, &d, last, last + 3000000000ull, &worst), 0, "bound covers: after");
	/* a ten-minute op that began before the pairs */
	ASSERT_LE(check_span(c, &d, base - 600000000000ull, base, &worst), 0,
		  "bound covers: 10 min before");
	ASSERT_LE(worst, 10000, "within 10 us of the truth");
	fprintf(stderr, "%.0f ppm: drift fitted %.3f ppm, bound %.1f ns, worst error %.0f ns\n",
		drift_ppb / 1000.0, f.drift_ppm, f.bound_ns, worst);

	/* One wild pair (a host preempted between its two clock reads):
	 * rejected, the fit unmoved. */
	h = last + 10000000ull;
	devtrace_clock__add_pair(c, devclock_to_device(&d, h), h + 350000);
	devtrace_clock__fit(c, &f);
	ASSERT_EQ(f.rejected_total, 1, "outlier rejected");
	ASSERT_EQ(f.inliers, f.pairs - 1, "one pair out");
	ASSERT_LE(f.bound_ns, 10, "bound unmoved by the outlier");
	worst = 0;
	ASSERT_LE(check_span(c, &d, last - 300000000ull, h + 1000000000ull, &worst), 0,
		  "bound covers after the outlier");
	ASSERT_LE(worst, 100, "outlier did not move the fit");
	devtrace_clock__free(c);
}

/* Pairs with real jitter (a host reading its clock around the device's):
 * the bound grows with the residuals and still covers the error. */
static void run_jitter(void)
{
	uint64_t epoch = 100000000000ull, rate = 940000000;
	struct devclock d = { .epoch_ns = epoch, .rate_hz = rate, .drift_ppb = 55000,
			      .offset_ticks = 7ull * rate };
	struct devtrace_clock *c = devtrace_clock__new(rate);
	struct devtrace_clock_fit f;
	double worst = 0;

	if (!ASSERT_OK_PTR(c, "clock"))
		return;
	srand(7);
	for (int i = 0; i < 100; i++) {
		uint64_t h = epoch + i * 20000000ull;

		devtrace_clock__add_pair(c, devclock_to_device(&d, h), h + rand() % 2000);
	}
	devtrace_clock__fit(c, &f);
	ASSERT_GE(f.bound_ns, 900, "jitter shows in the bound");
	ASSERT_LE(check_span(c, &d, epoch + 1400000000ull, epoch + 2500000000ull, &worst), 0,
		  "bound covers with jitter");
	ASSERT_LE(worst, 10000, "within 10 us with jitter");
	devtrace_clock__free(c);
}

int main(void)
{
	run_clock(1000000000, 73000, 3.7);	/* 73 ppm fast, 3.7 s ahead */
	run_clock(940000000, -61000, 1234.5);	/* 61 ppm slow, 20 min ahead */
	run_jitter();
	ASSERT_EQ(devtrace_clock__new(0) == NULL, 1, "rate 0 refused");
	return test_exit();
}
