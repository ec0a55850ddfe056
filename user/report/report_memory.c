// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory per allocator (one process's layer on one device): the
 * window's peak, exact to the allocation, and the step it fell in; in use
 * at the window's start and end; growth per step and over the whole
 * timeline, named a leak when steady (docs/report.md says the criterion);
 * the largest live allocations at the peak, replayed from the window's
 * events; churn per step. Reads reader/xspace_memory.h.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "reader/xspace_memory.h"
#include "report/report_internal.h"

#define NS_PER_HOUR 3.6e12
/* Steps without a memory event a capture may hold, beyond one per event. */
#define REPORT_MEM_MAX_EMPTY_STEPS 100000

/* ns as ps, saturated: the timeline's times come from the file. */
static int64_t ns_to_ps(int64_t ns)
{
	int64_t ps;

	if (__builtin_mul_overflow(ns, 1000, &ps))
		return ns < 0 ? INT64_MIN : INT64_MAX;
	return ps;
}

/* A point's end in ns, saturated. */
static int64_t point_end_ns(const struct xs_mem_point *p)
{
	int64_t end;

	return __builtin_add_overflow(p->t_ns, p->span_ns, &end) ? INT64_MAX : end;
}

/* Least-squares line y = a + slope x, points weighted by w (NULL: 1 each).
 * No line through fewer points than the leak rule needs: two or three say
 * nothing (three points over two seconds made MiB an hour). */
static void fit_line(const double *x, const double *y, const double *w, size_t n,
		     double peak, struct report_mem_fit *f)
{
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0, span, mx, my;

	f->points = n;
	f->slope = f->r2 = NAN;
	f->leak = false;
	if (n < REPORT_MEM_LEAK_MIN_POINTS)
		return;
	for (size_t i = 0; i < n; i++) {
		double wi = w ? w[i] : 1;

		sw += wi;
		sx += wi * x[i];
		sy += wi * y[i];
	}
	mx = sx / sw;
	my = sy / sw;
	/* Centred sums: byte counts near 2^40 would cancel otherwise. */
	for (size_t i = 0; i < n; i++) {
		double wi = w ? w[i] : 1, dx = x[i] - mx, dy = y[i] - my;

		sxx += wi * dx * dx;
		sxy += wi * dx * dy;
		syy += wi * dy * dy;
	}
	if (sxx <= 0)
		return;
	f->slope = sxy / sxx;
	if (syy > 0)
		f->r2 = sxy * sxy / (sxx * syy);
	span = x[n - 1] - x[0];
	f->leak = f->slope > 0 && !isnan(f->r2) &&
		  f->r2 >= REPORT_MEM_LEAK_MIN_R2 &&
		  f->slope * span >= REPORT_MEM_LEAK_MIN_SHARE * peak;
}

/* The step [start, next start) that holds t, as its number; -1 if none. */
static int64_t step_at(const struct report_ctx *c, int64_t t)
{
	size_t n = c->n_step_starts;

	if (!n || t < c->step_starts[0])
		return -1;
	for (size_t i = 0; i < n; i++) {
		int64_t end = i + 1 < n ? c->step_starts[i + 1] : c->steps_end_ps;

		if (t < end || (i + 1 == n && t == end))
			return c->step_nums ? c->step_nums[i] : (int64_t)i;
	}
	return -1;
}

/* In use at the window's start: just before its first event, else the timeline. */
static int64_t in_use_at_start(const struct xs_mem_allocator *a)
{
	int64_t v = -1;

	if (a->n_events) {
		const struct xs_mem_event *e = &a->events[0];

		/* Past the kernel's live table: counted, not in use. */
		if (!e->is_free && e->untracked)
			return e->in_use;
		if (!e->is_free && e->size > 0 && e->in_use >= e->size)
			return e->in_use - e->size;
		if (e->is_free && !e->size_unknown && e->size > 0)
			return __builtin_add_overflow(e->in_use, e->size, &v) ? -1 : v;
		if (e->is_free && e->size_unknown)
			return e->in_use;	/* counted, never sized: bytes unchanged */
	}
	for (size_t i = 0; i < a->n_points && point_end_ns(&a->points[i]) <= 0; i++)
		v = a->points[i].in_use;
	return v;
}

static int cmp_addr_time(const void *x, const void *y)
{
	const struct xs_mem_event *a = *(const struct xs_mem_event *const *)x;
	const struct xs_mem_event *b = *(const struct xs_mem_event *const *)y;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a < b ? -1 : a > b;	/* the events are in time order */
}

/*
 * Which allocations are live at the peak (event @peak): per address, the
 * last event up to the peak is an allocation. Those made before the
 * window are not known one by one: what they hold is the peak less the
 * rest.
 */
static int largest_at_peak(const struct xs_mem_allocator *a, size_t peak,
			   struct report_mem_device *d)
{
	const struct xs_mem_event **v = malloc((peak + 1) * sizeof(*v));
	int64_t known = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i <= peak; i++)
		v[i] = &a->events[i];
	array_sort(v, peak + 1, sizeof(*v), cmp_addr_time);
	for (size_t i = 0; i <= peak; i++) {
		const struct xs_mem_event *e = v[i];
		size_t k;

		/* Untracked ones are not in the peak's bytes in use either. */
		if ((i < peak && v[i + 1]->addr == e->addr) || e->is_free || e->size <= 0 ||
		    e->untracked)
			continue;
		if (__builtin_add_overflow(known, e->size, &known))
			known = INT64_MAX;	/* a hostile file's sizes */
		/* Keep the REPORT_MEM_LARGEST largest, largest first. */
		for (k = d->n_largest; k > 0 && d->largest[k - 1].bytes < e->size; k--)
			if (k < REPORT_MEM_LARGEST)
				d->largest[k] = d->largest[k - 1];
		if (k >= REPORT_MEM_LARGEST)
			continue;
		d->largest[k] = (struct report_mem_alloc){
			.addr = e->addr, .bytes = e->size, .time_ps = e->time_ps,
			.api = e->api, .shapes = e->shapes, .data_type = e->data_type,
		};
		if (d->n_largest < REPORT_MEM_LARGEST)
			d->n_largest++;
	}
	d->peak_unattributed_bytes = d->peak_bytes > known ? d->peak_bytes - known : 0;
	free(v);
	return 0;
}

static void window_peak(const struct report_ctx *c, const struct xs_mem_allocator *a,
			struct report_mem_device *d, size_t *peak_idx)
{
	int64_t end_ps = c->r->window_ps;

	if (end_ps < 0 && __builtin_add_overflow(c->span_start_ps, c->r->span_ps, &end_ps))
		end_ps = INT64_MAX;
	*peak_idx = SIZE_MAX;
	d->in_use_start_bytes = in_use_at_start(a);
	d->peak_bytes = d->peak_time_ps = d->peak_step = d->in_use_end_bytes = -1;
	if (d->in_use_start_bytes >= 0) {
		d->peak_bytes = d->in_use_start_bytes;
		d->peak_time_ps = a->n_events ? a->events[0].time_ps : 0;
	}
	for (size_t i = 0; i < a->n_events; i++)
		if (a->events[i].in_use > d->peak_bytes) {
			d->peak_bytes = a->events[i].in_use;
			d->peak_time_ps = a->events[i].time_ps;
			*peak_idx = i;
		}
	if (a->n_events) {
		d->in_use_end_bytes = a->events[a->n_events - 1].in_use;
	} else {
		/* No allocation or free in the window: the timeline's points in
		 * it, else what was in use at its start. */
		d->in_use_end_bytes = d->in_use_start_bytes;
		for (size_t i = 0; i < a->n_points; i++) {
			const struct xs_mem_point *p = &a->points[i];

			if (p->t_ns < 0 || ns_to_ps(p->t_ns) > end_ps)
				continue;
			if (p->max > d->peak_bytes) {
				d->peak_bytes = p->max;
				d->peak_time_ps = ns_to_ps(p->t_ns);
			}
			d->in_use_end_bytes = p->in_use;
		}
	}
	if (*peak_idx != SIZE_MAX && a->events[*peak_idx].group_id >= 0)
		d->peak_step = a->events[*peak_idx].group_id;
	else if (d->peak_time_ps >= 0)
		d->peak_step = step_at(c, d->peak_time_ps);
}

static int cmp_group_time(const void *x, const void *y)
{
	const struct xs_mem_event *a = *(const struct xs_mem_event *const *)x;
	const struct xs_mem_event *b = *(const struct xs_mem_event *const *)y;

	if (a->group_id != b->group_id)
		return a->group_id < b->group_id ? -1 : 1;
	return a < b ? -1 : a > b;	/* the events are in time order */
}

/* The capture's steps by group_id, over every allocator: [lo, hi]. */
struct step_range {
	int64_t lo, hi;		/* lo > hi: no group ids */
};

/* In use at each step's end, and the churn summed, over the steps. */
struct step_series {
	double *x, *y;
	size_t n;
	uint64_t allocs, frees, alloc_bytes, free_bytes;
};

static void count(struct step_series *s, const struct xs_mem_event *e)
{
	s->allocs += !e->is_free;
	s->frees += e->is_free;
	s->alloc_bytes += e->is_free ? 0 : (uint64_t)e->size;
	s->free_bytes += e->is_free ? (uint64_t)e->size : 0;
}

/*
 * Steps by group_id: a step with no event of this allocator ends with
 * what the last one left (or what was in use at the start).
 */
static int by_group(const struct xs_mem_allocator *a, struct step_range g, int64_t start,
		    struct step_series *s)
{
	const struct xs_mem_event **v = malloc((a->n_events ? a->n_events : 1) * sizeof(*v));
	size_t m = 0, k = 0;
	int64_t cur = start;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < a->n_events; i++)
		if (a->events[i].group_id >= 0)
			v[m++] = &a->events[i];
	array_sort(v, m, sizeof(*v), cmp_group_time);
	/* By offset: g.hi may be INT64_MAX, and step++ past it overflows. */
	for (uint64_t off = 0; off <= (uint64_t)(g.hi - g.lo); off++) {
		int64_t step = g.lo + (int64_t)off;

		for (; k < m && v[k]->group_id == step; k++) {
			count(s, v[k]);
			cur = v[k]->in_use;
		}
		if (cur >= 0) {
			s->x[s->n] = (double)step;
			s->y[s->n++] = (double)cur;
		}
	}
	free(v);
	return 0;
}

/* Steps by their ranges [start, next start): in use at each boundary. */
static void by_range(const struct report_ctx *c, const struct xs_mem_allocator *a,
		     int64_t start, struct step_series *s)
{
	int64_t cur = start;
	size_t i = 0;

	for (size_t b = 1; b < c->n_step_starts; b++) {
		for (; i < a->n_events && a->events[i].time_ps < c->step_starts[b]; i++) {
			cur = a->events[i].in_use;
			if (a->events[i].time_ps >= c->step_starts[0])
				count(s, &a->events[i]);
		}
		if (cur >= 0) {
			s->x[s->n] = (double)(b - 1);
			s->y[s->n++] = (double)cur;
		}
	}
}

static int per_step(const struct report_ctx *c, const struct xs_mem_allocator *a,
		    struct step_range g, struct report_mem_device *d)
{
	size_t steps = g.lo <= g.hi ? (size_t)(g.hi - g.lo + 1) :
		       c->n_step_starts >= 2 ? c->n_step_starts - 1 : 0;
	struct step_series s = { 0 };
	int ret = 0;

	d->allocs_per_step = d->frees_per_step = NAN;
	d->alloc_bytes_per_step = d->free_bytes_per_step = NAN;
	d->growth = (struct report_mem_fit){ .slope = NAN, .r2 = NAN };
	if (!steps)
		return 0;
	s.x = calloc(steps, sizeof(*s.x));
	s.y = calloc(steps, sizeof(*s.y));
	if (!s.x || !s.y)
		ret = -ENOMEM;
	else if (g.lo <= g.hi)
		ret = by_group(a, g, d->in_use_start_bytes, &s);
	else
		by_range(c, a, d->in_use_start_bytes, &s);
	if (!ret) {
		fit_line(s.x, s.y, NULL, s.n, (double)d->peak_bytes, &d->growth);
		d->churn_steps = steps;
		d->allocs_per_step = (double)s.allocs / (double)steps;
		d->frees_per_step = (double)s.frees / (double)steps;
		d->alloc_bytes_per_step = (double)s.alloc_bytes / (double)steps;
		d->free_bytes_per_step = (double)s.free_bytes / (double)steps;
	}
	free(s.x);
	free(s.y);
	return ret;
}

/*
 * The group ids the capture's memory events carry. A range no capture
 * could hold (hostile ids) is refused: the steps' ranges are used instead.
 */
static struct step_range group_range(const struct xs_memory *m)
{
	struct step_range g = { INT64_MAX, INT64_MIN };
	uint64_t events = 0;

	for (size_t i = 0; i < m->n_allocs; i++)
		for (size_t k = 0; k < m->allocs[i].n_events; k++) {
			int64_t v = m->allocs[i].events[k].group_id;

			events++;
			if (v < 0)
				continue;
			g.lo = v < g.lo ? v : g.lo;
			g.hi = v > g.hi ? v : g.hi;
		}
	if (g.lo <= g.hi && (uint64_t)(g.hi - g.lo) > events + REPORT_MEM_MAX_EMPTY_STEPS)
		g = (struct step_range){ INT64_MAX, INT64_MIN };
	return g;
}

/* The whole timeline: each point weighted by its span, so that the
 * fine recent points do not outvote hours of coarse ones. */
static int whole_timeline(const struct xs_mem_allocator *a, struct report_mem_device *d)
{
	size_t n = a->n_points;
	double *x, *y, *w;

	d->timeline_points = n;
	d->timeline_growth = (struct report_mem_fit){ .slope = NAN, .r2 = NAN };
	if (!n)
		return 0;
	x = calloc(n, sizeof(*x));
	y = calloc(n, sizeof(*y));
	w = calloc(n, sizeof(*w));
	if (!x || !y || !w) {
		free(x);
		free(y);
		free(w);
		return -ENOMEM;
	}
	d->timeline_start_ps = ns_to_ps(a->points[0].t_ns);
	d->timeline_end_ps = ns_to_ps(point_end_ns(&a->points[n - 1]));
	d->timeline_first_bytes = a->points[0].in_use;
	d->timeline_last_bytes = a->points[n - 1].in_use;
	d->timeline_finest_ns = INT64_MAX;
	d->timeline_peak_bytes = d->timeline_coarsest_ns = 0;
	for (size_t i = 0; i < n; i++) {
		const struct xs_mem_point *p = &a->points[i];
		int64_t top = p->peak > p->max ? p->peak : p->max;

		d->timeline_peak_bytes = top > d->timeline_peak_bytes ? top : d->timeline_peak_bytes;
		d->timeline_finest_ns = p->span_ns < d->timeline_finest_ns ? p->span_ns :
					d->timeline_finest_ns;
		d->timeline_coarsest_ns = p->span_ns > d->timeline_coarsest_ns ? p->span_ns :
					  d->timeline_coarsest_ns;
		x[i] = ((double)p->t_ns + (double)p->span_ns) / NS_PER_HOUR;
		y[i] = (double)p->in_use;
		w[i] = p->span_ns > 0 ? (double)p->span_ns : 1;
	}
	d->timeline_too_short = d->timeline_end_ps - d->timeline_start_ps <
				REPORT_MEM_RATE_MIN_SPAN_NS * 1000;
	if (!d->timeline_too_short)
		fit_line(x, y, w, n, (double)d->timeline_peak_bytes, &d->timeline_growth);
	else
		d->timeline_growth.points = n;
	free(x);
	free(y);
	free(w);
	return 0;
}

static int one_allocator(struct report_ctx *c, const struct xs_mem_allocator *a,
			 struct step_range g, struct report_mem_device *d)
{
	size_t peak;
	int ret;

	snprintf(d->allocator_name, sizeof(d->allocator_name), "%s", a->name);
	snprintf(d->layer, sizeof(d->layer), "%s", a->layer);
	d->pid = a->pid;
	d->device_ordinal = a->device_ordinal;
	d->reserved_not_tensors = !strcmp(a->layer, "cuda_reserved");
	for (size_t i = 0; i < a->n_events; i++) {
		const struct xs_mem_event *e = &a->events[i];

		d->allocs += !e->is_free;
		d->frees += e->is_free;
		d->frees_unknown_size += e->is_free && e->size_unknown;
		if (!e->is_free && e->untracked) {
			d->untracked++;
			d->untracked_bytes += (uint64_t)e->size;
		}
		if (e->is_free)
			d->free_bytes += (uint64_t)e->size;
		else
			d->alloc_bytes += (uint64_t)e->size;
	}
	window_peak(c, a, d, &peak);
	ret = peak != SIZE_MAX ? largest_at_peak(a, peak, d) : 0;
	if (peak == SIZE_MAX)
		d->peak_unattributed_bytes = d->peak_bytes;
	if (!ret)
		ret = per_step(c, a, g, d);
	if (!ret)
		ret = whole_timeline(a, d);
	return ret;
}

int report_memory(struct report_ctx *c)
{
	struct xs_memory m;
	struct step_range g;
	int ret = xs_memory_read(c->xs, &m);

	if (ret == -E2BIG)
		return report_lost(c->r, "device memory: more than %d allocators; none shown",
				   XS_MEM_MAX_ALLOCATORS);
	if (ret)
		return ret;
	if (m.timeline_error[0])
		ret = report_lost(c->r, "device memory: the memory timelines stat is malformed (%s); "
				  "only the window's events are shown", m.timeline_error);
	if (!ret && m.events_dropped > 0)
		ret = report_lost(c->r, "device memory: %lld allocations and frees in the window "
				  "were not kept (the capture's budget); peaks and churn are "
				  "from the rest", (long long)m.events_dropped);
	if (!ret && m.n_allocs) {
		c->r->mem = calloc(m.n_allocs, sizeof(*c->r->mem));
		ret = c->r->mem ? 0 : -ENOMEM;
	}
	g = group_range(&m);
	for (size_t i = 0; i < m.n_allocs && !ret; i++) {
		/* A report of one process: its allocators only (the timelines
		 * stat holds every process's). */
		if (c->r->pid > 0 && m.allocs[i].pid != c->r->pid)
			continue;
		ret = one_allocator(c, &m.allocs[i], g, &c->r->mem[c->r->n_mem]);
		c->r->n_mem++;
	}
	xs_memory_free(&m);
	return ret;
}
