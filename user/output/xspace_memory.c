// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory on the /host:CPU plane, as docs/capture-format.md "Device
 * memory" says: MemoryAllocation / MemoryDeallocation instants on the
 * calling thread's row (one more line of it, sharing its display_id),
 * with XProf's Memory Profile stat names; a counter line per allocator
 * ("Memory in use" instants, a point at the window's start); the whole
 * timeline, before the window too, as the plane stat
 * acceltrace.memory_timelines (JSON), and the events the budget dropped.
 * Times are never negative in events: what precedes the window is only
 * in the JSON.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "acceltrace/events.h"
#include "capture/capture_memory.h"
#include "lib/array.h"
#include "lib/json_writer.h"
#include "output/thread_names.h"
#include "output/xspace_memory.h"

/* Event metadata keys of the memory names, apart from span names (an
 * interned id < 2^32) and span kinds (1 << 32 | kind). */
#define MD_KEY_MEMORY (2ULL << 32)
enum { MD_ALLOCATION, MD_DEALLOCATION, MD_IN_USE };
static const char *const md_names[] = {
	[MD_ALLOCATION] = "MemoryAllocation",
	[MD_DEALLOCATION] = "MemoryDeallocation",
	[MD_IN_USE] = "Memory in use",
};

/* The most stats one memory event carries (mem_event_stats: 8 always,
 * group_id, region_type, 3 of a shape, process_id, api, size_from and 3
 * flags), and a timeline point (in_use_event). A stat past them is
 * refused, never written past the buffer (add_i64). */
#define MAX_MEM_STATS 19
#define MAX_POINT_STATS 5
/* Counter lines: 2^62 + i, above every thread's id and extra line. */
#define COUNTER_LINE_ID (1LL << 62)

static int md_index(struct xw *w, int which)
{
	uint64_t key = MD_KEY_MEMORY | (uint64_t)which;
	uint32_t i = u64_map__get(&w->ev_by_key, key);

	if (i != U64_MAP_NONE)
		return i;
	if (ARRAY_GROW(w->ev, w->ev_cap, w->nev + 1) || u64_map__put(&w->ev_by_key, key, w->nev))
		return -ENOMEM;
	w->ev[w->nev].name = md_names[which];
	w->ev[w->nev].nargs = 0;
	return w->nev++;
}

struct mem_index {
	uint32_t pid, tid;
	uint64_t ts_ns;
	size_t i;
};

static int cmp_thread_time(const void *a, const void *b)
{
	const struct mem_index *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int xw_memory_prepare(struct xw *w)
{
	size_t n = capture__num_mem_events(w->c), ngroups = 0;
	struct mem_index *ix;

	w->mem_order = NULL;
	w->mem_groups = NULL;
	w->nmem_groups = 0;
	if (!n)
		return 0;
	ix = malloc(n * sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct capture_mem_event *e = capture__mem_event(w->c, i);

		ix[i] = (struct mem_index){ e->alloc.pid, e->tid, e->ts_ns, i };
	}
	array_sort(ix, n, sizeof(*ix), cmp_thread_time);
	w->mem_order = malloc(n * sizeof(*w->mem_order));
	w->mem_groups = malloc(n * sizeof(*w->mem_groups));
	if (!w->mem_order || !w->mem_groups) {
		free(ix);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		w->mem_order[i] = ix[i].i;
		if (!i || ix[i].pid != ix[i - 1].pid || ix[i].tid != ix[i - 1].tid)
			w->mem_groups[ngroups++] = (struct mem_group){
				.pid = ix[i].pid, .tid = ix[i].tid, .first = i };
		w->mem_groups[ngroups - 1].n++;
	}
	w->nmem_groups = ngroups;
	free(ix);
	return 0;
}

void xw_memory_free(struct xw *w)
{
	free(w->mem_order);
	free(w->mem_groups);
	w->mem_order = NULL;
	w->mem_groups = NULL;
	w->nmem_groups = 0;
}

/* Bytes as XProf's int64 stats hold them. */
static int64_t bytes64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

struct stat_list {
	struct xw *w;
	XStat *st;
	XStat **sp;
	size_t n, cap;		/* cap: the room reserve() made for this event */
	bool oom;		/* a stat name not interned, or past cap */
};

static uint32_t sid(struct stat_list *l, const char *name)
{
	uint32_t id = xspace_stats__id(&l->w->stats, name);

	l->oom |= !id;
	return id;
}

/* Room for one more stat, or the list fails. */
static bool room(struct stat_list *l)
{
	l->oom |= l->n == l->cap;
	return l->n < l->cap;
}

static void add_i64(struct stat_list *l, const char *name, int64_t v)
{
	uint32_t id = sid(l, name);

	if (id && room(l)) {
		xw_stat_int(&l->st[l->n], id, v);
		l->sp[l->n] = &l->st[l->n];
		l->n++;
	}
}

static void add_ref(struct stat_list *l, const char *name, const char *value)
{
	uint32_t id = sid(l, name), ref = value ? sid(l, value) : 0;

	if (id && ref && room(l)) {
		xw_stat_ref(&l->st[l->n], id, ref);
		l->sp[l->n] = &l->st[l->n];
		l->n++;
	}
}

static const char *size_from(const struct capture_mem_event *e)
{
	if (!e->bytes && !e->requested_bytes)
		return NULL;	/* not known: no size_from */
	if (e->flags & CAPTURE_MEM_F_SIZE_QUERIED)
		return "size_query";
	if (e->flags & CAPTURE_MEM_F_SIZE_FROM_SHAPE)
		return "shape";
	return e->op == CAPTURE_MEM_FREE ? "live_table" : "call";
}

/* TensorFlow's DataType number (tensorflow/core/framework/types.proto) for
 * an XLA element type name ("f32": 1); 0 (DT_INVALID) if none. */
static int64_t tf_data_type(const char *xla_type)
{
	static const struct { const char *xla; int tf; } map[] = {
		{ "f32", 1 }, { "f64", 2 }, { "s32", 3 }, { "u8", 4 }, { "s16", 5 },
		{ "s8", 6 }, { "c64", 8 }, { "s64", 9 }, { "pred", 10 }, { "bf16", 14 },
		{ "u16", 17 }, { "c128", 18 }, { "f16", 19 }, { "u32", 22 }, { "u64", 23 },
		{ "f8e5m2", 24 }, { "f8e4m3fn", 25 }, { "f8e4m3fnuz", 26 },
		{ "f8e4m3b11fnuz", 27 }, { "f8e5m2fnuz", 28 }, { "s4", 29 }, { "u4", 30 },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].xla, xla_type))
			return map[i].tf;
	return 0;
}

/*
 * "f32[128,256]" as tensor_shapes "[128,256]" and data_type TensorFlow's
 * number for f32 (XProf reads it as one: a string would show "invalid"),
 * with the XLA name beside it for people.
 */
static void shape_stats(struct stat_list *l, const char *shape)
{
	const char *bracket = shape ? strchr(shape, '[') : NULL;
	char type[32];
	size_t len;

	if (!bracket)
		return;
	len = (size_t)(bracket - shape);
	if (len && len < sizeof(type)) {
		memcpy(type, shape, len);
		type[len] = '\0';
		add_i64(l, "data_type", tf_data_type(type));
		add_ref(l, "acceltrace.element_type", type);
	}
	add_ref(l, "tensor_shapes", bracket);
}

/* XProf's device ordinal; -1 for a device no call named. */
static int64_t ordinal_stat(uint32_t device)
{
	return device == CAPTURE_MEM_DEVICE_UNKNOWN ? -1 : (int64_t)device;
}

static void mem_event_stats(struct stat_list *l, const struct capture_mem_event *e)
{
	const struct capture *c = l->w->c;
	int64_t step;

	/* XProf reads every one of these with IntValue() (int64 only: a
	 * uint64 stat reads 0) and takes the memory id from whichever of
	 * device_ordinal and allocator_name comes last: the allocator's name,
	 * since one device has two layers. */
	add_i64(l, "device_ordinal", ordinal_stat(e->alloc.device));
	add_ref(l, "allocator_name", capture__string(c, e->alloc.name));
	add_i64(l, "bytes_allocated", bytes64(e->in_use_after));
	add_i64(l, "bytes_reserved", 0);
	add_i64(l, "peak_bytes_in_use", bytes64(e->peak_in_use));
	add_i64(l, "requested_bytes", bytes64(e->requested_bytes));
	add_i64(l, "allocation_bytes", bytes64(e->bytes));
	add_i64(l, "addr", (int64_t)e->addr);
	if (step_groups__at(&l->w->groups, e->alloc.pid, e->ts_ns, &step))
		add_i64(l, "group_id", step);
	add_ref(l, "region_type", e->alloc.layer == MEM_LAYER_PJRT ? "pjrt_buffer" :
		"reserved");
	if (e->shape)
		shape_stats(l, capture__string(c, e->shape));
	add_i64(l, "process_id", e->alloc.pid);
	if (e->api)
		add_ref(l, "acceltrace.api", capture__string(c, e->api));
	add_ref(l, "acceltrace.size_from", size_from(e));
	if (e->flags & CAPTURE_MEM_F_SIZE_UNKNOWN)
		add_i64(l, "acceltrace.size_unknown", 1);
	if (e->flags & CAPTURE_MEM_F_DEVICE_GUESSED)
		add_i64(l, "acceltrace.device_guessed", 1);
	if (e->flags & CAPTURE_MEM_F_UNTRACKED)
		add_i64(l, "acceltrace.untracked", 1);
}

/* Room for @n events of up to @per stats each in the writer's buffers. */
static int reserve(struct xw *w, size_t n, size_t per)
{
	size_t nstats = n * per;

	if (!n)
		n = nstats = 1;
	if (ARRAY_GROW(w->events, w->events_cap, n) ||
	    ARRAY_GROW(w->event_ptrs, w->event_ptrs_cap, n) ||
	    ARRAY_GROW(w->stat_buf, w->stat_buf_cap, nstats) ||
	    ARRAY_GROW(w->stat_ptrs, w->stat_ptrs_cap, nstats))
		return -ENOMEM;
	return 0;
}

static void write_line(struct xw *w, int64_t id, int64_t display_id, const char *name,
		       const char *display_name, size_t n)
{
	XLine line = TENSORFLOW__PROFILER__XLINE__INIT;

	line.id = id;
	line.display_id = display_id;
	line.name = (char *)name;
	line.display_name = (char *)(display_name ? display_name : "");
	line.timestamp_ns = 0;	/* the window start */
	line.duration_ps = (int64_t)(w->we - w->ws) * 1000;
	line.n_events = n;
	line.events = w->event_ptrs;
	pb_message_field(&w->o, XPLANE_LINES, &line.base);
	w->events_written += n;
}

static int write_group(struct xw *w, const struct mem_group *g, int64_t line_id,
		       int64_t display_id, const char *name, const char *display_name)
{
	size_t used = 0, n = 0;
	int err = reserve(w, g->n, MAX_MEM_STATS);

	if (err)
		return err;
	for (size_t k = 0; k < g->n; k++) {
		const struct capture_mem_event *e = capture__mem_event(w->c,
								       w->mem_order[g->first + k]);
		struct stat_list l = { w, &w->stat_buf[used], &w->stat_ptrs[used], 0,
				       MAX_MEM_STATS, false };
		XEvent *ev = &w->events[n];
		int idx;

		/* The model keeps the window's only; a window moved since is
		 * not drawn outside itself. */
		if (e->ts_ns < w->ws || e->ts_ns > w->we) {
			w->mem_outside++;
			continue;
		}
		idx = md_index(w, e->op == CAPTURE_MEM_FREE ? MD_DEALLOCATION : MD_ALLOCATION);
		if (idx < 0)
			return idx;
		mem_event_stats(&l, e);
		if (l.oom)
			return -ENOMEM;
		tensorflow__profiler__xevent__init(ev);
		ev->metadata_id = idx + 1;
		ev->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
		ev->offset_ps = (int64_t)(e->ts_ns - w->ws) * 1000;
		ev->duration_ps = 0;
		ev->n_stats = l.n;
		ev->stats = l.n ? l.sp : NULL;
		used += l.n;
		w->event_ptrs[n++] = ev;
	}
	if (n)
		write_line(w, line_id, display_id, name, display_name, n);
	return w->o.err;
}

static struct mem_group *find_group(struct xw *w, uint32_t pid, uint32_t tid)
{
	size_t lo = 0, hi = w->nmem_groups;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		struct mem_group *g = &w->mem_groups[mid];

		if (g->pid == pid && g->tid == tid)
			return g;
		if (g->pid < pid || (g->pid == pid && g->tid < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int xw_memory_thread_line(struct xw *w, uint32_t pid, uint32_t tid, size_t rows,
			  const char *name, const char *display_name)
{
	struct mem_group *g = find_group(w, pid, tid);

	if (!g)
		return 0;
	g->written = true;
	/* One more row of the thread: its spans took rows 0..rows-1. */
	return write_group(w, g, (int64_t)tid + ((int64_t)rows << EXTRA_LINE_SHIFT), tid,
			   name, display_name);
}

int xw_memory_other_threads(struct xw *w, bool multi)
{
	int err = 0;

	for (size_t i = 0; i < w->nmem_groups && !err; i++) {
		const struct mem_group *g = &w->mem_groups[i];
		int t = capture__find_thread(w->c, g->pid, g->tid);
		const char *name = NULL;
		char buf[64], display[512];

		if (g->written)
			continue;
		if (t >= 0)
			name = capture__string(w->c, capture__thread(w->c, t)->name);
		if (!name || !name[0]) {
			snprintf(buf, sizeof(buf), "thread %u", g->tid);
			name = buf;
		}
		err = write_group(w, g, g->tid, g->tid, name,
				  thread_line_label(w->c, name, g->pid, multi, NULL, 0, 0, display,
						    sizeof(display)));
	}
	return err;
}

/* One "Memory in use" instant at @t for point @p. */
static int in_use_event(struct xw *w, size_t n, size_t *used, uint64_t t,
			const struct capture_mem_point *p)
{
	struct stat_list l = { w, &w->stat_buf[*used], &w->stat_ptrs[*used], 0, MAX_POINT_STATS,
			       false };
	XEvent *ev = &w->events[n];
	int idx = md_index(w, MD_IN_USE);

	if (idx < 0)
		return idx;
	add_i64(&l, "bytes_allocated", bytes64(p->in_use));
	add_i64(&l, "peak_bytes_in_use", bytes64(p->peak));
	add_i64(&l, "acceltrace.min_bytes", bytes64(p->min_in_use));
	add_i64(&l, "acceltrace.max_bytes", bytes64(p->max_in_use));
	add_i64(&l, "acceltrace.span_ns", bytes64(p->span_ns));
	if (l.oom)
		return -ENOMEM;
	tensorflow__profiler__xevent__init(ev);
	ev->metadata_id = idx + 1;
	ev->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
	ev->offset_ps = (int64_t)(t - w->ws) * 1000;
	ev->n_stats = l.n;
	ev->stats = l.n ? l.sp : NULL;
	*used += l.n;
	w->event_ptrs[n] = ev;
	return 0;
}

int xw_memory_counter_lines(struct xw *w)
{
	for (size_t i = 0; i < capture__num_mem_timelines(w->c); i++) {
		struct capture_mem_allocator a;
		const struct capture_mem_point *p;
		size_t np, n = 0, used = 0, first = 0;
		char name[256];
		int err;

		p = capture__mem_timeline(w->c, i, &a, &np);
		/* The last point before the window is drawn at its start. */
		while (first + 1 < np && p[first + 1].ts_ns <= w->ws)
			first++;
		err = reserve(w, np - first, MAX_POINT_STATS);
		if (err)
			return err;
		for (size_t k = first; k < np && p[k].ts_ns <= w->we; k++) {
			uint64_t t = p[k].ts_ns < w->ws ? w->ws : p[k].ts_ns;

			err = in_use_event(w, n++, &used, t, &p[k]);
			if (err)
				return err;
		}
		if (!n)
			continue;
		snprintf(name, sizeof(name), "Device memory: %s (pid %" PRIu32 ")",
			 capture__string(w->c, a.name), a.pid);
		write_line(w, COUNTER_LINE_ID + (int64_t)i, COUNTER_LINE_ID + (int64_t)i, name,
			   NULL, n);
		if (w->o.err)
			return w->o.err;
	}
	return 0;
}

int xw_memory_timelines_json(const struct xw *w, char **json)
{
	struct json_writer *jw;
	struct jw_memory m;
	int err;

	*json = NULL;
	if (!capture__num_mem_timelines(w->c))
		return 0;
	err = jw_memory_open(&m);
	if (err)
		return err;
	jw = m.jw;
	jw_start_object(jw);
	jw_int_field(jw, "version", 1);
	jw_name(jw, "allocators");
	jw_start_array(jw);
	for (size_t i = 0; i < capture__num_mem_timelines(w->c); i++) {
		struct capture_mem_allocator a;
		const struct capture_mem_point *p;
		const char *layer;
		size_t np;

		p = capture__mem_timeline(w->c, i, &a, &np);
		layer = capture__mem_layer_name(a.layer);
		jw_start_object(jw);
		jw_string_field(jw, "allocator_name", capture__string(w->c, a.name));
		jw_uint_field(jw, "pid", a.pid);
		jw_int_field(jw, "device_ordinal", ordinal_stat(a.device));
		jw_string_field(jw, "layer", layer ? layer : "unknown");
		jw_name(jw, "points");
		jw_start_array(jw);
		for (size_t k = 0; k < np; k++) {
			jw_start_array(jw);
			/* Relative to the window's start: negative before it. */
			jw_int(jw, p[k].ts_ns >= w->ws ? (int64_t)(p[k].ts_ns - w->ws) :
			       -(int64_t)(w->ws - p[k].ts_ns));
			/* int64s, as the events' stats and every reader */
			jw_int(jw, bytes64(p[k].span_ns));
			jw_int(jw, bytes64(p[k].in_use));
			jw_int(jw, bytes64(p[k].min_in_use));
			jw_int(jw, bytes64(p[k].max_in_use));
			jw_int(jw, bytes64(p[k].peak));
			jw_end_array(jw);
		}
		jw_end_array(jw);
		jw_end_object(jw);
	}
	jw_end_array(jw);
	jw_end_object(jw);
	return jw_memory_close(&m, json);
}
