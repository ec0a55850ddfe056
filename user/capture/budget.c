// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The event budget (capture_opts.max_spans): which kinds of span matter
 * least (span_kind_priority), and the prune that drops them, whole kinds
 * first and then the shortest spans of the kind where the budget is
 * reached. capture__add_span prunes at one and a half times the budget to
 * keep memory bounded; capture__finalize prunes to the budget and adds the
 * one warning that says what went.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "capture/capture_internal.h"

static void swap_u64(uint64_t *a, uint64_t *b)
{
	uint64_t t = *a;

	*a = *b;
	*b = t;
}

/* The k-th smallest (0-based) of v[0..n), k < n, reordering v. */
static uint64_t select_kth(uint64_t *v, size_t n, size_t k)
{
	ptrdiff_t lo = 0, hi = n - 1, kk = k;

	while (lo < hi) {
		uint64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi], p;
		ptrdiff_t lt = lo, i = lo, gt = hi;

		/* Median of three, then a three-way partition (many ties). */
		p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
		while (i <= gt) {
			if (v[i] < p)
				swap_u64(&v[lt++], &v[i++]);
			else if (v[i] > p)
				swap_u64(&v[i], &v[gt--]);
			else
				i++;
		}
		if (kk < lt)
			hi = lt - 1;
		else if (kk > gt)
			lo = gt + 1;
		else
			return p;
	}
	return v[kk];
}

static int kind_order_cmp(const void *a, const void *b)
{
	int ka = *(const int *)a, kb = *(const int *)b;
	int pa = span_kind_priority(ka), pb = span_kind_priority(kb);

	if (pa != pb)
		return pa < pb ? -1 : 1;
	return ka - kb;
}

/*
 * Over budget, drop whole kinds from the lowest priority up; the kind where
 * the budget is reached loses only its shortest spans (ties spread evenly
 * over the capture), so what is left of it is the work that took time.
 */
int capture_budget_apply(struct capture *c, bool final)
{
	bool drop_all[SPAN_KIND__COUNT] = {};
	int order[SPAN_KIND__COUNT], partial = -1;
	uint64_t total = 0, excess, partial_n = 0;
	uint64_t threshold = 0, ties_drop = 0, ties_total = 0, tie_r = 0;
	uint64_t dropped_now[SPAN_KIND__COUNT] = {};
	uint32_t drop_mask = 0, touch_mask;
	char msg[1024];
	bool first = true;
	size_t off;
	int k;

	for (k = 0; k < SPAN_KIND__COUNT; k++) {
		total += c->kept[k];
		order[k] = k;
	}
	qsort(order, SPAN_KIND__COUNT, sizeof(order[0]), kind_order_cmp);
	if (total <= c->max_spans) {
		if (final)
			goto warn;	/* earlier prunes dropped spans: say so */
		return 0;
	}
	excess = total - c->max_spans;
	for (int i = 0; i < SPAN_KIND__COUNT && excess; i++) {
		k = order[i];
		if (!c->kept[k])
			continue;
		if (c->kept[k] <= excess) {
			drop_all[k] = true;
			drop_mask |= 1u << k;
			excess -= c->kept[k];
		} else {
			partial = k;
			partial_n = excess;
			excess = 0;
		}
	}

	if (partial >= 0 && partial_n <= c->at_bar[partial]) {
		/* No kept span of the kind is shorter than its bar, and enough
		 * sit at it: they are the cut (what the read below finds). */
		threshold = c->refuse_shorter[partial];
		ties_total = c->at_bar[partial];
		ties_drop = partial_n;
	} else if (partial >= 0) {
		uint64_t *durs = malloc(c->kept[partial] * sizeof(*durs));
		uint64_t below = 0;
		size_t n = 0;

		if (!durs)
			return -ENOMEM;
		for (size_t t = 0; t < c->ntracks; t++) {
			if (!(c->tracks[t].kinds & (1u << partial)))
				continue;
			for (size_t i = 0; i < c->tracks[t].n; i++) {
				const struct capture_span *s = &c->tracks[t].spans[i];

				if (s->kind == partial)
					durs[n++] = span_dur(s);
			}
		}
		/* n == kept[partial] > partial_n >= 1 (the kind is not dropped
		 * whole); the check says so to the compiler too. */
		if (n < partial_n) {
			free(durs);
			return -EIO;
		}
		threshold = select_kth(durs, n, partial_n - 1);
		for (size_t i = 0; i < n; i++) {
			if (durs[i] < threshold)
				below++;
			else if (durs[i] == threshold)
				ties_total++;
		}
		ties_drop = partial_n - below;
		free(durs);
	}

	/*
	 * Only tracks holding a kind that goes are read (a prune holds the
	 * consumer up: with a 1.5 M-span budget, each span read is ~10 ns of
	 * it); a track of one kind that goes whole is emptied unread. The
	 * tracks are still walked in order, so ties fall as they did.
	 */
	touch_mask = drop_mask | (partial >= 0 ? 1u << partial : 0);
	for (size_t t = 0; t < c->ntracks; t++) {
		struct track_store *ts = &c->tracks[t];
		uint32_t kinds = 0;
		size_t w = 0;

		if (!(ts->kinds & touch_mask))
			continue;
		if (!(ts->kinds & ~drop_mask) && !(ts->kinds & (ts->kinds - 1))) {
			dropped_now[__builtin_ctz(ts->kinds)] += ts->n;
			ts->n = 0;
			ts->kinds = 0;
			capture_track_shrink(ts);
			continue;
		}
		for (size_t i = 0; i < ts->n; i++) {
			const struct capture_span *s = &ts->spans[i];
			bool drop = drop_all[s->kind];

			if (s->kind == partial) {
				uint64_t d = span_dur(s);

				if (d < threshold) {
					drop = true;
				} else if (d == threshold) {
					/* Tie i goes when (i + 1) * drop / total
					 * passes an integer: tie_r is i * drop
					 * mod total (drop <= total). */
					tie_r += ties_drop;
					drop = tie_r >= ties_total;
					if (drop)
						tie_r -= ties_total;
				}
			}
			if (drop) {
				dropped_now[s->kind]++;
				continue;
			}
			kinds |= 1u << s->kind;
			if (w != i)
				ts->spans[w] = *s;
			w++;
		}
		ts->n = w;
		ts->kinds = kinds;
		capture_track_shrink(ts);
	}

	for (int i = 0; i < SPAN_KIND__COUNT; i++) {
		k = order[i];
		c->dropped[k] += dropped_now[k];
		c->kept[k] -= dropped_now[k];
		c->total_kept -= dropped_now[k];
		c->refuse_kind[k] |= drop_all[k];
		if (drop_all[k])
			c->at_bar[k] = 0;
	}
	/* The kind cut short keeps nothing under the threshold: that is its
	 * bar now (it is at least the old one), and its ties kept sit at it. */
	if (partial >= 0 && threshold >= c->refuse_shorter[partial]) {
		c->refuse_shorter[partial] = threshold;
		c->at_bar[partial] = ties_total - ties_drop;
	}
	if (!final)
		return 0;
warn:
	/* One warning for the whole capture, however many prunes it took. */
	{
		uint64_t all = 0;

		for (k = 0; k < SPAN_KIND__COUNT; k++)
			all += c->dropped[k];
		if (!all)
			return 0;
		off = snprintf(msg, sizeof(msg),
			       "span budget of %" PRIu64 " exceeded by %" PRIu64 " (%" PRIu64
			       " spans): dropped", c->max_spans, all, c->total_kept + all);
	}
	for (int i = 0; i < SPAN_KIND__COUNT; i++) {
		k = order[i];
		if (!c->dropped[k])
			continue;
		if (off < sizeof(msg))
			off += snprintf(msg + off, sizeof(msg) - off, "%s %" PRIu64 " %s%s",
					first ? "" : ",", c->dropped[k], span_kind_name(k),
					c->kept[k] ? " (the shortest)" : " (all)");
		first = false;
	}
	capture_add_warning(c, msg);
	return 0;
}

/* ---- kind priorities ------------------------------------------------- */

/*
 * What survives a tight budget, least useful first: instants (markers with
 * no duration), then syscall-level detail (ioctls, eventfd waits), host
 * annotations and callbacks, file reads, host waits, transfers, device ops
 * (numerous; a partial cut keeps the long ones), and last the launches,
 * program executions and steps that every analysis starts from.
 */
static const int span_kind_priorities[SPAN_KIND__COUNT] = {
	[SPAN_INSTANT_THREAD] = 0,
	[SPAN_INSTANT_INTERRUPT] = 1,
	[SPAN_INSTANT_COMPLETION] = 2,
	[SPAN_IOCTL] = 3,
	[SPAN_DEVICE_WAIT] = 4,
	[SPAN_CALLBACK] = 5,
	[SPAN_HOST_OTHER] = 6,
	[SPAN_FILE_READ] = 7,
	[SPAN_AWAIT] = 8,
	[SPAN_DEVICE_TRANSFER] = 9,
	[SPAN_H2D] = 10,
	[SPAN_D2H] = 11,
	[SPAN_INFEED] = 12,
	[SPAN_OUTFEED] = 13,
	[SPAN_DEVICE_OP] = 14,
	[SPAN_COMPILE] = 15,
	[SPAN_EXECUTE] = 16,
	[SPAN_DEVICE_MODULE] = 17,
	[SPAN_DEVICE_STEP] = 18,
};

int span_kind_priority(enum span_kind kind)
{
	return (unsigned)kind < SPAN_KIND__COUNT ? span_kind_priorities[kind] : -1;
}
