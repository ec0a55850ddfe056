// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What a window's finish says of the device trace buffers: the records
 * lost or skipped since the last window, buffers put aside, the clock fits
 * (one -v line per distinct fit, naming the capture's devices) and the
 * pairs rejected, the worst conversion bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "devtrace"
#include "lib/log.h"
#include "capture/capture.h"
#include "collect/collector_internal.h"
#include "collect/collect_devtrace_internal.h"
#include "devtrace/devtrace_clock.h"
#include "devtrace/devtrace_reader.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* "0-3, 6" from @v (sorted here, duplicates dropped). */
static void format_ordinals(uint32_t *v, size_t n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	qsort(v, n, sizeof(*v), cmp_u32);
	for (size_t i = 0; i < n && used < len; ) {
		size_t j = i;

		while (j + 1 < n && v[j + 1] <= v[j] + 1)
			j++;
		if (v[j] == v[i])
			used += snprintf(buf + used, len - used, "%s%u", used ? ", " : "", v[i]);
		else
			used += snprintf(buf + used, len - used, "%s%u-%u", used ? ", " : "",
					 v[i], v[j]);
		i = j + 1;
	}
}

/*
 * The clock fits, under -v: one line per distinct fit, naming the devices
 * (cores, as their /device:...:N planes number them) whose runs it serves,
 * not one line per run with the buffer header's device id (each core's
 * buffer may be a run of its own).
 */
static void say_clocks(struct collect_devtrace *d)
{
	char (*text)[160] = NULL, cores[256];
	uint32_t *ord = NULL;
	bool *said = NULL;

	if (log_verbosity() < LOG_DEBUG || !d->nclocks)
		return;
	text = calloc(d->nclocks, sizeof(*text));
	said = calloc(d->nclocks, sizeof(*said));
	ord = calloc(d->ncores ? d->ncores : 1, sizeof(*ord));
	if (!text || !said || !ord)
		goto out;
	for (size_t i = 0; i < d->nclocks; i++) {
		struct devtrace_clock_fit f;

		if (!d->clocks[i].clock) {
			said[i] = true;
			continue;
		}
		devtrace_clock__fit(d->clocks[i].clock, &f);
		snprintf(text[i], sizeof(text[i]), "%.3f ppm, bound %.0f ns over %u pairs, "
			 "%llu rejected", f.drift_ppm, f.bound_ns, f.pairs,
			 (unsigned long long)f.rejected_total);
	}
	for (size_t i = 0; i < d->nclocks; i++) {
		size_t n = 0, fits = 0;

		if (said[i])
			continue;
		for (size_t j = i; j < d->nclocks; j++) {
			if (said[j] || strcmp(text[i], text[j]))
				continue;
			said[j] = true;
			fits++;
			for (size_t k = 0; k < d->ncores; k++)
				if (d->cores[k].known && d->cores[k].clock == (int)j)
					ord[n++] = d->cores[k].ordinal;
		}
		format_ordinals(ord, n, cores, sizeof(cores));
		log_debug("clock fit%s of device%s %s: %s%s", fits > 1 ? "s" : "",
			  n > 1 ? "s" : "", n ? cores : "(none now)", text[i],
			  fits > 1 ? " each" : "");
	}
out:
	free(text);
	free(said);
	free(ord);
}

void collect_devtrace_note_losses(struct collector *c)
{
	struct collect_devtrace *d = c->devtrace;
	struct devtrace_buffer_stats t;

	/* Each window's capture states what was lost since the last one. */
	devtrace_reader__totals(d->reader, &t);
	if (t.lost > d->said.lost)
		capture__count_event_loss(c->cap, "devtrace records lost (ring overwritten before read)",
				    t.lost - d->said.lost);
	if (t.bad + t.unknown > d->said.bad + d->said.unknown)
		capture__count_event_loss(c->cap, "devtrace records skipped (bad or unknown kind)",
				    t.bad + t.unknown - d->said.bad - d->said.unknown);
	if (d->carried_dropped > d->said_carried_dropped)
		capture__count_loss(c->cap, "devtrace records past a window's stop not kept for the next",
				    d->carried_dropped - d->said_carried_dropped);
	d->said_carried_dropped = d->carried_dropped;
	if (d->unmatched_ends > d->said_unmatched_ends)
		capture__count_event_loss(c->cap, "device spans whose begin was lost",
				    d->unmatched_ends - d->said_unmatched_ends);
	if (t.read_errors > d->said.read_errors)
		capture__warn(c->cap, "%llu devtrace reads failed",
			      (unsigned long long)(t.read_errors - d->said.read_errors));
	d->said = t;
	d->said_unmatched_ends = d->unmatched_ends;
	for (int i = 0; i < devtrace_reader__count(d->reader); i++) {
		struct devtrace_buffer_stats st;

		devtrace_reader__stats(d->reader, i, &st);
		if (st.state == DEVTRACE_BUF_FAILED)
			capture__warn(c->cap, "devtrace buffer %s not read: %s",
				      devtrace_reader__label(d->reader, i), st.error);
	}
	say_clocks(d);
	for (size_t i = 0; i < d->nclocks; i++) {
		struct devtrace_clock_fit f;

		if (!d->clocks[i].clock)
			continue;
		devtrace_clock__fit(d->clocks[i].clock, &f);
		if (f.rejected_total)
			capture__warn(c->cap, "device %u clock: %llu clock pairs rejected as outliers",
				      d->clocks[i].device_id,
				      (unsigned long long)f.rejected_total);
	}
	if (d->worst_bound_ns > CLOCK_BOUND_WARN_NS)
		capture__warn(c->cap, "device times converted to host time within %.0f us only",
			      d->worst_bound_ns / 1000);
	d->worst_bound_ns = 0;
}
