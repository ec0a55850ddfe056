// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One allocator's bytes in use over time: a ring of points per tier. A
 * sample folds into the finest tier's newest point; a point pushed out of
 * a full ring folds into the next coarser tier's newest point (aligned to
 * that tier's resolution), and out of the coarsest it goes. A tier's ring
 * is allocated when the first point reaches it: the bytes grow with the
 * age of the process up to all tiers' (max_bytes), never past.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "devmem/devmem_timeline.h"

/* The defaults: 1 s x 10 min, 10 s x 3 h, 1 min x 1 day, 10 min x 30 days. */
static const struct devmem_tier default_tiers[] = {
	{ 1000000000ull, 600 },
	{ 10000000000ull, 1080 },
	{ 60000000000ull, 1440 },
	{ 600000000000ull, 4320 },
};

/* A ring's cap: a tier of more points than this is a mistake, not a need
 * (30 days at 1 s is 2.6 M). */
#define MAX_TIER_POINTS (1u << 22)

struct point {
	uint64_t start_ns;	/* aligned to the tier's resolution */
	uint64_t last, min, max, peak;
};

struct tier {
	struct devmem_tier t;
	struct point *ring;	/* NULL until a point reaches the tier */
	uint32_t head;		/* the oldest */
	uint32_t count;
	/* Where what was folded into the newest point ends: a coarse tier's
	 * newest point covers only up to there (the finer tier holds the
	 * rest), so points never overlap. */
	uint64_t newest_end_ns;
};

struct devmem_timeline {
	size_t n_tiers;
	size_t bytes, max_bytes;
	uint64_t points_lost;	/* a coarser tier's ring could not be had */
	struct tier tiers[DEVMEM_MAX_TIERS];
};

int devmem_timeline__check_tiers(const struct devmem_tier *tiers, size_t n)
{
	if (!n || n > DEVMEM_MAX_TIERS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!tiers[i].resolution_ns || !tiers[i].points ||
		    tiers[i].points > MAX_TIER_POINTS)
			return -EINVAL;
		if (i && (tiers[i].resolution_ns <= tiers[i - 1].resolution_ns ||
			  tiers[i].resolution_ns % tiers[i - 1].resolution_ns))
			return -EINVAL;
	}
	return 0;
}

struct devmem_timeline *devmem_timeline__new(const struct devmem_tier *tiers, size_t n)
{
	struct devmem_timeline *t;
	size_t total = 0;
	int err;

	if (!tiers) {
		tiers = default_tiers;
		n = sizeof(default_tiers) / sizeof(default_tiers[0]);
	}
	err = devmem_timeline__check_tiers(tiers, n);
	if (err) {
		errno = -err;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		total += tiers[i].points;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->n_tiers = n;
	t->max_bytes = sizeof(*t) + total * sizeof(struct point);
	for (size_t i = 0; i < n; i++)
		t->tiers[i].t = tiers[i];
	/* The finest now: a timeline that cannot sample is no timeline. */
	t->tiers[0].ring = calloc(tiers[0].points, sizeof(struct point));
	if (!t->tiers[0].ring) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->bytes = sizeof(*t) + tiers[0].points * sizeof(struct point);
	return t;
}

void devmem_timeline__free(struct devmem_timeline *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_tiers; i++)
		free(t->tiers[i].ring);
	free(t);
}

static struct point *newest(struct tier *tr)
{
	return tr->count ? &tr->ring[(tr->head + tr->count - 1) % tr->t.points] : NULL;
}

static void fold_point(struct devmem_timeline *t, size_t level, const struct point *p,
		       uint64_t end_ns);

/* Appends a fresh point, pushing the oldest one down a tier when full;
 * NULL when the tier's ring could not be allocated (the point is lost,
 * counted). */
static struct point *append(struct devmem_timeline *t, size_t level, uint64_t start_ns)
{
	struct tier *tr = &t->tiers[level];
	struct point *p;

	if (!tr->ring) {
		tr->ring = calloc(tr->t.points, sizeof(*tr->ring));
		if (!tr->ring) {
			t->points_lost++;
			return NULL;
		}
		t->bytes += tr->t.points * sizeof(*tr->ring);
	}

	if (tr->count == tr->t.points) {
		struct point old = tr->ring[tr->head];

		tr->head = (tr->head + 1) % tr->t.points;
		tr->count--;
		if (level + 1 < t->n_tiers)
			fold_point(t, level + 1, &old, old.start_ns + tr->t.resolution_ns);
	}
	p = &tr->ring[(tr->head + tr->count) % tr->t.points];
	tr->count++;
	p->start_ns = start_ns;
	return p;
}

/* Folds @p (which covers up to @end_ns) into tier @level's newest point. */
static void fold_point(struct devmem_timeline *t, size_t level, const struct point *p,
		       uint64_t end_ns)
{
	struct tier *tr = &t->tiers[level];
	uint64_t start = p->start_ns - p->start_ns % tr->t.resolution_ns;
	struct point *q = newest(tr);

	if (q && q->start_ns == start) {
		q->last = p->last;
		if (p->min < q->min)
			q->min = p->min;
		if (p->max > q->max)
			q->max = p->max;
		if (p->peak > q->peak)
			q->peak = p->peak;
	} else {
		q = append(t, level, start);
		if (!q)
			return;
		q->last = p->last;
		q->min = p->min;
		q->max = p->max;
		q->peak = p->peak;
	}
	tr->newest_end_ns = end_ns;
}

void devmem_timeline__add(struct devmem_timeline *t, uint64_t ts_ns, uint64_t in_use,
			  uint64_t peak)
{
	struct point sample = {
		.start_ns = ts_ns, .last = in_use, .min = in_use, .max = in_use,
		.peak = peak > in_use ? peak : in_use,
	};
	struct point *q = newest(&t->tiers[0]);

	/* Time goes forward: a sample older than the newest point would make
	 * points overlap, so it joins that point instead. */
	if (q && ts_ns < q->start_ns)
		sample.start_ns = q->start_ns;
	fold_point(t, 0, &sample, 0);
	q = newest(&t->tiers[0]);	/* tier 0's ring exists from creation */
	t->tiers[0].newest_end_ns = q->start_ns + t->tiers[0].t.resolution_ns;
}

/* Each tier's points, oldest first, with their spans; calls @fn. */
typedef void (*point_fn)(void *ctx, const struct point *p, uint64_t span_ns);

static void for_each_point(const struct devmem_timeline *t, point_fn fn, void *ctx)
{
	for (size_t level = t->n_tiers; level-- > 0;) {
		const struct tier *tr = &t->tiers[level];

		for (uint32_t i = 0; i < tr->count; i++) {
			const struct point *p = &tr->ring[(tr->head + i) % tr->t.points];
			uint64_t end = p->start_ns + tr->t.resolution_ns;

			if (i + 1 == tr->count && tr->newest_end_ns && tr->newest_end_ns < end)
				end = tr->newest_end_ns;
			fn(ctx, p, end - p->start_ns);
		}
	}
}

struct points_walk {
	uint64_t since_ns;
	size_t skip;		/* the oldest ones beyond @max */
	size_t seen, n, max;
	struct capture_mem_point *out;
};

static void count_point(void *ctx, const struct point *p, uint64_t span_ns)
{
	struct points_walk *w = ctx;

	if (p->start_ns + span_ns > w->since_ns)
		w->seen++;
}

static void copy_point(void *ctx, const struct point *p, uint64_t span_ns)
{
	struct points_walk *w = ctx;
	struct capture_mem_point *o;

	if (p->start_ns + span_ns <= w->since_ns)
		return;
	if (w->skip) {
		w->skip--;
		return;
	}
	if (w->n == w->max)
		return;
	o = &w->out[w->n++];
	o->ts_ns = p->start_ns;
	o->span_ns = span_ns;
	o->in_use = p->last;
	o->min_in_use = p->min;
	o->max_in_use = p->max;
	o->peak = p->peak;
}

/* When there are more than @max, the newest @max: the recent past is what
 * a capture is about. */
size_t devmem_timeline__points(const struct devmem_timeline *t, uint64_t since_ns,
			       struct capture_mem_point *out, size_t max)
{
	struct points_walk w = { .since_ns = since_ns, .max = max, .out = out };

	for_each_point(t, count_point, &w);
	w.skip = w.seen > max ? w.seen - max : 0;
	for_each_point(t, copy_point, &w);
	return w.n;
}

size_t devmem_timeline__max_points(const struct devmem_timeline *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n_tiers; i++)
		n += t->tiers[i].t.points;
	return n;
}

size_t devmem_timeline__bytes(const struct devmem_timeline *t)
{
	return t->bytes;
}

size_t devmem_timeline__max_bytes(const struct devmem_timeline *t)
{
	return t->max_bytes;
}

/* Tier i holds the ages past what the finer tiers reach, up to its own
 * points' reach beyond that (once the process is old enough to fill it). */
uint64_t devmem_timeline__resolution_at(const struct devmem_timeline *t, uint64_t age_ns)
{
	uint64_t reach = 0;

	for (size_t i = 0; i < t->n_tiers; i++) {
		reach += t->tiers[i].t.resolution_ns * t->tiers[i].t.points;
		if (age_ns < reach)
			return t->tiers[i].t.resolution_ns;
	}
	return 0;
}

size_t devmem_timeline__tiers(const struct devmem_timeline *t, struct devmem_tier *out,
			      size_t max)
{
	size_t n = t->n_tiers < max ? t->n_tiers : max;

	for (size_t i = 0; i < n; i++)
		out[i] = t->tiers[i].t;
	return t->n_tiers;
}
