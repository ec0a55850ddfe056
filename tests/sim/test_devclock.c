// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device clock converts both ways: monotonic, a round trip exact to one
 * unit of the coarser clock, drift and offset as documented, against values
 * worked out by hand.
 */
#include "test.h"
#include "devclock.h"

static void check_round_trips(const struct devclock *c, const char *what)
{
	/* ns per tick, rounded up: the host side of a round trip may lose it */
	uint64_t tick_ns = (1000000000ull + c->rate_hz - 1) / c->rate_hz;
	uint64_t ticks_per_ns = c->rate_hz / 1000000000ull + 1;
	uint64_t h, prev_t = 0, prev_h = 0;
	int i, bad_mono = 0, bad_host = 0, bad_dev = 0;

	for (i = 0; i < 200000; i++) {
		uint64_t t, h2, t2;

		h = c->epoch_ns + (uint64_t)i * 7919ull * (i % 3 ? 1 : 1000);
		t = devclock_to_device(c, h);
		h2 = devclock_to_host(c, t);
		t2 = devclock_to_device(c, h2);
		if (i && (h >= prev_h) && t < prev_t)
			bad_mono++;
		if (h2 > h || h - h2 > tick_ns)
			bad_host++;
		if (t2 > t || t - t2 > ticks_per_ns)
			bad_dev++;
		prev_t = t;
		prev_h = h;
	}
	ASSERT_EQ(bad_mono, 0, what);
	ASSERT_EQ(bad_host, 0, what);
	ASSERT_EQ(bad_dev, 0, what);
}

int main(void)
{
	struct devclock c = {
		.epoch_ns = 1000000000000ull,	/* 1000 s after boot */
		.offset_ticks = 5000000000000ull,
		.rate_hz = 940000000,
		.drift_ppb = 37000,
	};
	struct devclock exact = {
		.epoch_ns = 0, .offset_ticks = 0, .rate_hz = 1000000000, .drift_ppb = 0,
	};
	struct devclock fast = {
		.epoch_ns = 50, .offset_ticks = 7, .rate_hz = 2500000000ull, .drift_ppb = -120000,
	};

	/* At the epoch the device reads its offset, both ways. */
	ASSERT_EQ(devclock_to_device(&c, c.epoch_ns), c.offset_ticks, "offset at epoch");
	ASSERT_EQ(devclock_to_host(&c, c.offset_ticks), c.epoch_ns, "epoch at offset");

	/* One second later: 940e6 * (1 + 37e-6) = 940034780 ticks. */
	ASSERT_EQ(devclock_to_device(&c, c.epoch_ns + 1000000000ull),
		  c.offset_ticks + 940034780ull, "one second of drifting ticks");
	/* And 940034780 ticks later is exactly one second later. */
	ASSERT_EQ(devclock_to_host(&c, c.offset_ticks + 940034780ull),
		  c.epoch_ns + 1000000000ull, "940034780 ticks back to host");
	/* An hour: 3600 * 940034780 = 3384125208000 ticks. */
	ASSERT_EQ(devclock_to_device(&c, c.epoch_ns + 3600000000000ull),
		  c.offset_ticks + 3384125208000ull, "an hour");

	/* Before the epoch the clock runs too (floor, not truncation). */
	ASSERT_EQ(devclock_to_device(&c, c.epoch_ns - 1), c.offset_ticks - 1,
		  "one ns before the epoch");
	ASSERT_EQ(devclock_to_host(&c, c.offset_ticks - 1), c.epoch_ns - 2,
		  "one tick before the offset");

	/* A 1 GHz clock without drift or offset is the identity. */
	ASSERT_EQ(devclock_to_device(&exact, 123456789), 123456789, "identity to device");
	ASSERT_EQ(devclock_to_host(&exact, 987654321), 987654321, "identity to host");

	/* 104 days out stays exact (the documented domain). */
	ASSERT_GE(devclock_to_host(&c, devclock_to_device(&c, c.epoch_ns + (1ull << 53))),
		  c.epoch_ns + (1ull << 53) - 2, "far future round trip, from below");
	ASSERT_LE(devclock_to_host(&c, devclock_to_device(&c, c.epoch_ns + (1ull << 53))),
		  c.epoch_ns + (1ull << 53) + 2, "far future round trip, from above");

	check_round_trips(&c, "940 MHz +37 ppm round trips");
	check_round_trips(&fast, "2.5 GHz -120 ppm round trips");
	return test_exit();
}
