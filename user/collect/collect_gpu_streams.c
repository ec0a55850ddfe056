// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A GPU's work per stream, from the devtrace buffers the in-process agent
 * writes (docs/devtrace.md, "GPU streams"):
 *
 *   KERNEL, TRANSFER  -> a span on the device's "Stream #N(...)" line,
 *                        named as the runtime named it (kernels demangled),
 *                        with its correlation id and stream
 *   LAUNCH            -> kept until the window finishes, then joined: the
 *                        host span (a uprobe's cudaLaunchKernel,
 *                        cuGraphLaunch, cudaMemcpyAsync...) on that thread
 *                        that holds the call gets its correlation id, so
 *                        XProf and Perfetto link the launch to its kernels
 *
 * A call is given to the innermost host span around it that probed that
 * function, or one of its kind at the other CUDA layer (the runtime names
 * its calls as the probes do, "cudaLaunchKernel_v7000"; cuBLASLt's
 * linked-in runtime is seen by the probes at the driver): JAX's Execute
 * holds the cuGraphLaunch that holds the call, and the graph launch is
 * the launch. A driver call probed at its entry only (a span of no
 * length) takes the call it precedes, or the runtime call around it.
 * Driver calls seen inside a probed runtime call (marked
 * nested_in_runtime_call, not counted) are passed over for it. Thread ids
 * of a container's process are mapped to the host's first, and times
 * converted with the window's final clock fit.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "devtrace"
#include "collect/collect_devtrace_internal.h"
#include "collect/collector_internal.h"
#include "devtrace/devtrace_reader.h"
#include "lib/array.h"
#include "lib/hashmap.h"
#include "lib/log.h"

/* Calls kept per window for the join, at most (32 MiB). */
#define MAX_LAUNCHES (1u << 20)
/* A call's times against its host span's: the runtime takes them inside
 * the call, the probes around it; this much either side is allowed. */
#define JOIN_SLACK_NS 2000
/* A call seen at its entry only: the runtime's timing of it begins this
 * soon after at most (a thread preempted between the probe and CUPTI's
 * clock read on a loaded host: over 50 us seen under make test). The next
 * entry on the thread wins the calls after it, so a wide window is safe. */
#define ENTRY_WINDOW_NS (10 * 1000000ull)
/* ... and a call around an entry began this long before it at most. */
#define MAX_CALL_NS (1000 * 1000ull)

/* The capture's device for core @k, with its platform said once per capture. */
static int gpu_device(struct collect_devtrace *d, struct dt_core *k)
{
	struct collector *c = d->c;
	int dev;

	if (k->dev_cap == c->cap)
		return k->dev_index;
	dev = capture__device(c->cap, k->pid, k->ordinal, k->kind, 0, 0);
	if (dev < 0)
		return dev;
	if (k->platform[0])
		capture__device_platform(c->cap, (uint32_t)dev, k->platform,
					 !strncmp(k->kind, "NVIDIA", 6) ? "Nvidia" : NULL);
	k->dev_cap = c->cap;
	k->dev_index = dev;
	return dev;
}

static void stream_span(struct collect_devtrace *d, int buf, struct dt_core *k,
			const struct devtrace_record *r, uint64_t start, uint64_t end)
{
	struct collector *c = d->c;
	char details[48];
	struct capture_span s;
	int dev, track;

	dev = gpu_device(d, k);
	track = dev < 0 ? dev : capture__stream_track(c->cap, (uint32_t)dev, (uint32_t)r->step);
	if (track < 0) {
		collect_out_of_memory(c);
		return;
	}
	collect_init_span(&s, track, SPAN_DEVICE_OP,
			  collect_devtrace_name(d, buf, r->name_id,
						r->kind == DEVTRACE_KERNEL ? "kernel" : "Memcpy"),
			  start, end);
	s.correlation_id = r->correlation_id;
	collect_span_stat(c, &s, "stream_id", r->step);
	if (r->kind == DEVTRACE_TRANSFER) {
		collect_span_stat(c, &s, "bytes", r->bytes);
		/* What XProf's GPU tools read a copy's size from. */
		snprintf(details, sizeof(details), "num_bytes:%" PRIu64, (uint64_t)r->bytes);
		capture_span__add_str(&s, collect_intern_static(c, "memcpy_details"),
				      capture__intern(c->cap, details));
	}
	d->spans++;
	d->gpu.work++;
	collect_keep_span(c, &s);
}

void collect_gpu_stream_record(struct collect_devtrace *d, int buf, struct dt_core *k,
			       const struct devtrace_record *r)
{
	struct collector *c = d->c;
	uint64_t start = host_ns_of(d, k, r->ts), end = host_ns_of(d, k, r->arg);
	struct dt_launch *l;

	if (!start || !end) {
		d->no_clock++;
		return;
	}
	if (end < start)
		end = start;
	/* History the buffer held at attach: before the probes, outside any
	 * window. */
	if (end < capture__probes_attached(c->cap))
		return;
	if (r->kind != DEVTRACE_LAUNCH) {
		stream_span(d, buf, k, r, start, end);
		return;
	}
	if (d->gpu.n >= MAX_LAUNCHES) {
		d->gpu.launches_dropped++;
		return;
	}
	if (ARRAY_GROW(d->gpu.v, d->gpu.cap, d->gpu.n + 1)) {
		d->gpu.launches_dropped++;
		collect_out_of_memory(c);
		return;
	}
	l = &d->gpu.v[d->gpu.n++];
	l->pid = k->pid;
	l->tid = (uint32_t)r->step;
	l->ns_tid = k->ns_tids;
	l->buf = buf;
	l->start = r->ts;
	l->end = r->arg;
	l->corr = r->correlation_id;
	l->api = collect_devtrace_name(d, buf, r->name_id, NULL);
	l->best_len = UINT64_MAX;
	l->best_track = UINT32_MAX;
	l->best_start = 0;
}

static int cmp_launch(const void *a, const void *b)
{
	const struct dt_launch *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

struct join_ctx {
	struct collect_devtrace *d;
	uint32_t nested_key;	/* interned "nested_in_runtime_call" */
	bool assign;		/* pass 2: take the corr; pass 1: claim */
	struct hashmap *joined;	/* (pid, corr) given to a host span */
	bool out_of_memory;
};

static bool is_nested(const struct capture_span *s, uint32_t key)
{
	for (uint32_t i = 0; i < s->nargs; i++)
		if (s->args[i].key == key && s->args[i].value.u)
			return true;
	return false;
}

/* A launch joins a launch, a copy a copy, a memset a memset. */
static int call_class(const char *name)
{
	if (strstr(name, "Launch"))
		return 1;
	if (strstr(name, "Memcpy"))
		return 2;
	if (strstr(name, "Memset"))
		return 3;
	return 0;
}

/*
 * Whether call @l can be the one span @name probed: the same function
 * (the runtime names it as the probes do, with a version suffix at most:
 * "cudaLaunchKernel_v7000"), or one of its kind at the other layer. A
 * library that links the CUDA runtime in (cuBLASLt) is seen by the probes
 * at the driver (cuLaunchKernelEx) while CUPTI names its runtime call
 * (cudaLaunchKernelExC_v11060), measured on an H100 with PyTorch. A call
 * without a name may be any.
 */
enum call_match { NOT_IT, SAME_KIND, SAME_CALL };

static enum call_match same_call(const struct join_ctx *j, const struct dt_launch *l,
				 const char *name, size_t name_len)
{
	const char *api = l->api ? capture__string(j->d->c->cap, l->api) : NULL;
	int kind;

	if (!api)
		return SAME_KIND;
	if (!strncmp(api, name, name_len) && (api[name_len] == '\0' || api[name_len] == '_'))
		return SAME_CALL;
	kind = call_class(api);
	return kind && kind == call_class(name) ? SAME_KIND : NOT_IT;
}

/* The first call of (@pid, @tid) that starts at or after @from. */
static size_t first_at(const struct gpu_launches *g, uint32_t pid, uint32_t tid, uint64_t from)
{
	struct dt_launch key = { .pid = pid, .tid = tid, .start = from };
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (cmp_launch(&g->v[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Whether entry time @a is a better entry for a call starting at @call
 * than @b: at or before it beats after it; then the nearer. */
static bool nearer_entry(uint64_t a, uint64_t b, uint64_t call)
{
	bool a_before = a <= call, b_before = b <= call;

	if (a_before != b_before)
		return a_before;
	return a_before ? a > b : a < b;
}

/*
 * Pass 1 claims each call for the innermost span around it; pass 2 gives
 * each span the outermost of the calls it claimed (a runtime call holds
 * the driver call it makes: both carry the one correlation id). A span
 * of no length is a call seen at its entry only (the driver's launches
 * are probed so): it takes the call on its thread that holds that entry
 * (a runtime call around the driver's), else the first that began within
 * ENTRY_WINDOW_NS after it, unless a later entry is nearer that call.
 */
static uint64_t join_span(const struct capture_span *s, const struct capture_track *t, void *ctx)
{
	struct join_ctx *j = ctx;
	struct gpu_launches *g = &j->d->gpu;
	bool instant = s->end_ns == s->start_ns;
	uint64_t at = s->start_ns, len = s->end_ns - s->start_ns, corr = 0, widest = 0;
	uint64_t lo = at > JOIN_SLACK_NS ? at - JOIN_SLACK_NS : 0;
	uint64_t hi = instant ? at + ENTRY_WINDOW_NS : s->end_ns + JOIN_SLACK_NS;
	const char *name = capture__string(j->d->c->cap, s->name);
	size_t name_len = name ? strlen(name) : 0;
	size_t i;

	if (s->end_ns < s->start_ns || s->kind >= SPAN_DEVICE_STEP || is_nested(s, j->nested_key) ||
	    !name_len)
		return 0;
	/* An entry may lie inside a call that began up to MAX_CALL_NS before. */
	i = first_at(g, t->pid, t->tid, instant && at > MAX_CALL_NS ? at - MAX_CALL_NS : lo);
	for (; i < g->n; i++) {
		struct dt_launch *l = &g->v[i];
		enum call_match match;

		if (l->pid != t->pid || l->tid != t->tid || l->start > hi)
			break;
		if (!instant && (l->start < lo || l->end > hi))
			continue;
		match = same_call(j, l, name, name_len);
		if (match == NOT_IT)
			continue;
		/*
		 * An entry: the call of the other layer around it (a runtime
		 * call holding this driver call), else the call itself, which
		 * the runtime times from inside, so beginning just after the
		 * entry. (Its own call "around" it is the previous one, within
		 * the clock fit's error.)
		 */
		if (instant && l->start < lo &&
		    !(match == SAME_KIND && l->start < at && l->end >= at))
			continue;
		if (!j->assign) {
			/* Innermost: the shortest span; among entries, the
			 * nearest one at or before the call's start, else the
			 * nearest after it (within the slack). */
			if (len < l->best_len ||
			    (len == l->best_len && nearer_entry(s->start_ns, l->best_start, l->start))) {
				l->best_len = len;
				l->best_track = s->track;
				l->best_start = s->start_ns;
			}
		} else if (l->best_track == s->track && l->best_start == s->start_ns &&
			   l->end - l->start >= widest) {
			widest = l->end - l->start;
			corr = l->corr;
		}
		if (instant)
			break;	/* an entry claims one call, its first */
	}
	if (corr)
		j->out_of_memory |= hashmap__put(j->joined, t->pid, corr, (void *)1, NULL) != 0;
	return corr;
}

/* Joined and not, kernels ([0]) apart from copies and memsets ([1]):
 * every kernel launch is probed, not every copy or memset call
 * (cudaMemsetAsync is not), so only kernels without one are a gap. */
struct count_ctx {
	struct collect_devtrace *d;
	struct hashmap *joined;
	uint64_t with[2], without[2];
};

static int count_work(const struct capture_span *s, void *ctx)
{
	struct count_ctx *n = ctx;
	struct capture *cap = n->d->c->cap;
	const struct capture_track *t = capture__track(cap, s->track);
	const char *name;
	int copy;

	if (!t || t->kind != TRACK_DEVICE_STREAM || !s->correlation_id)
		return 0;
	name = capture__string(cap, s->name);
	copy = name && (!strncmp(name, "Memcpy", 6) || !strncmp(name, "Memset", 6));
	if (hashmap__get(n->joined, t->pid, s->correlation_id))
		n->with[copy]++;
	else
		n->without[copy]++;
	return 0;
}

/* The three most frequent names among the unclaimed calls. */
struct top_apis {
	uint32_t api[3];
	uint64_t n[3];
};

static int rank_api(uint64_t api, uint64_t unused, void *value, void *ctx)
{
	struct top_apis *t = ctx;
	uint64_t n = (uintptr_t)value;

	(void)unused;
	for (int k = 0; k < 3; k++) {
		if (n > t->n[k]) {
			memmove(&t->api[k + 1], &t->api[k], (2 - k) * sizeof(t->api[0]));
			memmove(&t->n[k + 1], &t->n[k], (2 - k) * sizeof(t->n[0]));
			t->api[k] = (uint32_t)api;
			t->n[k] = n;
			break;
		}
	}
	return 0;
}

/*
 * The calls no host span took, by name: calls acceltrace does not probe
 * (cudaMemsetAsync, say), or probes it could not place. The three most
 * frequent are said once per window, so a gap has a name.
 */
static void say_unprobed(struct collect_devtrace *d)
{
	struct hashmap *counts = hashmap__new();
	struct top_apis top = {};

	if (!counts)
		return;
	for (size_t i = 0; i < d->gpu.n; i++) {
		const struct dt_launch *l = &d->gpu.v[i];
		uintptr_t n;

		if (l->best_track != UINT32_MAX || !l->api)
			continue;
		n = (uintptr_t)hashmap__get(counts, l->api, 0) + 1;
		if (hashmap__put(counts, l->api, 0, (void *)n, NULL))
			break;
	}
	hashmap__filter(counts, rank_api, &top);
	for (int k = 0; k < 3 && top.n[k]; k++)
		log_debug("GPU work launched by calls no host span holds: %s x%" PRIu64,
			 capture__string(d->c->cap, top.api[k]), top.n[k]);
	hashmap__free(counts, NULL);
}

struct tid_map {
	struct hashmap *map;	/* (pid, ns tid) -> host tid */
	uint32_t pid;
};

static void note_tid(void *ctx, pid_t tid, pid_t ns_tid)
{
	struct tid_map *m = ctx;

	hashmap__put(m->map, m->pid, (uint64_t)ns_tid, (void *)(uintptr_t)tid, NULL);
}

/*
 * A container's threads are named by its namespace's ids in the LAUNCH
 * records, by the host's on the host tracks: mapped, once per process,
 * through /proc as it stands now (a thread gone by then stays unjoined).
 */
static void host_tids(struct collect_devtrace *d)
{
	struct tid_map m = { .map = NULL };

	for (size_t i = 0; i < d->gpu.n; i++) {
		struct dt_launch *l = &d->gpu.v[i];
		uintptr_t tid;

		if (!l->ns_tid)
			continue;
		if (!m.map && !(m.map = hashmap__new()))
			return;
		if (!hashmap__get(m.map, l->pid, 0) && d->ns_tids) {
			m.pid = l->pid;
			hashmap__put(m.map, l->pid, 0, (void *)1, NULL);	/* mapped */
			d->ns_tids(d->ns_tids_ctx, l->pid, note_tid, &m);
		}
		tid = (uintptr_t)hashmap__get(m.map, l->pid, l->tid);
		l->tid = tid ? (uint32_t)tid : 0;
		l->ns_tid = false;
	}
	hashmap__free(m.map, NULL);
}

void collect_gpu_join_launches(struct collect_devtrace *d)
{
	struct collector *c = d->c;
	struct join_ctx j = { .d = d };
	struct count_ctx n = { .d = d };
	long given;

	if (d->gpu.launches_dropped > d->gpu.said_dropped)
		capture__count_loss(c->cap, "GPU launch records not joined (too many in one window)",
				    d->gpu.launches_dropped - d->gpu.said_dropped);
	d->gpu.said_dropped = d->gpu.launches_dropped;
	if (!d->gpu.n && !d->gpu.work)
		return;
	j.joined = hashmap__new();
	if (!j.joined) {
		collect_out_of_memory(c);
		return;
	}
	host_tids(d);
	/* To host time with the fit as it stands now. */
	for (size_t i = 0; i < d->gpu.n; i++) {
		struct dt_launch *l = &d->gpu.v[i];
		const struct dt_core *k = (size_t)l->buf < d->ncores ? &d->cores[l->buf] : NULL;

		l->start = k && k->known ? host_ns_of(d, k, l->start) : 0;
		l->end = k && k->known ? host_ns_of(d, k, l->end) : 0;
		if (l->end < l->start)
			l->end = l->start;
	}
	qsort(d->gpu.v, d->gpu.n, sizeof(*d->gpu.v), cmp_launch);
	j.nested_key = collect_intern_static(c, "nested_in_runtime_call");
	capture__join_host_spans(c->cap, join_span, &j);
	j.assign = true;
	given = capture__join_host_spans(c->cap, join_span, &j);
	say_unprobed(d);
	n.joined = j.joined;
	capture__for_each_span(c->cap, count_work, &n);
	log_debug("GPU kernels joined to their host launch: %" PRIu64 ", without: %" PRIu64
		 "; copies and memsets: %" PRIu64 ", without: %" PRIu64
		 " (%ld host spans joined, %zu launch records)", n.with[0], n.without[0],
		 n.with[1], n.without[1], given, d->gpu.n);
	/* At the window's edges a few launches lie outside; more is a gap. */
	if (n.without[0] * 100 > n.with[0] + n.without[0])
		capture__warn(c->cap, "%" PRIu64 " of %" PRIu64 " GPU kernels without their host "
			      "launch in the capture", n.without[0], n.with[0] + n.without[0]);
	if (j.out_of_memory)
		collect_out_of_memory(c);
	hashmap__free(j.joined, NULL);
	d->gpu.n = 0;
	d->gpu.work = 0;
}

void collect_gpu_forget_before(struct collect_devtrace *d, uint64_t start_ns)
{
	size_t w = 0;

	for (size_t i = 0; i < d->gpu.n; i++) {
		const struct dt_launch *l = &d->gpu.v[i];
		const struct dt_core *k = (size_t)l->buf < d->ncores ? &d->cores[l->buf] : NULL;

		/* Still in device ticks: compared through the fit. */
		if (k && k->known && host_ns_of(d, k, l->end) >= start_ns)
			d->gpu.v[w++] = *l;
	}
	d->gpu.n = w;
}

void collect_gpu_free(struct collect_devtrace *d)
{
	free(d->gpu.v);
	memset(&d->gpu, 0, sizeof(d->gpu));
}
