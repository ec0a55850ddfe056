// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Overview: where each step's time goes on the reference device,
 * idle time, input-bound % and the top device ops. A step is split into
 * - input: the device in an input op (infeed/outfeed/host send-recv
 *   category, an H2D copy), or idle while host input work (a transfer to
 *   the device, a read) finished, i.e. the next launch waited on its data;
 * - compute: the device busy with anything else;
 * - other: idle while no input arrived (the host busy elsewhere).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "report/report_internal.h"

static int add_line_activity(struct report_ctx *c, const struct xs_line *l, bool by_category)
{
	for (size_t k = 0; k < l->n_events; k++) {
		const struct xs_event *e = &l->events[k];
		const struct xs_stat *cat = by_category ? xs_event_stat(e, "hlo_category") : NULL;
		bool input = by_category ?
			(cat && cat->type == XS_STAT_STR && category_is_input(cat->s)) :
			!strncmp(e->meta->name, "MemcpyH2D", 9);
		int ret = iv_add(input ? &c->input_dev : &c->busy, e->start_ps,
				 e->start_ps + e->dur_ps);

		if (ret)
			return ret;
	}
	return 0;
}

static int add_ops_line(struct report_ctx *c, const struct xs_line *l)
{
	if (ARRAY_GROW(c->ops_lines, c->cap_ops_lines, c->n_ops_lines + 1))
		return -ENOMEM;
	c->ops_lines[c->n_ops_lines++] = l;
	return 0;
}

int report_device_activity(struct report_ctx *c)
{
	const struct xs_plane *p = c->dev;
	const struct xs_line *l;
	int ret = 0;

	if (!p)
		return 0;
	l = xs_line_named(p, "XLA Ops");
	if (l && l->n_events) {
		ret = add_ops_line(c, l);
		if (!ret)
			ret = add_line_activity(c, l, true);
	} else {
		for (size_t j = 0; j < p->n_lines && !ret; j++) {
			l = &p->lines[j];
			if (line_is_device_summary(l->name) || !l->n_events)
				continue;
			ret = add_ops_line(c, l);
			if (!ret)
				ret = add_line_activity(c, l, false);
		}
	}
	if (!ret && !c->n_ops_lines) {
		l = xs_line_named(p, "XLA Modules");
		if (!l || !l->n_events)
			l = xs_line_named(p, "Steps");
		if (l)
			ret = add_line_activity(c, l, false);
		if (!ret)
			ret = report_missing(c->r, "device ops: %s has no XLA Ops line and no "
					     "op lines (no device trace); device busy time is "
					     "taken from program executions and top ops are unknown",
					     p->name);
	}
	iv_merge(&c->busy);
	iv_merge(&c->input_dev);
	return ret;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Ends of host work that brings input: reads and transfers to the device. */
static int host_input_ends(const struct report_ctx *c, int64_t **out, size_t *n_out)
{
	int64_t *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; c->host && i < c->host->n_lines; i++) {
		const struct xs_line *l = &c->host->lines[i];

		for (size_t k = 0; k < l->n_events; k++) {
			const struct xs_event *e = &l->events[k];

			if (!name_is_h2d(e->meta->name) && !name_is_file_read(e->meta->name))
				continue;
			if (n == cap) {
				int64_t *g = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof(*v));

				if (!g) {
					free(v);
					return -ENOMEM;
				}
				v = g;
			}
			v[n++] = e->start_ps + e->dur_ps;
		}
	}
	if (n)
		array_sort(v, n, sizeof(*v), cmp_i64);
	*out = v;
	*n_out = n;
	return 0;
}

static bool any_in(const int64_t *v, size_t n, int64_t a, int64_t b)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo] <= b;
}

/* Idle time of [a, b) (not in active) during which host input finished. */
static int64_t input_idle(const struct intervals *active, const int64_t *ends, size_t n_ends,
			  int64_t a, int64_t b)
{
	int64_t t = a, total = 0;
	size_t lo = 0, hi = active->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (active->v[mid].b <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; t < b; i++) {
		int64_t gap_end = i < active->n && active->v[i].a < b ? active->v[i].a : b;

		if (gap_end > t && any_in(ends, n_ends, t, gap_end))
			total += gap_end - t;
		if (i >= active->n || active->v[i].a >= b)
			break;
		if (active->v[i].b > t)
			t = active->v[i].b;
	}
	return total;
}

int report_step_breakdown(struct report_ctx *c)
{
	struct report *r = c->r;
	struct intervals active = { 0 };
	int64_t *ends = NULL, sum = 0, in = 0, comp = 0, idle = 0;
	size_t n_ends = 0, n;
	double sq = 0;
	int ret;

	if (c->n_step_starts < 2) {
		if (c->n_step_starts == 1)
			return report_missing(r, "step time: one step only, not followed by "
					      "another; capture a longer window");
		return 0;
	}
	n = c->n_step_starts - 1;
	r->steps = calloc(n, sizeof(*r->steps));
	if (!r->steps)
		return -ENOMEM;
	ret = host_input_ends(c, &ends, &n_ends);
	for (size_t i = 0; !ret && i < c->busy.n; i++)
		ret = iv_add(&active, c->busy.v[i].a, c->busy.v[i].b);
	for (size_t i = 0; !ret && i < c->input_dev.n; i++)
		ret = iv_add(&active, c->input_dev.v[i].a, c->input_dev.v[i].b);
	if (ret)
		goto out;
	iv_merge(&active);
	r->min_ms = INFINITY;
	for (size_t i = 0; i < n; i++) {
		struct report_step *s = &r->steps[i];
		int64_t a = c->step_starts[i], b = c->step_starts[i + 1];
		int64_t in_dev = iv_covered(&c->input_dev, a, b);
		int64_t act = iv_covered(&active, a, b);
		int64_t in_idle = input_idle(&active, ends, n_ends, a, b);
		double ms = (b - a) / 1e9;

		s->start_ps = a;
		s->time_ps = b - a;
		s->step_num = c->step_nums ? c->step_nums[i] : -1;
		s->input_ps = in_dev + in_idle;
		s->compute_ps = act - in_dev;
		s->other_ps = s->time_ps - s->input_ps - s->compute_ps;
		sum += s->time_ps;
		in += s->input_ps;
		comp += s->compute_ps;
		idle += s->time_ps - act;
		r->input_device_ops_ps += in_dev;
		r->input_idle_ps += in_idle;
		r->min_ms = fmin(r->min_ms, ms);
		r->max_ms = fmax(r->max_ms, ms);
	}
	r->n_complete = n;
	r->avg_ms = sum / 1e9 / n;
	for (size_t i = 0; i < n; i++)
		sq += pow(r->steps[i].time_ps / 1e9 - r->avg_ms, 2);
	r->stddev_ms = sqrt(sq / n);
	if (c->dev) {
		r->input_bound_pct = 100.0 * in / sum;
		r->compute_pct = 100.0 * comp / sum;
		r->other_pct = 100.0 - r->input_bound_pct - r->compute_pct;
		r->device_idle_pct = 100.0 * idle / sum;
	} else {
		ret = report_missing(r, "device: no device plane; input-bound %% and "
				     "device idle %% are unknown");
	}
out:
	iv_free(&active);
	free(ends);
	return ret;
}

void report_device_idle_span(struct report_ctx *c, int64_t a, int64_t b)
{
	struct intervals active = { 0 };
	int ret = 0;

	if (!c->dev || b <= a || (!c->busy.n && !c->input_dev.n))
		return;
	for (size_t i = 0; !ret && i < c->busy.n; i++)
		ret = iv_add(&active, c->busy.v[i].a, c->busy.v[i].b);
	for (size_t i = 0; !ret && i < c->input_dev.n; i++)
		ret = iv_add(&active, c->input_dev.v[i].a, c->input_dev.v[i].b);
	if (!ret) {
		iv_merge(&active);
		/* In doubles: a file's a and b may be further apart than 2^63. */
		double span = (double)b - (double)a;

		c->r->device_idle_pct = 100.0 * (span - (double)iv_covered(&active, a, b)) / span;
	}
	iv_free(&active);
}

/* Host idle: the time no traced host thread was in a traced span. */
int report_host_idle(struct report_ctx *c, int64_t a, int64_t b)
{
	struct intervals busy = { 0 };
	int ret = 0;

	if (!c->host || b <= a)
		return report_missing(c->r, "host idle %%: no host plane with events");
	for (size_t i = 0; i < c->host->n_lines && !ret; i++)
		for (size_t k = 0; k < c->host->lines[i].n_events && !ret; k++) {
			const struct xs_event *e = &c->host->lines[i].events[k];

			ret = iv_add(&busy, e->start_ps, e->start_ps + e->dur_ps);
		}
	if (!ret) {
		iv_merge(&busy);
		c->r->host_idle_pct = 100.0 * (1.0 - (double)iv_covered(&busy, a, b) /
						((double)b - (double)a));
	}
	iv_free(&busy);
	return ret;
}
