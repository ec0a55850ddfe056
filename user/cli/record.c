// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace record: capture one or more windows of a running trainer, of a
 * launched command, or of every accelerator user on the host, and write them
 * where TensorBoard/XProf opens them.
 *
 * One lifecycle: features -> load probes -> attach -> targets -> arm (the
 * clock starts at the first device activity) -> window -> stop (+ grace) ->
 * finalize -> write -> cleanup.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "record"
#include "lib/log.h"
#include "capture/capture.h"
#include "cli/cli.h"
#include "collect/collector.h"
#include "discover/device_irqs.h"
#include "discover/device_nodes.h"
#include "lib/json_writer.h"
#include "probe/kernel_features.h"
#include "probe/probe_session.h"
#include "discover/runtime_attach.h"
#include "discover/targets.h"
#include "output/xspace_writer.h"

#define MAX_PIDS 64
#define MAX_LIBRARIES 16
/* --steps: a start time per step, 8 bytes each (up to twice that while
 * the array doubles). */
#define MAX_STEPS 10000000ull
#define POLL_MS 5
#define RESCAN_NS (250 * 1000000ull)
#define FULL_RESCAN_NS (1000 * 1000000ull)

struct record_opts {
	pid_t pids[MAX_PIDS];
	size_t n_pids;
	bool children, whole_host;
	char **command;
	uint64_t duration_ns, delay_ns, grace_ns, arm_timeout_ns, interval_ns;
	uint64_t steps, windows, max_spans, ring_bytes;
	const char *logdir, *session;
	const char *libraries[MAX_LIBRARIES];
	size_t n_libraries;
	bool sched;
};

void usage_record(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace record [options] (--pid PID | -a | -- CMD [ARGS...])\n"
		"\n"
		"Captures a window of accelerator work and writes it for TensorBoard/XProf:\n"
		"  LOGDIR/plugins/profile/SESSION/HOST.xplane.pb\n"
		"Probes attach before the window opens, so spans that began before it are\n"
		"kept with their true start; spans still open at its end are closed there\n"
		"and marked (or get their true end within --grace).\n"
		"\n"
		"Target:\n"
		"  -p, --pid PID          a running process (repeatable)\n"
		"      --children         and its descendants, including later ones\n"
		"  -a, --all              every process using an accelerator runtime or device,\n"
		"                         including processes that start later\n"
		"  -- CMD [ARGS...]       launch CMD and trace it from its first instruction\n"
		"\n"
		"Window (the clock starts at the target's first device activity):\n"
		"  -d, --duration TIME    window length, e.g. 10s, 500ms, 2m\n"
		"      --steps N          N device steps (executions): ends where step N+1\n"
		"                         begins (N at most 10000000)\n"
		"      --delay TIME       open the window TIME after the first activity\n"
		"      --grace TIME       after the stop, wait up to TIME for open spans to end\n"
		"      --arm-timeout TIME give up when no device activity comes (default 30s)\n"
		"      --windows K        K windows, each in its own session directory\n"
		"      --interval TIME    time between windows (default 0)\n"
		"  Without --duration or --steps the window lasts until Ctrl-C, or until\n"
		"  the target exits. A first Ctrl-C ends the window and writes the capture;\n"
		"  a second aborts without writing.\n"
		"\n"
		"Output:\n"
		"  -o, --logdir DIR       where captures go (default: acceltrace-logs)\n"
		"      --session NAME     session directory name (default: local time)\n"
		"      --max-events N     keep at most N spans, dropping the least useful\n"
		"                         kinds first, and say so (default 1000000)\n"
		"\n"
		"Probes:\n"
		"      --library PATH     also probe this runtime library file from the start\n"
		"                         (catches GetPjrtApi when it is loaded later)\n"
		"      --sched            record when traced threads go off and on CPU\n"
		"      --ringbuf-size N   bytes per ring buffer shard (default 8M)\n"
		"\n"
		"Exit status: 0 when a capture was written; 1 when none was (no device\n"
		"activity, an I/O error, a target that does not exist); 2 on a usage error;\n"
		"with -- CMD, the command's own non-zero exit status.\n"
		"\n"
		"Options:\n"
		CLI_COMMON_HELP);
}

/* ---------------------------------------------------------------- signals */

static volatile sig_atomic_t interrupts;

static void on_signal(int sig)
{
	(void)sig;
	interrupts++;
}

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int64_t realtime_offset(void)
{
	struct timespec r, m;

	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)r.tv_sec - m.tv_sec) * 1000000000ll + (r.tv_nsec - m.tv_nsec);
}

/* ---------------------------------------------------------------- options */

static int parse_options(int argc, char **argv, struct record_opts *o)
{
	enum {
		OPT_CHILDREN = 256, OPT_STEPS, OPT_DELAY, OPT_GRACE, OPT_ARM_TIMEOUT,
		OPT_WINDOWS, OPT_INTERVAL, OPT_SESSION, OPT_MAX_EVENTS, OPT_LIBRARY,
		OPT_SCHED, OPT_RINGBUF,
	};
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "children", no_argument, NULL, OPT_CHILDREN },
		{ "all", no_argument, NULL, 'a' },
		{ "duration", required_argument, NULL, 'd' },
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "delay", required_argument, NULL, OPT_DELAY },
		{ "grace", required_argument, NULL, OPT_GRACE },
		{ "arm-timeout", required_argument, NULL, OPT_ARM_TIMEOUT },
		{ "windows", required_argument, NULL, OPT_WINDOWS },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "logdir", required_argument, NULL, 'o' },
		{ "session", required_argument, NULL, OPT_SESSION },
		{ "max-events", required_argument, NULL, OPT_MAX_EVENTS },
		{ "library", required_argument, NULL, OPT_LIBRARY },
		{ "sched", no_argument, NULL, OPT_SCHED },
		{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
		CLI_COMMON_LONGOPTS,
		{}
	};
	uint64_t v;
	int opt;

	o->logdir = "acceltrace-logs";
	o->arm_timeout_ns = 30ull * 1000000000ull;
	o->windows = 1;
	/* '+': stop at the first non-option, so "-- CMD -x" reaches CMD. */
	while ((opt = getopt_long(argc, argv, "+:p:ad:o:" CLI_COMMON_SHORTOPTS,
				  longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (cli_parse_uint(optarg, &v) || !v || v > INT32_MAX)
				return cli_bad_value("record", "--pid", optarg, "a process id");
			if (o->n_pids == MAX_PIDS)
				return cli_bad_value("record", "--pid", optarg,
						     "at most 64 processes");
			o->pids[o->n_pids++] = v;
			break;
		case OPT_CHILDREN: o->children = true; break;
		case 'a': o->whole_host = true; break;
		case 'd':
			if (cli_parse_duration(optarg, &o->duration_ns) || !o->duration_ns)
				return cli_bad_value("record", "--duration", optarg,
						     "a time such as 10s, 500ms or 2m");
			break;
		case OPT_STEPS:
			/* The window keeps a start time per step, up to N + 1. */
			if (cli_parse_uint(optarg, &o->steps) || !o->steps ||
			    o->steps > MAX_STEPS)
				return cli_bad_value("record", "--steps", optarg,
						     "a number of steps from 1 to 10000000");
			break;
		case OPT_DELAY:
			if (cli_parse_duration(optarg, &o->delay_ns))
				return cli_bad_value("record", "--delay", optarg, "a time");
			break;
		case OPT_GRACE:
			if (cli_parse_duration(optarg, &o->grace_ns))
				return cli_bad_value("record", "--grace", optarg, "a time");
			break;
		case OPT_ARM_TIMEOUT:
			if (cli_parse_duration(optarg, &o->arm_timeout_ns) || !o->arm_timeout_ns)
				return cli_bad_value("record", "--arm-timeout", optarg, "a time");
			break;
		case OPT_WINDOWS:
			if (cli_parse_uint(optarg, &o->windows) || !o->windows ||
			    o->windows > 1000)
				return cli_bad_value("record", "--windows", optarg,
						     "a number from 1 to 1000");
			break;
		case OPT_INTERVAL:
			if (cli_parse_duration(optarg, &o->interval_ns))
				return cli_bad_value("record", "--interval", optarg, "a time");
			break;
		case 'o': o->logdir = optarg; break;
		case OPT_SESSION:
			if (!*optarg || strchr(optarg, '/') || !strcmp(optarg, ".") ||
			    !strcmp(optarg, ".."))
				return cli_bad_value("record", "--session", optarg,
						     "a directory name without '/'");
			o->session = optarg;
			break;
		case OPT_MAX_EVENTS:
			if (cli_parse_uint(optarg, &o->max_spans) || !o->max_spans)
				return cli_bad_value("record", "--max-events", optarg,
						     "a positive number");
			break;
		case OPT_LIBRARY:
			if (o->n_libraries == MAX_LIBRARIES)
				return cli_bad_value("record", "--library", optarg,
						     "at most 16 libraries");
			o->libraries[o->n_libraries++] = optarg;
			break;
		case OPT_SCHED: o->sched = true; break;
		case OPT_RINGBUF:
			if (cli_parse_size(optarg, &o->ring_bytes) || !o->ring_bytes ||
			    (o->ring_bytes & (o->ring_bytes - 1)) || o->ring_bytes < 4096)
				return cli_bad_value("record", "--ringbuf-size", optarg,
						     "a power of two of at least 4096 bytes");
			break;
		default: {
			int rc = cli_common_or_exit("record", opt, argv, usage_record);

			/* --help: usage printed; -1 tells the caller to exit 0. */
			if (rc >= 0)
				return rc ? rc : -1;
		}
		}
	}
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--"))
			return cli_bad_argument("record", argv[optind]);
		o->command = &argv[optind];
	}
	if ((o->n_pids > 0) + o->whole_host + (o->command != NULL) != 1) {
		log_err("name exactly one target: --pid PID, -a, or -- CMD");
		return EXIT_USAGE;
	}
	if (o->children && !o->n_pids && !o->command) {
		log_err("--children needs --pid or a command");
		return EXIT_USAGE;
	}
	if (o->windows > 1 && !o->duration_ns && !o->steps) {
		log_err("--windows needs --duration or --steps to end each window");
		return EXIT_USAGE;
	}
	return 0;
}

/* ---------------------------------------------------------------- the run */

struct run {
	struct record_opts *o;
	struct features features;
	struct probe_session *ps;
	struct runtime_attach *ra;
	struct collector *col;
	struct targets *targets;
	struct capture *cap;
	uint64_t last_rescan, last_full_rescan;
	uint64_t probes_attached_ns;
	char written[4096];
	uint64_t written_bytes;
};

static int poll_once(struct run *r)
{
	uint64_t now;
	int n = probe_session__poll(r->ps, POLL_MS);

	if (n < 0 && n != -EINTR) {
		log_err("reading the ring buffers failed: %s", strerror(-n));
		return n;
	}
	now = now_ns();
	if (now - r->last_rescan >= RESCAN_NS) {
		bool full = now - r->last_full_rescan >= FULL_RESCAN_NS;

		targets__rescan(r->targets, full);
		r->last_rescan = now;
		if (full)
			r->last_full_rescan = now;
	}
	return 0;
}

static struct capture *new_capture(struct run *r, uint64_t window)
{
	struct capture_opts copts = { .sz = sizeof(copts) };
	char session[256];
	struct capture *cap;

	copts.max_spans = r->o->max_spans;
	if (r->o->session && r->o->windows > 1) {
		snprintf(session, sizeof(session), "%s_w%" PRIu64, r->o->session, window + 1);
		copts.session = session;
	} else if (r->o->session) {
		copts.session = r->o->session;
	} else if (r->o->windows > 1) {
		time_t t = time(NULL);
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(session, sizeof(session), "%Y_%m_%d_%H_%M_%S", &tm);
		snprintf(session + strlen(session), sizeof(session) - strlen(session),
			 "_w%" PRIu64, window + 1);
		copts.session = session;
	}
	cap = capture__new(&copts);
	if (!cap)
		return NULL;
	capture__set_realtime_offset(cap, realtime_offset());
	capture__set_probes_attached(cap, r->probes_attached_ns);
	return cap;
}

/* Waits for the first device activity after the probes settled. */
static int arm(struct run *r, uint64_t *start)
{
	uint64_t deadline = now_ns() + r->o->arm_timeout_ns, settled_at = 0;
	char diag[2048];

	while (!interrupts) {
		uint64_t first;

		if (poll_once(r))
			return -EIO;
		/* Probes in place (tables found, callbacks probed): from now on
		 * nothing the window overlaps can be missed. */
		if (!settled_at && runtime_attach__settled(r->ra) &&
		    collector__completions_probed(r->col)) {
			settled_at = now_ns();
			collector__watch_activity(r->col, settled_at);
		}
		first = settled_at ? collector__first_activity(r->col, settled_at) : 0;
		if (first) {
			*start = first + r->o->delay_ns;
			return 0;
		}
		if (!targets__alive(r->targets)) {
			targets__diagnose(r->targets, diag, sizeof(diag));
			log_err("the target exited before any device activity: %s", diag);
			return -ESRCH;
		}
		if (now_ns() >= deadline) {
			targets__diagnose(r->targets, diag, sizeof(diag));
			log_err("no device activity within %.1f s: %s",
				r->o->arm_timeout_ns / 1e9, diag);
			return -ETIMEDOUT;
		}
	}
	log_err("interrupted before the window opened: no capture written");
	return -EINTR;
}

/* Runs one window from @start; returns 0 with the capture finalized. */
static int run_window(struct run *r, uint64_t start)
{
	uint64_t stop = 0, now, end_at = start + r->o->duration_ns;
	int interrupts_at_start = interrupts;
	bool steps_seen_once = false;

	/* With --delay the window opens later than the activity that armed it. */
	while (now_ns() < start && !interrupts)
		if (poll_once(r))
			return -EIO;
	collector__open_window(r->col, start);
	log_info("window open (pid%s %d%s)", targets__count(r->targets) > 1 ? "s" : "",
		 targets__count(r->targets) ? targets__report(r->targets, 0)->pid : 0,
		 targets__count(r->targets) > 1 ? ", ..." : "");
	for (;;) {
		if (poll_once(r))
			return -EIO;
		now = now_ns();
		if (interrupts > interrupts_at_start) {
			stop = now;
			log_info("interrupted: finishing the capture (Ctrl-C again aborts)");
			break;
		}
		if (r->o->duration_ns && now >= end_at) {
			stop = end_at;
			break;
		}
		if (r->o->steps) {
			uint64_t next = collector__window_steps_end(r->col);

			/* Step N + 1 began: the window holds N whole steps,
			 * each with the host work that led to the next. Records
			 * of earlier executions may still sit in other shards:
			 * one more drain, and the stop is where it says. */
			if (next && steps_seen_once) {
				stop = next - 1 > start ? next - 1 : start;
				break;
			}
			steps_seen_once = next != 0;
		}
		if (!targets__alive(r->targets)) {
			stop = now;
			log_info("the target exited: finishing the capture");
			break;
		}
	}
	collector__begin_close(r->col, stop);
	/* Grace: records of spans that end soon after the stop keep their
	 * true end; a second Ctrl-C still aborts. */
	interrupts_at_start = interrupts;
	do {
		if (poll_once(r))
			return -EIO;
		if (interrupts > interrupts_at_start)
			break;
	} while (r->o->grace_ns && now_ns() < stop + r->o->grace_ns &&
		 !collector__all_closed(r->col));
	probe_session__drain(r->ps);
	if (interrupts >= 2) {
		log_err("aborted: no capture written");
		return -EINTR;
	}
	collector__finish(r->col);
	return capture__finalize(r->cap);
}

/* ---------------------------------------------------------------- summary */

static const enum span_kind summary_kinds[] = {
	SPAN_EXECUTE, SPAN_DEVICE_MODULE, SPAN_DEVICE_STEP, SPAN_CALLBACK,
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

		if (p->probe_id >= 0)
			jw_uint_field(jw, p->target,
				      probe_session__runtime_hits(ps, p->probe_id));
	}
	jw_end_object(jw);
	jw_uint_field(jw, "spans_kept", capture__spans_kept(cap));
	jw_uint_field(jw, "spans_outside_window", st->spans_outside);
	jw_uint_field(jw, "spans_refused", st->spans_refused);
	jw_uint_field(jw, "executions", st->executions);
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

static void print_summary(struct run *r, uint64_t window)
{
	uint64_t start, stop;
	size_t nk = sizeof(summary_kinds) / sizeof(summary_kinds[0]);

	capture__window(r->cap, &start, &stop);
	if (cli_json()) {
		struct json_writer *jw = jw_new(stdout, true);

		if (!jw)
			return;
		jw_start_object(jw);
		jw_string_field(jw, "path", r->written);
		jw_uint_field(jw, "bytes", r->written_bytes);
		jw_string_field(jw, "session", capture__session(r->cap));
		jw_string_field(jw, "host", capture__hostname(r->cap));
		jw_uint_field(jw, "window", window + 1);
		jw_uint_field(jw, "window_start_ns", start);
		jw_uint_field(jw, "window_stop_ns", stop);
		jw_uint_field(jw, "probes_attached_ns", r->probes_attached_ns);
		jw_name(jw, "spans");
		jw_start_object(jw);
		for (size_t i = 0; i < nk; i++)
			jw_uint_field(jw, span_kind_name(summary_kinds[i]),
				      capture__span_count(r->cap, summary_kinds[i]));
		jw_end_object(jw);
		jw_name(jw, "processes");
		jw_start_array(jw);
		for (size_t i = 0; i < capture__num_processes(r->cap); i++) {
			const struct capture_process *p = capture__process(r->cap, i);

			jw_start_object(jw);
			jw_uint_field(jw, "pid", p->pid);
			jw_string_field(jw, "name", capture__string(r->cap, p->name));
			jw_bool_field(jw, "exited", p->exit_ns != 0);
			jw_end_object(jw);
		}
		jw_end_array(jw);
		jw_uint_field(jw, "devices", capture__num_devices(r->cap));
		print_libraries_json(jw, r->ra);
		jw_name(jw, "losses");
		jw_start_object(jw);
		for (size_t i = 0; i < capture__num_losses(r->cap); i++) {
			uint64_t n;
			const char *what = capture__loss(r->cap, i, &n);

			jw_uint_field(jw, what, n);
		}
		jw_end_object(jw);
		print_collector_json(jw, collector__stats(r->col), r->cap, r->ps, r->ra);
		jw_name(jw, "warnings");
		jw_start_array(jw);
		for (size_t i = 0; i < capture__num_warnings(r->cap); i++)
			jw_string(jw, capture__warning(r->cap, i));
		jw_end_array(jw);
		jw_end_object(jw);
		jw_free(jw);
		putchar('\n');
		return;
	}
	printf("capture written: %s (%.1f KiB)\n", r->written, r->written_bytes / 1024.0);
	printf("  window %.3f s, %zu process(es), %zu device core(s)\n",
	       (stop - start) / 1e9, capture__num_processes(r->cap),
	       capture__num_devices(r->cap));
	for (size_t i = 0; i < nk; i++) {
		uint64_t n = capture__span_count(r->cap, summary_kinds[i]);

		if (n)
			printf("  %-28s %10" PRIu64 "\n", span_kind_name(summary_kinds[i]), n);
	}
	if (!capture__num_losses(r->cap))
		printf("  losses: none\n");
	for (size_t i = 0; i < capture__num_losses(r->cap); i++) {
		uint64_t n;
		const char *what = capture__loss(r->cap, i, &n);

		printf("  loss: %s: %" PRIu64 "\n", what, n);
	}
	for (size_t i = 0; i < capture__num_warnings(r->cap); i++)
		printf("  warning: %s\n", capture__warning(r->cap, i));
	printf("  open it: tensorboard --logdir %s  (Profile tab)\n", r->o->logdir);
}

/* ---------------------------------------------------------------- command */

static int setup(struct run *r)
{
	struct probe_session_opts popts = { .sz = sizeof(popts) };
	struct runtime_attach_opts aopts = { .sz = sizeof(aopts) };
	struct targets_opts topts = { .sz = sizeof(topts) };
	struct collector_opts copts = { .sz = sizeof(copts) };
	static const char *prefixes[AT_MAX_DEV_PREFIXES];
	char missing[512];
	int err;

	features__probe(&r->features);
	if (!features__can_run(&r->features, missing, sizeof(missing))) {
		log_err("acceltrace cannot run here: missing %s", missing);
		return -EPERM;
	}
	r->cap = new_capture(r, 0);
	if (!r->cap)
		return -errno;
	popts.features = &r->features;
	popts.whole_host = r->o->whole_host;
	popts.children = r->o->children;
	popts.sched_switch = r->o->sched;
	popts.irqs = true;
	popts.io_uring = true;
	popts.ring_bytes = r->o->ring_bytes;
	popts.dev_prefixes = prefixes;
	popts.n_dev_prefixes = device_node_prefixes(prefixes, AT_MAX_DEV_PREFIXES);
	copts.capture = r->cap;
	copts.sched_switch = r->o->sched;
	copts.steps = r->o->steps;
	/* The session delivers records to the collector, which then needs the
	 * session and the attach manager: connect them once all exist. */
	r->col = collector__new(&copts);
	if (!r->col)
		return -errno;
	r->ps = probe_session__open(&popts, collector__record, r->col);
	if (!r->ps)
		return -errno;
	aopts.libraries = r->o->libraries;
	aopts.n_libraries = r->o->n_libraries;
	r->ra = runtime_attach__new(r->ps, &aopts);
	if (!r->ra)
		return -errno;
	collector__connect(r->col, r->ps, r->ra);
	err = probe_session__attach_kernel(r->ps);
	if (err)
		return err;
	/* Accelerator interrupts present now (the simulator has none). */
	device_irqs__trace(r->ps);
	topts.pids = r->o->pids;
	topts.n_pids = r->o->n_pids;
	topts.children = r->o->children;
	topts.whole_host = r->o->whole_host;
	topts.command = r->o->command;
	r->targets = targets__new(&topts, r->ps, r->ra);
	if (!r->targets)
		return -errno;
	err = targets__start(r->targets);
	if (err) {
		log_err("starting the targets failed: %s", strerror(-err));
		return err;
	}
	r->probes_attached_ns = now_ns();
	capture__set_probes_attached(r->cap, r->probes_attached_ns);
	r->last_rescan = r->last_full_rescan = r->probes_attached_ns;
	return 0;
}

/* Detaches every probe: nothing of acceltrace stays in the kernel. */
static void detach(struct run *r)
{
	collector__free(r->col);
	r->col = NULL;
	runtime_attach__free(r->ra);
	r->ra = NULL;
	probe_session__free(r->ps);
	r->ps = NULL;
}

static void teardown(struct run *r)
{
	detach(r);
	targets__free(r->targets);
	capture__free(r->cap);
}

/* With -- CMD: wait for it, forwarding nothing; its status is ours. */
static int finish_command(struct run *r, int rc)
{
	int status;

	if (!targets__command_pid(r->targets))
		return rc;
	if (targets__wait_command(r->targets, &status))
		return rc;
	if (WIFEXITED(status) && WEXITSTATUS(status) && !rc) {
		log_info("the command exited with status %d", WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	if (WIFSIGNALED(status) && !rc)
		log_info("the command was killed by signal %d", WTERMSIG(status));
	return rc;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o = {};
	struct run r = { .o = &o };
	uint64_t start;
	int rc = 1, err;

	err = parse_options(argc, argv, &o);
	if (err)
		return err < 0 ? 0 : err;
	install_signals();
	err = setup(&r);
	if (err)
		goto out;
	for (uint64_t w = 0; w < o.windows; w++) {
		if (w) {
			uint64_t resume = now_ns() + o.interval_ns;

			capture__free(r.cap);
			r.cap = new_capture(&r, w);
			if (!r.cap)
				goto out;
			collector__set_capture(r.col, r.cap);
			while (now_ns() < resume && !interrupts)
				if (poll_once(&r))
					goto out;
			if (interrupts || !targets__alive(r.targets))
				break;
		}
		err = arm(&r, &start);
		if (err)
			goto out;
		err = run_window(&r, start);
		if (err)
			goto out;
		err = xspace_write_capture(r.cap, o.logdir, r.written, sizeof(r.written));
		if (err)
			goto out;	/* the writer said why; no partial file */
		{
			struct stat st;

			r.written_bytes = stat(r.written, &st) ? 0 : st.st_size;
		}
		print_summary(&r, w);
		if (interrupts || !targets__alive(r.targets))
			break;
	}
	rc = 0;
out:
	if (fflush(stdout) || ferror(stdout)) {
		log_err("writing to standard output failed");
		rc = 1;
	}
	/* With -- CMD the command runs on after the capture: detach first, so
	 * it does not pay for probes nobody reads while we wait for it. */
	detach(&r);
	rc = r.targets ? finish_command(&r, rc) : rc;
	teardown(&r);
	return rc;
}
