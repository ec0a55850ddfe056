// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Top device ops by self time: an op's duration less its nested children's
 * on the same line (lines hold sorted, nested events: xprof-contract §1.2).
 * FLOP rate from the `flops` stat (per occurrence, usually on the op's
 * metadata) over the op's total time.
 */
#include <errno.h>
#include <stdlib.h>

#include "lib/array.h"
#include "lib/hashmap.h"
#include "report/report_internal.h"

struct op_total {
	const struct xs_event *first;
	uint64_t count;
	int64_t self_ps, total_ps;
};

static void free_total(void *v)
{
	free(v);
}

struct collect {
	struct op_total **v;
	size_t n;
};

static int collect_one(uint64_t a, uint64_t b, void *value, void *ctx)
{
	struct collect *c = ctx;

	(void)a;
	(void)b;
	c->v[c->n++] = value;
	return 0;	/* keep */
}

static int cmp_self(const void *a, const void *b)
{
	const struct op_total *x = *(struct op_total *const *)a;
	const struct op_total *y = *(struct op_total *const *)b;

	return x->self_ps > y->self_ps ? -1 : x->self_ps < y->self_ps;
}

int line_self_times(const struct xs_line *l, int64_t *self)
{
	size_t depth = 0, cap = 64;
	size_t *stack = malloc(cap * sizeof(*stack));

	if (!stack)
		return -ENOMEM;
	for (size_t k = 0; k <= l->n_events; k++) {
		const struct xs_event *e = k < l->n_events ? &l->events[k] : NULL;

		/* Close every open event that ends before e starts. */
		while (depth) {
			const struct xs_event *top = &l->events[stack[depth - 1]];

			if (e && top->start_ps + top->dur_ps > e->start_ps)
				break;
			depth--;
			if (self[stack[depth]] < 0)
				self[stack[depth]] = 0;
			if (depth)
				self[stack[depth - 1]] -= top->dur_ps;
		}
		if (!e)
			break;
		if (depth == cap) {
			size_t *s2 = realloc(stack, 2 * cap * sizeof(*stack));

			if (!s2) {
				free(stack);
				return -ENOMEM;
			}
			stack = s2;
			cap *= 2;
		}
		self[k] = e->dur_ps;
		stack[depth++] = k;
	}
	free(stack);
	return 0;
}

/* Adds one line's ops to the per-name totals. */
static int add_line(struct hashmap *ops, const struct xs_line *l, int64_t *all_self)
{
	int64_t *self = calloc(l->n_events ? l->n_events : 1, sizeof(*self));
	int ret;

	if (!self)
		return -ENOMEM;
	ret = line_self_times(l, self);
	for (size_t k = 0; !ret && k < l->n_events; k++) {
		const struct xs_event *e = &l->events[k];
		struct op_total *t = hashmap__get(ops, (uintptr_t)e->meta, 0);

		if (!t) {
			t = calloc(1, sizeof(*t));
			if (!t || hashmap__put(ops, (uintptr_t)e->meta, 0, t, NULL)) {
				free(t);
				ret = -ENOMEM;
				break;
			}
			t->first = e;
		}
		t->count++;
		t->self_ps += self[k];
		t->total_ps += e->dur_ps;
		*all_self += self[k];
	}
	free(self);
	return ret;
}

int report_top_ops(struct report_ctx *c)
{
	struct hashmap *ops = hashmap__new();
	struct collect all = { 0 };
	int64_t all_self = 0;
	int ret = 0;

	if (!ops)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_ops_lines && !ret; i++)
		ret = add_line(ops, c->ops_lines[i], &all_self);
	if (ret || !hashmap__count(ops) || !all_self)
		goto out;
	all.v = calloc(hashmap__count(ops), sizeof(*all.v));
	if (!all.v) {
		ret = -ENOMEM;
		goto out;
	}
	hashmap__filter(ops, collect_one, &all);
	array_sort(all.v, all.n, sizeof(*all.v), cmp_self);
	for (size_t i = 0; i < all.n && i < REPORT_TOP_OPS; i++) {
		struct report_op *o = &c->r->top_ops[i];
		const struct xs_event *e = all.v[i]->first;
		const struct xs_stat *cat = xs_event_stat(e, "hlo_category");
		double flops;

		o->name = xs_event_label(e);
		o->category = cat && cat->type == XS_STAT_STR ? cat->s : "";
		o->count = all.v[i]->count;
		o->self_ps = all.v[i]->self_ps;
		o->self_time_pct = 100.0 * all.v[i]->self_ps / all_self;
		o->flops = -1;
		o->flops_per_s = -1;
		if (xs_stat_double(xs_event_stat(e, "flops"), &flops) && all.v[i]->total_ps) {
			o->flops = flops;
			o->flops_per_s = flops * all.v[i]->count / (all.v[i]->total_ps * 1e-12);
		}
		c->r->n_top_ops++;
	}
out:
	free(all.v);
	hashmap__free(ops, free_total);
	return ret;
}
