// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Keeping the metrics: each span the collector keeps updates its process's
 * counters (executions, the device core's busy and idle time, steps); exits
 * remove the process. Rendering is metrics_render.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "metrics"
#include "lib/log.h"
#include "lib/array.h"
#include "discover/cgroup_labels.h"
#include "daemon/metrics_internal.h"
#include "devmem/devmem_book.h"
#include "discover/procfs.h"

#define NS_PER_SEC 1000000000ull
/* Exits can be lost (a full ring): liveness is checked this often. */
#define PRUNE_INTERVAL_NS (5 * NS_PER_SEC)

const double metrics_step_bounds[METRICS_STEP_BUCKETS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 1.0 / 0.0,
};

struct metrics *metrics__new(const struct metrics_opts *opts)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (opts)
		memcpy(&m->o, opts, opts->sz < sizeof(m->o) ? opts->sz : sizeof(m->o));
	m->o.sz = sizeof(m->o);
	m->by_pid = hashmap__new();
	if (!m->by_pid) {
		free(m);
		return NULL;
	}
	/* Completions are watched until the daemon says otherwise. */
	m->detail_since_ns = 1;
	return m;
}

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->procs[i]);
	free(m->procs);
	hashmap__free(m->by_pid, NULL);
	free(m);
}

/* Labels from /proc while the process is alive (it is: it just did work). */
static void read_labels(struct proc_metrics *p)
{
	struct cgroup_labels cl;
	char path[4096];

	if (procfs_comm(p->pid, 0, p->command, sizeof(p->command)))
		snprintf(p->command, sizeof(p->command), "?");
	if (!procfs_cgroup(p->pid, path, sizeof(path))) {
		cgroup_labels_parse(path, &cl);
		snprintf(p->container, sizeof(p->container), "%s", cl.container);
		snprintf(p->pod, sizeof(p->pod), "%s", cl.pod);
	}
}

static struct proc_metrics *find(const struct metrics *m, uint32_t pid)
{
	if (m->last_hit && m->last_hit->pid == pid)
		return m->last_hit;
	return hashmap__get(m->by_pid, pid, 0);
}

static struct proc_metrics *process(struct metrics *m, uint32_t pid, uint64_t ts)
{
	struct proc_metrics *p = find(m, pid);

	if (p) {
		m->last_hit = p;
		return p;
	}
	if (ARRAY_GROW(m->procs, m->cap, m->n + 1))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (hashmap__put(m->by_pid, pid, 0, p, NULL)) {
		free(p);
		return NULL;
	}
	p->pid = pid;
	p->first_seen_ns = ts;
	if (!m->o.no_proc_labels)
		read_labels(p);
	m->last_hit = p;
	m->procs[m->n++] = p;
	return p;
}

/* FNV-1a: programs are told apart by name, whichever capture interned it. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull;	/* FNV offset basis */

	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ? h : 1;
}

static struct ratio_slot *slot_of(struct core_metrics *cm, uint64_t ts)
{
	uint64_t sec = ts / NS_PER_SEC + 1;	/* + 1: 0 marks a slot unused */
	struct ratio_slot *sl = &cm->slots[sec % METRICS_RATIO_SECONDS];

	if (sl->second != sec) {
		/* A span ending in a second already recycled is too old for
		 * the gauges: the counters have it. */
		if (sl->second > sec)
			return NULL;
		sl->second = sec;
		sl->busy_ns = sl->idle_ns = 0;
	}
	return sl;
}

/* The program that ran this execution counts one more run; the dominant
 * one is the one run most. */
static bool is_dominant(struct proc_metrics *p, uint64_t hash)
{
	struct program_runs *pr = NULL, *least = &p->programs[0], *top = NULL;
	uint64_t best = 0;

	for (int i = 0; i < METRICS_MAX_PROGRAMS; i++) {
		struct program_runs *x = &p->programs[i];

		if (x->hash == hash)
			pr = x;
		if (x->runs < least->runs)
			least = x;
	}
	if (!pr) {
		/* Past the table's size the rarest program makes way. */
		pr = least;
		pr->hash = hash;
		pr->runs = 0;
	}
	pr->runs++;
	for (int i = 0; i < METRICS_MAX_PROGRAMS; i++) {
		if (p->programs[i].runs > best) {
			best = p->programs[i].runs;
			top = &p->programs[i];
		}
	}
	if (best > 1 && top->hash != p->dominant) {
		/* A new dominant program: its steps start afresh. */
		p->dominant = top->hash;
		p->last_step_start = 0;
	}
	return hash == p->dominant;
}

static void add_step(struct metrics *m, struct proc_metrics *p, uint64_t start)
{
	uint64_t step_ns;
	double sec;

	if (p->last_step_start && start > p->last_step_start) {
		step_ns = start - p->last_step_start;
		sec = step_ns / 1e9;
		for (int b = 0; b < METRICS_STEP_BUCKETS; b++)
			if (sec <= metrics_step_bounds[b])
				p->step_buckets[b]++;
		p->step_count++;
		p->step_sum_ns += step_ns;
		if (m->o.on_step)
			m->o.on_step(m->o.ctx, p->pid, step_ns, start);
	}
	p->last_step_start = start;
}

static void device_execution(struct metrics *m, struct proc_metrics *p,
			     const struct capture *cap, const struct capture_span *s,
			     uint32_t core)
{
	struct core_metrics *cm = &p->cores[core];
	struct ratio_slot *sl = slot_of(cm, s->end_ns);
	uint64_t busy = s->end_ns - s->start_ns, idle = 0;

	if (cm->last_end && s->start_ns > cm->last_end)
		idle = s->start_ns - cm->last_end;
	if (s->end_ns > cm->last_end)
		cm->last_end = s->end_ns;
	cm->used = true;
	cm->busy_ns += busy;
	cm->idle_ns += idle;
	cm->executions++;
	if (sl) {
		sl->busy_ns += busy;
		sl->idle_ns += idle;
	}
	if (s->end_ns > p->last_completion_ns)
		p->last_completion_ns = s->end_ns;
	if (!p->has_step_core || core < p->step_core) {
		p->step_core = core;
		p->has_step_core = true;
		p->last_step_start = 0;
	}
	if (is_dominant(p, name_hash(capture__string(cap, s->name))) &&
	    core == p->step_core)
		add_step(m, p, s->start_ns);
}

void metrics__span(void *ctx, const struct capture *cap, const struct capture_span *s)
{
	struct metrics *m = ctx;
	const struct capture_track *t = capture__track(cap, s->track);
	const struct capture_device *d;
	struct proc_metrics *p;

	if (s->kind < SPAN_KIND__COUNT)
		m->events[s->kind]++;
	/* Closed at a capture's stop, it comes again with its true end. */
	if (!t || (s->flags & SPAN_F_OPEN_AT_STOP))
		return;
	if (s->kind == SPAN_EXECUTE) {
		p = process(m, t->pid, s->start_ns);
		if (!p)
			return;
		p->executions++;
		if (s->end_ns > p->last_enqueue_ns)
			p->last_enqueue_ns = s->end_ns;
		return;
	}
	if (s->kind != SPAN_DEVICE_MODULE || (s->flags & SPAN_F_TARGET_EXITED))
		return;
	d = capture__device_info(cap, t->device);
	if (!d || d->core >= METRICS_MAX_CORES)
		return;
	p = process(m, t->pid, s->start_ns);
	if (!p)
		return;
	if (!(s->flags & SPAN_F_ESTIMATED))
		p->device_traced = true;
	device_execution(m, p, cap, s, d->core);
}

void metrics__process_exit(struct metrics *m, uint32_t pid)
{
	struct proc_metrics *p = hashmap__remove(m->by_pid, pid, 0);
	size_t i = 0;

	if (!p)
		return;
	/* Exits are rare: the array keeps its order, for the rendering. */
	while (i < m->n && m->procs[i] != p)
		i++;
	if (i < m->n) {
		memmove(&m->procs[i], &m->procs[i + 1], (m->n - i - 1) * sizeof(m->procs[0]));
		m->n--;
	}
	free(p);
	m->last_hit = NULL;
	m->processes_exited++;
}

size_t metrics__prune(struct metrics *m, uint64_t now_ns)
{
	size_t gone = 0;

	if (m->o.no_proc_labels || now_ns - m->last_prune_ns < PRUNE_INTERVAL_NS)
		return 0;
	m->last_prune_ns = now_ns;
	for (size_t i = 0; i < m->n;) {
		if (procfs_pid_alive(m->procs[i]->pid)) {
			i++;
			continue;
		}
		metrics__process_exit(m, m->procs[i]->pid);
		gone++;
	}
	return gone;
}

void metrics__detail(struct metrics *m, bool on, uint64_t now_ns)
{
	m->detail_since_ns = on ? now_ns : 0;
	for (size_t i = 0; i < m->n; i++) {
		struct proc_metrics *p = m->procs[i];

		if (p->device_traced)
			continue;
		p->last_step_start = 0;
		for (int c = 0; c < METRICS_MAX_CORES; c++)
			p->cores[c].last_end = 0;
	}
}

void metrics__set_device_memory(struct metrics *m, const struct devmem_book *b)
{
	struct devmem_book_entry e;

	for (size_t i = 0; i < m->n; i++)
		m->procs[i]->n_mem = 0;
	for (size_t i = 0; b && !devmem_book__entry(b, i, &e); i++) {
		struct proc_metrics *p = e.exited_ns ? NULL : find(m, e.alloc.pid);
		struct mem_series *s;

		if (!p || p->n_mem == METRICS_MAX_MEM)
			continue;
		s = &p->mem[p->n_mem++];
		s->device = e.alloc.device;
		snprintf(s->allocator, sizeof(s->allocator), "%s", e.name);
		s->in_use = e.in_use;
		s->peak = e.peak;
		s->untracked_bytes = e.untracked_bytes;
	}
}

void metrics__set_aggregates(struct metrics *m, uint32_t pid, const uint64_t v[AGG_MAX])
{
	struct proc_metrics *p = find(m, pid);

	if (!p)
		return;
	memcpy(p->aggregates, v, sizeof(p->aggregates));
	p->has_aggregates = true;
}

void metrics__set_reads(struct metrics *m, uint32_t pid, uint64_t calls, uint64_t bytes)
{
	struct proc_metrics *p = find(m, pid);

	if (!p)
		return;
	p->read_calls = calls;
	p->read_bytes = bytes;
	p->has_reads = true;
}

size_t metrics__num_processes(const struct metrics *m)
{
	return m->n;
}

bool metrics__activity(const struct metrics *m, size_t i, struct metrics_activity *a)
{
	const struct proc_metrics *p;

	if (i >= m->n)
		return false;
	p = m->procs[i];
	a->pid = p->pid;
	a->first_seen_ns = p->first_seen_ns;
	a->last_enqueue_ns = p->last_enqueue_ns;
	a->last_completion_ns = p->last_completion_ns;
	a->completions_watched_ns = p->device_traced ? p->first_seen_ns : m->detail_since_ns;
	return true;
}

bool metrics_core_ratio(const struct core_metrics *cm, uint64_t now_ns,
			uint64_t *busy_ns, uint64_t *idle_ns)
{
	uint64_t now_sec = now_ns / NS_PER_SEC + 1;

	*busy_ns = *idle_ns = 0;
	for (int i = 0; i < METRICS_RATIO_SECONDS; i++) {
		const struct ratio_slot *sl = &cm->slots[i];

		if (sl->second && sl->second <= now_sec &&
		    now_sec - sl->second < METRICS_RATIO_SECONDS) {
			*busy_ns += sl->busy_ns;
			*idle_ns += sl->idle_ns;
		}
	}
	return *busy_ns + *idle_ns > 0;
}

bool metrics__process_steps(const struct metrics *m, uint32_t pid, uint64_t *count,
			    uint64_t *sum_ns)
{
	const struct proc_metrics *p = find(m, pid);

	if (!p)
		return false;
	*count = p->step_count;
	*sum_ns = p->step_sum_ns;
	return true;
}

double metrics__input_wait_ratio(const struct metrics *m, uint32_t pid, uint64_t now_ns)
{
	uint64_t busy, idle, all_busy = 0, all_idle = 0;
	const struct proc_metrics *p = find(m, pid);

	if (!p)
		return -1;
	for (int c = 0; c < METRICS_MAX_CORES; c++) {
		if (p->cores[c].used &&
		    metrics_core_ratio(&p->cores[c], now_ns, &busy, &idle)) {
			all_busy += busy;
			all_idle += idle;
		}
	}
	return all_busy + all_idle ? (double)all_idle / (all_busy + all_idle) : -1;
}

bool metrics__monitor(const struct metrics *m, size_t i, struct metrics_monitor *out)
{
	const struct proc_metrics *p;

	if (i >= m->n)
		return false;
	p = m->procs[i];
	memset(out, 0, sizeof(*out));
	out->pid = p->pid;
	snprintf(out->command, sizeof(out->command), "%s", p->command);
	out->steps = p->step_count;
	out->step_sum_ns = p->step_sum_ns;
	for (unsigned int c = 0; c < METRICS_MAX_CORES && out->n_cores < METRICS_MONITOR_CORES;
	     c++) {
		if (!p->cores[c].used)
			continue;
		out->core[out->n_cores].core = c;
		out->core[out->n_cores].busy_ns = p->cores[c].busy_ns;
		out->core[out->n_cores].idle_ns = p->cores[c].idle_ns;
		out->core[out->n_cores].executions = p->cores[c].executions;
		out->n_cores++;
	}
	return true;
}
