// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory in the capture model: the window's allocations and frees
 * (copied, bounded, put in time order at finalize, trimmed with the window
 * by capture__drop_before/after) and one timeline per allocator.
 *
 * The budget: a capture keeps at most max_spans memory events, apart from
 * its spans (an allocation is not less useful than a span, and the two do
 * not compete). Past it the oldest go, counted: each event carries the
 * bytes in use after it, so what is kept still draws the right curve, and
 * the daemon's window, which moves on for ever, keeps its latest. As with
 * spans, memory stays bounded during the window: past one and a half
 * times the budget, down to it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture_internal.h"
#include "lib/array.h"

#include <linux/types.h>
#include "acceltrace/events.h"

struct mem_order {
	uint64_t ts_ns;
	size_t i;
};

static int mem_order_cmp(const void *a, const void *b)
{
	const struct mem_order *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Time order, stable: a free and an allocation at the same instant stay
 * in the order they were recorded. */
static int mem_sort(struct capture *c)
{
	struct capture_mem_event *sorted;
	struct mem_order *ord;
	bool in_order = true;
	size_t n = c->nmem_events;

	for (size_t i = 1; i < n && in_order; i++)
		in_order = c->mem_events[i - 1].ts_ns <= c->mem_events[i].ts_ns;
	if (in_order)
		return 0;
	ord = malloc(n * sizeof(*ord));
	sorted = malloc(n * sizeof(*sorted));
	if (!ord || !sorted) {
		free(ord);
		free(sorted);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = (struct mem_order){ c->mem_events[i].ts_ns, i };
	array_sort(ord, n, sizeof(*ord), mem_order_cmp);
	for (size_t i = 0; i < n; i++)
		sorted[i] = c->mem_events[ord[i].i];
	free(ord);
	free(c->mem_events);
	c->mem_events = sorted;
	c->mem_events_cap = n;
	return 0;
}

/* Down to the budget: the oldest go, counted. */
static int mem_trim(struct capture *c)
{
	size_t excess;
	int err;

	if (c->nmem_events <= c->max_spans)
		return 0;
	err = mem_sort(c);
	if (err)
		return err;
	excess = c->nmem_events - c->max_spans;
	memmove(c->mem_events, c->mem_events + excess,
		c->max_spans * sizeof(*c->mem_events));
	c->nmem_events = c->max_spans;
	c->mem_dropped += excess;
	return 0;
}

int capture__add_mem_event(struct capture *c, const struct capture_mem_event *e)
{
	if (c->finalized)
		return -EBUSY;
	if ((e->op != CAPTURE_MEM_ALLOC && e->op != CAPTURE_MEM_FREE) || !e->alloc.name)
		return -EINVAL;
	if (ARRAY_GROW(c->mem_events, c->mem_events_cap, c->nmem_events + 1))
		return -ENOMEM;
	c->mem_events[c->nmem_events++] = *e;
	/* A trim that found no memory is tried again at the next event;
	 * finalize's is the one that must succeed. */
	if (c->nmem_events > c->max_spans &&
	    c->nmem_events - c->max_spans >= c->max_spans / 2 + 1)
		(void)mem_trim(c);
	return 0;
}

static bool same_allocator(const struct capture_mem_allocator *a,
			   const struct capture_mem_allocator *b)
{
	return a->pid == b->pid && a->device == b->device && a->layer == b->layer &&
	       a->name == b->name;
}

int capture__set_mem_timeline(struct capture *c, const struct capture_mem_allocator *a,
			      const struct capture_mem_point *points, size_t n)
{
	struct capture_mem_point *copy = NULL;
	struct mem_timeline *t = NULL;

	if (c->finalized)
		return -EBUSY;
	if (!a->name || (n && !points))
		return -EINVAL;
	for (size_t i = 1; i < n; i++) {
		if (points[i].ts_ns < points[i - 1].ts_ns)
			return -EINVAL;
	}
	if (n) {
		copy = malloc(n * sizeof(*copy));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, points, n * sizeof(*copy));
	}
	for (size_t i = 0; i < c->nmem_timelines; i++) {
		if (same_allocator(&c->mem_timelines[i].alloc, a)) {
			t = &c->mem_timelines[i];
			break;
		}
	}
	if (!t) {
		if (ARRAY_GROW(c->mem_timelines, c->mem_timelines_cap, c->nmem_timelines + 1)) {
			free(copy);
			return -ENOMEM;
		}
		t = &c->mem_timelines[c->nmem_timelines++];
		*t = (struct mem_timeline){ .alloc = *a };
	}
	free(t->points);
	t->points = copy;
	t->n = n;
	return 0;
}

/* Removes the events @drop says go; returns how many went. */
static uint64_t mem_drop_where(struct capture *c, bool after, uint64_t t)
{
	size_t w = 0;
	uint64_t gone;

	if (c->finalized)
		return 0;
	for (size_t i = 0; i < c->nmem_events; i++) {
		const struct capture_mem_event *e = &c->mem_events[i];

		if (after ? e->ts_ns > t : e->ts_ns < t)
			continue;
		if (w != i)
			c->mem_events[w] = *e;
		w++;
	}
	gone = c->nmem_events - w;
	c->nmem_events = w;
	/* The daemon's window moves on for ever: what it forgot is given
	 * back, as capture_track_shrink does for spans. */
	if (w < c->mem_events_cap / 4) {
		if (!w) {
			free(c->mem_events);
			c->mem_events = NULL;
			c->mem_events_cap = 0;
		} else {
			struct capture_mem_event *p = realloc(c->mem_events, w * 2 * sizeof(*p));

			if (p) {
				c->mem_events = p;
				c->mem_events_cap = w * 2;
			}
		}
	}
	return gone;
}

uint64_t capture_mem_drop_after(struct capture *c, uint64_t stop_ns)
{
	return mem_drop_where(c, true, stop_ns);
}

uint64_t capture_mem_drop_before(struct capture *c, uint64_t start_ns)
{
	return mem_drop_where(c, false, start_ns);
}

int capture_mem_finalize(struct capture *c)
{
	uint64_t unknown = 0;
	int err = mem_sort(c);

	if (!err)
		err = mem_trim(c);
	if (err)
		return err;
	/* Said, not only flagged per event: a reader of the warnings learns
	 * that in-use bytes may miss what was allocated before the probes. */
	for (size_t i = 0; i < c->nmem_events; i++)
		unknown += !!(c->mem_events[i].flags & CAPTURE_MEM_F_SIZE_UNKNOWN);
	if (unknown) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "%" PRIu64 " device memory frees of allocations made before the "
			 "probes attached: counted, their size unknown", unknown);
		capture_add_warning(c, msg);
	}
	if (c->mem_dropped) {
		char msg[160];

		snprintf(msg, sizeof(msg),
			 "%" PRIu64 " device memory allocations and frees not kept "
			 "(budget: %" PRIu64 " per capture)", c->mem_dropped, c->max_spans);
		capture_add_warning(c, msg);
	}
	return 0;
}

void capture_mem_free(struct capture *c)
{
	free(c->mem_events);
	for (size_t i = 0; i < c->nmem_timelines; i++)
		free(c->mem_timelines[i].points);
	free(c->mem_timelines);
}

size_t capture__num_mem_events(const struct capture *c)
{
	return c->nmem_events;
}

const struct capture_mem_event *capture__mem_event(const struct capture *c, size_t i)
{
	return i < c->nmem_events ? &c->mem_events[i] : NULL;
}

uint64_t capture__mem_events_dropped(const struct capture *c)
{
	return c->mem_dropped;
}

size_t capture__num_mem_timelines(const struct capture *c)
{
	return c->nmem_timelines;
}

const struct capture_mem_point *capture__mem_timeline(const struct capture *c, size_t i,
						      struct capture_mem_allocator *a,
						      size_t *n)
{
	if (i >= c->nmem_timelines) {
		*n = 0;
		return NULL;
	}
	if (a)
		*a = c->mem_timelines[i].alloc;
	*n = c->mem_timelines[i].n;
	return c->mem_timelines[i].points;
}

const char *capture__mem_layer_name(uint32_t layer)
{
	switch (layer) {
	case MEM_LAYER_PJRT:
		return "pjrt_buffers";
	case MEM_LAYER_CUDA:
		return "cuda_reserved";
	default:
		return NULL;
	}
}
