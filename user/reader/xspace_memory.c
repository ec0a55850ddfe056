// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A capture's device memory, per allocator (see xspace_memory.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "reader/memory_timelines.h"
#include "reader/xspace_memory.h"

#define COUNTER_LINE_PREFIX "Device memory: "

bool xs_line_is_memory_counter(const struct xs_line *l)
{
	return !strncmp(l->name, COUNTER_LINE_PREFIX, strlen(COUNTER_LINE_PREFIX));
}

bool xs_event_is_memory(const struct xs_event *e)
{
	return !strcmp(e->meta->name, "MemoryAllocation") ||
	       !strcmp(e->meta->name, "MemoryDeallocation");
}

static const char *stat_str(const struct xs_event *e, const char *name)
{
	const struct xs_stat *s = xs_event_stat(e, name);

	return s && s->type == XS_STAT_STR ? s->s : "";
}

static int64_t stat_int(const struct xs_event *e, const char *name, int64_t dflt)
{
	int64_t v;

	return xs_stat_int(xs_event_stat(e, name), &v) ? v : dflt;
}

/* The process of a thread line, "python3 (pid 469)", when the event has none. */
static int64_t line_pid(const struct xs_line *l)
{
	const char *s = strstr(l->name, "(pid ");

	return s ? strtoll(s + 5, NULL, 10) : -1;
}

/* The allocator named NAME of process PID, added when new; NULL on error. */
static struct xs_mem_allocator *find_or_add(struct xs_memory *m, size_t *cap, const char *name,
					    int64_t pid, int *err)
{
	for (size_t i = 0; i < m->n_allocs; i++)
		if (m->allocs[i].pid == pid && !strcmp(m->allocs[i].name, name))
			return &m->allocs[i];
	if (m->n_allocs >= XS_MEM_MAX_ALLOCATORS) {
		*err = -E2BIG;
		return NULL;
	}
	if (ARRAY_GROW(m->allocs, *cap, m->n_allocs + 1)) {
		*err = -ENOMEM;
		return NULL;
	}
	m->allocs[m->n_allocs] = (struct xs_mem_allocator){
		.name = name, .layer = "", .pid = pid, .device_ordinal = -1,
	};
	return &m->allocs[m->n_allocs++];
}

/* The layer from TF's "<PLATFORM>_<ordinal>_<layer>" form, or "". */
static const char *layer_of(const char *name)
{
	const char *a = strchr(name, '_'), *b = a ? strchr(a + 1, '_') : NULL;

	return b ? b + 1 : "";
}

static int cmp_event(const void *a, const void *b)
{
	const struct xs_mem_event *x = a, *y = b;

	if (x->time_ps != y->time_ps)
		return x->time_ps < y->time_ps ? -1 : 1;
	/* Events at one time keep the file's order (qsort is not stable). */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int add_event(struct xs_memory *m, size_t *cap, size_t *ev_caps, size_t n_ev_caps,
		     const struct xs_line *l, const struct xs_event *e)
{
	int64_t pid = stat_int(e, "process_id", line_pid(l));
	const char *name = stat_str(e, "allocator_name");
	struct xs_mem_allocator *a;
	struct xs_mem_event ev;
	size_t idx;
	int err = 0;

	if (!name[0])
		return 0;	/* not one of ours to place: XProf skips it too */
	a = find_or_add(m, cap, name, pid, &err);
	if (!a)
		return err;
	idx = (size_t)(a - m->allocs);
	if (idx >= n_ev_caps)
		return -E2BIG;
	ev = (struct xs_mem_event){
		.time_ps = e->start_ps,
		.is_free = !strcmp(e->meta->name, "MemoryDeallocation"),
		.size_unknown = stat_int(e, "acceltrace.size_unknown", 0) == 1,
		.untracked = stat_int(e, "acceltrace.untracked", 0) == 1,
		.in_use = stat_int(e, "bytes_allocated", 0),
		.size = stat_int(e, "allocation_bytes", 0),
		.addr = (uint64_t)stat_int(e, "addr", 0),
		.group_id = stat_int(e, "group_id", -1),
		.api = stat_str(e, "acceltrace.api"),
		.shapes = stat_str(e, "tensor_shapes"),
		/* Ours name it in acceltrace.element_type; data_type is
		 * TensorFlow's DataType number, as XProf reads it. */
		.data_type = stat_str(e, "acceltrace.element_type"),
		.seq = a->n_events,
	};
	if (ev.size <= 0)
		ev.size = stat_int(e, "requested_bytes", 0);
	if (ev.size < 0 || ev.size_unknown)
		ev.size = 0;
	if (ev.in_use < 0)
		ev.in_use = 0;
	if (a->device_ordinal < 0)
		a->device_ordinal = stat_int(e, "device_ordinal", -1);
	if (!a->layer[0])
		a->layer = layer_of(name);
	if (ARRAY_GROW(a->events, ev_caps[idx], a->n_events + 1))
		return -ENOMEM;
	a->events[a->n_events++] = ev;
	return 0;
}

/* Each timeline to its allocator (one without events in the window added). */
static int merge_timelines(struct xs_memory *m, size_t *cap, struct memory_timelines *tl)
{
	for (size_t i = 0; i < tl->n_allocs; i++) {
		struct xs_mem_allocator *t = &tl->allocs[i], *a;
		int err = 0;

		a = find_or_add(m, cap, t->name, t->pid, &err);
		if (!a)
			return err;
		free(a->points);	/* a second timeline of one allocator: the last */
		a->points = t->points;
		a->n_points = t->n_points;
		t->points = NULL;
		if (t->layer && t->layer[0])
			a->layer = t->layer;
		else if (!a->layer[0])
			a->layer = layer_of(a->name);
		if (t->device_ordinal >= 0)
			a->device_ordinal = t->device_ordinal;
	}
	return 0;
}

int xs_memory_read(const struct xs_space *xs, struct xs_memory *m)
{
	const struct xs_plane *host = xs_plane_named(xs, "/host:CPU");
	struct memory_timelines *tl = calloc(1, sizeof(*tl));
	size_t cap = 0, ev_caps[XS_MEM_MAX_ALLOCATORS];
	const struct xs_stat *s;
	int ret = tl ? 0 : -ENOMEM;

	memset(m, 0, sizeof(*m));
	memset(ev_caps, 0, sizeof(ev_caps));
	m->priv = tl;
	for (size_t i = 0; host && i < host->n_lines && !ret; i++) {
		const struct xs_line *l = &host->lines[i];

		if (xs_line_is_memory_counter(l))
			continue;	/* the timeline's points: read from the stat */
		for (size_t k = 0; k < l->n_events && !ret; k++)
			if (xs_event_is_memory(&l->events[k]))
				ret = add_event(m, &cap, ev_caps, XS_MEM_MAX_ALLOCATORS, l,
						&l->events[k]);
	}
	s = host ? xs_stat_find(host->stats, host->n_stats, "acceltrace.memory_events_dropped") : NULL;
	if (!ret && !xs_stat_int(s, &m->events_dropped))
		m->events_dropped = 0;
	s = host ? xs_stat_find(host->stats, host->n_stats, "acceltrace.memory_timelines") : NULL;
	if (!ret && s && (s->type == XS_STAT_STR || s->type == XS_STAT_BYTES)) {
		const char *json = s->type == XS_STAT_STR ? s->s : (const char *)s->bytes;
		size_t len = s->type == XS_STAT_STR ? strlen(s->s) : s->len;
		int r = memory_timelines_parse(json, len, tl, m->timeline_error,
					       sizeof(m->timeline_error));

		if (r == -ENOMEM)
			ret = r;
		else if (!r)
			ret = merge_timelines(m, &cap, tl);
	}
	for (size_t i = 0; i < m->n_allocs && !ret; i++)
		array_sort(m->allocs[i].events, m->allocs[i].n_events,
			   sizeof(*m->allocs[i].events), cmp_event);
	if (ret)
		xs_memory_free(m);
	return ret;
}

void xs_memory_free(struct xs_memory *m)
{
	for (size_t i = 0; i < m->n_allocs; i++) {
		free(m->allocs[i].events);
		free(m->allocs[i].points);
	}
	free(m->allocs);
	if (m->priv) {
		memory_timelines_free(m->priv);
		free(m->priv);
	}
	memset(m, 0, sizeof(*m));
}
