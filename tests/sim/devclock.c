// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The device clock model: host CLOCK_MONOTONIC <-> device ticks. */
#include "devclock.h"

#define NS_PER_S 1000000000LL

/* floor(a / b) for b > 0, whatever the sign of a. */
static __int128 floor_div(__int128 a, __int128 b)
{
	__int128 q = a / b;

	if ((a % b) && a < 0)
		q--;
	return q;
}

static __int128 ticks_per_1e18_ns(const struct devclock *c)
{
	return (__int128)c->rate_hz * (NS_PER_S + c->drift_ppb);
}

uint64_t devclock_to_device(const struct devclock *c, uint64_t host_ns)
{
	__int128 d = (__int128)host_ns - (__int128)c->epoch_ns;
	__int128 scale = (__int128)NS_PER_S * NS_PER_S;

	return (uint64_t)((__int128)c->offset_ticks +
			  floor_div(d * ticks_per_1e18_ns(c), scale));
}

uint64_t devclock_to_host(const struct devclock *c, uint64_t ticks)
{
	__int128 d = (__int128)ticks - (__int128)c->offset_ticks;
	__int128 scale = (__int128)NS_PER_S * NS_PER_S;

	return (uint64_t)((__int128)c->epoch_ns +
			  floor_div(d * scale, ticks_per_1e18_ns(c)));
}
