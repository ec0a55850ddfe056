/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * When the daemon wants detail: always (full), or in slices (sampled: one
 * of slice_ns every interval_ns from the daemon's start) and, either way,
 * through a pending capture's window after its trigger. Pure time
 * arithmetic: the daemon turns the probes on and off when the answer
 * changes (flight_recorder__set_detail).
 */
#ifndef ACCELTRACE_DETAIL_SAMPLER_H
#define ACCELTRACE_DETAIL_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

struct detail_sampler {
	bool full;
	uint64_t interval_ns;		/* a slice begins this often */
	uint64_t slice_ns;		/* and lasts this long (0: no slices) */
	uint64_t epoch_ns;		/* the first slice's start */
	uint64_t hold_from_ns;		/* a trigger's window after it: */
	uint64_t hold_until_ns;		/* [from, until); 0: none */
};

void detail_sampler__init(struct detail_sampler *s, bool full, uint64_t interval_ns,
			  uint64_t slice_ns, uint64_t now_ns);
/* New settings (a reload); the slices keep their phase. */
void detail_sampler__configure(struct detail_sampler *s, bool full,
			       uint64_t interval_ns, uint64_t slice_ns);
/* Detail through [from_ns, until_ns) whatever the slices say. */
void detail_sampler__hold(struct detail_sampler *s, uint64_t from_ns, uint64_t until_ns);
void detail_sampler__release(struct detail_sampler *s);
bool detail_sampler__want(const struct detail_sampler *s, uint64_t now_ns);

#endif /* ACCELTRACE_DETAIL_SAMPLER_H */
