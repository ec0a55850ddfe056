// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A multi-host session's hosts compared (see report_fleet.h). The slowest
 * host is chosen by median step time, not mean: one checkpoint or
 * compilation step makes a host's mean jump, not its median. It is a
 * straggler when its median is more than FLEET_STRAGGLER_MIN_PCT over the
 * median of the other hosts' medians and that gap is more than the
 * hosts' own step-time noise (the median of their robust stddevs): a
 * fleet of equal hosts whose steps jitter names no straggler.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/json_writer.h"
#include "report/report_fleet.h"

struct fleet *fleet__new(const char *session)
{
	struct fleet *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->session = strdup(session ? session : "");
	if (!f->session) {
		free(f);
		return NULL;
	}
	f->slowest = f->fastest = f->straggler = -1;
	return f;
}

static void host_free(struct fleet_host *h)
{
	free(h->host);
	free(h->file);
	free(h->step_ns);
	free(h->step_num);
}

void fleet__free(struct fleet *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_hosts; i++)
		host_free(&f->hosts[i]);
	free(f->hosts);
	free(f->session);
	free(f);
}

int fleet__add_host(struct fleet *f, const char *host, const char *file,
		    const int64_t *step_ns, const int64_t *step_num, size_t n_steps,
		    double device_idle_pct, double input_bound_pct)
{
	struct fleet_host *h;

	if (ARRAY_GROW(f->hosts, f->hosts_cap, f->n_hosts + 1))
		return -ENOMEM;
	h = &f->hosts[f->n_hosts];
	memset(h, 0, sizeof(*h));
	h->host = strdup(host);
	h->file = strdup(file);
	h->step_ns = malloc((n_steps ? n_steps : 1) * sizeof(*h->step_ns));
	if (step_num)
		h->step_num = malloc((n_steps ? n_steps : 1) * sizeof(*h->step_num));
	if (!h->host || !h->file || !h->step_ns || (step_num && !h->step_num)) {
		host_free(h);
		return -ENOMEM;
	}
	if (n_steps)
		memcpy(h->step_ns, step_ns, n_steps * sizeof(*step_ns));
	if (step_num && n_steps)
		memcpy(h->step_num, step_num, n_steps * sizeof(*step_num));
	h->n_steps = n_steps;
	h->device_idle_pct = device_idle_pct;
	h->input_bound_pct = input_bound_pct;
	h->mean_ns = h->median_ns = h->p90_ns = h->noise_ns = NAN;
	f->n_hosts++;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The q-quantile of sorted v, interpolated between ranks (numpy's default). */
static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t lo = (size_t)pos;

	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (pos - (double)lo) * (v[lo + 1] - v[lo]);
}

static int host_stats(struct fleet_host *h)
{
	double *v, sum = 0;

	if (!h->n_steps)
		return 0;
	v = malloc(h->n_steps * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < h->n_steps; i++) {
		v[i] = (double)h->step_ns[i];
		sum += v[i];
	}
	qsort(v, h->n_steps, sizeof(*v), cmp_double);
	h->mean_ns = sum / (double)h->n_steps;
	h->median_ns = quantile(v, h->n_steps, 0.5);
	h->p90_ns = quantile(v, h->n_steps, 0.9);
	h->noise_ns = (quantile(v, h->n_steps, 0.75) - quantile(v, h->n_steps, 0.25)) / 1.349;
	free(v);
	return 0;
}

/* Median of the hosts' values get(h) over hosts with steps, but skip. */
static double median_of(const struct fleet *f, int skip, double *scratch,
			double (*get)(const struct fleet_host *h))
{
	size_t n = 0;

	for (size_t i = 0; i < f->n_hosts; i++)
		if ((int)i != skip && f->hosts[i].n_steps)
			scratch[n++] = get(&f->hosts[i]);
	if (!n)
		return NAN;
	qsort(scratch, n, sizeof(*scratch), cmp_double);
	return quantile(scratch, n, 0.5);
}

static double get_median(const struct fleet_host *h) { return h->median_ns; }
static double get_noise(const struct fleet_host *h) { return h->noise_ns; }

/* The index of step number num in h, or -1 (h's numbers are few: linear). */
static long step_index(const struct fleet_host *h, int64_t num)
{
	for (size_t i = 0; i < h->n_steps; i++)
		if (h->step_num[i] == num)
			return (long)i;
	return -1;
}

/*
 * Steps aligned by number: on each step number every host with steps
 * measured, which host took longest. Without numbers on every such host,
 * nothing is aligned. Quadratic in steps per host, which are at most a
 * few thousand in a capture window.
 */
static void align_steps(struct fleet *f)
{
	const struct fleet_host *ref = NULL;

	for (size_t i = 0; i < f->n_hosts; i++) {
		if (!f->hosts[i].n_steps)
			continue;
		if (!f->hosts[i].step_num)
			return;
		if (!ref)
			ref = &f->hosts[i];
	}
	if (!ref || f->n_with_steps < 2)
		return;
	for (size_t k = 0; k < ref->n_steps; k++) {
		int64_t worst = -1;
		int who = -1;
		bool all = true;

		for (size_t i = 0; i < f->n_hosts && all; i++) {
			const struct fleet_host *h = &f->hosts[i];
			long j;

			if (!h->n_steps)
				continue;
			j = step_index(h, ref->step_num[k]);
			if (j < 0) {
				all = false;
			} else if (h->step_ns[j] > worst) {
				worst = h->step_ns[j];
				who = (int)i;
			}
		}
		if (!all)
			continue;
		f->n_aligned++;
		f->hosts[who].slowest_steps++;
	}
}

int fleet__compute(struct fleet *f)
{
	double *scratch, sum = 0, sq = 0;
	int ret = 0;

	f->n_with_steps = 0;
	f->n_aligned = 0;
	f->slowest = f->fastest = f->straggler = -1;
	f->others_median_ns = f->gap_ns = f->gap_pct = f->noise_ns = NAN;
	f->spread_ns = f->cv = NAN;
	for (size_t i = 0; i < f->n_hosts && !ret; i++) {
		f->hosts[i].slowest_steps = 0;
		ret = host_stats(&f->hosts[i]);
	}
	if (ret)
		return ret;
	scratch = malloc((f->n_hosts ? f->n_hosts : 1) * sizeof(*scratch));
	if (!scratch)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_hosts; i++) {
		const struct fleet_host *h = &f->hosts[i];

		if (!h->n_steps)
			continue;
		f->n_with_steps++;
		sum += h->mean_ns;
		if (f->slowest < 0 || h->median_ns > f->hosts[f->slowest].median_ns)
			f->slowest = (int)i;
		if (f->fastest < 0 || h->median_ns < f->hosts[f->fastest].median_ns)
			f->fastest = (int)i;
	}
	if (f->n_with_steps) {
		double mean = sum / (double)f->n_with_steps, lo = INFINITY, hi = -INFINITY;

		for (size_t i = 0; i < f->n_hosts; i++) {
			const struct fleet_host *h = &f->hosts[i];

			if (!h->n_steps)
				continue;
			sq += (h->mean_ns - mean) * (h->mean_ns - mean);
			lo = fmin(lo, h->mean_ns);
			hi = fmax(hi, h->mean_ns);
		}
		f->spread_ns = hi - lo;
		f->cv = mean > 0 ? sqrt(sq / (double)f->n_with_steps) / mean : NAN;
		f->noise_ns = median_of(f, -1, scratch, get_noise);
	}
	if (f->n_with_steps >= 2) {
		f->others_median_ns = median_of(f, f->slowest, scratch, get_median);
		f->gap_ns = f->hosts[f->slowest].median_ns - f->others_median_ns;
		f->gap_pct = f->others_median_ns > 0 ?
			     100.0 * f->gap_ns / f->others_median_ns : NAN;
		if (f->gap_pct > FLEET_STRAGGLER_MIN_PCT && f->gap_ns > f->noise_ns)
			f->straggler = f->slowest;
	}
	free(scratch);
	align_steps(f);
	return 0;
}

static void pct_cell(FILE *out, double v)
{
	if (isnan(v))
		fprintf(out, " %12s", "unknown");
	else
		fprintf(out, " %11.1f%%", v);
}

static void verdict(const struct fleet *f, FILE *out)
{
	const struct fleet_host *s = f->slowest >= 0 ? &f->hosts[f->slowest] : NULL;

	fprintf(out, "  verdict                ");
	if (f->n_with_steps < 2) {
		fprintf(out, "no comparison: %zu %s with steps (two are needed)\n",
			f->n_with_steps, f->n_with_steps == 1 ? "host" : "hosts");
	} else if (f->straggler >= 0) {
		fprintf(out, "%s is a straggler: its median step is %.3f ms (%.1f%%) longer "
			"than the other hosts'\n", s->host, f->gap_ns / 1e6, f->gap_pct);
	} else {
		fprintf(out, "no straggler: the slowest host, %s, is %.3f ms (%.1f%%) over the "
			"others' median (a straggler is > %.0f%% and > the step-time noise, "
			"%.3f ms)\n", s->host, f->gap_ns / 1e6, f->gap_pct,
			FLEET_STRAGGLER_MIN_PCT, f->noise_ns / 1e6);
	}
}

void fleet_print_text(const struct fleet *f, FILE *out)
{
	size_t w = strlen("host");

	for (size_t i = 0; i < f->n_hosts; i++)
		if (strlen(f->hosts[i].host) > w)
			w = strlen(f->hosts[i].host);
	fprintf(out, "\nFleet: session %s, %zu hosts\n", f->session, f->n_hosts);
	fprintf(out, "  %-*s %6s %10s %10s %10s %12s %12s\n", (int)w, "host", "steps",
		"mean ms", "median ms", "p90 ms", "device idle", "input-bound");
	for (size_t i = 0; i < f->n_hosts; i++) {
		const struct fleet_host *h = &f->hosts[i];

		fprintf(out, "  %-*s %6zu", (int)w, h->host, h->n_steps);
		if (h->n_steps)
			fprintf(out, " %10.3f %10.3f %10.3f", h->mean_ns / 1e6, h->median_ns / 1e6,
				h->p90_ns / 1e6);
		else
			fprintf(out, " %32s", "no steps: not in the spread");
		pct_cell(out, h->device_idle_pct);
		pct_cell(out, h->input_bound_pct);
		fprintf(out, "%s\n", (int)i == f->straggler ? "  <- straggler" : "");
	}
	if (f->slowest < 0) {
		fprintf(out, "  no host has a step time: nothing to compare\n");
		return;
	}
	fprintf(out, "  slowest host           %s (by median step time: %.3f ms)\n",
		f->hosts[f->slowest].host, f->hosts[f->slowest].median_ns / 1e6);
	fprintf(out, "  fastest host           %s (%.3f ms)\n", f->hosts[f->fastest].host,
		f->hosts[f->fastest].median_ns / 1e6);
	if (f->n_with_steps >= 2)
		fprintf(out, "  gap                    %+.3f ms (%+.1f%%) over the other hosts' "
			"median, %.3f ms\n", f->gap_ns / 1e6, f->gap_pct,
			f->others_median_ns / 1e6);
	fprintf(out, "  spread of step times   %.3f ms between the hosts' means "
		"(coefficient of variation %.1f%%)\n", f->spread_ns / 1e6, 100.0 * f->cv);
	fprintf(out, "  step-time noise        %.3f ms (the hosts' median of IQR / 1.349)\n",
		f->noise_ns / 1e6);
	if (f->n_aligned && f->slowest >= 0)
		fprintf(out, "  steps aligned          %zu by step number; %s was the slowest "
			"on %zu of them\n", f->n_aligned, f->hosts[f->slowest].host,
			f->hosts[f->slowest].slowest_steps);
	verdict(f, out);
}

static void host_field(struct json_writer *jw, const struct fleet *f, const char *name, int i)
{
	if (i >= 0)
		jw_string_field(jw, name, f->hosts[i].host);
	else {
		jw_name(jw, name);
		jw_null(jw);
	}
}

/* Nanoseconds as an integer, or null when unknown. */
static void ns_field(struct json_writer *jw, const char *name, double v)
{
	jw_name(jw, name);
	if (isnan(v))
		jw_null(jw);
	else
		jw_int(jw, (int64_t)llround(v));
}

void fleet_print_json(const struct fleet *f, struct json_writer *jw)
{
	jw_start_object(jw);
	jw_string_field(jw, "session", f->session);
	jw_name(jw, "hosts");
	jw_start_array(jw);
	for (size_t i = 0; i < f->n_hosts; i++) {
		const struct fleet_host *h = &f->hosts[i];

		jw_start_object(jw);
		jw_string_field(jw, "host", h->host);
		jw_string_field(jw, "file", h->file);
		jw_uint_field(jw, "steps", h->n_steps);
		ns_field(jw, "step_time_mean_ns", h->mean_ns);
		ns_field(jw, "step_time_median_ns", h->median_ns);
		ns_field(jw, "step_time_p90_ns", h->p90_ns);
		ns_field(jw, "step_time_noise_ns", h->noise_ns);
		jw_double_field(jw, "device_idle_pct", h->device_idle_pct);
		jw_double_field(jw, "input_bound_pct", h->input_bound_pct);
		jw_uint_field(jw, "slowest_on_steps", h->slowest_steps);
		jw_end_object(jw);
	}
	jw_end_array(jw);
	jw_uint_field(jw, "hosts_with_steps", f->n_with_steps);
	host_field(jw, f, "slowest_host", f->slowest);
	host_field(jw, f, "fastest_host", f->fastest);
	host_field(jw, f, "straggler", f->straggler);
	ns_field(jw, "others_median_ns", f->others_median_ns);
	ns_field(jw, "straggler_gap_ns", f->gap_ns);
	jw_double_field(jw, "straggler_gap_pct", f->gap_pct);
	ns_field(jw, "step_time_spread_ns", f->spread_ns);
	jw_double_field(jw, "step_time_cv", f->cv);
	ns_field(jw, "step_time_noise_ns", f->noise_ns);
	jw_uint_field(jw, "steps_aligned", f->n_aligned);
	jw_end_object(jw);
}
