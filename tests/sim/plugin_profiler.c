// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The PJRT profiler extension, as libtpu has one: PJRT_Api.extension_start
 * points to a PJRT_Profiler_Extension whose PLUGIN_Profiler_Api a framework
 * (XLA's PluginTracer) drives: create with a serialized
 * tensorflow.ProfileOptions, start, stop, collect a serialized
 * tensorflow.profiler.XSpace of what the device ran meanwhile, destroy.
 *
 * The device reports each op and each execution of a core when it ends
 * (its tap, device.h), whether or not devtrace buffers are written. Every
 * started profiler with the device tracer on keeps a copy, at most
 * max_events of them (the rest are counted per core). A profiler belongs to
 * the process, not to a client: it may be started before one exists and
 * collected after Client_Destroy.
 *
 * The XSpace is written here in the wire format (user/output/xplane.proto):
 * the plugin links only libc and libsimtruth, like a release build.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/types.h>

#include <acceltrace/devtrace.h>

#include "plugin.h"

#define PROF_MAX_EVENTS_DEFAULT	1000000ull
#define PROF_MAX_EVENTS_LIMIT	100000000ull
#define PROF_MAX_NAMES		65536u

/* absl::StatusCode values, as PJRT_Error_Code has them. */
#define PROF_INVALID_ARGUMENT	3
#define PROF_RESOURCE_EXHAUSTED	8
#define PROF_FAILED_PRECONDITION 9

/* XStatMetadata ids, the same in every plane. */
enum {
	STAT_RUN_ID = 1,
	STAT_HLO_CATEGORY,
	STAT_FLOPS,
	STAT_BYTES_ACCESSED,
	STAT_CANCELLED,
	STAT_DROPPED_EVENTS,
	STAT__COUNT,
};

static const char *const stat_names[STAT__COUNT] = {
	[STAT_RUN_ID] = "run_id",
	[STAT_HLO_CATEGORY] = "hlo_category",
	[STAT_FLOPS] = "flops",
	[STAT_BYTES_ACCESSED] = "bytes_accessed",
	[STAT_CANCELLED] = "cancelled",
	[STAT_DROPPED_EVENTS] = "dropped_events",
};

/* XLine ids of a device plane. */
#define LINE_MODULES	1
#define LINE_OPS	2

struct PLUGIN_Profiler_Error {
	int code;
	char message[];
};

struct prof_event {
	uint64_t t0, t1;		/* CLOCK_MONOTONIC ns */
	uint64_t run_id, flops, bytes;
	uint32_t name;			/* index into names */
	uint8_t core, kind, category, cancelled;
};

struct prof_name {
	uint32_t cores;			/* planes whose events use it */
	uint8_t kind;
	char s[SIM_NAME_LEN];
};

struct prof_options {
	bool include_dataset_ops;
	uint32_t host_tracer_level;
	uint32_t device_tracer_level;
	uint32_t python_tracer_level;
	uint32_t version;
};

struct PLUGIN_Profiler {
	struct prof_options opt;
	uint64_t max_events;
	bool started;
	bool listed;			/* on the started list (device tracer on) */
	PLUGIN_Profiler *next;		/* started list link */
	int64_t realtime_offset;	/* CLOCK_REALTIME - CLOCK_MONOTONIC at Start */
	int cores;			/* planes: the client's cores, and any seen */
	struct prof_event *ev;
	size_t nev, ev_cap;
	uint64_t dropped[SIM_MAX_CORES];
	struct prof_name *names;
	size_t nnames, names_cap;
	uint32_t *hash;			/* name index + 1; 0 = empty */
	size_t hash_cap;		/* a power of two */
	uint8_t *out;			/* the XSpace and a zero byte, once collected */
	size_t out_len;			/* with the zero byte */
	bool collected;
};

/* Profilers the device's tap feeds; the lock also orders Start/Stop. */
static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;
static PLUGIN_Profiler *prof_started;
static int prof_nstarted;

/* ---------------------------------------------------------------- errors */

static PLUGIN_Profiler_Error oom_error = { PROF_RESOURCE_EXHAUSTED };
static const char oom_message[] = "out of memory";

static PLUGIN_Profiler_Error *prof_error(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static PLUGIN_Profiler_Error *prof_error(int code, const char *fmt, ...)
{
	PLUGIN_Profiler_Error *e;
	char msg[256];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	e = malloc(sizeof(*e) + n + 1);
	if (!e)
		return &oom_error;
	e->code = code;
	memcpy(e->message, msg, n + 1);
	return e;
}

static void prof_error_destroy(PLUGIN_Profiler_Error_Destroy_Args *a)
{
	if (a && a->error != &oom_error)
		free(a->error);
}

static void prof_error_message(PLUGIN_Profiler_Error_Message_Args *a)
{
	if (!a)
		return;
	if (!a->error) {
		a->message = "";
	} else {
		a->message = a->error == &oom_error ? oom_message : a->error->message;
	}
	a->message_size = strlen(a->message);
}

static PLUGIN_Profiler_Error *prof_error_get_code(PLUGIN_Profiler_Error_GetCode_Args *a)
{
	if (!a || !a->error)
		return prof_error(PROF_INVALID_ARGUMENT, "error is NULL");
	a->code = a->error->code;
	return NULL;
}

/* ---------------------------------------------------------------- options */

/* One varint at *p (below end); -EINVAL when cut short or too long. */
static int read_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -EINVAL;
}

/*
 * tensorflow.ProfileOptions (proto3): include_dataset_ops = 1,
 * host_tracer_level = 2, device_tracer_level = 3, python_tracer_level = 4,
 * version = 5; other fields are skipped. Without a version the options are
 * tsl's ProfilerSession defaults (host 2, device 1, python 0), as
 * tsl::profiler's GetOptions() makes them.
 */
static int parse_options(const uint8_t *p, size_t n, struct prof_options *o,
			 char *err, size_t err_len)
{
	const uint8_t *end = p + n;
	uint64_t tag, v;

	memset(o, 0, sizeof(*o));
	while (p < end) {
		if (read_varint(&p, end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) {
			snprintf(err, err_len, "bad field tag at byte %zu", n - (size_t)(end - p));
			return -EINVAL;
		}
		switch (tag & 7) {
		case 0:			/* varint */
			if (read_varint(&p, end, &v))
				goto truncated;
			switch (tag >> 3) {
			case 1: o->include_dataset_ops = v != 0; break;
			case 2: o->host_tracer_level = (uint32_t)v; break;
			case 3: o->device_tracer_level = (uint32_t)v; break;
			case 4: o->python_tracer_level = (uint32_t)v; break;
			case 5: o->version = (uint32_t)v; break;
			default: break;
			}
			break;
		case 1:			/* 64-bit */
			if (end - p < 8)
				goto truncated;
			p += 8;
			break;
		case 2:			/* length-delimited */
			if (read_varint(&p, end, &v) || v > (uint64_t)(end - p))
				goto truncated;
			p += v;
			break;
		case 5:			/* 32-bit */
			if (end - p < 4)
				goto truncated;
			p += 4;
			break;
		default:
			snprintf(err, err_len, "field %llu has wire type %llu",
				 (unsigned long long)(tag >> 3), (unsigned long long)(tag & 7));
			return -EINVAL;
		}
	}
	if (!o->version) {
		bool ds = o->include_dataset_ops;

		memset(o, 0, sizeof(*o));
		o->include_dataset_ops = ds;
		o->host_tracer_level = 2;
		o->device_tracer_level = 1;
		o->version = 1;
	}
	return 0;
truncated:
	snprintf(err, err_len, "truncated field %llu", (unsigned long long)(tag >> 3));
	return -EINVAL;
}

/* ACCELTRACE_SIM_PROFILER_MAX_EVENTS, else the default. */
static uint64_t max_events_setting(void)
{
	const char *s = getenv("ACCELTRACE_SIM_PROFILER_MAX_EVENTS");
	unsigned long long v;
	char *end;

	if (!s || !*s)
		return PROF_MAX_EVENTS_DEFAULT;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > PROF_MAX_EVENTS_LIMIT) {
		fprintf(stderr, "libtpu(sim): ignoring ACCELTRACE_SIM_PROFILER_MAX_EVENTS=%s\n", s);
		return PROF_MAX_EVENTS_DEFAULT;
	}
	return v;
}

/* ---------------------------------------------------------------- recording */

static void session_clear(PLUGIN_Profiler *p)
{
	free(p->ev);
	free(p->names);
	free(p->hash);
	free(p->out);
	p->ev = NULL;
	p->names = NULL;
	p->hash = NULL;
	p->out = NULL;
	p->nev = p->ev_cap = p->nnames = p->names_cap = p->hash_cap = p->out_len = 0;
	memset(p->dropped, 0, sizeof(p->dropped));
	p->collected = false;
}

static uint32_t name_hash(uint8_t kind, const char *s)
{
	uint32_t h = 2166136261u ^ kind;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static int hash_insert(PLUGIN_Profiler *p, uint32_t h, uint32_t idx)
{
	size_t i = h & (p->hash_cap - 1);

	while (p->hash[i])
		i = (i + 1) & (p->hash_cap - 1);
	p->hash[i] = idx + 1;
	return 0;
}

/* The index of (kind, name) among the session's names, added if new; -1
 * when the table is full or out of memory. */
static int64_t intern(PLUGIN_Profiler *p, uint8_t kind, const char *name)
{
	uint32_t h = name_hash(kind, name);
	struct prof_name *n;
	size_t i;

	if (p->hash_cap) {
		for (i = h & (p->hash_cap - 1); p->hash[i]; i = (i + 1) & (p->hash_cap - 1)) {
			n = &p->names[p->hash[i] - 1];
			if (n->kind == kind && !strncmp(n->s, name, sizeof(n->s) - 1))
				return p->hash[i] - 1;
		}
	}
	if (p->nnames >= PROF_MAX_NAMES)
		return -1;
	if ((p->nnames + 1) * 2 > p->hash_cap) {
		size_t cap = p->hash_cap ? p->hash_cap * 2 : 256;
		uint32_t *hash = calloc(cap, sizeof(*hash));

		if (!hash)
			return -1;
		free(p->hash);
		p->hash = hash;
		p->hash_cap = cap;
		for (i = 0; i < p->nnames; i++)
			hash_insert(p, name_hash(p->names[i].kind, p->names[i].s), (uint32_t)i);
	}
	if (p->nnames == p->names_cap) {
		size_t cap = p->names_cap ? p->names_cap * 2 : 64;
		struct prof_name *names = realloc(p->names, cap * sizeof(*names));

		if (!names)
			return -1;
		p->names = names;
		p->names_cap = cap;
	}
	n = &p->names[p->nnames];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	snprintf(n->s, sizeof(n->s), "%s", name);
	hash_insert(p, h, (uint32_t)p->nnames);
	return (int64_t)p->nnames++;
}

/* Called with prof_lock held, for a started profiler. */
static void record(PLUGIN_Profiler *p, const struct simdev_tap_event *tev)
{
	struct prof_event *e;
	int core = tev->core;
	int64_t name;

	if (core < 0 || core >= SIM_MAX_CORES)
		return;
	if (core >= p->cores)
		p->cores = core + 1;
	if (p->nev >= p->max_events)
		goto drop;
	if (p->nev == p->ev_cap) {
		size_t cap = p->ev_cap ? p->ev_cap * 2 : 4096;
		struct prof_event *ev;

		if (cap > p->max_events)
			cap = p->max_events;
		ev = realloc(p->ev, cap * sizeof(*ev));
		if (!ev)
			goto drop;
		p->ev = ev;
		p->ev_cap = cap;
	}
	name = intern(p, (uint8_t)tev->kind, tev->name);
	if (name < 0)
		goto drop;
	p->names[name].cores |= 1u << core;
	e = &p->ev[p->nev++];
	e->t0 = tev->t_start;
	e->t1 = tev->t_end > tev->t_start ? tev->t_end : tev->t_start;
	e->run_id = tev->launch_id;
	e->flops = tev->kind == SIMDEV_TAP_OP ? tev->flops : 0;
	e->bytes = tev->kind == SIMDEV_TAP_OP ? tev->bytes : 0;
	e->name = (uint32_t)name;
	e->core = (uint8_t)core;
	e->kind = (uint8_t)tev->kind;
	e->category = (uint8_t)tev->category;
	e->cancelled = tev->cancelled;
	return;
drop:
	p->dropped[core]++;
}

void sim_profiler_tap(void *ctx, const struct simdev_tap_event *ev)
{
	PLUGIN_Profiler *p;

	(void)ctx;
	if (!__atomic_load_n(&prof_nstarted, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&prof_lock);
	for (p = prof_started; p; p = p->next)
		record(p, ev);
	pthread_mutex_unlock(&prof_lock);
}

/* ---------------------------------------------------------------- wire format */

struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool failed;
};

static void wb_put(struct wbuf *b, const void *s, size_t n)
{
	if (b->failed)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void wb_varint(struct wbuf *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	wb_put(b, buf, n);
}

/* A varint field, written even when 0 (oneof members have presence). */
static void wb_uint(struct wbuf *b, uint32_t field, uint64_t v)
{
	wb_varint(b, (uint64_t)field << 3);
	wb_varint(b, v);
}

static void wb_bytes(struct wbuf *b, uint32_t field, const void *s, size_t n)
{
	wb_varint(b, (uint64_t)field << 3 | 2);
	wb_varint(b, n);
	wb_put(b, s, n);
}

static void wb_str(struct wbuf *b, uint32_t field, const char *s)
{
	wb_bytes(b, field, s, strlen(s));
}

/* A submessage built in `sub`, which is then emptied for reuse. */
static void wb_sub(struct wbuf *b, uint32_t field, struct wbuf *sub)
{
	if (sub->failed)
		b->failed = true;
	wb_bytes(b, field, sub->p, sub->len);
	sub->len = 0;
}

static void wb_free(struct wbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

/* ---------------------------------------------------------------- XSpace */

struct xbuild {
	const PLUGIN_Profiler *p;
	struct wbuf plane, line, event, stat, entry, meta;
};

static int cmp_events(const void *a, const void *b, void *ctx)
{
	const struct prof_event *ev = ctx;
	const struct prof_event *x = &ev[*(const uint32_t *)a], *y = &ev[*(const uint32_t *)b];

	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	if (x->t1 != y->t1)		/* the longer (enclosing) one first */
		return x->t1 > y->t1 ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int64_t realtime_ns(const PLUGIN_Profiler *p, uint64_t mono)
{
	return (int64_t)mono + p->realtime_offset;
}

static void stat_u64(struct xbuild *x, int id, uint64_t v)
{
	wb_uint(&x->stat, 1, (uint64_t)id);
	wb_uint(&x->stat, 3, v);
	wb_sub(&x->event, 4, &x->stat);
}

static void stat_str(struct xbuild *x, int id, const char *s)
{
	wb_uint(&x->stat, 1, (uint64_t)id);
	wb_str(&x->stat, 5, s);
	wb_sub(&x->event, 4, &x->stat);
}

/* One XLine of `n` events (indices `idx`, sorted by start). */
static void build_line(struct xbuild *x, int64_t id, const char *name,
		       const uint32_t *idx, size_t n)
{
	const PLUGIN_Profiler *p = x->p;
	uint64_t t0, tmax = 0;
	size_t i;

	if (!n)
		return;
	t0 = p->ev[idx[0]].t0;
	for (i = 0; i < n; i++)
		if (p->ev[idx[i]].t1 > tmax)
			tmax = p->ev[idx[i]].t1;
	wb_uint(&x->line, 1, (uint64_t)id);
	wb_str(&x->line, 2, name);
	wb_uint(&x->line, 3, (uint64_t)realtime_ns(p, t0));
	if (tmax > t0)
		wb_uint(&x->line, 9, (tmax - t0) * 1000);
	for (i = 0; i < n; i++) {
		const struct prof_event *e = &p->ev[idx[i]];

		wb_uint(&x->event, 1, (uint64_t)e->name + 1);
		wb_uint(&x->event, 2, (e->t0 - t0) * 1000);
		if (e->t1 > e->t0)
			wb_uint(&x->event, 3, (e->t1 - e->t0) * 1000);
		if (e->kind == SIMDEV_TAP_OP) {
			stat_str(x, STAT_HLO_CATEGORY, sim_category_name(e->category));
			if (e->flops)
				stat_u64(x, STAT_FLOPS, e->flops);
			if (e->bytes)
				stat_u64(x, STAT_BYTES_ACCESSED, e->bytes);
		}
		stat_u64(x, STAT_RUN_ID, e->run_id);
		if (e->cancelled)
			stat_u64(x, STAT_CANCELLED, 1);
		wb_sub(&x->line, 4, &x->event);
	}
	wb_sub(&x->plane, 3, &x->line);
}

/* A map<int64, M> entry: key, and the value built in x->meta. */
static void map_entry(struct xbuild *x, uint32_t field, int64_t key)
{
	wb_uint(&x->entry, 1, (uint64_t)key);
	wb_sub(&x->entry, 2, &x->meta);
	wb_sub(&x->plane, field, &x->entry);
}

/* The plane of `core`: its modules and ops (idx[0..nmod), idx[nmod..)). */
static void build_plane(struct xbuild *x, int core, const uint32_t *mods, size_t nmod,
			const uint32_t *ops, size_t nops)
{
	const PLUGIN_Profiler *p = x->p;
	char name[32];
	size_t i;
	int s;

	if (core)
		wb_uint(&x->plane, 1, (uint64_t)core);
	snprintf(name, sizeof(name), "/device:TPU:%d", core);
	wb_str(&x->plane, 2, name);
	build_line(x, LINE_MODULES, "XLA Modules", mods, nmod);
	build_line(x, LINE_OPS, "XLA Ops", ops, nops);
	for (i = 0; i < p->nnames; i++) {
		if (!(p->names[i].cores & (1u << core)))
			continue;
		wb_uint(&x->meta, 1, i + 1);
		wb_str(&x->meta, 2, p->names[i].s);
		map_entry(x, 4, (int64_t)i + 1);
	}
	for (s = 1; s < STAT__COUNT; s++) {
		wb_uint(&x->meta, 1, (uint64_t)s);
		wb_str(&x->meta, 2, stat_names[s]);
		map_entry(x, 5, s);
	}
	if (p->dropped[core]) {
		wb_uint(&x->stat, 1, STAT_DROPPED_EVENTS);
		wb_uint(&x->stat, 3, p->dropped[core]);
		wb_sub(&x->plane, 6, &x->stat);
	}
}

/* The serialized XSpace into p->out, with the trailing zero byte XLA's
 * plugins add; -ENOMEM on failure. */
static int build_space(PLUGIN_Profiler *p)
{
	struct xbuild x = { .p = p };
	struct wbuf space = { 0 };
	size_t count[SIM_MAX_CORES * 2] = { 0 }, start[SIM_MAX_CORES * 2 + 1];
	uint32_t *idx = NULL;
	size_t i;
	int c, g, err = 0;

	if (p->opt.device_tracer_level && p->nev) {
		idx = malloc(p->nev * sizeof(*idx));
		if (!idx) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (idx) {
		/* Group by (core, line), then order each group by start. */
		for (i = 0; i < p->nev; i++)
			count[p->ev[i].core * 2 + (p->ev[i].kind == SIMDEV_TAP_OP)]++;
		start[0] = 0;
		for (g = 0; g < SIM_MAX_CORES * 2; g++)
			start[g + 1] = start[g] + count[g];
		memset(count, 0, sizeof(count));
		for (i = 0; i < p->nev; i++) {
			g = p->ev[i].core * 2 + (p->ev[i].kind == SIMDEV_TAP_OP);
			idx[start[g] + count[g]++] = (uint32_t)i;
		}
		for (g = 0; g < SIM_MAX_CORES * 2; g++)
			qsort_r(idx + start[g], count[g], sizeof(*idx), cmp_events, p->ev);
	}
	if (p->opt.device_tracer_level) {
		for (c = 0; c < p->cores; c++) {
			size_t m = idx ? start[c * 2] : 0, o = idx ? start[c * 2 + 1] : 0;

			build_plane(&x, c, idx ? idx + m : NULL, idx ? count[c * 2] : 0,
				    idx ? idx + o : NULL, idx ? count[c * 2 + 1] : 0);
			wb_sub(&space, 1, &x.plane);
		}
	}
	wb_put(&space, "", 1);		/* the trailing zero; on purpose */
	if (space.failed) {
		err = -ENOMEM;
		goto out;
	}
	p->out = space.p;
	p->out_len = space.len;
	space.p = NULL;
out:
	free(idx);
	wb_free(&space);
	wb_free(&x.plane);
	wb_free(&x.line);
	wb_free(&x.event);
	wb_free(&x.stat);
	wb_free(&x.entry);
	wb_free(&x.meta);
	return err;
}

/* ---------------------------------------------------------------- api */

/* XLA's callers leave struct_size unset: only the pointers are checked. */
#define PROF_CHECK(a, what) do { \
	if (!(a) || !(a)->profiler) \
		return prof_error(PROF_INVALID_ARGUMENT, "PLUGIN_Profiler_%s: " \
				  "no profiler", what); \
} while (0)

static PLUGIN_Profiler_Error *prof_create(PLUGIN_Profiler_Create_Args *a)
{
	PLUGIN_Profiler *p;
	char msg[128];

	if (!a)
		return prof_error(PROF_INVALID_ARGUMENT, "PLUGIN_Profiler_Create: no args");
	if (!a->options && a->options_size)
		return prof_error(PROF_INVALID_ARGUMENT, "PLUGIN_Profiler_Create: "
				  "options is NULL with options_size %zu", a->options_size);
	p = calloc(1, sizeof(*p));
	if (!p)
		return &oom_error;
	if (parse_options(a->options_size ? (const uint8_t *)a->options : (const uint8_t *)"",
			  a->options_size, &p->opt, msg, sizeof(msg))) {
		free(p);
		return prof_error(PROF_INVALID_ARGUMENT, "PLUGIN_Profiler_Create: "
				  "bad tensorflow.ProfileOptions: %s", msg);
	}
	p->max_events = max_events_setting();
	a->profiler = p;
	return NULL;
}

static PLUGIN_Profiler_Error *prof_start(PLUGIN_Profiler_Start_Args *a)
{
	PLUGIN_Profiler *p;
	struct timespec rt, mono;

	PROF_CHECK(a, "Start");
	p = a->profiler;
	if (p->started)
		return NULL;
	session_clear(p);
	p->cores = 0;
	pthread_mutex_lock(&sim_client_lock);
	if (sim_client && sim_client->ready)
		p->cores = sim_client->cores;
	pthread_mutex_unlock(&sim_client_lock);
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	p->realtime_offset = ((int64_t)rt.tv_sec - (int64_t)mono.tv_sec) * 1000000000ll +
			     ((int64_t)rt.tv_nsec - (int64_t)mono.tv_nsec);
	p->started = true;
	if (p->opt.device_tracer_level) {
		pthread_mutex_lock(&prof_lock);
		p->next = prof_started;
		prof_started = p;
		p->listed = true;
		__atomic_add_fetch(&prof_nstarted, 1, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&prof_lock);
	}
	return NULL;
}

static void unlist(PLUGIN_Profiler *p)
{
	PLUGIN_Profiler **pp;

	if (!p->listed)
		return;
	pthread_mutex_lock(&prof_lock);
	for (pp = &prof_started; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	p->listed = false;
	p->next = NULL;
	__atomic_sub_fetch(&prof_nstarted, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&prof_lock);
}

static PLUGIN_Profiler_Error *prof_stop(PLUGIN_Profiler_Stop_Args *a)
{
	PROF_CHECK(a, "Stop");
	if (!a->profiler->started)
		return NULL;
	unlist(a->profiler);
	a->profiler->started = false;
	return NULL;
}

static PLUGIN_Profiler_Error *prof_destroy(PLUGIN_Profiler_Destroy_Args *a)
{
	if (!a || !a->profiler)
		return NULL;
	unlist(a->profiler);
	session_clear(a->profiler);
	free(a->profiler);
	a->profiler = NULL;
	return NULL;
}

/*
 * With buffer == NULL: the XSpace in the profiler's own buffer (valid until
 * the next Start or Destroy), and its size plus one, a trailing zero byte,
 * as XLA's plugins return it. With a caller's buffer (the header's second
 * call): the same bytes copied into it; a buffer_size_in_bytes left 0 is
 * taken to mean the caller sized it from the first call.
 */
static PLUGIN_Profiler_Error *prof_collect(PLUGIN_Profiler_CollectData_Args *a)
{
	PLUGIN_Profiler *p;
	size_t n;

	PROF_CHECK(a, "CollectData");
	p = a->profiler;
	if (p->started)
		return prof_error(PROF_FAILED_PRECONDITION, "PLUGIN_Profiler_CollectData: "
				  "the profiler is running; stop it before collecting");
	if (!p->collected) {
		if (build_space(p))
			return &oom_error;
		p->collected = true;
		/* The events are in the XSpace now. */
		free(p->ev);
		p->ev = NULL;
		p->nev = p->ev_cap = 0;
	}
	if (!a->buffer) {
		a->buffer = p->out;
		a->buffer_size_in_bytes = p->out_len;
		return NULL;
	}
	n = p->out_len;
	if (a->buffer_size_in_bytes && a->buffer_size_in_bytes < n) {
		if (a->buffer_size_in_bytes < n - 1)
			return prof_error(PROF_INVALID_ARGUMENT, "PLUGIN_Profiler_CollectData: "
					  "a buffer of %zu bytes for %zu", a->buffer_size_in_bytes,
					  n - 1);
		n--;				/* room for the XSpace alone */
	}
	memcpy(a->buffer, p->out, n);
	a->buffer_size_in_bytes = n;
	return NULL;
}

static PLUGIN_Profiler_Api profiler_api = {
	.struct_size = sizeof(PLUGIN_Profiler_Api),
	.priv = NULL,
	.error_destroy = prof_error_destroy,
	.error_message = prof_error_message,
	.error_get_code = prof_error_get_code,
	.create = prof_create,
	.destroy = prof_destroy,
	.start = prof_start,
	.stop = prof_stop,
	.collect_data = prof_collect,
};

static PJRT_Profiler_Extension profiler_extension = {
	.base = {
		.struct_size = sizeof(PJRT_Profiler_Extension),
		.type = PJRT_Extension_Type_Profiler,
		.next = NULL,
	},
	.profiler_api = &profiler_api,
	.traceme_context_id = 0,
};

PJRT_Extension_Base *sim_profiler_extension(void)
{
	return &profiler_extension.base;
}
