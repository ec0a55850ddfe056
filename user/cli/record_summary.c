// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record's summary of a window written (record_summary.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "capture/capture.h"
#include "cli/cli.h"
#include "cli/record_summary.h"
#include "collect/collector.h"
#include "session/recorder.h"
#include "discover/probe_packs.h"
#include "attach/runtime_attach.h"
#include "export/export.h"
#include "lib/json_writer.h"
#include "probe/probe_session.h"

/* ---------------------------------------------------------------- summary */

static const enum span_kind summary_kinds[] = {
	SPAN_EXECUTE, SPAN_DEVICE_MODULE, SPAN_DEVICE_STEP, SPAN_DEVICE_OP, SPAN_CALLBACK,
	SPAN_H2D, SPAN_D2H, SPAN_INFEED, SPAN_OUTFEED, SPAN_COMPILE, SPAN_AWAIT,
	SPAN_FILE_READ, SPAN_IOCTL, SPAN_DEVICE_WAIT, SPAN_HOST_OTHER,
	SPAN_INSTANT_THREAD, SPAN_INSTANT_INTERRUPT,
};

/* The runtime libraries probed, and how each PJRT table was found. */
static void print_libraries_json(struct json_writer *jw, struct runtime_attach *ra)
{
	jw_name(jw, "libraries");
	jw_start_array(jw);
	for (size_t i = 0; i < runtime_attach__library_count(ra); i++) {
		const struct attached_library *l = runtime_attach__library(ra, i);

		jw_start_object(jw);
		jw_string_field(jw, "path", l->path);
		jw_string_field(jw, "pack", l->pack->name);
		jw_string_field(jw, "recognised_by", l->recognised_by);
		jw_uint_field(jw, "probes", l->n_probes);
		if (l->pack->pjrt) {
			jw_bool_field(jw, "table_found", l->has_table);
			jw_bool_field(jw, "table_refused", l->table_refused);
			jw_string_field(jw, "table_found_by", !l->has_table ? "" :
					l->table_scanned ? "scan" : "GetPjrtApi return");
			jw_int_field(jw, "pjrt_minor", l->pjrt_minor);
			jw_string_field(jw, "table_note", l->table_note);
		}
		jw_end_object(jw);
	}
	jw_end_array(jw);
}

/* What the collector saw, for users (and tests) checking a capture. */
static void print_collector_json(struct json_writer *jw,
				 const struct collector_stats *st, const struct capture *cap,
				 struct probe_session *ps, struct runtime_attach *ra)
{
	static const char *const types[EV_TYPE_MAX] = {
		[EV_RT_CALL] = "runtime_call", [EV_SYSCALL] = "syscall",
		[EV_DEV_OPEN] = "device_open", [EV_TASK] = "task",
		[EV_SCHED_SWITCH] = "sched_switch", [EV_IRQ] = "irq",
		[EV_MAPPED] = "code_mapped",
	};

	jw_name(jw, "collector");
	jw_start_object(jw);
	jw_name(jw, "records");
	jw_start_object(jw);
	for (int t = 1; t < EV_TYPE_MAX; t++)
		jw_uint_field(jw, types[t], st->records[t]);
	jw_end_object(jw);
	jw_name(jw, "runtime_calls");
	jw_start_object(jw);
	for (int k = 0; k < RT_EV__COUNT; k++)
		if (st->rt_calls[k])
			jw_uint_field(jw, rt_event_kind_name(k), st->rt_calls[k]);
	jw_end_object(jw);
	jw_name(jw, "unreadable_arguments");
	jw_start_object(jw);
	for (int k = 0; k < RT_EV__COUNT; k++)
		if (st->rt_faults[k])
			jw_uint_field(jw, rt_event_kind_name(k), st->rt_faults[k]);
	jw_end_object(jw);
	jw_name(jw, "probe_hits");
	jw_start_object(jw);
	for (size_t i = 0; i < runtime_attach__probe_count(ra); i++) {
		const struct attached_probe *p = runtime_attach__probe_at(ra, i);

		char key[192];

		/* The function and where: two probes may share a place (a
		 * call's entry alone and the call paired). */
		snprintf(key, sizeof(key), "%s [%s]", p->entry->name, p->target);
		if (p->probe_id >= 0)
			jw_uint_field(jw, key, probe_session__runtime_hits(ps, p->probe_id));
	}
	jw_end_object(jw);
	jw_uint_field(jw, "spans_kept", capture__spans_kept(cap));
	jw_uint_field(jw, "spans_outside_window", st->spans_outside);
	jw_uint_field(jw, "spans_refused", st->spans_refused);
	jw_uint_field(jw, "executions", st->executions);
	jw_uint_field(jw, "cuda_nested_driver_calls", st->cuda_nested);
	jw_uint_field(jw, "programs_read", st->programs_read);
	jw_uint_field(jw, "programs_unnamed", st->programs_unnamed);
	jw_uint_field(jw, "device_executions", st->device_executions);
	jw_uint_field(jw, "completions", st->completions);
	jw_uint_field(jw, "unmatched_completions", st->unmatched_completions);
	jw_uint_field(jw, "unobserved_completions", st->unobserved_completions);
	jw_uint_field(jw, "open_at_stop", st->open_at_stop);
	jw_uint_field(jw, "ended_in_grace", st->ended_in_grace);
	jw_uint_field(jw, "target_exits", st->target_exits);
	jw_uint_field(jw, "bad_records", st->bad_records);
	jw_uint_field(jw, "unknown_probes", st->unknown_probes);
	jw_end_object(jw);
}

/* What one window's capture holds, and where it went. */

/* The events' extent inside the window, as the XSpace holds them (clipped). */
struct extent {
	uint64_t start, stop, first, last;
};

static int extent_add(const struct capture_span *s, void *ctx)
{
	struct extent *e = ctx;
	uint64_t a = s->start_ns > e->start ? s->start_ns : e->start;
	uint64_t b = s->end_ns < e->stop ? s->end_ns : e->stop;

	if (s->end_ns < e->start || s->start_ns > e->stop)
		return 0;
	if (a < e->first)
		e->first = a;
	if (b > e->last)
		e->last = b;
	return 0;
}

/* The first event's start to the last event's end, as `report` says it. */
static uint64_t events_span_ns(const struct capture *cap, uint64_t start, uint64_t stop)
{
	struct extent e = { .start = start, .stop = stop, .first = UINT64_MAX };

	capture__for_each_span(cap, extent_add, &e);
	return e.last > e.first ? e.last - e.first : 0;
}

void print_summary(struct recorder *rec, const struct written *wr, bool quiet)
{
	const struct capture *cap = recorder__capture(rec);
	uint64_t start, stop;
	size_t nk = sizeof(summary_kinds) / sizeof(summary_kinds[0]), lost = 0;

	capture__window(cap, &start, &stop);
	if (cli_json()) {
		struct json_writer *jw = jw_new(stdout, true);

		if (!jw)
			return;
		jw_start_object(jw);
		jw_string_field(jw, "path", wr->path);
		jw_uint_field(jw, "bytes", wr->bytes);
		jw_name(jw, "exports");
		jw_start_object(jw);
		for (int f = 0; f <= EXPORT_CHROME_JSON; f++)
			if (wr->exported[f][0])
				jw_string_field(jw, export_format_name(f), wr->exported[f]);
		jw_end_object(jw);
		jw_string_field(jw, "session", wr->session);
		/* Only when it differs: the one asked held this host's capture. */
		if (strcmp(wr->session, capture__session(cap)))
			jw_string_field(jw, "session_asked", capture__session(cap));
		jw_string_field(jw, "host", capture__hostname(cap));
		jw_uint_field(jw, "window", recorder__window(rec));
		jw_uint_field(jw, "window_start_ns", start);
		jw_uint_field(jw, "window_stop_ns", stop);
		jw_uint_field(jw, "events_span_ns", events_span_ns(cap, start, stop));
		jw_uint_field(jw, "probes_attached_ns", recorder__probes_attached_ns(rec));
		jw_uint_field(jw, "arm_wait_ns", recorder__arm_wait_ns(rec));
		jw_name(jw, "spans");
		jw_start_object(jw);
		for (size_t i = 0; i < nk; i++)
			jw_uint_field(jw, span_kind_name(summary_kinds[i]),
				      capture__span_count(cap, summary_kinds[i]));
		jw_end_object(jw);
		jw_name(jw, "processes");
		jw_start_array(jw);
		for (size_t i = 0; i < capture__num_processes(cap); i++) {
			const struct capture_process *p = capture__process(cap, i);

			jw_start_object(jw);
			jw_uint_field(jw, "pid", p->pid);
			jw_string_field(jw, "name", capture__string(cap, p->name));
			jw_bool_field(jw, "exited", p->exit_ns != 0);
			jw_end_object(jw);
		}
		jw_end_array(jw);
		jw_uint_field(jw, "devices", capture__num_devices(cap));
		print_libraries_json(jw, recorder__runtime_attach(rec));
		jw_name(jw, "losses");
		jw_start_object(jw);
		for (size_t i = 0; i < capture__num_losses(cap); i++) {
			uint64_t n;
			const char *what = capture__loss(cap, i, &n);

			jw_uint_field(jw, what, n);
		}
		jw_end_object(jw);
		print_collector_json(jw, collector__stats(recorder__collector(rec)), cap,
				     recorder__probe_session(rec), recorder__runtime_attach(rec));
		jw_name(jw, "warnings");
		jw_start_array(jw);
		for (size_t i = 0; i < capture__num_warnings(cap); i++)
			jw_string(jw, capture__warning(cap, i));
		jw_end_array(jw);
		jw_end_object(jw);
		jw_free(jw);
		putchar('\n');
		return;
	}
	if (quiet) {
		printf("%s\n", wr->path);
		return;
	}
	printf("capture written: %s (%.1f KiB)\n", wr->path, wr->bytes / 1024.0);
	if (strcmp(wr->session, capture__session(cap)))
		printf("  session %s holds a capture of this host already: this one is in "
		       "session %s\n", capture__session(cap), wr->session);
	for (int f = 0; f <= EXPORT_CHROME_JSON; f++)
		if (wr->exported[f][0])
			printf("  %s: %s  (open it at https://ui.perfetto.dev)\n",
			       export_format_name(f), wr->exported[f]);
	/* The same words as report's run environment. */
	printf("  window %.3f s (its start to its stop); events span %.3f s (first event's "
	       "start to last event's end)\n", (stop - start) / 1e9,
	       events_span_ns(cap, start, stop) / 1e9);
	printf("  %zu %s, %zu device %s\n", capture__num_processes(cap),
	       capture__num_processes(cap) == 1 ? "process" : "processes",
	       capture__num_devices(cap), capture__num_devices(cap) == 1 ? "core" : "cores");
	for (size_t i = 0; i < nk; i++) {
		uint64_t n = capture__span_count(cap, summary_kinds[i]);

		if (n)
			printf("  %-28s %10" PRIu64 "\n", span_kind_name(summary_kinds[i]), n);
	}
	for (size_t i = 0; i < capture__num_losses(cap); i++) {
		uint64_t n;
		const char *what = capture__loss(cap, i, &n);

		if (n)		/* a counter of nothing lost is no loss */
			printf("  loss: %s: %" PRIu64 "\n", what, n), lost++;
	}
	if (!lost)
		printf("  losses: none\n");
	for (size_t i = 0; i < capture__num_warnings(cap); i++)
		printf("  warning: %s\n", capture__warning(cap, i));
	printf("  open it: tensorboard --logdir %s  (Profile tab)\n", wr->logdir);
}

