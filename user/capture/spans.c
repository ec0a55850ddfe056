// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Spans in the capture model: adding them (checked, counted by kind, and
 * pruned to the event budget as they come), removing those after a stop
 * placed late or before a start moved forward, their args, and the sort
 * that finalize applies to each track.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture_internal.h"
#include "lib/array.h"

#define LOG_CONTEXT "capture"
#include "lib/log.h"

int capture__add_span(struct capture *c, const struct capture_span *s)
{
	struct track_store *t;

	if (c->finalized)
		return -EBUSY;
	if (s->track >= c->ntracks)
		return -ENOENT;
	if (s->kind >= SPAN_KIND__COUNT || s->nargs > CAPTURE_MAX_ARGS ||
	    s->end_ns < s->start_ns)
		return -EINVAL;
	for (uint32_t i = 0; i < s->nargs; i++) {
		if (s->args[i].type > ARG_STR)
			return -EINVAL;
	}
	if (c->refuse_kind[s->kind] || span_dur(s) < c->refuse_shorter[s->kind]) {
		c->dropped[s->kind]++;
		return 0;
	}
	t = &c->tracks[s->track];
	if (ARRAY_GROW(t->spans, t->cap, t->n + 1))
		return -ENOMEM;
	t->spans[t->n++] = *s;
	t->kinds |= 1u << s->kind;
	if (span_dur(s) == c->refuse_shorter[s->kind])
		c->at_bar[s->kind]++;
	c->kept[s->kind]++;
	c->total_kept++;
	/* Memory stays bounded during long windows: past one and a half times
	 * the budget, drop down to it (least useful kinds first). The span is
	 * in either way; a prune that found no memory is tried again at the
	 * next span, and finalize's prune is the one that must succeed. */
	if (c->total_kept >= c->max_spans + c->max_spans / 2 &&
	    capture_budget_apply(c, false))
		log_debug("span budget prune deferred: out of memory");
	return 0;
}

int capture__for_each_span(const struct capture *c,
			   int (*fn)(const struct capture_span *s, void *ctx), void *ctx)
{
	for (size_t i = 0; i < c->ntracks; i++) {
		const struct track_store *ts = &c->tracks[i];

		for (size_t j = 0; j < ts->n; j++) {
			int err = fn(&ts->spans[j], ctx);

			if (err)
				return err;
		}
	}
	return 0;
}

long capture__join_host_spans(struct capture *c,
			      uint64_t (*fn)(const struct capture_span *s,
					     const struct capture_track *t, void *ctx),
			      void *ctx)
{
	long joined = 0;

	if (c->finalized)
		return -EBUSY;
	for (size_t i = 0; i < c->ntracks; i++) {
		struct track_store *ts = &c->tracks[i];

		if (ts->info.kind != TRACK_HOST_THREAD)
			continue;
		for (size_t j = 0; j < ts->n; j++) {
			struct capture_span *s = &ts->spans[j];
			uint64_t corr;

			if (s->correlation_id)
				continue;
			corr = fn(s, &ts->info, ctx);
			if (corr) {
				s->correlation_id = corr;
				joined++;
			}
		}
	}
	return joined;
}

/* Removes the spans @drop says go; returns how many went. */
static uint64_t drop_where(struct capture *c, bool (*drop)(const struct capture_span *s,
							  uint64_t t), uint64_t t)
{
	uint64_t gone = 0;

	if (c->finalized)
		return 0;
	for (size_t i = 0; i < c->ntracks; i++) {
		struct track_store *ts = &c->tracks[i];
		size_t w = 0;

		for (size_t j = 0; j < ts->n; j++) {
			const struct capture_span *s = &ts->spans[j];

			if (drop(s, t)) {
				if (span_dur(s) == c->refuse_shorter[s->kind])
					c->at_bar[s->kind]--;
				c->kept[s->kind]--;
				c->total_kept--;
				gone++;
				continue;
			}
			if (w != j)
				ts->spans[w] = *s;
			w++;
		}
		ts->n = w;
		capture_track_shrink(ts);
	}
	return gone;
}

/*
 * A track whose spans mostly went keeps its memory otherwise: in the
 * daemon, whose window moves on past an exited thread, its track would
 * hold its peak until the next capture (tens of MB for a trainer's
 * Execute line at 10k steps/s). Shrunk to twice what is left, so a track
 * that keeps getting spans is not reallocated at every drop.
 */
void capture_track_shrink(struct track_store *ts)
{
	struct capture_span *p;

	if (ts->n >= ts->cap / 4)
		return;
	if (!ts->n) {
		free(ts->spans);
		ts->spans = NULL;
		ts->cap = 0;
		return;
	}
	p = realloc(ts->spans, ts->n * 2 * sizeof(*p));
	if (p) {
		ts->spans = p;
		ts->cap = ts->n * 2;
	}
}

static bool begins_after(const struct capture_span *s, uint64_t stop_ns)
{
	return s->start_ns > stop_ns;
}

static bool ended_before(const struct capture_span *s, uint64_t start_ns)
{
	return s->end_ns < start_ns;
}

uint64_t capture__drop_after(struct capture *c, uint64_t stop_ns)
{
	capture_mem_drop_after(c, stop_ns);
	return drop_where(c, begins_after, stop_ns);
}

uint64_t capture__drop_before(struct capture *c, uint64_t start_ns)
{
	capture_mem_drop_before(c, start_ns);
	return drop_where(c, ended_before, start_ns);
}

static int span_add_arg(struct capture_span *s, uint32_t key, uint32_t type,
			struct capture_arg *arg)
{
	if (s->nargs >= CAPTURE_MAX_ARGS)
		return -E2BIG;
	arg->key = key;
	arg->type = type;
	s->args[s->nargs++] = *arg;
	return 0;
}

int capture_span__add_u64(struct capture_span *s, uint32_t key, uint64_t v)
{
	struct capture_arg a = { .value.u = v };

	return span_add_arg(s, key, ARG_U64, &a);
}

int capture_span__add_i64(struct capture_span *s, uint32_t key, int64_t v)
{
	struct capture_arg a = { .value.i = v };

	return span_add_arg(s, key, ARG_I64, &a);
}

int capture_span__add_double(struct capture_span *s, uint32_t key, double v)
{
	struct capture_arg a = { .value.d = v };

	return span_add_arg(s, key, ARG_DOUBLE, &a);
}

int capture_span__add_str(struct capture_span *s, uint32_t key, uint32_t str)
{
	struct capture_arg a = { .value.str = str };

	return span_add_arg(s, key, ARG_STR, &a);
}


struct sort_key {
	uint64_t start;
	uint64_t end;
	uint32_t idx;
};

static int sort_key_cmp(const void *a, const void *b)
{
	const struct sort_key *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;	/* outer first */
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Stable sort by (start asc, end desc), permuting the spans in place. */
int capture_sort_track(struct track_store *t)
{
	struct sort_key *keys;
	struct capture_span tmp;
	size_t i;

	for (i = 1; i < t->n; i++) {
		const struct capture_span *a = &t->spans[i - 1], *b = &t->spans[i];

		if (a->start_ns > b->start_ns ||
		    (a->start_ns == b->start_ns && a->end_ns < b->end_ns))
			break;
	}
	if (i >= t->n)
		return 0;	/* already in order, the common case */

	keys = malloc(t->n * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < t->n; i++) {
		keys[i].start = t->spans[i].start_ns;
		keys[i].end = t->spans[i].end_ns;
		keys[i].idx = i;
	}
	qsort(keys, t->n, sizeof(*keys), sort_key_cmp);
	/* keys[j].idx is the span that belongs at j: follow each cycle once. */
	for (i = 0; i < t->n; i++) {
		size_t j = i, k;

		if (keys[i].idx == i)
			continue;
		tmp = t->spans[i];
		for (;;) {
			k = keys[j].idx;
			keys[j].idx = j;
			if (k == i) {
				t->spans[j] = tmp;
				break;
			}
			t->spans[j] = t->spans[k];
			j = k;
		}
	}
	free(keys);
	return 0;
}
