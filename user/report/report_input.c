// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Input Pipeline: host input work by XProf's categories: reading on
 * demand (on the thread that launches the steps, so the step waits for it),
 * reading ahead (other threads: prefetch), preprocessing, and enqueueing
 * to the device (transfers, infeed); with a row per (thread, op).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/hashmap.h"
#include "report/report_internal.h"

const char *report_input_kind_name(enum report_input_kind k)
{
	switch (k) {
	case INPUT_READ_ON_DEMAND: return "reading on demand";
	case INPUT_READ_AHEAD: return "reading ahead (prefetch)";
	case INPUT_PREPROCESS: return "preprocessing";
	case INPUT_ENQUEUE: return "enqueueing to the device";
	default: return "?";
	}
}

/* The thread that launches the most programs: the step loop. */
static const struct xs_line *find_loop(const struct xs_plane *host)
{
	const struct xs_line *best = NULL;
	size_t best_n = 0;

	for (size_t i = 0; host && i < host->n_lines; i++) {
		size_t n = 0;

		for (size_t k = 0; k < host->lines[i].n_events; k++)
			n += name_is_launch(host->lines[i].events[k].meta->name);
		if (n > best_n) {
			best = &host->lines[i];
			best_n = n;
		}
	}
	return best;
}

static bool classify(const struct report_ctx *c, const struct xs_line *l,
		     const struct xs_event *e, enum report_input_kind *k)
{
	const char *n = e->meta->name;

	if (name_is_h2d(n))
		*k = INPUT_ENQUEUE;
	else if (name_is_file_read(n))
		*k = c->loop && c->loop->id == l->id ? INPUT_READ_ON_DEMAND : INPUT_READ_AHEAD;
	else if (name_is_preprocess(n))
		*k = INPUT_PREPROCESS;
	else
		return false;
	return true;
}

static int add_row(struct report *r, struct hashmap *rows, const struct xs_line *l,
		   bool repeats, const struct xs_event *e, enum report_input_kind k,
		   int64_t self)
{
	uintptr_t idx = (uintptr_t)hashmap__get(rows, (uintptr_t)l, (uintptr_t)e->meta);
	struct report_input_op *row;

	if (!idx) {
		struct report_input_op *v = realloc(r->input_ops,
						    (r->n_input_ops + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->input_ops = v;
		v[r->n_input_ops] = (struct report_input_op){
			.thread = l->display_name, .thread_id = l->id,
			.thread_name_repeats = repeats, .name = e->meta->name, .kind = k,
		};
		idx = ++r->n_input_ops;
		if (hashmap__put(rows, (uintptr_t)l, (uintptr_t)e->meta, (void *)idx, NULL))
			return -ENOMEM;
	}
	row = &r->input_ops[idx - 1];
	row->count++;
	row->total_ps += e->dur_ps;
	row->self_ps += self;
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct report_input_op *x = a, *y = b;

	return x->total_ps > y->total_ps ? -1 : x->total_ps < y->total_ps;
}

static int cmp_line_name(const void *a, const void *b)
{
	const struct xs_line *x = *(const struct xs_line *const *)a;
	const struct xs_line *y = *(const struct xs_line *const *)b;

	return strcmp(x->display_name, y->display_name);
}

/*
 * Which lines of the host share their name with another line (two
 * threads named python3 or pread64 readers), by index; NULL and -ENOMEM,
 * or NULL and 0 for a host with no lines. Sorted, so thousands of threads
 * cost n log n.
 */
static bool *names_repeating(const struct xs_plane *host, int *err)
{
	const struct xs_line **by_name;
	bool *rep;
	size_t n = host ? host->n_lines : 0;

	*err = 0;
	if (!n)
		return NULL;
	rep = calloc(n, sizeof(*rep));
	by_name = calloc(n, sizeof(*by_name));
	if (!rep || !by_name) {
		free(rep);
		free(by_name);
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		by_name[i] = &host->lines[i];
	array_sort(by_name, n, sizeof(*by_name), cmp_line_name);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(by_name[i - 1]->display_name, by_name[i]->display_name) &&
		    by_name[i - 1]->id != by_name[i]->id) {
			rep[by_name[i - 1] - host->lines] = true;
			rep[by_name[i] - host->lines] = true;
		}
	free(by_name);
	return rep;
}

int report_input_pipeline(struct report_ctx *c)
{
	struct report *r = c->r;
	struct hashmap *rows = hashmap__new();
	bool *repeats;
	int ret = 0;

	if (!rows)
		return -ENOMEM;
	repeats = names_repeating(c->host, &ret);
	if (ret) {
		hashmap__free(rows, NULL);
		return ret;
	}
	if (!c->loop)
		c->loop = find_loop(c->host);
	r->loop_thread = c->loop ? c->loop->display_name : "";
	r->loop_thread_id = c->loop ? c->loop->id : 0;
	r->loop_thread_name_repeats = c->loop && repeats && c->loop >= c->host->lines &&
		c->loop < c->host->lines + c->host->n_lines && repeats[c->loop - c->host->lines];
	for (size_t i = 0; c->host && i < c->host->n_lines && !ret; i++) {
		const struct xs_line *l = &c->host->lines[i];
		int64_t *self = calloc(l->n_events ? l->n_events : 1, sizeof(*self));

		if (!self || line_self_times(l, self)) {
			free(self);
			ret = -ENOMEM;
			break;
		}
		for (size_t k = 0; k < l->n_events && !ret; k++) {
			enum report_input_kind kind;

			if (!classify(c, l, &l->events[k], &kind))
				continue;
			r->input_kind_ps[kind] += l->events[k].dur_ps;
			ret = add_row(r, rows, l, repeats[i], &l->events[k], kind, self[k]);
		}
		free(self);
	}
	hashmap__free(rows, NULL);
	free(repeats);
	if (ret)
		return ret;
	array_sort(r->input_ops, r->n_input_ops, sizeof(*r->input_ops), cmp_row);
	if (!r->n_input_ops)
		return report_missing(r, "input pipeline: no host input work in the capture "
				      "(no reads, transfers to the device or tf.data ops)");
	if (!r->input_kind_ps[INPUT_PREPROCESS])
		ret = report_missing(r, "preprocessing: no event in the capture marks it "
				     "(tf.data's Iterator::Map/Batch do); CPU work between "
				     "reads and transfers is not attributed");
	if (!ret && !c->loop)
		ret = report_missing(r, "step loop thread: no host thread launches programs, "
				     "so reads cannot be told on demand from ahead");
	return ret;
}
