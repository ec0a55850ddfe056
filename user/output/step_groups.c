// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Step numbers for XProf's grouping, from the capture's device steps. */
#include <errno.h>
#include <stdlib.h>

#include "capture/capture.h"
#include "output/step_groups.h"

struct first_start {
	uint64_t key, start_ns, end_ns;
	uint32_t pid;
};

/* Launch ids are a process's own: a step is (pid, correlation id), kept
 * as one well-mixed 64-bit key (splitmix64). */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t step_key(uint32_t pid, uint64_t corr)
{
	return mix(mix(corr) ^ pid);
}

static int cmp_start(const void *a, const void *b)
{
	const struct first_start *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int cmp_range(const void *a, const void *b)
{
	const struct step_range *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

int step_groups__build(struct step_groups *g, const struct capture *c,
		       uint64_t ws, uint64_t we)
{
	struct first_start *v = NULL;
	struct u64_map seen = { 0 };
	size_t n = 0, cap = 0;
	int ret = 0;

	*g = (struct step_groups){ 0 };
	for (size_t t = 0; t < capture__num_tracks(c) && !ret; t++) {
		const struct capture_span *sp;
		size_t ns;

		if (capture__track(c, t)->kind != TRACK_DEVICE_STEPS)
			continue;
		sp = capture__track_spans(c, t, &ns);
		for (size_t i = 0; sp && i < ns && !ret; i++) {
			uint64_t key;
			uint32_t at;

			if (!sp[i].correlation_id || sp[i].end_ns < ws || sp[i].start_ns > we)
				continue;
			key = step_key(capture__track(c, t)->pid, sp[i].correlation_id);
			at = u64_map__get(&seen, key);
			if (at != U64_MAP_NONE) {
				/* The same step on another core: its earliest
				 * start, its latest end. */
				if (sp[i].start_ns < v[at].start_ns)
					v[at].start_ns = sp[i].start_ns;
				if (sp[i].end_ns > v[at].end_ns)
					v[at].end_ns = sp[i].end_ns;
				continue;
			}
			if (n == cap) {
				struct first_start *grown;

				cap = cap ? 2 * cap : 256;
				grown = realloc(v, cap * sizeof(*v));
				if (!grown) {
					ret = -ENOMEM;
					break;
				}
				v = grown;
			}
			v[n] = (struct first_start){ key, sp[i].start_ns, sp[i].end_ns,
						     capture__track(c, t)->pid };
			ret = u64_map__put(&seen, key, n);
			n++;
		}
	}
	if (!ret && n) {
		qsort(v, n, sizeof(*v), cmp_start);
		for (size_t i = 0; i < n && !ret; i++)
			ret = u64_map__put(&g->by_corr, v[i].key, i);
		g->n = n;
		g->ranges = ret ? NULL : malloc(n * sizeof(*g->ranges));
		if (!ret && !g->ranges)
			ret = -ENOMEM;
		for (size_t i = 0; i < n && !ret; i++)
			g->ranges[i] = (struct step_range){ v[i].pid, (uint32_t)i, v[i].start_ns,
							    v[i].end_ns };
		if (!ret)
			qsort(g->ranges, n, sizeof(*g->ranges), cmp_range);
		for (size_t i = 0; i < n && !ret; i++) {
			struct step_range *r = &g->ranges[i];

			r->max_end_ns = r->end_ns;
			if (i && r[-1].pid == r->pid && r[-1].max_end_ns > r->end_ns)
				r->max_end_ns = r[-1].max_end_ns;
		}
	}
	free(v);
	u64_map__free(&seen);
	if (ret)
		step_groups__free(g);
	return ret;
}

bool step_groups__find(const struct step_groups *g, uint32_t pid, uint64_t corr,
		       int64_t *step)
{
	uint32_t v = corr ? u64_map__get(&g->by_corr, step_key(pid, corr)) : U64_MAP_NONE;

	if (v == U64_MAP_NONE)
		return false;
	*step = v;
	return true;
}

bool step_groups__at(const struct step_groups *g, uint32_t pid, uint64_t t, int64_t *step)
{
	size_t lo = 0, hi = g->ranges ? g->n : 0;

	/* The last of @pid's steps that began at or before @t. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct step_range *r = &g->ranges[mid];

		if (r->pid < pid || (r->pid == pid && r->start_ns <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Back from there while an earlier step may still hold @t (a step
	 * nested in a longer one: the longer one holds what follows it). */
	for (size_t i = lo; i > 0; i--) {
		const struct step_range *r = &g->ranges[i - 1];

		if (r->pid != pid || r->max_end_ns < t)
			break;
		if (r->end_ns >= t) {
			*step = r->step;
			return true;
		}
	}
	return false;
}

void step_groups__free(struct step_groups *g)
{
	u64_map__free(&g->by_corr);
	free(g->ranges);
	g->ranges = NULL;
	g->n = 0;
}
