// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devmem_timeline: the fold arithmetic on small tiers, spikes kept in
 * coarse points, bytes bounded over a simulated month (a coarser tier's
 * allocated only once reached), the resolution at each age, and tiers
 * refused.
 */
#include "test.h"
#include "devmem/devmem_timeline.h"

#define SEC 1000000000ull

/* Points never overlap and come oldest first. */
static bool ordered(const struct capture_mem_point *p, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (p[i - 1].ts_ns + p[i - 1].span_ns > p[i].ts_ns)
			return false;
	return true;
}

static void test_fold_arithmetic(void)
{
	const struct devmem_tier tiers[] = { { 10, 4 }, { 20, 3 }, { 60, 2 } };
	struct devmem_timeline *t = devmem_timeline__new(tiers, 3);
	struct capture_mem_point p[16];
	size_t n;

	if (!ASSERT_TRUE(t, "new"))
		return;
	ASSERT_EQ(devmem_timeline__max_points(t), 9, "max points");
	/* Two samples per fine point: values 2i and 2i+1 at 10i and 10i+5. */
	for (uint64_t i = 0; i < 10; i++) {
		devmem_timeline__add(t, 10 * i, 2 * i + 1, 100);
		devmem_timeline__add(t, 10 * i + 5, 2 * i, 100 + i);
	}
	/* Fine: 60..90; medium: 0, 20, 40 (two fine points each). */
	n = devmem_timeline__points(t, 0, p, 16);
	ASSERT_EQ(n, 7, "points");
	ASSERT_TRUE(ordered(p, n), "ordered");
	ASSERT_EQ(p[0].ts_ns, 0, "medium start");
	ASSERT_EQ(p[0].span_ns, 20, "medium span");
	ASSERT_EQ(p[0].in_use, 2, "medium last (the later fine point's last)");
	ASSERT_EQ(p[0].min_in_use, 0, "medium min");
	ASSERT_EQ(p[0].max_in_use, 3, "medium max");
	ASSERT_EQ(p[0].peak, 101, "medium peak");
	ASSERT_EQ(p[2].ts_ns, 40, "third medium");
	ASSERT_EQ(p[3].ts_ns, 60, "first fine");
	ASSERT_EQ(p[3].span_ns, 10, "fine span");
	ASSERT_EQ(p[3].in_use, 12, "fine last");
	ASSERT_EQ(p[3].min_in_use, 12, "fine min");
	ASSERT_EQ(p[3].max_in_use, 13, "fine max");
	ASSERT_EQ(p[6].ts_ns, 90, "newest fine");

	/* One more fine point: 60 goes to the medium tier (a point of its
	 * own, covering only 60..70 so far), which pushes 0 to the coarse. */
	devmem_timeline__add(t, 100, 50, 200);
	n = devmem_timeline__points(t, 0, p, 16);
	ASSERT_EQ(n, 8, "points after the push");
	ASSERT_TRUE(ordered(p, n), "ordered after the push");
	ASSERT_EQ(p[0].ts_ns, 0, "coarse start");
	ASSERT_EQ(p[0].span_ns, 20, "coarse covers what was folded only");
	ASSERT_EQ(p[0].max_in_use, 3, "coarse max");
	ASSERT_EQ(p[3].ts_ns, 60, "partial medium");
	ASSERT_EQ(p[3].span_ns, 10, "partial medium span");
	ASSERT_EQ(p[7].in_use, 50, "newest");
	ASSERT_EQ(p[7].peak, 200, "newest peak");

	/* since: points that end after it; max: the newest ones. */
	ASSERT_EQ(devmem_timeline__points(t, 75, p, 16), 4, "since 75");
	ASSERT_EQ(p[0].ts_ns, 70, "since 75: the point holding it");
	ASSERT_EQ(devmem_timeline__points(t, 0, p, 2), 2, "max 2");
	ASSERT_EQ(p[1].ts_ns, 100, "max 2: the newest");
	devmem_timeline__free(t);
}

static void test_spike_kept(void)
{
	const struct devmem_tier tiers[] = { { SEC, 10 }, { 10 * SEC, 6 }, { 60 * SEC, 5 } };
	struct devmem_timeline *t = devmem_timeline__new(tiers, 3);
	struct capture_mem_point p[32];
	size_t n;

	if (!ASSERT_TRUE(t, "new"))
		return;
	for (uint64_t s = 0; s < 200; s++)
		devmem_timeline__add(t, s * SEC, s == 7 ? 1000 : 10, s < 7 ? 10 : 1000);
	n = devmem_timeline__points(t, 0, p, 32);
	ASSERT_TRUE(ordered(p, n), "ordered");
	ASSERT_EQ(p[0].ts_ns, 0, "the oldest is coarse");
	ASSERT_EQ(p[0].span_ns, 60 * SEC, "a minute");
	ASSERT_EQ(p[0].max_in_use, 1000, "the spike's max kept");
	ASSERT_EQ(p[0].min_in_use, 10, "its min");
	ASSERT_EQ(p[0].in_use, 10, "its last");
	ASSERT_EQ(p[n - 1].peak, 1000, "the peak goes on");
	devmem_timeline__free(t);
}

static void test_month_bounded(void)
{
	struct devmem_timeline *t = devmem_timeline__new(NULL, 0);
	struct capture_mem_point *p;
	size_t bytes, n, max;
	uint64_t month = 30ull * 86400;

	if (!ASSERT_TRUE(t, "new (defaults)"))
		return;
	bytes = devmem_timeline__bytes(t);
	max = devmem_timeline__max_points(t);
	ASSERT_EQ(max, 600 + 1080 + 1440 + 4320, "default points");
	/* A short-lived process costs the finest tier only. */
	ASSERT_LE(bytes, 30 * 1024, "a new timeline: under 30 KiB");
	for (uint64_t s = 0; s < 600; s++)
		devmem_timeline__add(t, s * SEC, s * 1024, s * 1024);
	ASSERT_EQ(devmem_timeline__bytes(t), bytes, "10 minutes: the finest tier only");
	/* A leak of 1 KiB a second for a month, sampled every second. */
	for (uint64_t s = 600; s < month; s++)
		devmem_timeline__add(t, s * SEC, s * 1024, s * 1024);
	bytes = devmem_timeline__bytes(t);
	ASSERT_EQ(bytes, devmem_timeline__max_bytes(t), "a month: every tier");
	ASSERT_LE(bytes, 400 * 1024, "under 400 KiB");
	for (uint64_t s = month; s < month + 86400; s++)
		devmem_timeline__add(t, s * SEC, s * 1024, s * 1024);
	ASSERT_EQ(devmem_timeline__bytes(t), bytes, "and no more a day later");
	p = calloc(max, sizeof(*p));
	if (!ASSERT_TRUE(p, "calloc"))
		goto out;
	n = devmem_timeline__points(t, 0, p, max);
	ASSERT_LE(n, max, "points bounded");
	ASSERT_TRUE(ordered(p, n), "ordered");
	ASSERT_EQ(p[n - 1].in_use, (month + 86400 - 1) * 1024, "newest");
	ASSERT_EQ(p[n - 1].span_ns, SEC, "newest at 1 s");
	ASSERT_EQ(p[0].span_ns, 600 * SEC, "oldest at 10 min");
	/* The leak's slope holds end to end (a point's in_use is its last
	 * sample's, a second before the point ends). */
	ASSERT_EQ((p[n - 1].in_use - p[0].in_use) /
		  ((p[n - 1].ts_ns - (p[0].ts_ns + p[0].span_ns - SEC)) / SEC), 1024, "slope");
out:
	free(p);
	devmem_timeline__free(t);
}

static void test_resolution_at(void)
{
	struct devmem_timeline *t = devmem_timeline__new(NULL, 0);
	struct devmem_tier got[DEVMEM_MAX_TIERS];

	if (!ASSERT_TRUE(t, "new"))
		return;
	ASSERT_EQ(devmem_timeline__resolution_at(t, 0), SEC, "now");
	ASSERT_EQ(devmem_timeline__resolution_at(t, 599 * SEC), SEC, "9 min");
	ASSERT_EQ(devmem_timeline__resolution_at(t, 600 * SEC), 10 * SEC, "10 min");
	ASSERT_EQ(devmem_timeline__resolution_at(t, 3 * 3600 * SEC), 10 * SEC, "3 h");
	ASSERT_EQ(devmem_timeline__resolution_at(t, 12 * 3600 * SEC), 60 * SEC, "12 h");
	ASSERT_EQ(devmem_timeline__resolution_at(t, 20 * 86400 * SEC), 600 * SEC, "20 days");
	ASSERT_EQ(devmem_timeline__resolution_at(t, 40 * 86400 * SEC), 0, "40 days: gone");
	ASSERT_EQ(devmem_timeline__tiers(t, got, DEVMEM_MAX_TIERS), 4, "tiers");
	ASSERT_EQ(got[3].points, 4320, "coarsest points");
	devmem_timeline__free(t);
}

static void test_tiers_refused(void)
{
	const struct devmem_tier backwards[] = { { 20, 3 }, { 10, 4 } };
	const struct devmem_tier not_multiple[] = { { 10, 4 }, { 25, 3 } };
	const struct devmem_tier empty[] = { { 10, 0 } };
	const struct devmem_tier zero[] = { { 0, 4 } };
	const struct devmem_tier seven[7] = {
		{ 1, 1 }, { 2, 1 }, { 4, 1 }, { 8, 1 }, { 16, 1 }, { 32, 1 }, { 64, 1 },
	};

	errno = 0;
	ASSERT_TRUE(!devmem_timeline__new(backwards, 2) && errno == EINVAL, "out of order");
	ASSERT_TRUE(!devmem_timeline__new(not_multiple, 2) && errno == EINVAL, "not a multiple");
	ASSERT_TRUE(!devmem_timeline__new(empty, 1) && errno == EINVAL, "no points");
	ASSERT_TRUE(!devmem_timeline__new(zero, 1) && errno == EINVAL, "resolution 0");
	ASSERT_TRUE(!devmem_timeline__new(seven, 7) && errno == EINVAL, "too many tiers");
	ASSERT_TRUE(!devmem_timeline__new(seven, 0) && errno == EINVAL, "none");
}

static void test_late_sample(void)
{
	const struct devmem_tier tiers[] = { { 10, 4 } };
	struct devmem_timeline *t = devmem_timeline__new(tiers, 1);
	struct capture_mem_point p[4];

	if (!ASSERT_TRUE(t, "new"))
		return;
	devmem_timeline__add(t, 30, 5, 5);
	devmem_timeline__add(t, 12, 7, 7);	/* older: joins the newest */
	ASSERT_EQ(devmem_timeline__points(t, 0, p, 4), 1, "one point");
	ASSERT_EQ(p[0].max_in_use, 7, "folded in");
	devmem_timeline__free(t);
}

int main(void)
{
	test_fold_arithmetic();
	test_spike_kept();
	test_month_bounded();
	test_resolution_at();
	test_tiers_refused();
	test_late_sample();
	return test_exit();
}
