// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The metrics in Prometheus' text exposition format (version 0.0.4): a
 * HELP and a TYPE line per family, then its samples; label values escaped
 * (backslash, double quote, newline) and valid UTF-8. The same text serves the HTTP
 * endpoint and node_exporter's textfile collector.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "capture/capture_memory.h"
#include "daemon/metrics_internal.h"
#include "lib/utf8.h"

/* A label value: backslash, double quote and newline escaped as the
 * format says, and valid UTF-8 whatever the name held (a process names
 * itself): a byte that begins no character, or another control
 * character, is written as U+FFFD, since one invalid label value makes
 * Prometheus refuse the whole scrape. */
static void escaped(FILE *out, const char *s)
{
	size_t len = strlen(s);

	for (size_t i = 0; i < len;) {
		size_t n = utf8_char_len(s + i, len - i);

		if (n == 1 && s[i] == '\\')
			fputs("\\\\", out);
		else if (n == 1 && s[i] == '"')
			fputs("\\\"", out);
		else if (n == 1 && s[i] == '\n')
			fputs("\\n", out);
		else if (!n || utf8_is_control(s + i, n))
			fputs(UTF8_REPLACEMENT, out);
		else
			fwrite(s + i, 1, n, out);
		i += n ? n : 1;
	}
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* pid="..",command="..",container="..",pod=".." */
static void proc_labels(FILE *out, const struct proc_metrics *p)
{
	fprintf(out, "pid=\"%" PRIu32 "\",command=\"", p->pid);
	escaped(out, p->command);
	fputs("\",container=\"", out);
	escaped(out, p->container);
	fputs("\",pod=\"", out);
	escaped(out, p->pod);
	fputc('"', out);
}

static void bound(FILE *out, double le)
{
	if (le > 1e300)
		fputs("+Inf", out);
	else
		fprintf(out, "%g", le);
}

static void steps(const struct metrics *m, FILE *out)
{
	family(out, "acceltrace_step_seconds", "histogram",
	       "Time between the starts of consecutive steps (executions of the "
	       "process's dominant program on its first device core).");
	for (size_t i = 0; i < m->n; i++) {
		const struct proc_metrics *p = m->procs[i];

		for (int b = 0; b < METRICS_STEP_BUCKETS; b++) {
			fputs("acceltrace_step_seconds_bucket{", out);
			proc_labels(out, p);
			fputs(",le=\"", out);
			bound(out, metrics_step_bounds[b]);
			fprintf(out, "\"} %" PRIu64 "\n", p->step_buckets[b]);
		}
		fputs("acceltrace_step_seconds_sum{", out);
		proc_labels(out, p);
		fprintf(out, "} %.9f\n", p->step_sum_ns / 1e9);
		fputs("acceltrace_step_seconds_count{", out);
		proc_labels(out, p);
		fprintf(out, "} %" PRIu64 "\n", p->step_count);
	}
}

static void input_wait(const struct metrics *m, uint64_t now_ns, FILE *out)
{
	family(out, "acceltrace_input_wait_ratio", "gauge",
	       "Fraction of the last 10 s the process's device cores sat idle "
	       "waiting for the host to enqueue work (input).");
	for (size_t i = 0; i < m->n; i++) {
		const struct proc_metrics *p = m->procs[i];
		uint64_t busy, idle, all_busy = 0, all_idle = 0;

		for (int c = 0; c < METRICS_MAX_CORES; c++) {
			if (p->cores[c].used &&
			    metrics_core_ratio(&p->cores[c], now_ns, &busy, &idle)) {
				all_busy += busy;
				all_idle += idle;
			}
		}
		if (!(all_busy + all_idle))
			continue;
		fputs("acceltrace_input_wait_ratio{", out);
		proc_labels(out, p);
		fprintf(out, "} %.6f\n", (double)all_idle / (all_busy + all_idle));
	}
}

/* One sample per (process, core) of a per-core value. */
static void per_core(const struct metrics *m, FILE *out, const char *name,
		     uint64_t now_ns, int what)
{
	for (size_t i = 0; i < m->n; i++) {
		const struct proc_metrics *p = m->procs[i];

		for (int c = 0; c < METRICS_MAX_CORES; c++) {
			const struct core_metrics *cm = &p->cores[c];
			uint64_t busy, idle;

			if (!cm->used)
				continue;
			if (what == 0 && !metrics_core_ratio(cm, now_ns, &busy, &idle))
				continue;
			fprintf(out, "%s{", name);
			proc_labels(out, p);
			fprintf(out, ",device=\"%d\"} ", c);
			if (what == 0)
				fprintf(out, "%.6f\n", (double)busy / (busy + idle));
			else if (what == 1)
				fprintf(out, "%.9f\n", cm->busy_ns / 1e9);
			else if (what == 2)
				fprintf(out, "%.9f\n", cm->idle_ns / 1e9);
			else
				fprintf(out, "%" PRIu64 "\n", cm->executions);
		}
	}
}

static void devices(const struct metrics *m, uint64_t now_ns, FILE *out)
{
	family(out, "acceltrace_device_busy_ratio", "gauge",
	       "Fraction of the last 10 s the device core ran the process's work.");
	per_core(m, out, "acceltrace_device_busy_ratio", now_ns, 0);
	family(out, "acceltrace_device_busy_seconds_total", "counter",
	       "Time the device core ran the process's work.");
	per_core(m, out, "acceltrace_device_busy_seconds_total", now_ns, 1);
	family(out, "acceltrace_input_wait_seconds_total", "counter",
	       "Time the device core sat idle waiting for the host to enqueue work.");
	per_core(m, out, "acceltrace_input_wait_seconds_total", now_ns, 2);
	family(out, "acceltrace_device_executions_total", "counter",
	       "Program executions the device core completed.");
	per_core(m, out, "acceltrace_device_executions_total", now_ns, 3);
}

static void processes(const struct metrics *m, FILE *out)
{
	family(out, "acceltrace_executions_total", "counter",
	       "Program executions the process enqueued (Execute calls, launches).");
	for (size_t i = 0; i < m->n; i++) {
		fputs("acceltrace_executions_total{", out);
		proc_labels(out, m->procs[i]);
		fprintf(out, "} %" PRIu64 "\n", m->procs[i]->executions);
	}
	family(out, "acceltrace_traced_processes", "gauge",
	       "Processes with accelerator work the daemon reports now.");
	fprintf(out, "acceltrace_traced_processes %zu\n", m->n);
	family(out, "acceltrace_process_exits_total", "counter",
	       "Reported processes that exited and were removed.");
	fprintf(out, "acceltrace_process_exits_total %" PRIu64 "\n", m->processes_exited);
}

/* One sample per process of one of the kernel's aggregates. */
static void aggregate(const struct metrics *m, FILE *out, const char *name,
		      const char *help, int counter)
{
	family(out, name, "counter", help);
	for (size_t i = 0; i < m->n; i++) {
		const struct proc_metrics *p = m->procs[i];

		if (!p->has_aggregates)
			continue;
		fprintf(out, "%s{", name);
		proc_labels(out, p);
		fprintf(out, "} %" PRIu64 "\n", p->aggregates[counter]);
	}
}

/* One sample per process of its reads (/proc/PID/io): @bytes, or calls. */
static void reads(const struct metrics *m, FILE *out, const char *name,
		  const char *help, bool bytes)
{
	family(out, name, "counter", help);
	for (size_t i = 0; i < m->n; i++) {
		const struct proc_metrics *p = m->procs[i];

		if (!p->has_reads)
			continue;
		fprintf(out, "%s{", name);
		proc_labels(out, p);
		fprintf(out, "} %" PRIu64 "\n", bytes ? p->read_bytes : p->read_calls);
	}
}

enum mem_figure { MEM_IN_USE, MEM_PEAK, MEM_UNTRACKED };

static uint64_t mem_figure(const struct mem_series *s, enum mem_figure f)
{
	return f == MEM_PEAK ? s->peak : f == MEM_UNTRACKED ? s->untracked_bytes : s->in_use;
}

/* One sample per (process, allocator) of figure @f. */
static void device_memory(const struct metrics *m, FILE *out, const char *name,
			  const char *help, enum mem_figure f)
{
	family(out, name, "gauge", help);
	for (size_t i = 0; i < m->n; i++) {
		const struct proc_metrics *p = m->procs[i];

		for (uint32_t j = 0; j < p->n_mem; j++) {
			fprintf(out, "%s{", name);
			proc_labels(out, p);
			/* A device no runtime named: as its allocator says. */
			if (p->mem[j].device == CAPTURE_MEM_DEVICE_UNKNOWN)
				fprintf(out, ",device=\"unknown\",allocator=\"");
			else
				fprintf(out, ",device=\"%" PRIu32 "\",allocator=\"",
					p->mem[j].device);
			escaped(out, p->mem[j].allocator);
			fprintf(out, "\"} %" PRIu64 "\n", mem_figure(&p->mem[j], f));
		}
	}
}

/* The kernel's own accounting, and what the probes counted. */
static void aggregates(const struct metrics *m, FILE *out)
{
	reads(m, out, "acceltrace_read_syscalls_total",
	      "read, pread64, readv and preadv calls of the process (any file), as the "
	      "kernel accounts them (/proc/PID/io syscr).", false);
	reads(m, out, "acceltrace_read_bytes_total",
	      "Bytes those calls returned (/proc/PID/io rchar).", true);
	aggregate(m, out, "acceltrace_device_ioctls_total",
		  "ioctls on the process's accelerator device nodes, counted while detail "
		  "records.", AGG_DEVICE_IOCTLS);
	aggregate(m, out, "acceltrace_detail_skipped_total",
		  "Detail probe hits the detail switch turned away (sampled mode).", AGG_DETAIL_SKIPPED);
	device_memory(m, out, "acceltrace_device_memory_bytes",
		      "Device memory the process holds now, per allocator (its PJRT buffers, "
		      "or what its allocator reserved from the CUDA driver).", MEM_IN_USE);
	device_memory(m, out, "acceltrace_device_memory_peak_bytes",
		      "The most device memory the process held at once, per allocator.", MEM_PEAK);
	device_memory(m, out, "acceltrace_device_memory_untracked_bytes",
		      "Bytes of the process's allocations the kernel's live-allocation table had "
		      "no room for (the process at its share, or the table full): not in "
		      "acceltrace_device_memory_bytes, which is short by at most this.",
		      MEM_UNTRACKED);
}

static void daemon_counters(const struct metrics *m, const struct metrics_globals *g,
			    FILE *out)
{
	family(out, "acceltrace_events_total", "counter",
	       "Spans the daemon recorded, by kind.");
	for (int k = 0; k < SPAN_KIND__COUNT; k++)
		fprintf(out, "acceltrace_events_total{kind=\"%s\"} %" PRIu64 "\n",
			span_kind_name(k), m->events[k]);
	family(out, "acceltrace_lost_events_total", "counter",
	       "Events lost, by reason (ring buffer full, map full, unreadable, ...).");
	for (size_t i = 0; g && i < g->n_losses; i++) {
		fputs("acceltrace_lost_events_total{reason=\"", out);
		escaped(out, g->losses[i].label);
		fprintf(out, "\"} %" PRIu64 "\n", g->losses[i].value);
	}
	if (!g)
		return;
	family(out, "acceltrace_captures_total", "counter",
	       "Triggered captures, by result (over_quota: ProfilerService Profiles refused "
	       "by a quota).");
	fprintf(out, "acceltrace_captures_total{result=\"written\"} %" PRIu64 "\n",
		g->captures_written);
	fprintf(out, "acceltrace_captures_total{result=\"failed\"} %" PRIu64 "\n",
		g->captures_failed);
	fprintf(out, "acceltrace_captures_total{result=\"over_quota\"} %" PRIu64 "\n",
		g->captures_over_quota);
	family(out, "acceltrace_flight_recorder_spans", "gauge",
	       "Spans the flight recorder holds now.");
	fprintf(out, "acceltrace_flight_recorder_spans %" PRIu64 "\n", g->flight_recorder_spans);
	family(out, "acceltrace_flight_recorder_seconds", "gauge",
	       "How far back the flight recorder reaches now.");
	fprintf(out, "acceltrace_flight_recorder_seconds %.3f\n", g->flight_recorder_seconds);
	family(out, "acceltrace_detail_active", "gauge",
	       "1 while the detail probes record (a sampled slice, a trigger's window "
	       "after it, or --detail full), else 0.");
	fprintf(out, "acceltrace_detail_active %d\n", g->detail_active ? 1 : 0);
	family(out, "acceltrace_detail_seconds_total", "counter",
	       "Time the detail probes have recorded.");
	fprintf(out, "acceltrace_detail_seconds_total %.3f\n", g->detail_seconds);
	family(out, "acceltrace_daemon_cpu_idle", "gauge",
	       "1 while the daemon runs under SCHED_IDLE (cpu-priority idle, keeping up), "
	       "else 0.");
	fprintf(out, "acceltrace_daemon_cpu_idle %d\n", g->cpu_idle ? 1 : 0);
	family(out, "acceltrace_daemon_cpu_starved_total", "counter",
	       "Times the daemon, starved of CPU under SCHED_IDLE, took normal priority "
	       "back.");
	fprintf(out, "acceltrace_daemon_cpu_starved_total %" PRIu64 "\n", g->cpu_starved);
	family(out, "acceltrace_pjrt_tables_refused_total", "counter",
	       "PJRT API tables the daemon refused to probe (not a table it can read: "
	       "said in its log at each process's 1st, 2nd, 4th, ... refusal).");
	fprintf(out, "acceltrace_pjrt_tables_refused_total %" PRIu64 "\n",
		g->pjrt_tables_refused);
	family(out, "acceltrace_memory_timelines", "gauge",
	       "Device-memory timelines the daemon keeps (one per process, layer and "
	       "device; exited processes' for a while).");
	fprintf(out, "acceltrace_memory_timelines %" PRIu64 "\n", g->memory_timelines);
	family(out, "acceltrace_memory_timeline_bytes", "gauge",
	       "Memory those timelines hold (bounded per timeline, whatever its age).");
	fprintf(out, "acceltrace_memory_timeline_bytes %" PRIu64 "\n", g->memory_timeline_bytes);
}

int metrics__render(const struct metrics *m, const struct metrics_globals *g,
		    uint64_t now_ns, FILE *out)
{
	steps(m, out);
	input_wait(m, now_ns, out);
	devices(m, now_ns, out);
	processes(m, out);
	aggregates(m, out);
	daemon_counters(m, g, out);
	return ferror(out) ? -EIO : 0;
}
