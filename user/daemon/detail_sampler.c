// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* When the daemon wants detail: see detail_sampler.h. */
#include "daemon/detail_sampler.h"

void detail_sampler__init(struct detail_sampler *s, bool full, uint64_t interval_ns,
			  uint64_t slice_ns, uint64_t now_ns)
{
	*s = (struct detail_sampler){ .epoch_ns = now_ns };
	detail_sampler__configure(s, full, interval_ns, slice_ns);
}

void detail_sampler__configure(struct detail_sampler *s, bool full,
			       uint64_t interval_ns, uint64_t slice_ns)
{
	s->full = full;
	s->interval_ns = interval_ns;
	s->slice_ns = slice_ns;
}

void detail_sampler__hold(struct detail_sampler *s, uint64_t from_ns, uint64_t until_ns)
{
	s->hold_from_ns = from_ns;
	s->hold_until_ns = until_ns;
}

void detail_sampler__release(struct detail_sampler *s)
{
	s->hold_from_ns = s->hold_until_ns = 0;
}

bool detail_sampler__want(const struct detail_sampler *s, uint64_t now_ns)
{
	if (s->full)
		return true;
	if (s->hold_until_ns && now_ns >= s->hold_from_ns && now_ns < s->hold_until_ns)
		return true;
	if (!s->slice_ns || now_ns < s->epoch_ns)
		return false;
	/* A slice as long as the interval, or longer, never ends. */
	if (!s->interval_ns || s->slice_ns >= s->interval_ns)
		return true;
	return (now_ns - s->epoch_ns) % s->interval_ns < s->slice_ns;
}
