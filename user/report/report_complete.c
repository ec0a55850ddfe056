// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Whether the capture holds enough of the job for a verdict. acceltrace
 * says in the Task Environment what it did not keep: spans its budget
 * dropped, per kind (acceltrace.dropped.<kind>), and records lost on the
 * way (acceltrace.lost_records). Device idle, input-bound and step time
 * computed from what was left after a budget dropped device work or the
 * host's launches and reads are not the job's: the verdict is withheld.
 * Records lost at random are a smaller matter: past 1% of the capture's
 * events the verdict is withheld too, below it qualified. (A per-process
 * report weighs the capture's losses against the capture's events; the
 * budget's drops, which fall on every process, withhold every verdict.)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "capture/capture.h"
#include "output/xspace_writer.h"
#include "report/report_internal.h"

/* Lost records past this share of the capture's events withhold the verdict. */
#define WITHHOLD_LOST_SHARE 0.01

/* The kinds a verdict rests on: the device's own timeline (steps, idle,
 * compute, top ops) and the host's launches and input work. */
static const enum span_kind device_kinds[] = {
	SPAN_DEVICE_STEP, SPAN_DEVICE_MODULE, SPAN_DEVICE_OP, SPAN_DEVICE_TRANSFER,
};
static const enum span_kind input_kinds[] = {
	SPAN_EXECUTE, SPAN_H2D, SPAN_INFEED, SPAN_FILE_READ,
};

static uint64_t stat_count(const struct xs_plane *task, const char *name)
{
	const struct xs_stat *s = task ? xs_stat_find(task->stats, task->n_stats, name) : NULL;

	if (!s)
		return 0;
	if (s->type == XS_STAT_INT)
		return s->i > 0 ? (uint64_t)s->i : 0;
	return s->type == XS_STAT_UINT ? s->u : 0;
}

static uint64_t dropped(const struct xs_plane *task, const enum span_kind *kinds, size_t n,
			char *what, size_t len)
{
	uint64_t total = 0;
	size_t used = strlen(what);
	char name[64];

	for (size_t i = 0; i < n; i++) {
		uint64_t k;

		snprintf(name, sizeof(name), STAT_DROPPED_PREFIX "%s", span_kind_name(kinds[i]));
		k = stat_count(task, name);
		if (!k)
			continue;
		total += k;
		if (used < len)
			used += snprintf(what + used, len - used, "%s%" PRIu64 " %s", used ? ", " : "",
					 k, span_kind_name(kinds[i]));
	}
	return total;
}

void report_completeness(struct report_ctx *c)
{
	const struct xs_plane *task = xs_plane_named(c->xs, "Task Environment");
	struct report *r = c->r;
	char what[192] = "";
	uint64_t events = c->capture_events;	/* the losses are the capture's */

	r->dropped_device = dropped(task, device_kinds,
				    sizeof(device_kinds) / sizeof(device_kinds[0]), what,
				    sizeof(what));
	r->dropped_input = dropped(task, input_kinds, sizeof(input_kinds) / sizeof(input_kinds[0]),
				   what, sizeof(what));
	r->lost_records = stat_count(task, STAT_LOST_RECORDS);
	if (r->dropped_device || r->dropped_input) {
		r->verdict_withheld = true;
		snprintf(r->incomplete_why, sizeof(r->incomplete_why),
			 "the capture's span budget dropped %s", what);
	} else if (r->lost_records &&
		   r->lost_records >= WITHHOLD_LOST_SHARE * (double)(events + r->lost_records)) {
		r->verdict_withheld = true;
		snprintf(r->incomplete_why, sizeof(r->incomplete_why),
			 "the capture lost %" PRIu64 " records on the way (%.1f%% of what it saw)",
			 r->lost_records, 100.0 * r->lost_records / (double)(events + r->lost_records));
	} else if (r->lost_records) {
		snprintf(r->incomplete_why, sizeof(r->incomplete_why),
			 "the capture lost %" PRIu64 " records on the way (under 1%% of what it saw)",
			 r->lost_records);
	}
}
