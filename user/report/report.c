// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report's order of work, its run environment and its advice. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/utf8.h"
#include "output/xspace_writer.h"
#include "reader/xspace_processes.h"
#include "report/report_internal.h"

static const char *plane_str(const struct xs_plane *p, const char *name)
{
	const struct xs_stat *s = p ? xs_stat_find(p->stats, p->n_stats, name) : NULL;

	return s && s->type == XS_STAT_STR ? s->s : NULL;
}

int64_t report_focus_pid(const struct xs_space *xs)
{
	const struct xs_plane *task = xs_plane_named(xs, "Task Environment");
	const struct xs_stat *s = task ? xs_stat_find(task->stats, task->n_stats,
						      STAT_FOCUS_PID) : NULL;

	if (!s)
		return 0;
	if (s->type == XS_STAT_INT)
		return s->i > 0 && s->i <= INT32_MAX ? s->i : 0;
	return s->type == XS_STAT_UINT && s->u <= INT32_MAX ? (int64_t)s->u : 0;
}

void report_environment(struct report_ctx *c)
{
	const struct xs_space *xs = c->xs;
	struct report *r = c->r;
	const struct xs_plane *meta = xs_plane_named(xs, "/host:metadata");
	const struct xs_plane *task = xs_plane_named(xs, "Task Environment");
	const struct xs_plane *first_dev = NULL;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	const char *reason;

	r->host = xs->n_hostnames ? xs->hostnames[0] : "";
	r->producer = "unknown";
	if (plane_str(meta, "jax_version"))
		r->producer = "JAX's profiler";
	else if (task && xs_stat_find(task->stats, task->n_stats, "acceltrace.probes_attached_ns"))
		r->producer = "acceltrace";
	r->focus_pid = report_focus_pid(xs);
	reason = plane_str(task, STAT_CAPTURE_REASON);
	if (reason)
		utf8_sanitize(reason, strlen(reason), r->capture_reason,
			      sizeof(r->capture_reason), UTF8_REPLACE_CONTROLS);
	for (size_t i = 0; i < xs->n_planes; i++) {
		const struct xs_plane *p = &xs->planes[i];

		if (xs_is_device_plane(p)) {
			r->n_device_planes++;
			if (!first_dev)
				first_dev = p;
			if (!strcmp(r->producer, "unknown") &&
			    xs_stat_find(p->stats, p->n_stats, "acceltrace.pid"))
				r->producer = "acceltrace";
		}
		for (size_t j = 0; j < p->n_lines; j++) {
			const struct xs_line *l = &p->lines[j];

			if (!l->n_events)
				continue;
			if (l->events[0].start_ps < lo)
				lo = l->events[0].start_ps;
			for (size_t k = 0; k < l->n_events; k++)
				if (l->events[k].start_ps + l->events[k].dur_ps > hi)
					hi = l->events[k].start_ps + l->events[k].dur_ps;
		}
	}
	/* A file's times may be ±2^63 apart: the span saturates. */
	r->span_ps = 0;
	if (hi > lo && __builtin_sub_overflow(hi, lo, &r->span_ps))
		r->span_ps = INT64_MAX;
	c->span_start_ps = hi > lo ? lo : 0;
	r->span_start_ps = c->span_start_ps;
	r->window_ps = -1;
	if (task) {
		const struct xs_stat *a = xs_stat_find(task->stats, task->n_stats, "profile_start_time");
		const struct xs_stat *b = xs_stat_find(task->stats, task->n_stats, "profile_stop_time");
		int64_t start, stop;

		if (xs_stat_int(a, &start) && xs_stat_int(b, &stop) && stop >= start &&
		    !__builtin_mul_overflow(stop - start, 1000, &r->window_ps))
			;
		else
			r->window_ps = -1;
	}
	r->device_type = plane_str(first_dev, "device_type_string");
	if (!r->device_type)
		r->device_type = plane_str(first_dev, "gpu_device_name");
	if (!r->device_type)
		r->device_type = first_dev ? first_dev->name : "none (host only)";
	c->host = xs_plane_named(xs, "/host:CPU");
}

void report_recommend(struct report *r)
{
	char *b = r->recommendation_buf;
	size_t n = sizeof(r->recommendation_buf);

	r->recommendation = b;
	if (r->stuck) {
		const struct report_running *x = &r->running[0];

		snprintf(b, n, "%s has been in %s%s%s%s for %.1f s and had not finished when "
			 "the window ended: the job is stuck there (or one op dominates it). "
			 "Look at that op and its inputs; a longer window would show no more.",
			 x->plane, x->name, x->program[0] ? " (program " : "", x->program,
			 x->program[0] ? ")" : "", x->running_ps / 1e12);
	} else if (r->verdict_withheld) {
		/* Figures from what a budget or a loss left are not the job's:
		 * a wrong verdict is worse than none. */
		snprintf(b, n, "No verdict: %s, so step time, device idle and input-bound "
			 "would be those of what was left, not of the job. %s",
			 r->incomplete_why, r->dropped_device || r->dropped_input ?
			 "Record a shorter window, or raise --max-events (the daemon's "
			 "max-events)." :
			 "See What the capture lost: a larger --ringbuf-size, or a host "
			 "less busy, keeps them.");
		return;
	} else if (!r->n_complete && r->n_waiting && r->waiting[0].off_cpu_pct >= 50) {
		const struct report_thread_wait *w = &r->waiting[0];

		snprintf(b, n, "No step completed: the job was waiting, not computing. Its "
			 "thread %s (tid %lld) was off CPU %.0f%% of the window (%s, %llu times); "
			 "see what it waits on (a checkpoint's I/O, a lock, a peer) before a "
			 "longer window.", w->thread, (long long)w->thread_id, w->off_cpu_pct,
			 w->how, (unsigned long long)w->waits);
	} else if (!r->n_complete) {
		snprintf(b, n, "No step time: %s. Capture a longer window, or one in "
			 "which the device runs the training program.",
			 r->n_steps ? "fewer than two steps were found" : "no steps were found");
	} else if (isnan(r->input_bound_pct)) {
		snprintf(b, n, "Steps take %.3f ms on average; without a device plane the "
			 "capture cannot say whether the job is input-bound.", r->avg_ms);
	} else if (r->input_bound_pct >= REPORT_HIGHLY_INPUT_BOUND_PCT) {
		snprintf(b, n, "The job is HIGHLY input-bound: the device waits for input "
			 "%.1f%% of the step time. Make the input pipeline faster: more "
			 "reader threads, a deeper prefetch, cached or pre-processed data, "
			 "faster storage.", r->input_bound_pct);
	} else if (r->input_bound_pct >= REPORT_MODERATELY_INPUT_BOUND_PCT) {
		snprintf(b, n, "The job is moderately input-bound: the device waits for "
			 "input %.1f%% of the step time. A deeper prefetch or more reader "
			 "threads would recover most of it.", r->input_bound_pct);
	} else if (r->other_pct >= REPORT_HIGHLY_INPUT_BOUND_PCT) {
		snprintf(b, n, "The job is not input-bound (%.1f%%), but the device is idle "
			 "%.1f%% of the step time for other reasons: the host is slow to "
			 "launch steps (Python overhead, synchronisation, checkpoints).",
			 r->input_bound_pct, r->other_pct);
	} else if (r->n_top_ops) {
		snprintf(b, n, "The job is device-bound (input %.1f%%): speed up the device "
			 "work; the top op, %s, takes %.1f%% of device self time.",
			 r->input_bound_pct, r->top_ops[0].name, r->top_ops[0].self_time_pct);
	} else {
		snprintf(b, n, "The job is device-bound (input %.1f%%): the device computes "
			 "%.1f%% of the step time. A device trace would say which ops dominate.",
			 r->input_bound_pct, r->compute_pct);
	}
	if (r->incomplete_why[0]) {
		size_t used = strlen(b);

		snprintf(b + used, n - used, " (Caveat: %s; these figures are from what it "
			 "kept.)", r->incomplete_why);
	}
}

/* The processes of @xs that drive a device: the ones a report is of. */
static size_t device_processes(const struct xs_space *xs)
{
	struct xs_process *v;
	size_t n, with = 0;

	if (xs_processes(xs, &v, &n))
		return 0;
	for (size_t i = 0; i < n; i++)
		with += v[i].n_devices > 0;
	free(v);
	return with;
}

static int build(const struct xs_space *xs, int64_t pid, size_t capture_events,
		 struct report *r)
{
	struct report_ctx c = { .xs = xs, .r = r, .capture_events = capture_events };
	int ret;

	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->process_name = "";
	r->input_bound_pct = r->device_idle_pct = r->host_idle_pct = NAN;
	r->compute_pct = r->other_pct = NAN;
	r->avg_ms = r->stddev_ms = r->min_ms = r->max_ms = NAN;
	report_environment(&c);
	ret = report_find_steps(&c);
	if (!ret && !c.dev)
		for (size_t i = 0; i < xs->n_planes && !c.dev; i++)
			if (xs_is_device_plane(&xs->planes[i]))
				c.dev = &xs->planes[i];
	if (!ret)
		ret = report_device_activity(&c);
	if (!ret)
		ret = report_step_breakdown(&c);
	if (!ret) {
		/* Host idle over the steps when there are some, else the capture. */
		int64_t a = c.n_step_starts >= 2 ? c.step_starts[0] : 0;
		int64_t b = c.n_step_starts >= 2 ? c.step_starts[c.n_step_starts - 1] : 0;

		if (!c.n_step_starts || c.n_step_starts < 2) {
			/* From the host's first event, or the capture's first
			 * when there is no host plane (a device-only capture). */
			a = INT64_MAX;
			for (size_t i = 0; c.host && i < c.host->n_lines; i++)
				if (c.host->lines[i].n_events && c.host->lines[i].events[0].start_ps < a)
					a = c.host->lines[i].events[0].start_ps;
			if (a == INT64_MAX)
				a = c.span_start_ps;
			if (__builtin_add_overflow(a, r->span_ps, &b))
				b = INT64_MAX;
		}
		ret = report_host_idle(&c, a, b);
		/* No steps (a PyTorch loop has no program executions to
		 * find them by): device idle over the capture instead. */
		if (!ret && c.n_step_starts < 2)
			report_device_idle_span(&c, a, b);
	}
	if (!ret)
		ret = report_top_ops(&c);
	if (!ret)
		ret = report_input_pipeline(&c);
	if (!ret)
		ret = report_losses(&c);
	if (!ret)
		ret = report_still_running(&c);
	if (!ret)
		ret = report_thread_waits(&c);
	if (!ret)
		ret = report_memory(&c);
	report_completeness(&c);
	report_recommend(r);
	iv_free(&c.busy);
	iv_free(&c.input_dev);
	free(c.ops_lines);
	free(c.step_starts);
	free(c.step_nums);
	if (ret)
		report_free(r);
	return ret;
}

int report_build(const struct xs_space *xs, struct report *r)
{
	int ret = build(xs, -1, xs->n_events, r);

	if (!ret)
		r->n_processes = device_processes(xs);
	return ret;
}

int report_build_process(const struct xs_space *xs, int64_t pid, struct report *r)
{
	struct xs_process *v, *me = NULL;
	struct xs_space *view;
	const char *name;
	size_t n, with = 0;
	int ret;

	ret = xs_processes(xs, &v, &n);
	if (ret)
		return ret;
	for (size_t i = 0; i < n; i++) {
		with += v[i].n_devices > 0;
		if (v[i].pid == pid)
			me = &v[i];
	}
	if (!me) {
		free(v);
		return -ESRCH;
	}
	name = me->name;
	view = xs_scope_process(xs, pid);
	ret = view ? build(view, pid, xs->n_events, r) : -ENOMEM;
	xs_scope_free(view);
	if (!ret) {
		r->process_name = name;
		r->n_processes = with;
		/* From the file's JSON: controls replaced, as any file may hold
		 * anything. */
		utf8_sanitize(me->container, strlen(me->container), r->container,
			      sizeof(r->container), UTF8_REPLACE_CONTROLS);
		utf8_sanitize(me->pod, strlen(me->pod), r->pod, sizeof(r->pod),
			      UTF8_REPLACE_CONTROLS);
		for (size_t i = 0; i < n; i++) {
			if (v[i].pid == pid || v[i].reported_in != pid)
				continue;
			if (r->n_children < sizeof(r->children) / sizeof(r->children[0]))
				r->children[r->n_children] = v[i].pid;
			r->n_children++;
		}
	}
	free(v);
	return ret;
}

void report_free(struct report *r)
{
	for (size_t i = 0; i < r->n_losses; i++)
		free(r->losses[i]);
	for (size_t i = 0; i < r->n_missing; i++)
		free(r->missing[i]);
	free(r->steps);
	free(r->input_ops);
	free(r->mem);
	r->steps = NULL;
	r->input_ops = NULL;
	r->mem = NULL;
	r->n_mem = 0;
	r->n_losses = r->n_missing = 0;
}
