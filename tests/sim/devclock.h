/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The simulated device's clock: a counter running at rate_hz * (1 + drift)
 * that read offset_ticks at host CLOCK_MONOTONIC time epoch_ns.
 *
 *   ticks(h) = offset + floor((h - epoch) * rate * (1e9 + drift_ppb) / 1e18)
 *   host(t)  = epoch  + floor((t - offset) * 1e18 / (rate * (1e9 + drift_ppb)))
 *
 * Both are monotonic, and a round trip is exact to one unit of the coarser
 * clock. Exact integer arithmetic (128-bit) holds for |h - epoch| < 2^53 ns
 * (104 days) and rates up to 10 GHz.
 */
#ifndef ACCELTRACE_SIM_DEVCLOCK_H
#define ACCELTRACE_SIM_DEVCLOCK_H

#include <stdint.h>

struct devclock {
	uint64_t epoch_ns;	/* host time at which the device read offset_ticks */
	uint64_t offset_ticks;
	uint64_t rate_hz;	/* nominal rate, as the devtrace header states it */
	int64_t drift_ppb;	/* true rate = rate_hz * (1 + drift_ppb / 1e9) */
};

uint64_t devclock_to_device(const struct devclock *c, uint64_t host_ns);
uint64_t devclock_to_host(const struct devclock *c, uint64_t ticks);

#endif /* ACCELTRACE_SIM_DEVCLOCK_H */
