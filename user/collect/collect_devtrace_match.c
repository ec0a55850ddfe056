// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device executions joined to their host Execute by launch id, per core,
 * once a window finishes: over the spans its capture holds, so that what
 * the capture warns of agrees with what it shows, however its start moved
 * or its budget pruned it, and nothing is kept per execution while a
 * window is open (a daemon's stays open for days).
 */
#include <stdint.h>
#include <stdlib.h>

#define LOG_CONTEXT "devtrace"
#include "collect/collect_devtrace_internal.h"
#include "collect/collector_internal.h"
#include "lib/hashmap.h"
#include "lib/log.h"

/* Cores (a bit each) of @pid that have a devtrace buffer. */
static uintptr_t covered_cores(const struct collect_devtrace *d, uint32_t pid)
{
	uintptr_t bits = 0;

	for (size_t i = 0; i < d->ncores; i++)
		if (d->cores[i].known && !d->cores[i].streams && d->cores[i].pid == pid &&
		    d->cores[i].ordinal < 64)
			bits |= (uintptr_t)1 << d->cores[i].ordinal;
	return bits;
}

/* Per process: where the matched executions reach, so that the window's
 * edges are told from losses. */
struct matched_reach {
	uint64_t last_host_start;	/* latest host Execute that ran */
	uint64_t first_device_start;	/* earliest device execution joined */
};

struct match_ctx {
	struct collect_devtrace *d;
	/* The capture's executions, both sides: (pid, launch id) -> cores
	 * seen (a bit per core) on the device side, and their earliest
	 * start + 1 (dev_start); the host Execute's start + 1 (host). */
	struct hashmap *dev, *dev_start, *host;
	/* pid -> struct matched_reach */
	struct hashmap *reach;
	uint64_t unmatched_device, unmatched_host, matched;
	bool out_of_memory;
	/* covered_cores() of the pid asked last: a capture's Executes are
	 * mostly one process's, and the cores' scan was one per Execute. */
	bool covered_known;
	uint32_t covered_pid;
	uintptr_t covered;
};

static void put(struct match_ctx *m, struct hashmap *h, uint64_t a, uint64_t b, uintptr_t v)
{
	m->out_of_memory |= hashmap__put(h, a, b, (void *)v, NULL) != 0;
}

static int note_launch(const struct capture_span *s, void *ctx)
{
	struct match_ctx *m = ctx;
	const struct capture *cap = m->d->c->cap;
	const struct capture_track *t;
	const struct capture_device *dev;
	uintptr_t bits, first;

	if (!s->correlation_id ||
	    (s->kind != SPAN_EXECUTE &&
	     (s->kind != SPAN_DEVICE_MODULE || (s->flags & SPAN_F_ESTIMATED))))
		return 0;
	t = capture__track(cap, s->track);
	if (!t)
		return 0;
	if (s->kind == SPAN_EXECUTE) {
		put(m, m->host, t->pid, s->correlation_id, (uintptr_t)s->start_ns + 1);
		return 0;
	}
	dev = capture__device_info(cap, t->device);
	if (!dev || dev->core >= 64)
		return 0;
	bits = (uintptr_t)hashmap__get(m->dev, t->pid, s->correlation_id);
	put(m, m->dev, t->pid, s->correlation_id, bits | (uintptr_t)1 << dev->core);
	first = (uintptr_t)hashmap__get(m->dev_start, t->pid, s->correlation_id);
	if (!first || s->start_ns + 1 < first)
		put(m, m->dev_start, t->pid, s->correlation_id, (uintptr_t)s->start_ns + 1);
	return 0;
}

static struct matched_reach *reach_of(struct match_ctx *m, uint64_t pid)
{
	struct matched_reach *r = hashmap__get(m->reach, pid, 0);

	if (r)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r || hashmap__put(m->reach, pid, 0, r, NULL)) {
		free(r);
		m->out_of_memory = true;
		return NULL;
	}
	r->first_device_start = UINT64_MAX;
	return r;
}

static int note_reach(uint64_t pid, uint64_t launch, void *value, void *ctx)
{
	struct match_ctx *m = ctx;
	uintptr_t host = (uintptr_t)hashmap__get(m->host, pid, launch);
	uintptr_t dev = (uintptr_t)hashmap__get(m->dev_start, pid, launch);
	struct matched_reach *r;

	(void)value;
	if (!host || !(r = reach_of(m, pid)))
		return 0;
	if (host - 1 > r->last_host_start)
		r->last_host_start = host - 1;
	if (dev && dev - 1 < r->first_device_start)
		r->first_device_start = dev - 1;
	return 0;
}

/* A device execution with no host Execute counts as lost unless it ran
 * before the first joined one: its Execute was launched before the window
 * (the queue runs behind the host). */
static int count_device_side(uint64_t pid, uint64_t launch, void *value, void *ctx)
{
	struct match_ctx *m = ctx;
	int cores = __builtin_popcountll((uintptr_t)value);
	const struct matched_reach *r;
	uintptr_t start;

	if (hashmap__get(m->host, pid, launch)) {
		m->matched += cores;
		return 0;
	}
	r = hashmap__get(m->reach, pid, 0);
	start = (uintptr_t)hashmap__get(m->dev_start, pid, launch);
	if (!r || !start || start - 1 > r->first_device_start)
		m->unmatched_device += cores;
	return 0;
}

/* A host Execute with no device execution counts as lost unless it came
 * after the last one that ran: it was still queued or running at the
 * stop (as every window's last few are). */
static int count_host_side(uint64_t pid, uint64_t launch, void *value, void *ctx)
{
	struct match_ctx *m = ctx;
	uintptr_t want, have = (uintptr_t)hashmap__get(m->dev, pid, launch);
	const struct matched_reach *r = hashmap__get(m->reach, pid, 0);

	if (r && (uintptr_t)value - 1 > r->last_host_start)
		return 0;
	if (!m->covered_known || m->covered_pid != (uint32_t)pid) {
		m->covered = covered_cores(m->d, (uint32_t)pid);
		m->covered_pid = (uint32_t)pid;
		m->covered_known = true;
	}
	want = m->covered;
	m->unmatched_host += __builtin_popcountll(want & ~have);
	return 0;
}

/* The unmatched are counted on both sides, less those the window's edges
 * explain: device work whose launch came before the window, and launches
 * whose device work had not run by its stop. */
void collect_devtrace_report_matching(struct collect_devtrace *d)
{
	struct match_ctx m = { .d = d, .dev = hashmap__new(), .dev_start = hashmap__new(),
			       .host = hashmap__new(), .reach = hashmap__new() };

	if (!m.dev || !m.dev_start || !m.host || !m.reach)
		goto out;
	capture__for_each_span(d->c->cap, note_launch, &m);
	hashmap__filter(m.dev, note_reach, &m);
	if (m.out_of_memory) {
		collect_out_of_memory(d->c);
		goto out;
	}
	hashmap__filter(m.dev, count_device_side, &m);
	hashmap__filter(m.host, count_host_side, &m);
	log_debug("device executions joined to their host Execute: %llu; without one: %llu; "
		 "Execute x core without a device execution: %llu",
		 (unsigned long long)m.matched, (unsigned long long)m.unmatched_device,
		 (unsigned long long)m.unmatched_host);
	if (m.unmatched_device)
		capture__warn(d->c->cap, "%llu device executions (per core) without their host Execute in the capture",
			      (unsigned long long)m.unmatched_device);
	if (m.unmatched_host)
		capture__warn(d->c->cap, "%llu host Executes (per core) without their device execution in the capture",
			      (unsigned long long)m.unmatched_host);
out:
	hashmap__free(m.dev, NULL);
	hashmap__free(m.dev_start, NULL);
	hashmap__free(m.host, NULL);
	hashmap__free(m.reach, free);
}
