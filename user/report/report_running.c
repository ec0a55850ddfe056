// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What was still running when the window ended (acceltrace.open_at_stop):
 * a device that has been in one op for minutes is the answer, not a loss
 * to count. Per device plane the innermost open event (an op inside its
 * module inside its step) is kept, with how long it had run from its true
 * start; the longest lead the report.
 */
#include <string.h>

#include "lib/keep_largest.h"
#include "report/report_internal.h"

/* Read from the file: a hostile one may mark every event open. */
#define MAX_OPEN_PER_PLANE 64

static bool is_open(const struct xs_event *e)
{
	return xs_event_stat(e, "acceltrace.open_at_stop") != NULL;
}

/* From its true start (before the window, when clipped there) to its end,
 * the window's stop. */
static int64_t running_ps(const struct xs_event *e)
{
	int64_t true_start_ns, start = e->start_ps, end = e->start_ps + e->dur_ps;

	if (xs_stat_int(xs_event_stat(e, "acceltrace.true_start_ns"), &true_start_ns) &&
	    true_start_ns < 0 && true_start_ns > INT64_MIN / 1000)
		start = true_start_ns * 1000;
	return end > start ? end - start : 0;
}

/* How deep a device line's events sit: ops inside modules inside steps. */
static int line_depth(const struct xs_line *l)
{
	if (!strcmp(l->name, "XLA Ops") || !strncmp(l->name, "Stream #", 8))
		return 2;
	if (!strcmp(l->name, "XLA Modules"))
		return 1;
	return 0;
}

static int64_t running_key(const void *x)
{
	return ((const struct report_running *)x)->running_ps;
}

/* Longest first; past the room, the shortest goes. */
static void keep(struct report *r, const struct report_running *x)
{
	r->n_running = keep_largest(r->running, r->n_running, REPORT_MAX_RUNNING,
				    sizeof(*x), x, running_key);
}

/* A plane's innermost open event (the deepest line's, latest started),
 * named with the open module around it. */
static void plane_running(struct report *r, const struct xs_plane *p)
{
	const struct xs_event *inner = NULL, *module = NULL;
	int inner_depth = -1;
	size_t seen = 0;

	for (size_t j = 0; j < p->n_lines; j++) {
		const struct xs_line *l = &p->lines[j];
		int depth = line_depth(l);

		for (size_t k = 0; k < l->n_events && seen < MAX_OPEN_PER_PLANE; k++) {
			const struct xs_event *e = &l->events[k];

			if (!is_open(e))
				continue;
			seen++;
			if (depth == 1)
				module = e;
			if (depth > inner_depth ||
			    (depth == inner_depth && e->start_ps > inner->start_ps)) {
				inner = e;
				inner_depth = depth;
			}
		}
	}
	if (!inner)
		return;
	keep(r, &(struct report_running){
		.plane = p->name,
		.name = xs_event_label(inner),
		.program = module && module != inner ? xs_event_label(module) : "",
		.running_ps = running_ps(inner),
	});
}

int report_still_running(struct report_ctx *c)
{
	for (size_t i = 0; i < c->xs->n_planes; i++)
		if (xs_is_device_plane(&c->xs->planes[i]))
			plane_running(c->r, &c->xs->planes[i]);
	/* A device still in one thing at the stop for longer than the steps
	 * take (or with no step to compare): stuck, or dominated by it. */
	if (c->r->n_running) {
		const struct report_running *top = &c->r->running[0];
		double step_ps = c->r->n_complete ? c->r->avg_ms * 1e9 : 0;

		c->r->stuck = top->running_ps >= REPORT_STUCK_MIN_PS &&
			      top->running_ps >= REPORT_STUCK_STEPS * step_ps;
	}
	return 0;
}
