/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Clocks in nanoseconds. CLOCK_MONOTONIC is bpf_ktime_get_ns()'s clock:
 * the kernel's records, the capture's times and every deadline use it;
 * CLOCK_REALTIME only names a wall-clock time (a session's name, --at).
 */
#ifndef ACCELTRACE_CLOCK_H
#define ACCELTRACE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Now, on the kernel's records' clock. */
static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

#endif /* ACCELTRACE_CLOCK_H */
