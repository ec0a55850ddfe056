// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A capture's processes, and a view of one (xspace_processes.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "output/process_origins.h"
#include "output/thread_names.h"
#include "lib/json_cursor.h"
#include "reader/xspace_processes.h"

/* Lines from this id on are counter lines (memory timelines), not threads. */
#define COUNTER_LINE_FIRST_ID (1ll << 62)
/* A parent chain longer than this is a loop or a lie: no owner. */
#define MAX_ANCESTRY 64

struct tid_pid {
	uint32_t tid, pid;
};

/* The /host:CPU plane's thread map, sorted by tid. */
struct thread_map {
	struct tid_pid *v;
	size_t n;
};

static int cmp_tid(const void *a, const void *b)
{
	const struct tid_pid *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static uint32_t le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* acceltrace.thread_pids decoded: pairs past a whole one are ignored. */
static int thread_map_of(const struct xs_plane *host, struct thread_map *m)
{
	const struct xs_stat *s = host ? xs_stat_find(host->stats, host->n_stats,
						      STAT_THREAD_PIDS) : NULL;

	m->v = NULL;
	m->n = 0;
	if (!s || s->type != XS_STAT_BYTES || s->len < 8)
		return 0;
	m->v = malloc(s->len / 8 * sizeof(*m->v));
	if (!m->v)
		return -ENOMEM;
	for (size_t i = 0; i + 8 <= s->len; i += 8)
		m->v[m->n++] = (struct tid_pid){ le32(s->bytes + i), le32(s->bytes + i + 4) };
	array_sort(m->v, m->n, sizeof(*m->v), cmp_tid);
	return 0;
}

/* "(pid N" in @s, the last one: what follows a line's own name. */
static int64_t pid_in_label(const char *s)
{
	const char *p = NULL, *q;
	char *end;
	long long v;

	for (q = s; (q = strstr(q, "(pid ")); q++)
		p = q;
	if (!p)
		return -1;
	v = strtoll(p + 5, &end, 10);
	if (end == p + 5 || (*end != ')' && *end != ',') || v <= 0 || v > UINT32_MAX)
		return -1;
	return v;
}

/*
 * The process of a /host:CPU line: its thread's (a line's display_id is
 * its thread id, extra lines of one thread share it) from the map, else
 * what its label says after the name (a counter line's name ends so; a
 * thread line's display name is "<name> (pid N, ...)" in a capture of
 * several processes). The name itself may hold anything, so only what
 * follows it is read.
 */
static int64_t line_pid(const struct thread_map *m, const struct xs_line *l)
{
	const char *name = l->name ? l->name : "";
	const char *label = l->display_name ? l->display_name : "";

	if (m->n && l->id < COUNTER_LINE_FIRST_ID && l->display_id >= 0 &&
	    l->display_id <= UINT32_MAX) {
		struct tid_pid key = { .tid = (uint32_t)l->display_id };
		const struct tid_pid *hit = array_bsearch(&key, m->v, m->n, sizeof(*m->v), cmp_tid);

		if (hit)
			return hit->pid;
	}
	if (l->id >= COUNTER_LINE_FIRST_ID)
		return pid_in_label(name);
	if (!strncmp(label, name, strlen(name)))
		return pid_in_label(label + strlen(name));
	return -1;
}

static int64_t plane_pid(const struct xs_plane *p)
{
	int64_t pid;

	if (!xs_is_device_plane(p) ||
	    !xs_stat_int(xs_stat_find(p->stats, p->n_stats, "acceltrace.pid"), &pid) || pid <= 0)
		return -1;
	return pid;
}

static struct xs_process *find_or_add(struct xs_process **v, size_t *n, size_t *cap,
				      int64_t pid, int *err)
{
	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].pid == pid)
			return &(*v)[i];
	if (*n >= XS_MAX_PROCESSES)
		return NULL;
	if (ARRAY_GROW(*v, *cap, *n + 1)) {
		*err = -ENOMEM;
		return NULL;
	}
	(*v)[*n] = (struct xs_process){ .pid = pid, .name = "" };
	return &(*v)[(*n)++];
}

static int cmp_pid(const void *a, const void *b)
{
	const struct xs_process *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* ---- acceltrace.processes: parents, containers, pods ---- */

struct origins {
	struct xs_process *v;	/* pid, ppid, container, pod only; by pid */
	size_t n;
};

static int origin(struct json_cursor *c, struct xs_process *o)
{
	char key[32];

	if (json_expect(c, '{'))
		return -EINVAL;
	if (json_eat(c, '}'))
		return 0;
	do {
		if (json_string(c, key, sizeof(key)) || json_expect(c, ':'))
			return -EINVAL;
		if (!strcmp(key, "pid") || !strcmp(key, "ppid")) {
			if (json_int(c, !strcmp(key, "pid") ? &o->pid : &o->ppid))
				return -EINVAL;
		} else if (!strcmp(key, "container")) {
			if (json_string(c, o->container, sizeof(o->container)))
				return -EINVAL;
		} else if (!strcmp(key, "pod")) {
			if (json_string(c, o->pod, sizeof(o->pod)))
				return -EINVAL;
		} else if (json_skip(c, 0)) {
			return -EINVAL;
		}
	} while (json_eat(c, ','));
	return json_expect(c, '}');
}

static int origins_document(struct json_cursor *c, struct origins *out)
{
	char key[32];
	size_t cap = 0;

	if (json_expect(c, '{'))
		return -EINVAL;
	do {
		if (json_string(c, key, sizeof(key)) || json_expect(c, ':'))
			return -EINVAL;
		if (strcmp(key, "processes")) {
			if (json_skip(c, 0))
				return -EINVAL;
			continue;
		}
		if (json_expect(c, '['))
			return -EINVAL;
		if (json_eat(c, ']'))
			continue;
		do {
			if (out->n >= XS_MAX_PROCESSES)
				return json_fail(c, -E2BIG, "more than %d processes",
						 XS_MAX_PROCESSES);
			if (ARRAY_GROW(out->v, cap, out->n + 1))
				return -ENOMEM;
			memset(&out->v[out->n], 0, sizeof(*out->v));
			if (origin(c, &out->v[out->n++]))
				return -EINVAL;
		} while (json_eat(c, ','));
		if (json_expect(c, ']'))
			return -EINVAL;
	} while (json_eat(c, ','));
	return json_expect(c, '}');
}

/* The stat parsed, by pid. A malformed one is as none: its processes are
 * reported without parents (the file may come from anywhere). */
static int origins_of(const struct xs_plane *host, struct origins *o)
{
	const struct xs_stat *s = host ? xs_stat_find(host->stats, host->n_stats,
						      STAT_PROCESSES) : NULL;
	char err[128] = "";
	struct json_cursor c;
	int ret;

	o->v = NULL;
	o->n = 0;
	if (!s || s->type != XS_STAT_STR || !s->s)
		return 0;
	c = (struct json_cursor){ .s = s->s, .n = strlen(s->s), .err = err,
				  .errlen = sizeof(err) };
	ret = origins_document(&c, o);
	if (ret) {
		free(o->v);
		o->v = NULL;
		o->n = 0;
		return ret == -ENOMEM ? ret : 0;
	}
	array_sort(o->v, o->n, sizeof(*o->v), cmp_pid);
	return 0;
}

static const struct xs_process *by_pid(const struct xs_process *v, size_t n, int64_t pid)
{
	struct xs_process key = { .pid = pid };

	return n ? array_bsearch(&key, v, n, sizeof(*v), cmp_pid) : NULL;
}

/* @pid itself when it drives a device, else its nearest ancestor that
 * does; 0 when none does (or the chain loops). @v is by pid. */
static int64_t reported_in(const struct xs_process *v, size_t n, const struct origins *o,
			   int64_t pid)
{
	for (int depth = 0; pid > 0 && depth < MAX_ANCESTRY; depth++) {
		const struct xs_process *p = by_pid(v, n, pid);
		const struct xs_process *og = by_pid(o->v, o->n, pid);

		if (p && p->n_devices)
			return pid;
		if (!og || og->ppid == pid)
			return 0;
		pid = og->ppid;
	}
	return 0;
}

int xs_processes(const struct xs_space *xs, struct xs_process **out, size_t *n)
{
	const struct xs_plane *host = xs_plane_named(xs, "/host:CPU");
	struct xs_process *v = NULL, *p;
	struct origins o = {};
	struct thread_map m;
	size_t cap = 0;
	int err;

	*out = NULL;
	*n = 0;
	err = thread_map_of(host, &m);
	if (err)
		return err;
	for (size_t i = 0; i < xs->n_planes && !err; i++) {
		int64_t pid = plane_pid(&xs->planes[i]);

		if (pid > 0 && (p = find_or_add(&v, n, &cap, pid, &err)))
			p->n_devices++;
	}
	for (size_t i = 0; host && i < host->n_lines && !err; i++) {
		const struct xs_line *l = &host->lines[i];
		int64_t pid = line_pid(&m, l);

		if (pid <= 0 || !(p = find_or_add(&v, n, &cap, pid, &err)))
			continue;
		p->n_lines++;
		if (l->id == pid && l->name)
			p->name = l->name;
	}
	free(m.v);
	if (!err)
		err = origins_of(host, &o);
	if (err) {
		free(v);
		*n = 0;
		return err;
	}
	array_sort(v, *n, sizeof(*v), cmp_pid);
	for (size_t i = 0; i < *n; i++) {
		const struct xs_process *og = by_pid(o.v, o.n, v[i].pid);

		if (og) {
			v[i].ppid = og->ppid;
			memcpy(v[i].container, og->container, sizeof(v[i].container));
			memcpy(v[i].pod, og->pod, sizeof(v[i].pod));
		}
		v[i].reported_in = reported_in(v, *n, &o, v[i].pid);
	}
	free(o.v);
	*out = v;
	return 0;
}

struct scope {
	struct xs_space view;
	struct xs_plane *planes;
	struct xs_line *lines;	/* the host plane's kept lines */
};

/* Whether a line of process @line_pid is in @pid's view. */
static bool in_view(const struct xs_process *v, size_t n, int64_t line_pid, int64_t pid)
{
	const struct xs_process *p;

	if (line_pid == pid)
		return true;
	p = by_pid(v, n, line_pid);
	return p && p->reported_in == pid;
}

struct xs_space *xs_scope_process(const struct xs_space *xs, int64_t pid)
{
	const struct xs_plane *host = xs_plane_named(xs, "/host:CPU");
	struct scope *s = calloc(1, sizeof(*s));
	struct thread_map m = {};
	struct xs_process *procs = NULL;
	size_t np = 0, nprocs = 0;

	if (!s || thread_map_of(host, &m) || xs_processes(xs, &procs, &nprocs))
		goto nomem;
	s->planes = calloc(xs->n_planes ? xs->n_planes : 1, sizeof(*s->planes));
	s->lines = calloc(host && host->n_lines ? host->n_lines : 1, sizeof(*s->lines));
	if (!s->planes || !s->lines)
		goto nomem;
	s->view = *xs;
	s->view.n_events = 0;
	for (size_t i = 0; i < xs->n_planes; i++) {
		const struct xs_plane *p = &xs->planes[i];
		struct xs_plane *q = &s->planes[np];
		int64_t owner = plane_pid(p);

		if (owner > 0 && owner != pid)
			continue;
		*q = *p;
		if (p == host) {
			q->lines = s->lines;
			q->n_lines = 0;
			for (size_t j = 0; j < p->n_lines; j++)
				if (in_view(procs, nprocs, line_pid(&m, &p->lines[j]), pid))
					q->lines[q->n_lines++] = p->lines[j];
		}
		for (size_t j = 0; j < q->n_lines; j++)
			s->view.n_events += q->lines[j].n_events;
		np++;
	}
	s->view.planes = s->planes;
	s->view.n_planes = np;
	s->view.priv = s;
	free(m.v);
	free(procs);
	return &s->view;
nomem:
	free(m.v);
	free(procs);
	if (s) {
		free(s->planes);
		free(s->lines);
	}
	free(s);
	errno = ENOMEM;
	return NULL;
}

void xs_scope_free(struct xs_space *view)
{
	struct scope *s;

	if (!view)
		return;
	s = view->priv;
	free(s->planes);
	free(s->lines);
	free(s);
}
