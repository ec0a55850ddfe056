// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report for a terminal: sections, tables and a bar chart per step. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

#define CHART_WIDTH 40
#define MAX_STEP_ROWS 20
#define MAX_INPUT_ROWS 15

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

static void print_steps(const struct report *r, FILE *out)
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
		max_ps = fmax(max_ps, r->steps[i].time_ps);
	fprintf(out, "\n  %5s %10s %10s %10s %10s  I input, # compute, . other\n",
		"step", "time ms", "input ms", "compute ms", "other ms");
	for (size_t i = 0; i < r->n_complete && i < MAX_STEP_ROWS; i++) {
		const struct report_step *s = &r->steps[i];

		fprintf(out, "  %5zu %10.3f %10.3f %10.3f %10.3f  ", i, s->time_ps / 1e9,
			s->input_ps / 1e9, s->compute_ps / 1e9, s->other_ps / 1e9);
		bar(out, s, max_ps);
	}
	if (r->n_complete > MAX_STEP_ROWS)
		fprintf(out, "  (%zu more steps; -j lists none of them, only the summary)\n",
			r->n_complete - MAX_STEP_ROWS);
}

static void print_overview(const struct report *r, FILE *out)
{
	fprintf(out, "\nOverview\n");
	pct_or_unknown(out, "input-bound", r->input_bound_pct);
	if (!isnan(r->input_bound_pct)) {
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
	fprintf(out, "  %6s %8s %-14s %12s  %s\n", "self %", "count", "category", "GFLOP/s", "op");
	for (size_t i = 0; i < r->n_top_ops; i++) {
		const struct report_op *o = &r->top_ops[i];
		char rate[32] = "-";

		if (o->flops_per_s >= 0)
			snprintf(rate, sizeof(rate), "%.1f", o->flops_per_s / 1e9);
		fprintf(out, "  %6.1f %8llu %-14.14s %12s  %.80s\n", o->self_time_pct,
			(unsigned long long)o->count, o->category[0] ? o->category : "-", rate,
			o->name);
	}
}

static void print_input(const struct report *r, FILE *out)
{
	int64_t max_in = 0, sum_in = 0;

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
		fprintf(out, "  step loop thread: %s\n", r->loop_thread);
	fprintf(out, "  host input time\n");
	for (int k = 0; k < INPUT_KINDS; k++)
		fprintf(out, "    %-28s %10.3f ms\n", report_input_kind_name(k),
			r->input_kind_ps[k] / 1e9);
	if (!r->n_input_ops)
		return;
	fprintf(out, "\n  %8s %12s %12s  %-26s %-30s %s\n", "count", "total ms", "self ms",
		"category", "thread", "op");
	for (size_t i = 0; i < r->n_input_ops && i < MAX_INPUT_ROWS; i++) {
		const struct report_input_op *o = &r->input_ops[i];

		fprintf(out, "  %8llu %12.3f %12.3f  %-26s %-30.30s %s\n",
			(unsigned long long)o->count, o->total_ps / 1e9, o->self_ps / 1e9,
			report_input_kind_name(o->kind), o->thread, o->name);
	}
	if (r->n_input_ops > MAX_INPUT_ROWS)
		fprintf(out, "  (%zu more rows)\n", r->n_input_ops - MAX_INPUT_ROWS);
}

void report_print_text(const struct report *r, const char *file, FILE *out)
{
	fprintf(out, "acceltrace report: %s\n", file);
	fprintf(out, "\nRun environment\n");
	fprintf(out, "  host                   %s\n", r->host[0] ? r->host : "(unnamed)");
	fprintf(out, "  written by             %s\n", r->producer);
	fprintf(out, "  device                 %s, %zu device plane(s)\n", r->device_type,
		r->n_device_planes);
	fprintf(out, "  events span            %.3f s\n", r->span_ps / 1e12);
	print_steps(r, out);
	print_overview(r, out);
	print_input(r, out);
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
	fprintf(out, "\nRecommendation\n  %s\n", r->recommendation);
}
