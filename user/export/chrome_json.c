// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Chrome's trace-event JSON (the format chrome://tracing, Perfetto and
 * TensorBoard's old viewer read), gzipped: process and thread names as
 * metadata events, a complete event ("X") per slice with its stats as
 * args, an instant ("i") for zero length, and flow events ("s" at the
 * launch, "f" at the device work) for each launch; counters ("C") for
 * device memory in use. Times are microseconds
 * with three exact decimals from the earliest slice's start (otherData's
 * zero_ns on the named clock): absolute clock readings in microseconds
 * would need more digits than readers' doubles hold.
 */
#include <errno.h>
#include <stdio.h>

#include "export/export.h"
#include "export/gzip_stream.h"
#include "export/timeline.h"
#include "lib/json_writer.h"

static void stat_arg(struct json_writer *jw, const struct xs_stat *s)
{
	switch (s->type) {
	case XS_STAT_INT: jw_int_field(jw, s->name, s->i); break;
	case XS_STAT_UINT: jw_uint_field(jw, s->name, s->u); break;
	case XS_STAT_DOUBLE: jw_double_field(jw, s->name, s->d); break;
	case XS_STAT_STR: jw_string_field(jw, s->name, s->s); break;
	default: break;
	}
}

static void ids(struct json_writer *jw, const struct timeline_track *tr)
{
	jw_uint_field(jw, "pid", tr->json_pid);
	jw_uint_field(jw, "tid", tr->json_tid);
}

static void name_event(struct json_writer *jw, const struct timeline_track *tr,
		       const char *what, const char *name)
{
	jw_start_object(jw);
	jw_string_field(jw, "ph", "M");
	jw_string_field(jw, "name", what);
	ids(jw, tr);
	jw_name(jw, "args");
	jw_start_object(jw);
	jw_string_field(jw, "name", name);
	jw_end_object(jw);
	jw_end_object(jw);
}

static void track_names(struct json_writer *jw, const struct timeline *t)
{
	char buf[512];

	for (size_t i = 0; i < t->n_tracks; i++) {
		const struct timeline_track *tr = &t->tracks[i];

		switch (tr->kind) {
		case TRACK_PROCESS:
			snprintf(buf, sizeof(buf), "%s%spid %lld", tr->name,
				 tr->name[0] ? " " : "", (long long)tr->pid);
			name_event(jw, tr, "process_name", buf);
			break;
		case TRACK_DEVICE:
			name_event(jw, tr, "process_name", tr->name);
			break;
		case TRACK_COUNTER:
			break;	/* a counter is named by its events */
		default:
			name_event(jw, tr, "thread_name", tr->name);
			break;
		}
	}
}

static void ts_field(struct json_writer *jw, const char *name, uint64_t ns)
{
	jw_name(jw, name);
	jw_decimal(jw, ns, 3);
}

static void flow_event(struct json_writer *jw, const struct timeline_track *tr,
		       uint64_t ts, uint64_t id, bool start, uint64_t zero_ns)
{
	char hex[24];

	snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)id);
	jw_start_object(jw);
	jw_string_field(jw, "ph", start ? "s" : "f");
	if (!start)
		jw_string_field(jw, "bp", "e");
	jw_string_field(jw, "name", "launch");
	jw_string_field(jw, "cat", "flow");
	jw_string_field(jw, "id", hex);
	ids(jw, tr);
	ts_field(jw, "ts", ts - zero_ns);
	jw_end_object(jw);
}

static void slice_event(struct json_writer *jw, const struct timeline *t,
			const struct timeline_slice *s, uint64_t zero_ns)
{
	const struct timeline_track *tr = &t->tracks[s->track];
	const struct xs_event *e = s->ev;

	jw_start_object(jw);
	jw_string_field(jw, "ph", s->end_ns > s->start_ns ? "X" : "i");
	if (s->end_ns == s->start_ns)
		jw_string_field(jw, "s", "t");
	jw_string_field(jw, "name", e->meta->name);
	ids(jw, tr);
	ts_field(jw, "ts", s->start_ns - zero_ns);
	if (s->end_ns > s->start_ns)
		ts_field(jw, "dur", s->end_ns - s->start_ns);
	jw_name(jw, "args");
	jw_start_object(jw);
	for (size_t i = 0; i < e->n_stats; i++)
		if (e->stats[i].name[0])
			stat_arg(jw, &e->stats[i]);
	for (size_t i = 0; i < e->meta->n_stats; i++)
		if (e->meta->stats[i].name[0] &&
		    !xs_stat_find(e->stats, e->n_stats, e->meta->stats[i].name))
			stat_arg(jw, &e->meta->stats[i]);
	jw_end_object(jw);
	jw_end_object(jw);
	for (uint32_t i = 0; i < s->n_flows_out; i++)
		flow_event(jw, tr, s->start_ns, s->flows_out[i], true, zero_ns);
	if (s->flow_in)
		flow_event(jw, tr, s->start_ns, s->flow_in, false, zero_ns);
}

/* A counter's values: "C" events named as the track, under its process. */
static void counter_events(struct json_writer *jw, const struct timeline *t,
			   const struct timeline_counter *c, uint64_t zero_ns)
{
	const struct timeline_track *tr = &t->tracks[c->track];

	for (size_t i = 0; i < c->n; i++) {
		jw_start_object(jw);
		jw_string_field(jw, "ph", "C");
		jw_string_field(jw, "name", tr->name);
		jw_uint_field(jw, "pid", tr->json_pid);
		ts_field(jw, "ts", c->ts_ns[i] - zero_ns);
		jw_name(jw, "args");
		jw_start_object(jw);
		jw_int_field(jw, "bytes", c->bytes[i]);
		jw_end_object(jw);
		jw_end_object(jw);
	}
}

int chrome_json_write_stream(const struct timeline *t, FILE *out, uint64_t *bytes)
{
	struct json_writer *jw;
	struct gzip_stream *g;
	uint64_t zero_ns;
	FILE *in;

	*bytes = 0;
	zero_ns = UINT64_MAX;
	for (size_t i = 0; i < t->n_slices; i++)
		if (t->slices[i].start_ns < zero_ns)
			zero_ns = t->slices[i].start_ns;
	/* Memory timelines reach back hours before the first slice. */
	for (size_t i = 0; i < t->n_counters; i++)
		if (t->counters[i].n && t->counters[i].ts_ns[0] < zero_ns)
			zero_ns = t->counters[i].ts_ns[0];
	if (zero_ns == UINT64_MAX)
		zero_ns = t->clock_at_zero;
	g = gzip_stream__open(out, &in);
	if (!g)
		return -errno;
	jw = jw_new(in, false);
	if (jw) {
		jw_start_object(jw);
		jw_string_field(jw, "displayTimeUnit", "ns");
		jw_name(jw, "otherData");
		jw_start_object(jw);
		jw_string_field(jw, "clock", !t->clock_known ? "none (the XSpace's own times)" :
				t->clock == TIMELINE_CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" :
				"CLOCK_REALTIME");
		jw_uint_field(jw, "zero_ns", zero_ns);
		jw_uint_field(jw, "flows", t->n_flows);
		jw_end_object(jw);
		jw_name(jw, "traceEvents");
		jw_start_array(jw);
		track_names(jw, t);
		for (size_t i = 0; i < t->n_slices; i++)
			slice_event(jw, t, &t->slices[i], zero_ns);
		for (size_t i = 0; i < t->n_counters; i++)
			counter_events(jw, t, &t->counters[i], zero_ns);
		jw_end_array(jw);
		jw_end_object(jw);
		jw_free(jw);
	}
	return gzip_stream__close(g, bytes) ?: (jw ? 0 : -ENOMEM);
}
