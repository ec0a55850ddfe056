// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A fleet's statistics (report_fleet.c) on made-up hosts whose answers are
 * worked out by hand: mean, median (interpolated), p90, the robust noise
 * (IQR / 1.349), the slowest host by median (not mean: one long step does
 * not make a host slow), its gap to the other hosts' median, the spread
 * and coefficient of variation of the hosts' means, the straggler rule (>
 * 5 % and more than the noise: both halves can fail it), hosts without
 * steps listed and left out, steps aligned by number, and the text and
 * JSON naming the straggler or none.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "lib/json_writer.h"
#include "report/report_fleet.h"

#define MS 1000000LL

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b));
}

/* A host whose n steps all take ms milliseconds, numbered from first. */
static int add_flat(struct fleet *f, const char *host, double ms, size_t n, int64_t first)
{
	int64_t ns[64], num[64];

	for (size_t i = 0; i < n; i++) {
		ns[i] = (int64_t)(ms * MS);
		num[i] = first + (int64_t)i;
	}
	return fleet__add_host(f, host, host, ns, first >= 0 ? num : NULL, n, 10.0, 1.0);
}

static char *text_of(const struct fleet *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	fleet_print_text(f, out);
	fclose(out);
	return buf;
}

static char *json_of(const struct fleet *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct json_writer *jw = jw_new(out, false);

	fleet_print_json(f, jw);
	jw_free(jw);
	fclose(out);
	return buf;
}

static void test_stats(void)
{
	/* Steps 1..10 ms: mean 5.5, median 5.5, p90 9.1, IQR 7.75-3.25 = 4.5. */
	int64_t ns[10];
	struct fleet *f = fleet__new("s");
	const struct fleet_host *h;

	for (int i = 0; i < 10; i++)
		ns[i] = (i + 1) * MS;
	ASSERT_OK(fleet__add_host(f, "a", "a.xplane.pb", ns, NULL, 10, NAN, NAN), "add");
	ASSERT_OK(fleet__compute(f), "compute");
	h = &f->hosts[0];
	ASSERT_TRUE(near(h->mean_ns, 5.5 * MS), "mean");
	ASSERT_TRUE(near(h->median_ns, 5.5 * MS), "median between the middle two");
	ASSERT_TRUE(near(h->p90_ns, 9.1 * MS), "p90 interpolated");
	ASSERT_TRUE(near(h->noise_ns, 4.5 * MS / 1.349), "noise: IQR / 1.349");
	ASSERT_EQ(f->n_with_steps, 1, "one host with steps");
	ASSERT_EQ(f->slowest, 0, "the only host is the slowest");
	ASSERT_EQ(f->straggler, -1, "one host: no straggler");
	ASSERT_TRUE(isnan(f->gap_ns), "one host: no gap");
	fleet__free(f);
}

static void test_straggler(void)
{
	struct fleet *f = fleet__new("2024_01_01_00_00_00");
	char *s;

	ASSERT_OK(add_flat(f, "h1", 10.0, 20, 0), "h1");
	ASSERT_OK(add_flat(f, "h2", 14.0, 20, 0), "h2");
	ASSERT_OK(add_flat(f, "h3", 10.4, 20, 0), "h3");
	ASSERT_OK(fleet__compute(f), "compute");
	ASSERT_EQ(f->slowest, 1, "h2 is the slowest");
	ASSERT_EQ(f->fastest, 0, "h1 is the fastest");
	ASSERT_EQ(f->straggler, 1, "h2 is a straggler");
	/* Others' medians 10.0 and 10.4: their median is 10.2. */
	ASSERT_TRUE(near(f->others_median_ns, 10.2 * MS), "others' median");
	ASSERT_TRUE(near(f->gap_ns, 3.8 * MS), "gap 14 - 10.2 ms");
	ASSERT_TRUE(near(f->gap_pct, 100.0 * 3.8 / 10.2), "gap %");
	ASSERT_TRUE(near(f->spread_ns, 4.0 * MS), "spread: max - min of means");
	{
		double m = (10.0 + 14.0 + 10.4) / 3, sd = sqrt((pow(10.0 - m, 2) + pow(14.0 - m, 2) +
								 pow(10.4 - m, 2)) / 3);

		ASSERT_TRUE(near(f->cv, sd / m), "cv: population stddev / mean of the means");
	}
	ASSERT_EQ(f->n_aligned, 20, "20 steps aligned by number");
	ASSERT_EQ(f->hosts[1].slowest_steps, 20, "h2 slowest on all of them");
	s = text_of(f);
	ASSERT_STRCONTAINS(s, "h2 is a straggler", "text names the straggler");
	ASSERT_STRCONTAINS(s, "slowest on 20 of them", "text says on how many steps");
	free(s);
	s = json_of(f);
	ASSERT_STRCONTAINS(s, "\"straggler\":\"h2\"", "JSON names the straggler");
	ASSERT_STRCONTAINS(s, "\"straggler_gap_ns\":3800000", "JSON gap in ns");
	ASSERT_STRCONTAINS(s, "\"step_time_spread_ns\":4000000", "JSON spread in ns");
	free(s);
	fleet__free(f);
}

static void test_no_straggler(void)
{
	struct fleet *f = fleet__new("s");
	int64_t ns[40];
	char *s;

	/* Equal hosts: a 1 % gap is no straggler. */
	ASSERT_OK(add_flat(f, "a", 10.0, 10, -1), "a");
	ASSERT_OK(add_flat(f, "b", 10.1, 10, -1), "b");
	ASSERT_OK(add_flat(f, "c", 10.0, 10, -1), "c");
	ASSERT_OK(fleet__compute(f), "compute");
	ASSERT_EQ(f->slowest, 1, "b is the slowest");
	ASSERT_EQ(f->straggler, -1, "1 %: no straggler");
	ASSERT_EQ(f->n_aligned, 0, "no step numbers: nothing aligned");
	s = text_of(f);
	ASSERT_STRCONTAINS(s, "no straggler", "text says so");
	free(s);
	s = json_of(f);
	ASSERT_STRCONTAINS(s, "\"straggler\":null", "JSON null");
	free(s);
	fleet__free(f);

	/*
	 * 20 % over, but the hosts' steps swing between 5 and 15 ms: the gap
	 * (2 ms) is less than the noise (IQR 10 ms / 1.349 = 7.4 ms).
	 */
	f = fleet__new("s");
	for (int i = 0; i < 40; i++)
		ns[i] = (i % 2 ? 15 : 5) * MS;
	ASSERT_OK(fleet__add_host(f, "n1", "n1", ns, NULL, 40, NAN, NAN), "n1");
	ASSERT_OK(fleet__add_host(f, "n2", "n2", ns, NULL, 40, NAN, NAN), "n2");
	for (int i = 0; i < 40; i++)
		ns[i] = (i % 2 ? 17 : 7) * MS;
	ASSERT_OK(fleet__add_host(f, "n3", "n3", ns, NULL, 40, NAN, NAN), "n3");
	ASSERT_OK(fleet__compute(f), "compute");
	ASSERT_EQ(f->slowest, 2, "n3 is the slowest");
	ASSERT_TRUE(f->gap_pct > FLEET_STRAGGLER_MIN_PCT, "over 5 %");
	ASSERT_TRUE(f->gap_ns < f->noise_ns, "within the noise");
	ASSERT_EQ(f->straggler, -1, "within the noise: no straggler");
	fleet__free(f);
}

static void test_robust_and_missing(void)
{
	struct fleet *f = fleet__new("s");
	int64_t ns[20];
	char *s;

	/* One 200 ms checkpoint step makes a's mean 19.5 ms, not its median. */
	for (int i = 0; i < 20; i++)
		ns[i] = (i == 7 ? 200 : 10) * MS;
	ASSERT_OK(fleet__add_host(f, "a", "a", ns, NULL, 20, NAN, NAN), "a");
	ASSERT_OK(add_flat(f, "b", 11.0, 20, -1), "b");
	ASSERT_OK(fleet__add_host(f, "idle", "idle", NULL, NULL, 0, NAN, NAN), "no steps");
	ASSERT_OK(add_flat(f, "c", 10.0, 20, -1), "c");
	ASSERT_OK(fleet__compute(f), "compute");
	ASSERT_EQ(f->n_hosts, 4, "every host listed");
	ASSERT_EQ(f->n_with_steps, 3, "the host without steps is not counted");
	ASSERT_EQ(f->slowest, 1, "b is the slowest by median, not a by mean");
	ASSERT_TRUE(near(f->gap_pct, 10.0), "b: 10 % over the others' 10 ms");
	ASSERT_EQ(f->straggler, 1, "b is a straggler (no noise)");
	ASSERT_TRUE(near(f->spread_ns, 9.5 * MS), "spread of means 19.5 - 10");
	ASSERT_TRUE(isnan(f->hosts[2].mean_ns), "no steps: no mean");
	s = text_of(f);
	ASSERT_STRCONTAINS(s, "no steps", "text lists the host without steps");
	free(s);
	fleet__free(f);

	/* No host with steps at all. */
	f = fleet__new("s");
	ASSERT_OK(fleet__add_host(f, "x", "x", NULL, NULL, 0, NAN, NAN), "x");
	ASSERT_OK(fleet__add_host(f, "y", "y", NULL, NULL, 0, NAN, NAN), "y");
	ASSERT_OK(fleet__compute(f), "compute");
	ASSERT_EQ(f->slowest, -1, "no slowest");
	ASSERT_EQ(f->straggler, -1, "no straggler");
	s = json_of(f);
	ASSERT_STRCONTAINS(s, "\"slowest_host\":null", "JSON null slowest");
	free(s);
	s = text_of(f);
	ASSERT_STRCONTAINS(s, "nothing to compare", "text says so");
	free(s);
	fleet__free(f);
}

static void test_alignment(void)
{
	struct fleet *f = fleet__new("s");
	int64_t a[4] = { 10 * MS, 10 * MS, 30 * MS, 10 * MS }, an[4] = { 5, 6, 7, 8 };
	int64_t b[3] = { 12 * MS, 12 * MS, 12 * MS }, bn[3] = { 6, 7, 8 };

	/* Steps 6, 7, 8 on both: b slowest on 6 and 8, a on 7 (its long one). */
	ASSERT_OK(fleet__add_host(f, "a", "a", a, an, 4, NAN, NAN), "a");
	ASSERT_OK(fleet__add_host(f, "b", "b", b, bn, 3, NAN, NAN), "b");
	ASSERT_OK(fleet__compute(f), "compute");
	ASSERT_EQ(f->n_aligned, 3, "three common step numbers");
	ASSERT_EQ(f->hosts[0].slowest_steps, 1, "a slowest on one");
	ASSERT_EQ(f->hosts[1].slowest_steps, 2, "b slowest on two");
	fleet__free(f);
}

int main(void)
{
	test_stats();
	test_straggler();
	test_no_straggler();
	test_robust_and_missing();
	test_alignment();
	return test_exit();
}
