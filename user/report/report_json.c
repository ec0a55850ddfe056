// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report as JSON; every key is documented in docs/report.md. */
#include <math.h>

#include "lib/json_writer.h"
#include "report/report.h"

/* Every measured step, times from the capture's first event. */
static void step_list(const struct report *r, int64_t origin_ps, struct json_writer *jw)
{
	jw_name(jw, "list");
	jw_start_array(jw);
	for (size_t i = 0; i < r->n_complete; i++) {
		const struct report_step *s = &r->steps[i];

		jw_start_object(jw);
		jw_uint_field(jw, "index", i);
		jw_double_field(jw, "start_ms", ((double)s->start_ps - (double)origin_ps) / 1e9);
		jw_double_field(jw, "time_ms", s->time_ps / 1e9);
		jw_double_field(jw, "input_ms", s->input_ps / 1e9);
		jw_double_field(jw, "compute_ms", s->compute_ps / 1e9);
		jw_double_field(jw, "other_ms", s->other_ps / 1e9);
		jw_end_object(jw);
	}
	jw_end_array(jw);
}

static void steps(const struct report *r, struct json_writer *jw)
{
	jw_name(jw, "steps");
	jw_start_object(jw);
	jw_uint_field(jw, "count", r->n_steps);
	jw_uint_field(jw, "complete", r->n_complete);
	jw_string_field(jw, "source", r->step_source);
	jw_string_field(jw, "program", r->step_program);
	jw_string_field(jw, "device", r->step_device);
	jw_double_field(jw, "avg_ms", r->avg_ms);
	jw_double_field(jw, "stddev_ms", r->stddev_ms);
	jw_double_field(jw, "min_ms", r->min_ms);
	jw_double_field(jw, "max_ms", r->max_ms);
	step_list(r, r->span_start_ps, jw);
	jw_end_object(jw);
}

static void top_ops(const struct report *r, struct json_writer *jw)
{
	jw_name(jw, "top_ops");
	jw_start_array(jw);
	for (size_t i = 0; i < r->n_top_ops; i++) {
		const struct report_op *o = &r->top_ops[i];

		jw_start_object(jw);
		jw_string_field(jw, "name", o->name);
		jw_string_field(jw, "category", o->category);
		jw_double_field(jw, "self_time_pct", o->self_time_pct);
		jw_double_field(jw, "flops_per_s", o->flops_per_s >= 0 ? o->flops_per_s : NAN);
		jw_uint_field(jw, "count", o->count);
		jw_end_object(jw);
	}
	jw_end_array(jw);
}

static void input_pipeline(const struct report *r, struct json_writer *jw)
{
	static const char *const keys[INPUT_KINDS] = {
		"read_on_demand_ms", "read_ahead_ms", "preprocess_ms", "enqueue_ms",
	};
	int64_t sum = 0;

	for (size_t i = 0; i < r->n_complete; i++)
		sum += r->steps[i].input_ps;
	jw_name(jw, "input_pipeline");
	jw_start_object(jw);
	jw_double_field(jw, "device_wait_ms_per_step", r->n_complete ? sum / 1e9 / r->n_complete : NAN);
	jw_double_field(jw, "device_input_ops_ms", r->input_device_ops_ps / 1e9);
	jw_double_field(jw, "device_idle_for_input_ms", r->input_idle_ps / 1e9);
	jw_string_field(jw, "loop_thread", r->loop_thread);
	jw_int_field(jw, "loop_thread_id", r->loop_thread_id);
	jw_name(jw, "host");
	jw_start_object(jw);
	for (int k = 0; k < INPUT_KINDS; k++)
		jw_double_field(jw, keys[k], r->input_kind_ps[k] / 1e9);
	jw_end_object(jw);
	jw_name(jw, "ops");
	jw_start_array(jw);
	for (size_t i = 0; i < r->n_input_ops; i++) {
		const struct report_input_op *o = &r->input_ops[i];

		jw_start_object(jw);
		jw_string_field(jw, "thread", o->thread);
		jw_int_field(jw, "thread_id", o->thread_id);
		jw_string_field(jw, "name", o->name);
		jw_string_field(jw, "kind", report_input_kind_name(o->kind));
		jw_uint_field(jw, "count", o->count);
		jw_double_field(jw, "total_ms", o->total_ps / 1e9);
		jw_double_field(jw, "self_ms", o->self_ps / 1e9);
		jw_end_object(jw);
	}
	jw_end_array(jw);
	jw_end_object(jw);
}

/* A count or time the capture may not tell: -1 is null. */
static void int_or_null(struct json_writer *jw, const char *name, int64_t v)
{
	jw_name(jw, name);
	if (v < 0)
		jw_null(jw);
	else
		jw_int(jw, v);
}

/* A time in ns from the capture's first event, as steps.list's start_ms. */
static void time_ns(struct json_writer *jw, const char *name, int64_t ps, int64_t origin_ps)
{
	int64_t d;

	/* Saturated: a hostile file's times may be 2^63 apart. */
	if (__builtin_sub_overflow(ps, origin_ps, &d))
		d = ps < origin_ps ? INT64_MIN : INT64_MAX;
	jw_int_field(jw, name, d / 1000);
}

static void mem_fit(struct json_writer *jw, const char *slope, const char *leak_rate,
		    const struct report_mem_fit *f)
{
	jw_double_field(jw, slope, f->slope);
	jw_double_field(jw, "growth_r2", f->r2);
	jw_uint_field(jw, "growth_points", f->points);
	jw_bool_field(jw, "leak", f->leak);
	jw_double_field(jw, leak_rate, f->leak ? f->slope : NAN);
}

static void mem_largest(const struct report_mem_device *d, int64_t origin_ps,
			struct json_writer *jw)
{
	jw_name(jw, "largest_at_peak");
	jw_start_array(jw);
	for (size_t i = 0; i < d->n_largest; i++) {
		const struct report_mem_alloc *a = &d->largest[i];

		jw_start_object(jw);
		jw_int_field(jw, "bytes", a->bytes);
		jw_uint_field(jw, "addr", a->addr);
		time_ns(jw, "time_ns", a->time_ps, origin_ps);
		jw_string_field(jw, "api", a->api);
		jw_string_field(jw, "data_type", a->data_type);
		jw_string_field(jw, "tensor_shapes", a->shapes);
		jw_end_object(jw);
	}
	jw_end_array(jw);
}

static void mem_timeline(const struct report_mem_device *d, int64_t origin_ps,
			 struct json_writer *jw)
{
	jw_name(jw, "timeline");
	jw_start_object(jw);
	jw_uint_field(jw, "points", d->timeline_points);
	if (d->timeline_points) {
		time_ns(jw, "start_ns", d->timeline_start_ps, origin_ps);
		time_ns(jw, "end_ns", d->timeline_end_ps, origin_ps);
		jw_int_field(jw, "finest_ns", d->timeline_finest_ns);
		jw_int_field(jw, "coarsest_ns", d->timeline_coarsest_ns);
		jw_int_field(jw, "first_bytes", d->timeline_first_bytes);
		jw_int_field(jw, "last_bytes", d->timeline_last_bytes);
		jw_int_field(jw, "peak_bytes", d->timeline_peak_bytes);
	}
	mem_fit(jw, "growth_bytes_per_hour", "leak_bytes_per_hour", &d->timeline_growth);
	jw_bool_field(jw, "too_short_for_rate", d->timeline_too_short);
	jw_end_object(jw);
}

static void memory(const struct report *r, struct json_writer *jw)
{
	int64_t origin = r->span_start_ps;

	jw_name(jw, "memory");
	jw_start_object(jw);
	jw_name(jw, "devices");
	jw_start_array(jw);
	for (size_t i = 0; i < r->n_mem; i++) {
		const struct report_mem_device *d = &r->mem[i];

		jw_start_object(jw);
		jw_string_field(jw, "allocator_name", d->allocator_name);
		int_or_null(jw, "pid", d->pid);
		int_or_null(jw, "device_ordinal", d->device_ordinal);
		jw_string_field(jw, "layer", d->layer);
		jw_bool_field(jw, "reserved_not_tensors", d->reserved_not_tensors);
		int_or_null(jw, "peak_bytes", d->peak_bytes);
		if (d->peak_bytes < 0) {
			jw_name(jw, "peak_time_ns");
			jw_null(jw);
		} else {
			time_ns(jw, "peak_time_ns", d->peak_time_ps, origin);
		}
		int_or_null(jw, "peak_step", d->peak_step);
		int_or_null(jw, "in_use_start_bytes", d->in_use_start_bytes);
		int_or_null(jw, "in_use_end_bytes", d->in_use_end_bytes);
		mem_fit(jw, "growth_bytes_per_step", "leak_bytes_per_step", &d->growth);
		mem_largest(d, origin, jw);
		int_or_null(jw, "peak_unattributed_bytes", d->peak_unattributed_bytes);
		jw_uint_field(jw, "allocs", d->allocs);
		jw_uint_field(jw, "frees", d->frees);
		jw_uint_field(jw, "alloc_bytes", d->alloc_bytes);
		jw_uint_field(jw, "free_bytes", d->free_bytes);
		jw_uint_field(jw, "frees_unknown_size", d->frees_unknown_size);
		jw_uint_field(jw, "untracked", d->untracked);
		jw_uint_field(jw, "untracked_bytes", d->untracked_bytes);
		jw_uint_field(jw, "churn_steps", d->churn_steps);
		jw_double_field(jw, "allocs_per_step", d->allocs_per_step);
		jw_double_field(jw, "frees_per_step", d->frees_per_step);
		jw_double_field(jw, "alloc_bytes_per_step", d->alloc_bytes_per_step);
		jw_double_field(jw, "free_bytes_per_step", d->free_bytes_per_step);
		mem_timeline(d, origin, jw);
		jw_end_object(jw);
	}
	jw_end_array(jw);
	jw_end_object(jw);
}

static void strings(struct json_writer *jw, const char *name, char *const *v, size_t n)
{
	jw_name(jw, name);
	jw_start_array(jw);
	for (size_t i = 0; i < n; i++)
		jw_string(jw, v[i]);
	jw_end_array(jw);
}

void report_print_json(const struct report *r, const char *file, const char *host,
		       struct json_writer *jw)
{
	jw_start_object(jw);
	jw_string_field(jw, "file", file);
	jw_string_field(jw, "host", host);
	/* Whose: a capture of several processes has a report per process. */
	jw_name(jw, "process");
	if (r->pid > 0) {
		size_t shown = r->n_children < sizeof(r->children) / sizeof(r->children[0]) ?
			       r->n_children : sizeof(r->children) / sizeof(r->children[0]);

		jw_start_object(jw);
		jw_int_field(jw, "pid", r->pid);
		jw_string_field(jw, "name", r->process_name);
		jw_string_field(jw, "container", r->container);
		jw_string_field(jw, "pod", r->pod);
		jw_uint_field(jw, "children_without_device", r->n_children);
		jw_name(jw, "children");
		jw_start_array(jw);
		for (size_t i = 0; i < shown; i++)
			jw_int(jw, r->children[i]);
		jw_end_array(jw);
		jw_end_object(jw);
	} else {
		jw_null(jw);
	}
	jw_uint_field(jw, "processes_with_device", r->n_processes);
	jw_bool_field(jw, "verdict_withheld", r->verdict_withheld);
	jw_name(jw, "incomplete");
	if (r->incomplete_why[0]) {
		jw_start_object(jw);
		jw_string_field(jw, "why", r->incomplete_why);
		jw_uint_field(jw, "dropped_device_spans", r->dropped_device);
		jw_uint_field(jw, "dropped_input_spans", r->dropped_input);
		jw_uint_field(jw, "lost_records", r->lost_records);
		jw_end_object(jw);
	} else {
		jw_null(jw);
	}
	jw_name(jw, "focus_pid");
	if (r->focus_pid > 0)
		jw_int(jw, r->focus_pid);
	else
		jw_null(jw);
	jw_name(jw, "capture_reason");
	if (r->capture_reason[0])
		jw_string(jw, r->capture_reason);
	else
		jw_null(jw);
	jw_name(jw, "environment");
	jw_start_object(jw);
	jw_string_field(jw, "host", r->host);
	jw_string_field(jw, "producer", r->producer);
	jw_string_field(jw, "device_type", r->device_type);
	jw_uint_field(jw, "device_planes", r->n_device_planes);
	jw_double_field(jw, "span_ms", r->span_ps / 1e9);
	jw_double_field(jw, "window_ms", r->window_ps >= 0 ? r->window_ps / 1e9 : NAN);
	jw_end_object(jw);
	steps(r, jw);
	jw_double_field(jw, "input_bound_pct", r->input_bound_pct);
	jw_double_field(jw, "compute_pct", r->compute_pct);
	jw_double_field(jw, "other_pct", r->other_pct);
	jw_double_field(jw, "device_idle_pct", r->device_idle_pct);
	jw_double_field(jw, "host_idle_pct", r->host_idle_pct);
	top_ops(r, jw);
	input_pipeline(r, jw);
	memory(r, jw);
	strings(jw, "losses", r->losses, r->n_losses);
	strings(jw, "missing", r->missing, r->n_missing);
	jw_name(jw, "still_running");
	jw_start_array(jw);
	for (size_t i = 0; i < r->n_running; i++) {
		jw_start_object(jw);
		jw_string_field(jw, "plane", r->running[i].plane);
		jw_string_field(jw, "name", r->running[i].name);
		jw_string_field(jw, "program", r->running[i].program);
		jw_double_field(jw, "running_ms", r->running[i].running_ps / 1e9);
		jw_end_object(jw);
	}
	jw_end_array(jw);
	jw_bool_field(jw, "stuck", r->stuck);
	jw_name(jw, "threads_waiting");
	jw_start_array(jw);
	for (size_t i = 0; i < r->n_waiting; i++) {
		const struct report_thread_wait *w = &r->waiting[i];

		jw_start_object(jw);
		jw_string_field(jw, "thread", w->thread);
		jw_int_field(jw, "thread_id", w->thread_id);
		jw_double_field(jw, "off_cpu_pct", w->off_cpu_pct);
		jw_uint_field(jw, "waits", w->waits);
		jw_string_field(jw, "how", w->how);
		jw_end_object(jw);
	}
	jw_end_array(jw);
	jw_string_field(jw, "recommendation", r->recommendation);
	jw_end_object(jw);
}
