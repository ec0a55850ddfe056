// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* An XSpace as tracks, slices and flows (see timeline.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "export/timeline.h"
#include "lib/hashmap.h"
#include "reader/xspace_memory.h"

/* Ids no Linux process has (above PID_MAX_LIMIT), for remapped ones. */
#define REMAP_ID_BASE 0x10000000

/* Chrome JSON ids for what has no small real id. */
#define JSON_DEVICE_PID_BASE 0x40000000u
#define JSON_SYNTHETIC_TID_BASE 0x20000000u

static bool plane_stat_u64(const struct xs_plane *p, const char *name, uint64_t *v)
{
	int64_t i;

	if (!p || !xs_stat_int(xs_stat_find(p->stats, p->n_stats, name), &i) || i < 0)
		return false;
	*v = (uint64_t)i;
	return true;
}

/*
 * acceltrace writes the window start on CLOCK_MONOTONIC; the official
 * profiler only the session's wall-clock start. Without either, times stay
 * the XSpace's own (from 0).
 */
static void pick_clock(const struct xs_space *xs, struct timeline *t)
{
	const struct xs_plane *task = xs_plane_named(xs, "Task Environment");
	uint64_t v;

	t->clock = TIMELINE_CLOCK_MONOTONIC;
	if (plane_stat_u64(task, "profile_start_time", &v))
		t->realtime_at_zero = v;
	if (plane_stat_u64(task, "acceltrace.window_start_ns", &v)) {
		t->clock_at_zero = v;
		t->clock_known = true;
	} else if (t->realtime_at_zero) {
		t->clock = TIMELINE_CLOCK_REALTIME;
		t->clock_at_zero = t->realtime_at_zero;
		t->clock_known = true;
	}
}

/*
 * The one process acceltrace traced, when every device plane names the
 * same (its line labels name the pid only when there are several); 0 if
 * unknown or several.
 */
static int64_t only_pid(const struct xs_space *xs)
{
	int64_t pid = 0, v;

	for (size_t i = 0; i < xs->n_planes; i++) {
		const struct xs_plane *p = &xs->planes[i];

		if (!xs_stat_int(xs_stat_find(p->stats, p->n_stats, "acceltrace.pid"), &v))
			continue;
		if (pid && v != pid)
			return 0;
		pid = v;
	}
	return pid;
}

/*
 * The process of a host line: "(pid N" in its label, else the plane's
 * process_id (JAX's profiler), else the capture's only process.
 */
static int64_t line_pid(const struct xs_plane *p, const struct xs_line *l, int64_t only)
{
	const char *s = strstr(l->display_name, "(pid ");
	int64_t v;

	if (s)
		return strtoll(s + 5, NULL, 10);
	if (xs_stat_int(xs_stat_find(p->stats, p->n_stats, "process_id"), &v))
		return v;
	return only;
}

static int add_track(struct timeline *t, size_t *cap, struct timeline_track tr)
{
	if (t->n_tracks == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct timeline_track *v = realloc(t->tracks, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->tracks = v;
		*cap = c;
	}
	tr.uuid = t->n_tracks + 1;
	t->tracks[t->n_tracks++] = tr;
	return 0;
}

/* What one host's tracks are built with. */
struct host_ctx {
	uint32_t host;
	const char *prefix;		/* "h1", or NULL for one host */
	struct hashmap *used;		/* (id, 0): pids and tids of earlier hosts */
	struct hashmap *remap;		/* (id, 0) -> this host's id + 1 */
	struct hashmap *mine;		/* (id, 0): ids this host keeps */
	int64_t *next_id;
};

/* A name made here, freed with the timeline; NULL on -ENOMEM. */
static const char *own_name(struct timeline *t, const char *a, const char *sep, const char *b)
{
	char *s;

	if (ARRAY_GROW(t->names, t->names_cap, t->n_names + 1))
		return NULL;
	if (asprintf(&s, "%s%s%s", a, sep, b) < 0)
		return NULL;
	t->names[t->n_names++] = s;
	return s;
}

/*
 * A pid or tid of this host, as the timeline gives it: itself, or, when an
 * earlier host used it (hosts commonly share pids), an unused one, the
 * same for every use on this host. -ENOMEM as -1.
 */
static int64_t host_id(struct host_ctx *h, int64_t id)
{
	uintptr_t got;

	if (!h->prefix || id <= 0)
		return id;
	got = (uintptr_t)hashmap__get(h->remap, (uint64_t)id, 0);
	if (got)
		return (int64_t)got - 1;
	if (hashmap__get(h->used, (uint64_t)id, 0) && !hashmap__get(h->mine, (uint64_t)id, 0)) {
		while (hashmap__get(h->used, (uint64_t)*h->next_id, 0))
			(*h->next_id)++;
		got = (uintptr_t)(*h->next_id)++;
	} else {
		got = (uintptr_t)id;
	}
	if (hashmap__put(h->remap, (uint64_t)id, 0, (void *)(got + 1), NULL) ||
	    hashmap__put(h->mine, got, 0, (void *)1, NULL))
		return -1;
	return (int64_t)got;
}

static uint32_t small_id(int64_t v, uint32_t fallback)
{
	return v > 0 && v < (int64_t)JSON_SYNTHETIC_TID_BASE ? (uint32_t)v : fallback;
}

/* The track of process pid (added when new) as its index + 1 in *proc. */
static int process_track(struct timeline *t, size_t *cap, struct hashmap *procs, int64_t pid,
			 const struct host_ctx *h, uintptr_t *proc)
{
	int ret;

	*proc = (uintptr_t)hashmap__get(procs, (uint64_t)pid, 0);
	if (*proc)
		return 0;
	ret = add_track(t, cap, (struct timeline_track){
		.kind = TRACK_PROCESS, .pid = pid, .name = h->prefix ?: "",
		.json_pid = small_id(pid, JSON_SYNTHETIC_TID_BASE + t->n_tracks),
		.host = h->host,
	});
	if (ret || hashmap__put(procs, (uint64_t)pid, 0, (void *)(uintptr_t)t->n_tracks, NULL))
		return -ENOMEM;
	*proc = t->n_tracks;
	return 0;
}

/* A slice per event, but for device memory: its allocations and frees
 * (XProf hides them too) and its counter lines become counters. */
static bool event_is_slice(const struct xs_event *e)
{
	return !xs_event_is_memory(e);
}

static bool line_has_slices(const struct xs_line *l)
{
	if (xs_line_is_memory_counter(l))
		return false;
	for (size_t k = 0; k < l->n_events; k++)
		if (event_is_slice(&l->events[k]))
			return true;
	return false;
}

static int host_tracks(struct timeline *t, size_t *cap, const struct xs_plane *p,
		       struct hashmap *procs, struct hashmap *threads, int64_t only,
		       struct host_ctx *h)
{
	for (size_t j = 0; j < p->n_lines; j++) {
		const struct xs_line *l = &p->lines[j];
		int64_t pid = host_id(h, line_pid(p, l, only));
		uintptr_t proc = (uintptr_t)hashmap__get(procs, (uint64_t)pid, 0);
		uintptr_t first = (uintptr_t)hashmap__get(threads, (uint64_t)pid, (uint64_t)l->display_id);
		struct timeline_track tr = { .pid = pid, .line = l, .name = l->display_name,
					     .host = h->host };
		int ret;

		if (!line_has_slices(l))
			continue;
		if (pid == -1)
			return -ENOMEM;
		ret = process_track(t, cap, procs, pid, h, &proc);
		if (ret)
			return ret;
		tr.json_pid = t->tracks[proc - 1].json_pid;
		if (first) {
			/* A further row of a thread: its own track under the thread's. */
			tr.kind = TRACK_ROW;
			tr.parent_uuid = t->tracks[first - 1].uuid;
			tr.tid = t->tracks[first - 1].tid;
			tr.json_tid = JSON_SYNTHETIC_TID_BASE + t->n_tracks;
		} else {
			tr.kind = TRACK_THREAD;
			tr.parent_uuid = t->tracks[proc - 1].uuid;
			tr.tid = (int64_t)(l->display_id & 0xffffffff) == l->display_id ?
				 host_id(h, l->display_id) :
				 (int64_t)(JSON_SYNTHETIC_TID_BASE + t->n_tracks);
			if (tr.tid == -1)
				return -ENOMEM;
			tr.json_tid = small_id(tr.tid, JSON_SYNTHETIC_TID_BASE + t->n_tracks);
		}
		ret = add_track(t, cap, tr);
		if (ret)
			return ret;
		/* The process is named as its main thread (tid = pid) is, after
		 * its host when there are several. */
		if (tr.kind == TRACK_THREAD && tr.tid == pid) {
			t->tracks[proc - 1].name = h->prefix ? own_name(t, h->prefix, ": ", l->name) :
							       l->name;
			if (!t->tracks[proc - 1].name)
				return -ENOMEM;
		}
		if (!first && hashmap__put(threads, (uint64_t)pid, (uint64_t)l->display_id,
					   (void *)(uintptr_t)t->n_tracks, NULL))
			return -ENOMEM;
	}
	return 0;
}

static int device_tracks(struct timeline *t, size_t *cap, const struct xs_plane *p,
			 size_t plane_idx, const struct host_ctx *h)
{
	const char *name = h->prefix ? own_name(t, h->prefix, " ", p->name) : p->name;
	uint64_t parent;
	int ret;

	if (!name)
		return -ENOMEM;
	ret = add_track(t, cap, (struct timeline_track){
		.kind = TRACK_DEVICE, .name = name, .host = h->host,
		.json_pid = JSON_DEVICE_PID_BASE + (uint32_t)plane_idx,
	});
	if (ret)
		return ret;
	parent = t->tracks[t->n_tracks - 1].uuid;
	for (size_t j = 0; j < p->n_lines && !ret; j++) {
		const struct xs_line *l = &p->lines[j];

		if (!l->n_events)
			continue;
		ret = add_track(t, cap, (struct timeline_track){
			.kind = TRACK_DEVICE_LINE, .parent_uuid = parent, .line = l,
			.name = l->display_name, .host = h->host,
			.json_pid = JSON_DEVICE_PID_BASE + (uint32_t)plane_idx,
			.json_tid = small_id(l->id, JSON_SYNTHETIC_TID_BASE + t->n_tracks),
		});
	}
	return ret;
}

static int cmp_slice(const void *a, const void *b)
{
	const struct timeline_slice *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->end_ns > y->end_ns ? -1 : x->end_ns < y->end_ns;
}

/* A slice's times: the true ones when acceltrace clipped it (and they fit). */
static void slice_times(const struct timeline *t, uint32_t host, const struct xs_event *e,
			struct timeline_slice *s)
{
	uint64_t zero = t->host_zero ? t->host_zero[host] : t->clock_at_zero;
	bool known = t->host_zero ? t->host_known[host] : t->clock_known;
	int64_t ts, te;

	s->start_ns = zero + (uint64_t)(e->start_ps / 1000);
	s->end_ns = s->start_ns + (uint64_t)(e->dur_ps / 1000);
	if (!known ||
	    !xs_stat_int(xs_event_stat(e, "acceltrace.true_start_ns"), &ts) ||
	    !xs_stat_int(xs_event_stat(e, "acceltrace.true_end_ns"), &te) ||
	    (ts < 0 && (uint64_t)-ts > zero) || te < ts)
		return;
	s->start_ns = zero + (uint64_t)ts;
	s->end_ns = zero + (uint64_t)te;
}

static int cmp_track_slice(const void *a, const void *b)
{
	const struct timeline_slice *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	return cmp_slice(a, b);
}

/* A row of a line: the ends of its open slices, innermost last. */
struct row {
	uint64_t *ends;
	size_t n, cap;
	uint32_t track;
};

static int row_push(struct row *r, uint64_t end)
{
	if (r->n == r->cap) {
		size_t c = r->cap ? 2 * r->cap : 16;
		uint64_t *v = realloc(r->ends, c * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->ends = v;
		r->cap = c;
	}
	r->ends[r->n++] = end;
	return 0;
}

/* A further row of track i, for slices that overlap its own partially. */
static int add_row_track(struct timeline *t, size_t *cap, uint32_t i, uint32_t *out)
{
	struct timeline_track tr = t->tracks[i];

	if (tr.kind == TRACK_THREAD) {
		tr.kind = TRACK_ROW;
		tr.parent_uuid = tr.uuid;
	}
	tr.json_tid = JSON_SYNTHETIC_TID_BASE + t->n_tracks;
	*out = t->n_tracks;
	return add_track(t, cap, tr);
}

/*
 * Perfetto and Chrome nest slices per track: a slice that partially
 * overlaps an open one (GPU kernels of one stream sometimes do) goes to a
 * further row of the line, as the XSpace writer does for its own lines.
 */
static int place_rows(struct timeline *t, size_t *cap, uint32_t i, size_t first, size_t last)
{
	struct row *rows = NULL;
	size_t n_rows = 0, rows_cap = 0;
	int ret = 0;

	for (size_t k = first; k < last && !ret; k++) {
		struct timeline_slice *s = &t->slices[k];
		size_t r;

		for (r = 0; r < n_rows; r++) {
			while (rows[r].n && rows[r].ends[rows[r].n - 1] <= s->start_ns)
				rows[r].n--;
			if (!rows[r].n || rows[r].ends[rows[r].n - 1] >= s->end_ns)
				break;
		}
		if (r == n_rows) {
			if (ARRAY_GROW(rows, rows_cap, n_rows + 1)) {
				ret = -ENOMEM;
				break;
			}
			rows[n_rows] = (struct row){ .track = i };
			if (n_rows && (ret = add_row_track(t, cap, i, &rows[n_rows].track)))
				break;
			n_rows++;
		}
		s->track = rows[r].track;
		if (s->end_ns > s->start_ns)
			ret = row_push(&rows[r], s->end_ns);
	}
	for (size_t r = 0; r < n_rows; r++)
		free(rows[r].ends);
	free(rows);
	return ret;
}

static int build_slices(struct timeline *t, size_t *cap)
{
	size_t n = 0, n_line_tracks = t->n_tracks;
	int ret = 0;

	for (size_t i = 0; i < t->n_tracks; i++)
		n += t->tracks[i].line ? t->tracks[i].line->n_events : 0;
	t->slices = calloc(n ? n : 1, sizeof(*t->slices));
	if (!t->slices)
		return -ENOMEM;
	/* Only the lines' own tracks: rows added below share their lines. */
	for (size_t i = 0; i < n_line_tracks && !ret; i++) {
		const struct xs_line *l = t->tracks[i].line;
		size_t first = t->n_slices;

		for (size_t k = 0; l && k < l->n_events; k++) {
			struct timeline_slice *s;

			if (!event_is_slice(&l->events[k]))
				continue;
			s = &t->slices[t->n_slices++];
			s->track = i;
			s->ev = &l->events[k];
			slice_times(t, t->tracks[i].host, s->ev, s);
		}
		qsort(t->slices + first, t->n_slices - first, sizeof(*t->slices), cmp_slice);
		ret = place_rows(t, cap, i, first, t->n_slices);
	}
	/* Writers walk slices track by track, outer to inner. */
	if (!ret)
		qsort(t->slices, t->n_slices, sizeof(*t->slices), cmp_track_slice);
	return ret;
}

static uint64_t flow_id(uint64_t corr, size_t plane)
{
	return (uint64_t)(plane + 1) << 48 ^ corr;
}

static bool slice_corr(const struct timeline_slice *s, uint64_t *corr)
{
	int64_t v;

	if (!xs_stat_int(xs_event_stat(s->ev, "correlation_id"), &v) || !v)
		return false;
	*corr = (uint64_t)v;
	return true;
}

/*
 * Flows: from the first host slice of a correlation id (the launch) to the
 * first slice of it on each device plane (the work it started).
 */
static int build_flows(struct timeline *t)
{
	struct hashmap *targets = hashmap__new(), *launches = hashmap__new();
	size_t n_dev = 0, total = 0, used = 0;
	size_t *dev_of_track = calloc(t->n_tracks ? t->n_tracks : 1, sizeof(*dev_of_track));
	uint32_t *dev_host = calloc(t->n_tracks + 1, sizeof(*dev_host));
	int ret = -ENOMEM;

	if (!targets || !launches || !dev_of_track || !dev_host)
		goto out;
	/* Device plane index (1-based) of each device line track. */
	for (size_t i = 0; i < t->n_tracks; i++) {
		if (t->tracks[i].kind == TRACK_DEVICE)
			dev_host[++n_dev] = t->tracks[i].host;
		if (t->tracks[i].kind == TRACK_DEVICE_LINE)
			dev_of_track[i] = n_dev;
	}
	for (size_t i = 0; i < t->n_slices; i++) {
		struct timeline_slice *s = &t->slices[i];
		size_t dev = dev_of_track[s->track];
		uintptr_t *cur;
		uint64_t corr;

		if (!slice_corr(s, &corr))
			continue;
		/* Launches per host: correlation ids are one host's own. */
		uint64_t key = dev ? dev : t->tracks[s->track].host;

		cur = (uintptr_t *)hashmap__get(dev ? targets : launches, corr, key);
		if (cur && t->slices[*cur - 1].start_ns <= s->start_ns)
			continue;
		if (!cur) {
			cur = malloc(sizeof(*cur));
			if (!cur || hashmap__put(dev ? targets : launches, corr, key, cur, NULL)) {
				free(cur);
				goto out;
			}
		}
		*cur = i + 1;
	}
	total = hashmap__count(targets);
	t->flow_store = calloc(total ? total : 1, sizeof(*t->flow_store));
	if (!t->flow_store)
		goto out;
	for (size_t i = 0; i < t->n_slices; i++) {
		struct timeline_slice *s = &t->slices[i];
		uintptr_t *launch;
		uint64_t corr;

		if (dev_of_track[s->track] || !slice_corr(s, &corr))
			continue;
		launch = hashmap__get(launches, corr, t->tracks[s->track].host);
		if (!launch || *launch != i + 1)
			continue;
		s->flows_out = t->flow_store + used;
		for (size_t d = 1; d <= n_dev && used < total; d++) {
			uintptr_t *target = dev_host[d] == t->tracks[s->track].host ?
					    hashmap__get(targets, corr, d) : NULL;

			if (!target)
				continue;
			t->slices[*target - 1].flow_in = flow_id(corr, d);
			t->flow_store[used++] = flow_id(corr, d);
			s->n_flows_out++;
			t->n_flows++;
		}
	}
	ret = 0;
out:
	hashmap__free(targets, free);
	hashmap__free(launches, free);
	free(dev_of_track);
	free(dev_host);
	return ret;
}

/* A counter track per device memory allocator, under its process. */
static int memory_tracks(struct timeline *t, size_t *cap, const struct xs_space *xs,
			 struct hashmap *procs, int64_t only, struct host_ctx *h)
{
	uint64_t zero = t->host_zero ? t->host_zero[h->host] : t->clock_at_zero;
	struct xs_memory m;
	int ret = xs_memory_read(xs, &m);
	struct timeline_counter *v;

	if (ret == -E2BIG)
		return 0;	/* a hostile file: its memory left out, the rest kept */
	if (ret)
		return ret;
	v = realloc(t->counters, (t->n_counters + m.n_allocs + 1) * sizeof(*v));
	ret = v ? 0 : -ENOMEM;
	if (v)
		t->counters = v;
	for (size_t i = 0; i < m.n_allocs && !ret; i++) {
		const struct xs_mem_allocator *a = &m.allocs[i];
		int64_t pid = host_id(h, a->pid >= 0 ? a->pid : only);
		const char *name = own_name(t, "Device memory in use: ", "", a->name);
		struct timeline_counter *c = &t->counters[t->n_counters];
		uintptr_t proc;

		if (!name || pid == -1) {
			ret = -ENOMEM;
			break;
		}
		ret = process_track(t, cap, procs, pid, h, &proc);
		if (!ret)
			ret = add_track(t, cap, (struct timeline_track){
				.kind = TRACK_COUNTER, .pid = pid, .name = name, .host = h->host,
				.parent_uuid = t->tracks[proc - 1].uuid,
				.json_pid = t->tracks[proc - 1].json_pid,
				.json_tid = JSON_SYNTHETIC_TID_BASE + t->n_tracks,
			});
		if (!ret)
			ret = timeline_counter_points(a, zero, c);
		if (!ret) {
			c->track = (uint32_t)(t->n_tracks - 1);
			t->n_counters++;
		}
	}
	xs_memory_free(&m);
	return ret;
}

/* One host's planes as tracks. */
static int space_tracks(struct timeline *t, size_t *cap, const struct xs_space *xs,
			size_t dev_base, struct host_ctx *h)
{
	struct hashmap *procs = hashmap__new(), *threads = hashmap__new();
	int ret = procs && threads ? 0 : -ENOMEM;
	int64_t only = only_pid(xs);

	for (size_t i = 0; i < xs->n_planes && !ret; i++) {
		const struct xs_plane *p = &xs->planes[i];

		if (!p->n_lines)
			continue;
		ret = xs_is_device_plane(p) ? device_tracks(t, cap, p, dev_base + i, h) :
					       host_tracks(t, cap, p, procs, threads, only, h);
	}
	if (!ret)
		ret = memory_tracks(t, cap, xs, procs, only, h);
	hashmap__free(procs, NULL);
	hashmap__free(threads, NULL);
	return ret;
}

static int finish_build(struct timeline *t, size_t *cap, int ret)
{
	if (!ret)
		ret = build_slices(t, cap);
	if (!ret)
		ret = build_flows(t);
	if (ret)
		timeline_free(t);
	return ret;
}

int timeline_build(const struct xs_space *xs, struct timeline *t)
{
	struct host_ctx h = { 0 };
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	t->n_hosts = 1;
	pick_clock(xs, t);
	return finish_build(t, &cap, space_tracks(t, &cap, xs, 0, &h));
}

/*
 * Each host on the wall clock from its own capture's start: host clocks
 * (CLOCK_MONOTONIC) are not comparable across machines.
 */
static void pick_host_clocks(const struct xs_space *const *xs, size_t n, struct timeline *t)
{
	uint64_t base = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		struct timeline one = { 0 };

		pick_clock(xs[i], &one);
		t->host_known[i] = one.realtime_at_zero != 0;
		t->host_zero[i] = one.realtime_at_zero;
		if (t->host_known[i] && one.realtime_at_zero < base)
			base = one.realtime_at_zero;
	}
	t->clock = TIMELINE_CLOCK_REALTIME;
	t->clock_known = base != UINT64_MAX;
	t->clock_at_zero = t->clock_known ? base : 0;
	for (size_t i = 0; i < n; i++)
		if (!t->host_known[i])
			t->host_zero[i] = t->clock_at_zero;
}

int timeline_build_hosts(const struct xs_space *const *xs, const char *const *hosts,
			 size_t n, struct timeline *t)
{
	struct host_ctx h = { 0 };
	int64_t next_id = REMAP_ID_BASE;
	size_t cap = 0, dev_base = 0;
	int ret = 0;

	memset(t, 0, sizeof(*t));
	t->n_hosts = n;
	t->host_zero = calloc(n ? n : 1, sizeof(*t->host_zero));
	t->host_known = calloc(n ? n : 1, sizeof(*t->host_known));
	h.used = hashmap__new();
	h.next_id = &next_id;
	if (!t->host_zero || !t->host_known || !h.used)
		ret = -ENOMEM;
	if (!ret)
		pick_host_clocks(xs, n, t);
	for (size_t i = 0; i < n && !ret; i++) {
		size_t first = t->n_tracks;

		h.host = (uint32_t)i;
		h.prefix = hosts[i];
		h.remap = hashmap__new();
		h.mine = hashmap__new();
		ret = h.remap && h.mine ? space_tracks(t, &cap, xs[i], dev_base, &h) : -ENOMEM;
		dev_base += xs[i]->n_planes;
		/* This host's ids are taken for the hosts after it. */
		for (size_t k = first; k < t->n_tracks && !ret; k++) {
			const struct timeline_track *tr = &t->tracks[k];

			if (tr->kind != TRACK_PROCESS && tr->kind != TRACK_THREAD)
				continue;
			if (hashmap__put(h.used, (uint64_t)(tr->kind == TRACK_PROCESS ? tr->pid : tr->tid),
					 0, (void *)1, NULL))
				ret = -ENOMEM;
		}
		hashmap__free(h.remap, NULL);
		hashmap__free(h.mine, NULL);
	}
	hashmap__free(h.used, NULL);
	return finish_build(t, &cap, ret);
}

void timeline_free(struct timeline *t)
{
	free(t->tracks);
	free(t->slices);
	free(t->flow_store);
	for (size_t i = 0; i < t->n_counters; i++) {
		free(t->counters[i].ts_ns);
		free(t->counters[i].bytes);
	}
	free(t->counters);
	free(t->host_zero);
	free(t->host_known);
	for (size_t i = 0; i < t->n_names; i++)
		free(t->names[i]);
	free(t->names);
	memset(t, 0, sizeof(*t));
}
