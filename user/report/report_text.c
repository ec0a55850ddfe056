// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The report for a terminal: sections, tables and a bar chart per step.
 * Table columns are as wide as their content; names in the last column
 * are fitted to what is left of the line (report_fit_name), never cut
 * without a mark.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

#define CHART_WIDTH 40
#define MAX_INPUT_ROWS 15
/* The least a fitted name is given, however narrow the line. */
#define MIN_NAME_COLS 24
#define NAME_BUF 1024

static size_t max_sz(size_t a, size_t b)
{
	return a > b ? a : b;
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* Room for the last column after @used columns; 0: no limit. */
static size_t room(const struct report_text_opts *o, size_t used)
{
	if (!o->width)
		return 0;
	return o->width > used + MIN_NAME_COLS ? o->width - used : MIN_NAME_COLS;
}

/* printf's %-*s counts bytes: pad by characters so UTF-8 names line up. */
static void put_padded(FILE *out, const char *s, size_t cols)
{
	size_t n = report_text_cols(s);

	fputs(s, out);
	for (; n < cols; n++)
		fputc(' ', out);
}

/*
 * A thread's label, with its id when another thread has the same name:
 * "python3 (pid 469, tid 570)" for acceltrace's "python3 (pid 469)",
 * "NAME (tid N)" otherwise.
 */
static const char *thread_label(const char *name, int64_t id, bool repeats, char *buf,
				size_t size)
{
	size_t n = strlen(name);
	const char *pid = strstr(name, " (pid ");

	if (!repeats)
		return name;
	if (pid && n && name[n - 1] == ')' && !strchr(pid + 2, '('))
		snprintf(buf, size, "%.*s, tid %" PRId64 ")", (int)(n - 1), name, id);
	else
		snprintf(buf, size, "%s (tid %" PRId64 ")", name, id);
	return buf;
}

static void pct_or_unknown(FILE *out, const char *what, double v)
{
	if (isnan(v))
		fprintf(out, "  %-22s unknown\n", what);
	else
		fprintf(out, "  %-22s %.1f%%\n", what, v);
}

static const char *verdict(double pct)
{
	if (pct >= REPORT_HIGHLY_INPUT_BOUND_PCT)
		return "HIGHLY input-bound (>= 20%)";
	if (pct >= REPORT_MODERATELY_INPUT_BOUND_PCT)
		return "moderately input-bound (>= 5%)";
	return "not input-bound (< 5%)";
}

/* A bar: input 'I', compute '#', other '.', in proportion to the step. */
static void bar(FILE *out, const struct report_step *s, double max_ps)
{
	int w = (int)lround(CHART_WIDTH * s->time_ps / max_ps);
	int in = (int)lround(w * (double)s->input_ps / s->time_ps);
	int comp = (int)lround(w * (double)s->compute_ps / s->time_ps);

	if (in + comp > w)
		comp = w - in;
	fputc('|', out);
	for (int i = 0; i < w; i++)
		fputc(i < in ? 'I' : i < in + comp ? '#' : '.', out);
	fputc('\n', out);
}

static void print_steps(const struct report *r, const struct report_text_opts *o, FILE *out)
{
	double max_ps = 0;

	fprintf(out, "\nSteps\n");
	fprintf(out, "  found by               %s\n", r->step_source);
	if (r->step_program[0])
		fprintf(out, "  program                %s\n", r->step_program);
	if (r->step_device[0])
		fprintf(out, "  measured on            %s\n", r->step_device);
	fprintf(out, "  steps                  %zu (%zu measured: seen from their start to the next's)\n",
		r->n_steps, r->n_complete);
	if (!r->n_complete)
		return;
	fprintf(out, "  step time              avg %.3f ms, stddev %.3f ms, min %.3f ms, max %.3f ms\n",
		r->avg_ms, r->stddev_ms, r->min_ms, r->max_ms);
	for (size_t i = 0; i < r->n_complete; i++)
		max_ps = max_sz(max_ps, r->steps[i].time_ps);
	fprintf(out, "\n  %5s %10s %10s %10s %10s  I input, # compute, . other\n",
		"step", "time ms", "input ms", "compute ms", "other ms");
	for (size_t i = 0; i < r->n_complete && i < o->max_steps; i++) {
		const struct report_step *s = &r->steps[i];

		fprintf(out, "  %5zu %10.3f %10.3f %10.3f %10.3f  ", i, s->time_ps / 1e9,
			s->input_ps / 1e9, s->compute_ps / 1e9, s->other_ps / 1e9);
		bar(out, s, max_ps);
	}
	if (r->n_complete > o->max_steps)
		fprintf(out, "  (%zu more %s: --steps all shows every one, -j lists them in steps.list)\n",
			r->n_complete - o->max_steps,
			plural(r->n_complete - o->max_steps, "step", "steps"));
}

static void print_top_ops(const struct report *r, const struct report_text_opts *o, FILE *out)
{
	char rates[REPORT_TOP_OPS][32], counts[REPORT_TOP_OPS][24], buf[NAME_BUF];
	size_t w_count = strlen("count"), w_cat = strlen("category"), w_rate = strlen("GFLOP/s");
	size_t w_name;

	for (size_t i = 0; i < r->n_top_ops; i++) {
		const struct report_op *op = &r->top_ops[i];

		snprintf(rates[i], sizeof(rates[i]), "-");
		if (op->flops_per_s >= 0)
			snprintf(rates[i], sizeof(rates[i]), "%.1f", op->flops_per_s / 1e9);
		snprintf(counts[i], sizeof(counts[i]), "%" PRIu64, op->count);
		w_count = max_sz(w_count, strlen(counts[i]));
		w_rate = max_sz(w_rate, strlen(rates[i]));
		w_cat = max_sz(w_cat, report_text_cols(op->category));
	}
	if (o->width && w_cat > 24)
		w_cat = 24;
	w_name = room(o, 2 + 6 + 1 + w_count + 1 + w_cat + 1 + w_rate + 2);
	fprintf(out, "  %6s %*s ", "self %", (int)w_count, "count");
	put_padded(out, "category", w_cat);
	fprintf(out, " %*s  op\n", (int)w_rate, "GFLOP/s");
	for (size_t i = 0; i < r->n_top_ops; i++) {
		const struct report_op *op = &r->top_ops[i];

		fprintf(out, "  %6.1f %*s ", op->self_time_pct, (int)w_count, counts[i]);
		put_padded(out, report_fit_name(op->category[0] ? op->category : "-", w_cat,
						buf, sizeof(buf)), w_cat);
		fprintf(out, " %*s  %s\n", (int)w_rate, rates[i],
			report_fit_name(op->name, w_name, buf, sizeof(buf)));
	}
}

/* What was still running at the stop leads when the device is stuck in
 * it; otherwise a line under the losses says it (report_losses). */
static void print_running(const struct report *r, FILE *out)
{
	if (!r->stuck)
		return;
	fprintf(out, "\nSTILL RUNNING when the window ended\n");
	for (size_t i = 0; i < r->n_running; i++) {
		const struct report_running *x = &r->running[i];

		if (x->running_ps < REPORT_STUCK_MIN_PS)
			break;
		fprintf(out, "  %s has been in %s%s%s%s for %.1f s, and still is\n", x->plane,
			x->name, x->program[0] ? " (program " : "", x->program,
			x->program[0] ? ")" : "", x->running_ps / 1e12);
	}
}

/* With no step time: which threads waited, and how long. */
static void print_waits(const struct report *r, FILE *out)
{
	if (!r->n_waiting)
		return;
	fprintf(out, "\nWhat the threads did (no step says it)\n");
	for (size_t i = 0; i < r->n_waiting; i++) {
		const struct report_thread_wait *w = &r->waiting[i];

		fprintf(out, "  %-24s tid %-8lld off CPU %5.1f%% of the window, mostly %s "
			"(%llu %s)\n", w->thread, (long long)w->thread_id, w->off_cpu_pct, w->how,
			(unsigned long long)w->waits, plural(w->waits, "wait", "waits"));
	}
}

static void print_overview(const struct report *r, const struct report_text_opts *o, FILE *out)
{
	if (r->verdict_withheld)
		fprintf(out, "\nOverview (NOT the job's: of what the capture kept)\n");
	else
		fprintf(out, "\nOverview\n");
	pct_or_unknown(out, "input-bound", r->input_bound_pct);
	if (!isnan(r->input_bound_pct)) {
		if (!r->verdict_withheld)
			fprintf(out, "    %s\n", verdict(r->input_bound_pct));
		fprintf(out, "    device in input ops (infeed, H2D copies)   %.3f ms\n",
			r->input_device_ops_ps / 1e9);
		fprintf(out, "    device idle while host input arrived       %.3f ms\n",
			r->input_idle_ps / 1e9);
	}
	pct_or_unknown(out, "compute", r->compute_pct);
	pct_or_unknown(out, "other (idle, not input)", r->other_pct);
	pct_or_unknown(out, "device idle", r->device_idle_pct);
	pct_or_unknown(out, "host idle", r->host_idle_pct);
	fprintf(out, "\nTop device ops by self time\n");
	if (!r->n_top_ops) {
		fprintf(out, "  none in the capture\n");
		return;
	}
	print_top_ops(r, o, out);
}

static void print_input_ops(const struct report *r, const struct report_text_opts *o,
			    FILE *out)
{
	size_t rows = r->n_input_ops < MAX_INPUT_ROWS ? r->n_input_ops : MAX_INPUT_ROWS;
	size_t w_count = strlen("count"), w_total = strlen("total ms"), w_self = strlen("self ms");
	size_t w_kind = strlen("category"), w_thread = strlen("thread"), w_op = 0, w_name, cap;
	char label[NAME_BUF], buf[NAME_BUF], num[48];

	for (size_t i = 0; i < rows; i++) {
		const struct report_input_op *op = &r->input_ops[i];

		w_count = max_sz(w_count, (size_t)snprintf(num, sizeof(num), "%" PRIu64, op->count));
		w_total = max_sz(w_total, (size_t)snprintf(num, sizeof(num), "%.3f", op->total_ps / 1e9));
		w_self = max_sz(w_self, (size_t)snprintf(num, sizeof(num), "%.3f", op->self_ps / 1e9));
		w_kind = max_sz(w_kind, strlen(report_input_kind_name(op->kind)));
		w_thread = max_sz(w_thread, report_text_cols(thread_label(op->thread, op->thread_id,
				op->thread_name_repeats, label, sizeof(label))));
		w_op = max_sz(w_op, report_text_cols(op->name));
	}
	/* The thread takes what the numbers leave, less room for the op. */
	cap = room(o, 2 + w_count + 1 + w_total + 1 + w_self + 2 + w_kind + 1);
	w_op = w_op < MIN_NAME_COLS ? w_op : MIN_NAME_COLS;
	if (cap && w_thread + 1 + w_op > cap)
		w_thread = max_sz(strlen("thread"), cap > w_op + 1 ? cap - w_op - 1 : 0);
	w_name = room(o, 2 + w_count + 1 + w_total + 1 + w_self + 2 + w_kind + 1 + w_thread + 1);
	fprintf(out, "\n  %*s %*s %*s  ", (int)w_count, "count", (int)w_total, "total ms",
		(int)w_self, "self ms");
	put_padded(out, "category", w_kind);
	fputc(' ', out);
	put_padded(out, "thread", w_thread);
	fprintf(out, " op\n");
	for (size_t i = 0; i < rows; i++) {
		const struct report_input_op *op = &r->input_ops[i];
		const char *t = thread_label(op->thread, op->thread_id, op->thread_name_repeats,
					     label, sizeof(label));

		fprintf(out, "  %*" PRIu64 " %*.3f %*.3f  ", (int)w_count, op->count,
			(int)w_total, op->total_ps / 1e9, (int)w_self, op->self_ps / 1e9);
		put_padded(out, report_input_kind_name(op->kind), w_kind);
		fputc(' ', out);
		put_padded(out, report_fit_ends(t, o->width ? w_thread : 0, buf, sizeof(buf)),
			   w_thread);
		fprintf(out, " %s\n", report_fit_name(op->name, w_name, buf, sizeof(buf)));
	}
	if (r->n_input_ops > rows)
		fprintf(out, "  (%zu more %s; -j lists every one in input_pipeline.ops)\n",
			r->n_input_ops - rows, plural(r->n_input_ops - rows, "row", "rows"));
}

static void print_input(const struct report *r, const struct report_text_opts *o, FILE *out)
{
	int64_t max_in = 0, sum_in = 0;
	char label[NAME_BUF];

	fprintf(out, "\nInput pipeline\n");
	for (size_t i = 0; i < r->n_complete; i++) {
		sum_in += r->steps[i].input_ps;
		if (r->steps[i].input_ps > max_in)
			max_in = r->steps[i].input_ps;
	}
	if (r->n_complete)
		fprintf(out, "  device waiting for input per step: avg %.3f ms, max %.3f ms\n",
			sum_in / 1e9 / r->n_complete, max_in / 1e9);
	if (r->loop_thread[0])
		fprintf(out, "  step loop thread: %s\n",
			thread_label(r->loop_thread, r->loop_thread_id,
				     r->loop_thread_name_repeats, label, sizeof(label)));
	fprintf(out, "  host input time\n");
	for (int k = 0; k < INPUT_KINDS; k++)
		fprintf(out, "    %-28s %10.3f ms\n", report_input_kind_name(k),
			r->input_kind_ps[k] / 1e9);
	if (r->n_input_ops)
		print_input_ops(r, o, out);
}

/* Seconds for a reader: "2.5 h", "12 min", "40 s". */
static const char *human_duration(double s, char *buf, size_t size)
{
	if (s >= 3600)
		snprintf(buf, size, "%.1f h", s / 3600);
	else if (s >= 60)
		snprintf(buf, size, "%.1f min", s / 60);
	else
		snprintf(buf, size, "%.3f s", s);
	return buf;
}

/* Bytes for a reader: "1.50 GiB". */
static const char *human_bytes(double b, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double a = fabs(b);
	size_t u = 0;

	while (a >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		a /= 1024;
		b /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.2f %s" : "%.0f %s", b, units[u]);
	return buf;
}

static void print_growth(FILE *out, const char *what, const char *per,
			 const struct report_mem_fit *f)
{
	char b[32];

	/* NaN: too few points for a line (fit_line), or all at one time. */
	if (isnan(f->slope)) {
		fprintf(out, "    %-20s unknown (%zu %s: too few)\n", what, f->points,
			plural(f->points, "point", "points"));
		return;
	}
	if (isnan(f->r2)) {
		fprintf(out, "    %-20s none: flat over %zu points\n", what, f->points);
		return;
	}
	/* Under half a byte is none: no "-0 B". */
	fprintf(out, "    %-20s %s%s/%s (R^2 %.2f over %zu points)%s\n", what,
		f->slope >= 0.5 ? "+" : "",
		human_bytes(fabs(f->slope) < 0.5 ? 0 : f->slope, b, sizeof(b)), per,
		isnan(f->r2) ? 1.0 : f->r2, f->points,
		f->leak ? ": LEAK, steady growth" : "");
}

static void print_mem_largest(const struct report_mem_device *d, int64_t origin, FILE *out)
{
	char b[32];

	if (!d->n_largest && d->peak_unattributed_bytes <= 0)
		return;
	fprintf(out, "    largest live allocations at the peak\n");
	for (size_t i = 0; i < d->n_largest; i++) {
		const struct report_mem_alloc *a = &d->largest[i];

		fprintf(out, "      %12s  0x%-14" PRIx64 " at %.3f ms  %s%s%s%s\n",
			human_bytes((double)a->bytes, b, sizeof(b)), a->addr,
			((double)a->time_ps - (double)origin) / 1e9, a->api[0] ? a->api : "-",
			a->data_type[0] || a->shapes[0] ? " " : "", a->data_type, a->shapes);
	}
	if (d->peak_unattributed_bytes > 0)
		fprintf(out, "      %12s  made before the window: not known one by one\n",
			human_bytes((double)d->peak_unattributed_bytes, b, sizeof(b)));
}

static void print_mem_device(const struct report *r, const struct report_mem_device *d,
			     FILE *out)
{
	int64_t origin = r->span_start_ps;
	char b1[32], b2[32], b3[32], step[32] = "";

	fprintf(out, "  %s", d->allocator_name);
	if (d->pid >= 0)
		fprintf(out, ", pid %" PRId64, d->pid);
	if (d->device_ordinal >= 0)
		fprintf(out, ", device %" PRId64, d->device_ordinal);
	fprintf(out, "\n");
	if (d->reserved_not_tensors)
		fprintf(out, "    memory the process's allocator reserved (PyTorch's caching "
			"allocator, XLA's BFC): not tensors\n");
	if (d->peak_step >= 0)
		snprintf(step, sizeof(step), ", step %" PRId64, d->peak_step);
	if (d->peak_bytes >= 0)
		fprintf(out, "    %-20s %s (%" PRId64 " B) at %.3f ms%s\n", "peak in the window",
			human_bytes((double)d->peak_bytes, b1, sizeof(b1)), d->peak_bytes,
			((double)d->peak_time_ps - (double)origin) / 1e9, step);
	fprintf(out, "    %-20s start %s, end %s\n", "in use",
		d->in_use_start_bytes >= 0 ? human_bytes((double)d->in_use_start_bytes, b1, sizeof(b1)) :
					     "unknown",
		d->in_use_end_bytes >= 0 ? human_bytes((double)d->in_use_end_bytes, b2, sizeof(b2)) :
					   "unknown");
	print_growth(out, "growth per step", "step", &d->growth);
	if (d->churn_steps)
		fprintf(out, "    %-20s %.1f allocations (%s), %.1f frees (%s), over %zu %s\n",
			"churn per step", d->allocs_per_step,
			human_bytes(d->alloc_bytes_per_step, b1, sizeof(b1)), d->frees_per_step,
			human_bytes(d->free_bytes_per_step, b2, sizeof(b2)), d->churn_steps,
			plural(d->churn_steps, "step", "steps"));
	fprintf(out, "    %-20s %" PRIu64 " %s (%s), %" PRIu64 " %s (%s)\n", "in the window",
		d->allocs, plural(d->allocs, "allocation", "allocations"),
		human_bytes((double)d->alloc_bytes, b1, sizeof(b1)), d->frees,
		plural(d->frees, "free", "frees"), human_bytes((double)d->free_bytes, b2, sizeof(b2)));
	if (d->frees_unknown_size)
		fprintf(out, "    %" PRIu64 " %s of allocations made before the probes: counted, "
			"sizes unknown (not in the freed bytes)\n", d->frees_unknown_size,
			plural(d->frees_unknown_size, "free", "frees"));
	if (d->untracked)
		fprintf(out, "    %" PRIu64 " %s (%s) past the kernel's live-allocation table: "
			"counted, not in use; in use and growth are short by up to that\n",
			d->untracked, plural(d->untracked, "allocation", "allocations"),
			human_bytes((double)d->untracked_bytes, b1, sizeof(b1)));
	print_mem_largest(d, origin, out);
	if (!d->timeline_points)
		return;
	if (d->timeline_start_ps < 0)
		fprintf(out, "    timeline from %s before the window:",
			human_duration(-(double)d->timeline_start_ps / 1e12, b3, sizeof(b3)));
	else
		fprintf(out, "    timeline from the window's start:");
	fprintf(out, " %zu %s, %g s to %g s each\n", d->timeline_points, plural(d->timeline_points, "point", "points"),
		d->timeline_finest_ns / 1e9, d->timeline_coarsest_ns / 1e9);
	fprintf(out, "    %-20s first %s, last %s, peak %s\n", "",
		human_bytes((double)d->timeline_first_bytes, b1, sizeof(b1)),
		human_bytes((double)d->timeline_last_bytes, b2, sizeof(b2)),
		human_bytes((double)d->timeline_peak_bytes, b3, sizeof(b3)));
	if (d->timeline_too_short)
		fprintf(out, "    %-20s unknown: the timeline covers %s; a rate an hour "
			"needs %s\n", "growth per hour",
			human_duration((double)(d->timeline_end_ps - d->timeline_start_ps) / 1e12,
				       b1, sizeof(b1)),
			human_duration(REPORT_MEM_RATE_MIN_SPAN_NS / 1e9, b2, sizeof(b2)));
	else
		print_growth(out, "growth per hour", "h", &d->timeline_growth);
}

/* A growth a reader can take in: "+4.00 KiB/step", "none", "unknown". */
static const char *growth_words(const struct report_mem_fit *f, const char *per, char *buf,
				size_t size)
{
	char b[32];

	if (isnan(f->slope))
		snprintf(buf, size, "unknown");
	else if (isnan(f->r2) || fabs(f->slope) < 0.5)
		snprintf(buf, size, "none");
	else if (f->r2 < REPORT_MEM_LEAK_MIN_R2)
		snprintf(buf, size, "no steady growth");
	else
		snprintf(buf, size, "%s%s/%s%s", f->slope > 0 ? "+" : "",
			 human_bytes(f->slope, b, sizeof(b)), per,
			 f->leak ? " (LEAK, steady growth)" : "");
	return buf;
}

/* Two lines an allocator: where it peaked, in use, growth and a leak. */
static void print_mem_summary(const struct report *r, const struct report_mem_device *d,
			      FILE *out)
{
	char b1[32], b2[32], g[96], gh[96];

	fprintf(out, "  %s", d->allocator_name);
	if (d->pid >= 0)
		fprintf(out, ", pid %" PRId64, d->pid);
	fprintf(out, "\n    ");
	if (d->peak_bytes >= 0) {
		fprintf(out, "peak %s at %.3f ms", human_bytes((double)d->peak_bytes, b1, sizeof(b1)),
			((double)d->peak_time_ps - (double)r->span_start_ps) / 1e9);
		if (d->peak_step >= 0)
			fprintf(out, " (step %" PRId64 ")", d->peak_step);
		fprintf(out, "; ");
	}
	if (d->in_use_start_bytes >= 0 && d->in_use_end_bytes >= 0)
		fprintf(out, "in use %s -> %s; ",
			human_bytes((double)d->in_use_start_bytes, b1, sizeof(b1)),
			human_bytes((double)d->in_use_end_bytes, b2, sizeof(b2)));
	fprintf(out, "growth %s", growth_words(&d->growth, "step", g, sizeof(g)));
	/* The timeline's rate only when it is a leak: the detail has the rest. */
	if (d->timeline_points && !d->timeline_too_short && d->timeline_growth.leak)
		fprintf(out, "; since the process began %s",
			growth_words(&d->timeline_growth, "h", gh, sizeof(gh)));
	fprintf(out, "\n");
	if (d->untracked)
		fprintf(out, "    %" PRIu64 " %s past the kernel's live-allocation table: in use "
			"short by up to %s\n", d->untracked,
			plural(d->untracked, "allocation", "allocations"),
			human_bytes((double)d->untracked_bytes, b1, sizeof(b1)));
}

static void print_memory(const struct report *r, const struct report_text_opts *o, FILE *out)
{
	if (!r->n_mem)
		return;
	if (!o->memory_detail) {
		fprintf(out, "\nDevice memory (report --memory: the largest allocations at the "
			"peak, churn, timelines)\n");
		for (size_t i = 0; i < r->n_mem; i++)
			print_mem_summary(r, &r->mem[i], out);
		return;
	}
	fprintf(out, "\nDevice memory\n");
	for (size_t i = 0; i < r->n_mem; i++)
		print_mem_device(r, &r->mem[i], out);
}

/* "with the threads of 3 child processes without a device (12, 13, 14)" */
static void print_children(const struct report *r, FILE *out)
{
	size_t shown = r->n_children < sizeof(r->children) / sizeof(r->children[0]) ?
		       r->n_children : sizeof(r->children) / sizeof(r->children[0]);

	if (!r->n_children)
		return;
	fprintf(out, "  with the threads of    %zu child %s without a device (", r->n_children,
		plural(r->n_children, "process", "processes"));
	for (size_t i = 0; i < shown; i++)
		fprintf(out, "%s%lld", i ? ", " : "", (long long)r->children[i]);
	fprintf(out, "%s): its input workers\n", shown < r->n_children ? ", ..." : "");
}

void report_print_text(const struct report *r, const char *file,
		       const struct report_text_opts *o, FILE *out)
{
	fprintf(out, "acceltrace report: %s\n", file);
	/* Why it was taken (a rule that fired names what it saw), then the
	 * verdict: a stuck device, the advice, the overview; then what they
	 * rest on. */
	if (r->capture_reason[0])
		fprintf(out, "\nCaptured because\n  %s\n", r->capture_reason);
	print_running(r, out);
	fprintf(out, "\nRecommendation\n  %s\n", r->recommendation);
	print_waits(r, out);
	print_overview(r, o, out);
	fprintf(out, "\nRun environment\n");
	fprintf(out, "  host                   %s\n", r->host[0] ? r->host : "(unnamed)");
	if (r->pid > 0) {
		fprintf(out, "  process                %lld (%s): its devices, threads and memory "
			"only; %zu %s in the capture drive a device\n", (long long)r->pid,
			r->process_name[0] ? r->process_name : "unnamed", r->n_processes,
			plural(r->n_processes, "process", "processes"));
		if (r->container[0] || r->pod[0])
			fprintf(out, "  container              %s%s%s\n",
				r->container[0] ? r->container : "(none)",
				r->pod[0] ? ", pod " : "", r->pod);
		print_children(r, out);
	}
	else if (r->n_processes > 1)
		fprintf(out, "  processes              %zu drive a device: this report mixes them "
			"(report --pid PID for one)\n", r->n_processes);
	fprintf(out, "  written by             %s\n", r->producer);
	fprintf(out, "  device                 %s, %zu device %s\n", r->device_type,
		r->n_device_planes, plural(r->n_device_planes, "plane", "planes"));
	/* The same words as record's summary. */
	if (r->window_ps >= 0)
		fprintf(out, "  window                 %.3f s (its start to its stop)\n",
			r->window_ps / 1e12);
	fprintf(out, "  events span            %.3f s (first event's start to last event's end)\n",
		r->span_ps / 1e12);
	print_steps(r, o, out);
	print_input(r, o, out);
	print_memory(r, o, out);
	fprintf(out, "\nWhat the capture lost\n");
	if (!r->n_losses)
		fprintf(out, "  nothing recorded as dropped, clipped or open\n");
	for (size_t i = 0; i < r->n_losses; i++)
		fprintf(out, "  - %s\n", r->losses[i]);
	if (r->n_missing) {
		fprintf(out, "\nWhat the capture cannot tell\n");
		for (size_t i = 0; i < r->n_missing; i++)
			fprintf(out, "  - %s\n", r->missing[i]);
	}
}
