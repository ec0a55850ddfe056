// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Perfetto's native trace (a `Trace`: length-delimited TracePackets, field
 * 1), written from the timeline with protobuf-c (export/perfetto_trace.proto,
 * the upstream field numbers). One packet sequence: a clock snapshot first
 * (it clears the incremental state), a TrackDescriptor per track, then
 * each track's slices as SLICE_BEGIN/SLICE_END (INSTANT for zero length)
 * with event names and annotation names interned (InternedData, sent with
 * the packet that first uses a name) and stats as debug annotations; then
 * each counter's values (device memory in use, unit bytes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "export/timeline.h"
#include "lib/strtab.h"
#include "output/pb_wire.h"
#include "perfetto_trace.pb-c.h"

#define TRACE_PACKET 1		/* Trace.packet */
#define SEQUENCE_ID 1
#define SEQ_INCREMENTAL_STATE_CLEARED 1
#define SEQ_NEEDS_INCREMENTAL_STATE 2
#define MAX_ANNOTATIONS 64

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent TrackEvent;
typedef Perfetto__Protos__DebugAnnotation Annotation;

struct pw {
	const struct timeline *t;
	struct pb_out o;
	struct strtab *names;	/* event name -> iid */
	size_t names_sent;	/* iids below this were already sent */
	struct strtab *keys;	/* debug annotation name -> iid */
	size_t keys_sent;
	/* This packet's newly interned annotation names. */
	Perfetto__Protos__DebugAnnotationName new_keys[MAX_ANNOTATIONS];
	Perfetto__Protos__DebugAnnotationName *new_key_ptrs[MAX_ANNOTATIONS];
	size_t n_new_keys;
};

static void packet_init(Packet *p)
{
	perfetto__protos__trace_packet__init(p);
	p->optional_trusted_packet_sequence_id_case =
		PERFETTO__PROTOS__TRACE_PACKET__OPTIONAL_TRUSTED_PACKET_SEQUENCE_ID_TRUSTED_PACKET_SEQUENCE_ID;
	p->trusted_packet_sequence_id = SEQUENCE_ID;
}

static void write_clock_snapshot(struct pw *w)
{
	Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c[2], *cp[2] = { &c[0], &c[1] };
	Packet p;

	packet_init(&p);
	perfetto__protos__clock_snapshot__clock__init(&c[0]);
	c[0].has_clock_id = c[0].has_timestamp = true;
	c[0].clock_id = w->t->clock;
	c[0].timestamp = w->t->clock_at_zero;
	cs.n_clocks = 1;
	if (w->t->clock != TIMELINE_CLOCK_REALTIME && w->t->realtime_at_zero) {
		/* The same instant on the wall clock: Perfetto shows real times. */
		perfetto__protos__clock_snapshot__clock__init(&c[1]);
		c[1].has_clock_id = c[1].has_timestamp = true;
		c[1].clock_id = TIMELINE_CLOCK_REALTIME;
		c[1].timestamp = w->t->realtime_at_zero;
		cs.n_clocks = 2;
	}
	cs.clocks = cp;
	cs.has_primary_trace_clock = true;
	cs.primary_trace_clock = w->t->clock;
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT;
	p.clock_snapshot = &cs;
	p.has_timestamp = true;
	p.timestamp = w->t->clock_at_zero;
	p.has_timestamp_clock_id = true;
	p.timestamp_clock_id = w->t->clock;
	p.has_sequence_flags = true;
	p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED;
	pb_message_field(&w->o, TRACE_PACKET, &p.base);
}

static void write_track(struct pw *w, const struct timeline_track *tr)
{
	Perfetto__Protos__TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
	Packet p;

	packet_init(&p);
	d.has_uuid = true;
	d.uuid = tr->uuid;
	if (tr->parent_uuid && tr->kind != TRACK_THREAD) {
		d.has_parent_uuid = true;
		d.parent_uuid = tr->parent_uuid;
	}
	switch (tr->kind) {
	case TRACK_PROCESS:
		pd.has_pid = true;
		pd.pid = (int32_t)tr->pid;
		if (tr->name[0])
			pd.process_name = (char *)tr->name;
		d.process = &pd;
		break;
	case TRACK_THREAD:
		td.has_pid = td.has_tid = true;
		td.pid = (int32_t)tr->pid;
		td.tid = tr->tid;
		td.thread_name = (char *)tr->name;
		d.thread = &td;
		break;
	case TRACK_COUNTER:
		cd.has_unit = true;
		cd.unit = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__UNIT__UNIT_SIZE_BYTES;
		d.counter = &cd;
		__attribute__((fallthrough));	/* named like the other tracks */
	default:
		d.static_or_dynamic_name_case =
			PERFETTO__PROTOS__TRACK_DESCRIPTOR__STATIC_OR_DYNAMIC_NAME_NAME;
		d.name = (char *)tr->name;
		break;
	}
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
	p.track_descriptor = &d;
	pb_message_field(&w->o, TRACE_PACKET, &p.base);
}

/* A stat as a debug annotation; false for what has no annotation type. */
static bool annotation(struct pw *w, const struct xs_stat *s, Annotation *a)
{
	uint32_t iid;

	if (s->type == XS_STAT_NONE || s->type == XS_STAT_BYTES)
		return false;
	iid = strtab__intern(w->keys, s->name, strlen(s->name));
	if (!iid) {
		w->o.err = -ENOMEM;
		return false;
	}
	perfetto__protos__debug_annotation__init(a);
	a->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
	a->name_iid = iid;
	if (iid >= w->keys_sent) {
		Perfetto__Protos__DebugAnnotationName *k = &w->new_keys[w->n_new_keys];

		perfetto__protos__debug_annotation_name__init(k);
		k->has_iid = true;
		k->iid = iid;
		k->name = (char *)s->name;
		w->new_key_ptrs[w->n_new_keys++] = k;
		w->keys_sent = iid + 1;
	}
	switch (s->type) {
	case XS_STAT_INT:
		a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_INT_VALUE;
		a->int_value = s->i;
		return true;
	case XS_STAT_UINT:
		a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
		a->uint_value = s->u;
		return true;
	case XS_STAT_DOUBLE:
		a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_DOUBLE_VALUE;
		a->double_value = s->d;
		return true;
	case XS_STAT_STR:
		a->value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
		a->string_value = (char *)s->s;
		return true;
	default:
		return false;
	}
}

static size_t annotations(struct pw *w, const struct xs_event *e, Annotation *a,
			  Annotation **ap)
{
	size_t n = 0;

	w->n_new_keys = 0;
	/* The event's own stats, then its metadata's (constant per op). */
	for (size_t i = 0; i < e->n_stats && n < MAX_ANNOTATIONS; i++)
		if (e->stats[i].name[0] && annotation(w, &e->stats[i], &a[n]))
			ap[n] = &a[n], n++;
	for (size_t i = 0; i < e->meta->n_stats && n < MAX_ANNOTATIONS; i++)
		if (e->meta->stats[i].name[0] &&
		    !xs_stat_find(e->stats, e->n_stats, e->meta->stats[i].name) &&
		    annotation(w, &e->meta->stats[i], &a[n]))
			ap[n] = &a[n], n++;
	return n;
}

static void write_event(struct pw *w, const struct timeline_slice *s, bool begin)
{
	TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	Perfetto__Protos__InternedData in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	Perfetto__Protos__EventName en = PERFETTO__PROTOS__EVENT_NAME__INIT, *enp = &en;
	Annotation a[MAX_ANNOTATIONS], *ap[MAX_ANNOTATIONS];
	bool instant = s->start_ns == s->end_ns;
	uint64_t flow_in = s->flow_in;
	Packet p;

	packet_init(&p);
	p.has_timestamp = p.has_timestamp_clock_id = p.has_sequence_flags = true;
	p.timestamp = begin ? s->start_ns : s->end_ns;
	p.timestamp_clock_id = w->t->clock;
	p.sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE;
	te.has_track_uuid = te.has_type = true;
	te.track_uuid = w->t->tracks[s->track].uuid;
	if (begin) {
		const char *name = s->ev->meta->name[0] ? s->ev->meta->name : "(unnamed)";
		uint32_t iid = strtab__intern(w->names, name, strlen(name));

		if (!iid) {
			w->o.err = -ENOMEM;
			return;
		}
		if (iid >= w->names_sent) {
			/* First use: the name goes with this packet. */
			en.has_iid = true;
			en.iid = iid;
			en.name = (char *)name;
			in.n_event_names = 1;
			in.event_names = &enp;
			w->names_sent = iid + 1;
		}
		te.type = instant ? PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT :
				    PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
		te.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
		te.name_iid = iid;
		te.n_debug_annotations = annotations(w, s->ev, a, ap);
		te.debug_annotations = ap;
		in.n_debug_annotation_names = w->n_new_keys;
		in.debug_annotation_names = w->new_key_ptrs;
		if (in.n_event_names || in.n_debug_annotation_names)
			p.interned_data = &in;
		te.n_flow_ids = s->n_flows_out;
		te.flow_ids = s->flows_out;
		if (flow_in) {
			te.n_terminating_flow_ids = 1;
			te.terminating_flow_ids = &flow_in;
		}
	} else {
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	}
	p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	p.track_event = &te;
	pb_message_field(&w->o, TRACE_PACKET, &p.base);
}

/* A counter's values, one TYPE_COUNTER event each. */
static void write_counter(struct pw *w, const struct timeline_counter *c)
{
	for (size_t i = 0; i < c->n && !w->o.err; i++) {
		TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
		Packet p;

		packet_init(&p);
		p.has_timestamp = p.has_timestamp_clock_id = p.has_sequence_flags = true;
		p.timestamp = c->ts_ns[i];
		p.timestamp_clock_id = w->t->clock;
		p.sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE;
		te.has_track_uuid = te.has_type = true;
		te.track_uuid = w->t->tracks[c->track].uuid;
		te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
		te.counter_value_field_case =
			PERFETTO__PROTOS__TRACK_EVENT__COUNTER_VALUE_FIELD_COUNTER_VALUE;
		te.counter_value = c->bytes[i];
		p.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
		p.track_event = &te;
		pb_message_field(&w->o, TRACE_PACKET, &p.base);
	}
}

/*
 * One track's slices (sorted outer to inner): each begin after the ends
 * of the open slices that finished by then, so equal times nest right.
 */
static int write_track_slices(struct pw *w, size_t first, size_t last)
{
	size_t depth = 0, cap = 64;
	const struct timeline_slice **open = malloc(cap * sizeof(*open));

	if (!open)
		return -ENOMEM;
	for (size_t i = first; i <= last && !w->o.err; i++) {
		const struct timeline_slice *s = i < last ? &w->t->slices[i] : NULL;

		while (depth && (!s || open[depth - 1]->end_ns <= s->start_ns))
			write_event(w, open[--depth], false);
		if (!s)
			break;
		write_event(w, s, true);
		if (s->start_ns == s->end_ns)
			continue;
		if (depth == cap) {
			const struct timeline_slice **g = realloc(open, 2 * cap * sizeof(*open));

			if (!g) {
				free(open);
				return -ENOMEM;
			}
			open = g;
			cap *= 2;
		}
		open[depth++] = s;
	}
	free(open);
	return w->o.err;
}

int perfetto_write_stream(const struct timeline *t, FILE *out, uint64_t *bytes)
{
	struct pw w = { .t = t, .names_sent = 1, .keys_sent = 1 };
	size_t i = 0;
	int err;

	*bytes = 0;
	w.names = strtab__new();
	w.keys = strtab__new();
	err = w.names && w.keys ? pb_out__init(&w.o, out, UINT64_MAX) : -ENOMEM;
	if (err) {
		strtab__free(w.names);
		strtab__free(w.keys);
		return err;
	}
	write_clock_snapshot(&w);
	for (size_t k = 0; k < t->n_tracks; k++)
		write_track(&w, &t->tracks[k]);
	while (i < t->n_slices && !w.o.err) {
		size_t j = i;

		while (j < t->n_slices && t->slices[j].track == t->slices[i].track)
			j++;
		err = write_track_slices(&w, i, j);
		if (err && !w.o.err)
			w.o.err = err;
		i = j;
	}
	for (size_t k = 0; k < t->n_counters && !w.o.err; k++)
		write_counter(&w, &t->counters[k]);
	err = w.o.err;
	if (!err && fflush(out))
		err = -errno;
	*bytes = w.o.pos;
	pb_out__release(&w.o);
	strtab__free(w.names);
	strtab__free(w.keys);
	return err;
}
