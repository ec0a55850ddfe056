// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the capture lost: the producer's errors and warnings (drops, budget
 * cuts, overruns), and events acceltrace marked as clipped to the window,
 * open at stop, closed by their process's exit or estimated.
 */
#include <string.h>

#include "report/report_internal.h"

static const struct {
	const char *stat, *one, *many;
} marks[] = {
	{ "acceltrace.clipped", "event clipped to the capture window (its true times in the stats)",
	  "events clipped to the capture window (true times in the stats)" },
	{ "acceltrace.open_at_stop", "event still open when the window ended",
	  "events still open when the window ended" },
	{ "acceltrace.target_exited", "event closed by its process's exit",
	  "events closed by their process's exit" },
	{ "acceltrace.began_before_probes", "event that began before the probes attached",
	  "events that began before the probes attached" },
	{ "issued_before_probes", "completion of work issued before the probes attached",
	  "completions of work issued before the probes attached" },
	{ "acceltrace.estimated", "device event estimated from runtime calls (no device trace)",
	  "device events estimated from runtime calls (no device trace)" },
};

#define N_MARKS (sizeof(marks) / sizeof(marks[0]))

int report_losses(struct report_ctx *c)
{
	const struct xs_space *xs = c->xs;
	uint64_t counts[N_MARKS] = { 0 };
	int ret = 0;

	for (size_t i = 0; i < xs->n_errors && !ret; i++)
		ret = report_lost(c->r, "error: %s", xs->errors[i]);
	for (size_t i = 0; i < xs->n_warnings && !ret; i++)
		ret = report_lost(c->r, "%s", xs->warnings[i]);
	for (size_t p = 0; p < xs->n_planes; p++)
		for (size_t l = 0; l < xs->planes[p].n_lines; l++) {
			const struct xs_line *line = &xs->planes[p].lines[l];

			for (size_t e = 0; e < line->n_events; e++)
				for (size_t s = 0; s < line->events[e].n_stats; s++)
					for (size_t m = 0; m < N_MARKS; m++)
						counts[m] += !strcmp(line->events[e].stats[s].name,
								     marks[m].stat);
		}
	for (size_t m = 0; m < N_MARKS && !ret; m++)
		if (counts[m])
			ret = report_lost(c->r, "%llu %s", (unsigned long long)counts[m],
					  counts[m] == 1 ? marks[m].one : marks[m].many);
	return ret;
}
