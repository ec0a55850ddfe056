// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Track layout (see track_layout.h): select the spans that overlap the
 * window, order them, and place each on the first row where it nests,
 * keeping per row a stack of the clipped ends of the spans open there.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "output/track_layout.h"

#define GROW(arr, cap, need) ARRAY_GROW(arr, cap, need)

struct row {
	uint64_t *ends;		/* stack of open spans' clipped ends */
	size_t depth, cap;
	size_t nspans, first;	/* count; first slot in the row-major order */
};

struct track_layout {
	uint32_t *order;	/* spans in layout order (indices) */
	size_t order_cap;
	/* Each ordered span's row, then (in place) its row-major place. */
	uint32_t *slot;
	size_t slot_cap;
	struct row *rows;
	size_t nrows, nrows_alloc, rows_cap;
	size_t count;
	uint64_t outside;
};

struct track_layout *track_layout__new(void)
{
	return calloc(1, sizeof(struct track_layout));
}

void track_layout__free(struct track_layout *l)
{
	if (!l)
		return;
	free(l->order);
	free(l->slot);
	for (size_t i = 0; i < l->nrows_alloc; i++)
		free(l->rows[i].ends);
	free(l->rows);
	free(l);
}

size_t track_spans_first_start_after(const struct capture_span *sp, size_t n,
				     uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp[mid].start_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct prefix_ctx {
	const struct capture_span *spans;
	uint64_t we;
};

/* Spans starting at or before the window: clipped end descending, stable. */
static int prefix_cmp(const void *a, const void *b, void *arg)
{
	const struct prefix_ctx *ctx = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t ex = span_clip_end(&ctx->spans[x], ctx->we);
	uint64_t ey = span_clip_end(&ctx->spans[y], ctx->we);

	if (ex != ey)
		return ex > ey ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Places a span (clipped [cs, ce]) on the first row where it nests. */
static int place(struct track_layout *l, uint64_t cs, uint64_t ce, uint32_t *out)
{
	struct row *r;
	size_t j;

	for (j = 0; j < l->nrows; j++) {
		r = &l->rows[j];
		while (r->depth && r->ends[r->depth - 1] <= cs)
			r->depth--;
		if (!r->depth || r->ends[r->depth - 1] >= ce)
			break;
	}
	if (j == l->nrows) {
		if (GROW(l->rows, l->rows_cap, l->nrows + 1))
			return -ENOMEM;
		/* Stacks of earlier tracks' rows are kept for reuse. */
		if (l->nrows >= l->nrows_alloc) {
			memset(&l->rows[l->nrows], 0, sizeof(l->rows[0]));
			l->nrows_alloc = l->nrows + 1;
		}
		l->rows[l->nrows].depth = 0;
		l->rows[l->nrows].nspans = 0;
		l->nrows++;
	}
	r = &l->rows[j];
	if (GROW(r->ends, r->cap, r->depth + 1))
		return -ENOMEM;
	r->ends[r->depth++] = ce;
	r->nspans++;
	*out = j;
	return 0;
}

int track_layout__run(struct track_layout *l, const struct capture_span *sp,
		      size_t n, uint64_t ws, uint64_t we)
{
	size_t m, last, norder = 0, first = 0;
	int err;

	l->count = 0;
	l->nrows = 0;
	l->outside = 0;
	/* [0, m) start at or before the window start, [last, n) after its stop. */
	m = track_spans_first_start_after(sp, n, ws);
	last = track_spans_first_start_after(sp, n, we);
	if (m > last)
		m = last;
	if (GROW(l->order, l->order_cap, last ? last : 1))
		return -ENOMEM;
	for (size_t i = 0; i < m; i++) {
		if (sp[i].end_ns >= ws)
			l->order[norder++] = i;
		else
			l->outside++;
	}
	/* Clipped, they all start at the window start: longest first. */
	if (norder > 1)
		qsort_r(l->order, norder, sizeof(l->order[0]), prefix_cmp,
			&(struct prefix_ctx){ .spans = sp, .we = we });
	for (size_t i = m; i < last; i++)
		l->order[norder++] = i;
	l->outside += n - last;
	if (!norder)
		return 0;

	if (GROW(l->slot, l->slot_cap, norder))
		return -ENOMEM;
	for (size_t k = 0; k < norder; k++) {
		const struct capture_span *s = &sp[l->order[k]];

		err = place(l, span_clip_start(s, ws), span_clip_end(s, we),
			    &l->slot[k]);
		if (err) {
			l->nrows = 0;
			return err;
		}
	}
	for (size_t j = 0; j < l->nrows; j++) {
		l->rows[j].first = first;
		first += l->rows[j].nspans;
		l->rows[j].nspans = 0;	/* now the fill count */
	}
	for (size_t k = 0; k < norder; k++) {
		struct row *r = &l->rows[l->slot[k]];

		l->slot[k] = r->first + r->nspans++;
	}
	l->count = norder;
	return 0;
}

size_t track_layout__count(const struct track_layout *l)
{
	return l->count;
}

uint64_t track_layout__outside(const struct track_layout *l)
{
	return l->outside;
}

const uint32_t *track_layout__order(const struct track_layout *l)
{
	return l->order;
}

const uint32_t *track_layout__slot(const struct track_layout *l)
{
	return l->slot;
}

size_t track_layout__rows(const struct track_layout *l)
{
	return l->nrows;
}

void track_layout__row(const struct track_layout *l, size_t j, size_t *first,
		       size_t *count)
{
	if (j >= l->nrows) {
		*first = *count = 0;
		return;
	}
	*first = l->rows[j].first;
	*count = l->rows[j].nspans;
}
