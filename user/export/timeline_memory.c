// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A device memory allocator as counter points: the timeline since its
 * process started (the acceltrace.memory_timelines stat: hours before the
 * window, which XProf's viewer cannot show), each point at its span's end
 * (when its in-use bytes hold), and in the window every allocation and
 * free, exact. Where the two overlap the events win: they are finer.
 */
#include <errno.h>
#include <stdlib.h>

#include "export/timeline.h"
#include "lib/array.h"
#include "reader/xspace_memory.h"

struct sample {
	uint64_t ts;
	int64_t bytes;
	size_t seq;
};

static int cmp_sample(const void *a, const void *b)
{
	const struct sample *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* zero + ns, false when it falls before the clock's 0 or past its end. */
static bool at(uint64_t zero, int64_t ns, uint64_t *ts)
{
	/* -INT64_MIN has no int64_t: negate as unsigned. */
	uint64_t back = 0 - (uint64_t)ns;

	if (ns < 0)
		return back <= zero ? (*ts = zero - back, true) : false;
	return !__builtin_add_overflow(zero, (uint64_t)ns, ts);
}

int timeline_counter_points(const struct xs_mem_allocator *a, uint64_t zero_ns,
			    struct timeline_counter *c)
{
	size_t n = 0, cap = a->n_points + a->n_events;
	struct sample *v = calloc(cap ? cap : 1, sizeof(*v));
	int64_t first = a->n_events ? a->events[0].time_ps / 1000 : INT64_MAX;
	int64_t last = a->n_events ? a->events[a->n_events - 1].time_ps / 1000 : INT64_MIN;

	c->n = 0;
	c->ts_ns = NULL;
	c->bytes = NULL;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_points; i++) {
		const struct xs_mem_point *p = &a->points[i];
		int64_t end;
		uint64_t ts;

		if (__builtin_add_overflow(p->t_ns, p->span_ns, &end) ||
		    (end >= first && end <= last) || !at(zero_ns, end, &ts))
			continue;
		v[n] = (struct sample){ .ts = ts, .bytes = p->in_use, .seq = n };
		n++;
	}
	for (size_t i = 0; i < a->n_events; i++) {
		uint64_t ts;

		if (!at(zero_ns, a->events[i].time_ps / 1000, &ts))
			continue;
		v[n] = (struct sample){ .ts = ts, .bytes = a->events[i].in_use, .seq = n };
		n++;
	}
	array_sort(v, n, sizeof(*v), cmp_sample);
	c->ts_ns = calloc(n ? n : 1, sizeof(*c->ts_ns));
	c->bytes = calloc(n ? n : 1, sizeof(*c->bytes));
	if (!c->ts_ns || !c->bytes) {
		free(c->ts_ns);
		free(c->bytes);
		c->ts_ns = NULL;
		c->bytes = NULL;
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		c->ts_ns[i] = v[i].ts;
		c->bytes[i] = v[i].bytes;
	}
	c->n = n;
	free(v);
	return 0;
}
