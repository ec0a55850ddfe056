// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the threads were doing when nothing completed: with no step time
 * (a trainer stuck in a host checkpoint, a wait, a device that never
 * answers), the scheduler's off-CPU spans (`record --sched`, `--now`) say
 * which threads waited, for how much of the window, and how (blocked or
 * preempted). The threads that waited longest are kept.
 */
#include <string.h>

#include "lib/keep_largest.h"
#include "report/report_internal.h"

#define OFF_CPU "off CPU ("

/* Off-CPU time of one thread line (extra lines of a thread are its own
 * rows: their waits count once each, by the line that has them). */
static void line_waits(const struct xs_line *l, struct report_thread_wait *w)
{
	int64_t blocked = 0, preempted = 0;

	memset(w, 0, sizeof(*w));
	for (size_t k = 0; k < l->n_events; k++) {
		const char *name = xs_event_label(&l->events[k]);

		if (strncmp(name, OFF_CPU, strlen(OFF_CPU)))
			continue;
		w->waits++;
		w->off_cpu_ps += l->events[k].dur_ps;
		if (strstr(name, "blocked"))
			blocked += l->events[k].dur_ps;
		else
			preempted += l->events[k].dur_ps;
	}
	w->thread = l->name;
	w->thread_id = l->display_id;
	w->how = blocked >= preempted ? "blocked" : "preempted";
}

static int64_t off_cpu_key(const void *w)
{
	return ((const struct report_thread_wait *)w)->off_cpu_ps;
}

/* Longest off CPU first; past the room, the shortest goes. */
static void keep(struct report *r, const struct report_thread_wait *w)
{
	r->n_waiting = keep_largest(r->waiting, r->n_waiting, REPORT_MAX_WAITING, sizeof(*w), w,
				    off_cpu_key);
}

int report_thread_waits(struct report_ctx *c)
{
	struct report *r = c->r;
	int64_t window = r->window_ps > 0 ? r->window_ps : r->span_ps;

	/* Only where the steps do not already say what the job did. */
	if (!c->host || (r->n_complete && !r->stuck) || window <= 0)
		return 0;
	for (size_t i = 0; i < c->host->n_lines; i++) {
		struct report_thread_wait w;

		line_waits(&c->host->lines[i], &w);
		if (!w.waits)
			continue;
		w.off_cpu_pct = 100.0 * (double)w.off_cpu_ps / (double)window;
		if (w.off_cpu_pct > 100)
			w.off_cpu_pct = 100;
		keep(r, &w);
	}
	return 0;
}
