// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace record: capture one or more windows of a running trainer, of a
 * launched command, or of every accelerator user on the host, and write them
 * where TensorBoard/XProf opens them.
 *
 * The options become a struct recorder_opts; the recorder (session/recorder.c)
 * attaches, arms and runs the windows. Here: signals, writing each window's
 * capture, its summary, and the exit status.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_CONTEXT "record"
#include "lib/log.h"
#include "capture/capture.h"
#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/record_summary.h"
#include "collect/collector.h"
#include "session/recorder.h"
#include "discover/probe_packs.h"
#include "discover/procfs.h"
#include "attach/runtime_attach.h"
#include "export/export.h"
#include "lib/json_writer.h"
#include "lib/atomic_file.h"
#include "output/xprof_logdir.h"
#include "store/store.h"
#include "output/xspace_writer.h"
#include "probe/probe_session.h"
#include "reader/xspace_reader.h"

#define MAX_PIDS 64
#define MAX_LIBRARIES 16
#define MAX_DEVTRACE 256

/* The recorder's options, the arrays they point into, and where to write. */
struct record_args {
	struct recorder_opts opts;
	pid_t pids[MAX_PIDS];
	const char *libraries[MAX_LIBRARIES];
	const char *devtrace[MAX_DEVTRACE];
	const char *logdir;
	bool exports[EXPORT_CHROME_JSON + 1];	/* --format: beside the XSpace */
	bool no_agent;				/* --no-agent */
	bool quiet;				/* -q */
	struct progress *progress;
};

/*
 * A full disk is said before the window, not only found after it: what
 * the captures can take at most (their budget's spans and as many memory
 * events, at XSPACE_BYTES_PER_EVENT_BOUND each, every window and export)
 * against the space free where they go. A warning: most windows hold far
 * fewer events than their budget.
 */
static void say_space(const struct record_args *a)
{
	uint64_t budget = a->opts.max_spans ? a->opts.max_spans : CAPTURE_DEFAULT_MAX_SPANS;
	uint64_t files = 1, free_bytes, bound;

	if (a->exports[EXPORT_PERFETTO])
		files += 1;		/* about the XSpace's size */
	if (a->exports[EXPORT_CHROME_JSON])
		files += 1;		/* gzipped text: about as much */
	bound = 2 * budget * XSPACE_BYTES_PER_EVENT_BOUND * files * a->opts.windows;
	if (xprof_logdir_free_bytes(a->logdir, &free_bytes) || free_bytes >= bound)
		return;
	log_warn("%s has %.1f MiB free; the capture%s can take up to %.1f MiB (%" PRIu64
		 " events, the budget, and as many memory events%s%s): a full disk "
		 "would lose %s after the window; free space, or lower --max-events",
		 a->logdir, free_bytes / 1048576.0, a->opts.windows > 1 ? "s" : "",
		 bound / 1048576.0, budget, files > 1 ? ", with the exports" : "",
		 a->opts.windows > 1 ? ", in every window" : "",
		 a->opts.windows > 1 ? "them" : "it");
}

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
		"  -p, --pid PID          a running process (repeatable); up to 8 processes\n"
		"                         (or a command) get their runtime probes for\n"
		"                         themselves only: no other process traps\n"
		"      --children         and its descendants, including later ones\n"
		"                         (probes then trap in every process)\n"
		"  -a, --all              every process using an accelerator runtime or device,\n"
		"                         including processes that start later\n"
		"  -- CMD [ARGS...]       launch CMD and trace it from its first instruction\n"
		"\n"
		"Window (the clock starts at the target's first execution of a compiled\n"
		"program: an Execute, a kernel or graph launch, a submit ioctl):\n"
		"  -d, --duration TIME    window length, e.g. 10s, 500ms, 2m\n"
		"      --steps N          N device steps (executions): ends where step N+1\n"
		"                         begins (N at most 10000000)\n"
		"      --delay TIME       open the window TIME after the first execution\n"
		"      --from-start       start at the first device activity of any kind\n"
		"                         (start-up transfers included), not the first\n"
		"                         execution\n"
		"      --now              open the window as soon as the probes are in\n"
		"                         place, whatever the target is doing (stuck in a\n"
		"                         host checkpoint, a device op, a wait); implies\n"
		"                         --sched, so the capture says what its threads\n"
		"                         did\n"
		"      --grace TIME       after the stop, wait up to TIME for open spans to end\n"
		"      --arm-timeout TIME give up when no execution comes (default 30s; the\n"
		"                         window's duration when shorter, while a --pid\n"
		"                         target maps no accelerator runtime)\n"
		"      --windows K        K windows, each in its own session directory\n"
		"      --interval TIME    time between windows (default 0)\n"
		"  Without --duration or --steps the window lasts until Ctrl-C, or until\n"
		"  the target exits. A first Ctrl-C ends the window and writes the capture;\n"
		"  a second aborts without writing.\n"
		"\n"
		"Output:\n"
		"  -o, --logdir DIR       where captures go (default: acceltrace-logs); a\n"
		"                         bucket, s3://BUCKET/PREFIX or gs://BUCKET/PREFIX,\n"
		"                         is written through the spool (docs/buckets.md)\n"
		"      --session NAME     session directory name (default: local time); a\n"
		"                         session holding this host's capture already is\n"
		"                         never written over: NAME-2, -3, ... instead\n"
		"      --max-events N     keep at most N spans, dropping the least useful\n"
		"                         kinds first, and say so (default 1000000)\n"
		"      --format LIST      xspace, perfetto, json, comma-separated (default\n"
		"                         xspace): perfetto adds HOST.perfetto-trace, json\n"
		"                         HOST.trace.json.gz beside the .xplane.pb, converted\n"
		"                         from it (the XSpace is always written)\n"
		"\n"
		"Probes:\n"
		"      --library PATH     also probe this runtime library file from the start\n"
		"                         (catches GetPjrtApi when it is loaded later)\n"
		"      --devtrace PATH    also read this devtrace buffer (docs/devtrace.md);\n"
		"                         buffers the targets map or have open are found\n"
		"                         without it\n"
		"      --sched            record when traced threads go off and on CPU\n"
		"      --ringbuf-size N   bytes per ring buffer shard (default 8M)\n"
		"      --no-agent         do not load the in-process agent into CMD, nor ask\n"
		"                         agents already in the targets for device detail\n"
		"                         (GPU kernels, and a PJRT plugin's device trace\n"
		"                         through its profiler, come only from the agent:\n"
		"                         docs/agent.md)\n"
		"\n"
		"Cost:\n"
		"      --cpu-priority P   idle: acceltrace under SCHED_IDLE while a window is\n"
		"                         open and it keeps up, normal for 30 s when starved\n"
		"                         of CPU (needs CAP_SYS_NICE); normal while it\n"
		"                         attaches, arms and writes; or normal throughout\n"
		"                         (default idle, as the daemon)\n"
		"\n"
		"Progress: on a terminal one line on stderr says what is happening\n"
		"(attaching, waiting for the first step, the window's time, events and\n"
		"losses); elsewhere one line per phase.\n"
		"  -q, --quiet            no progress and no notes, errors only; stdout holds\n"
		"                         only each capture's path\n"
		"\n"
		"Exit status: 0 when a capture was written; 1 when none was (no device\n"
		"activity, an I/O error, a logdir it cannot write to: said before the\n"
		"window, a target that does not exist); 2 on a usage error; with -- CMD,\n"
		"the command's own non-zero exit status, or 128 + the signal that killed\n"
		"it, as a shell gives it.\n"
		"\n"
		"Options:\n"
		CLI_COMMON_HELP
		"\n"
		"Examples:\n"
		"  acceltrace record --pid 4242 --duration 10s --logdir /tmp/tb\n"
		"  acceltrace record -a --steps 5 --format perfetto,json\n"
		"  acceltrace record --logdir /tmp/tb -- python3 train.py\n");
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

/* ---------------------------------------------------------------- options */

/* "xspace,perfetto,json": which exports follow the XSpace. */
static int parse_formats(const char *list, struct record_args *a)
{
	char buf[128], *save = NULL, *tok;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf) || !*list)
		return -EINVAL;
	memset(a->exports, 0, sizeof(a->exports));
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum export_format f;

		if (!strcmp(tok, "xspace"))
			continue;
		if (export_format_parse(tok, &f))
			return -EINVAL;
		a->exports[f] = true;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct record_args *a)
{
	enum {
		OPT_CHILDREN = 256, OPT_STEPS, OPT_DELAY, OPT_GRACE, OPT_ARM_TIMEOUT,
		OPT_WINDOWS, OPT_INTERVAL, OPT_SESSION, OPT_MAX_EVENTS, OPT_LIBRARY,
		OPT_SCHED, OPT_RINGBUF, OPT_FROM_START, OPT_NOW, OPT_DEVTRACE, OPT_FORMAT,
		OPT_NO_AGENT, OPT_CPU_PRIORITY,
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
		{ "from-start", no_argument, NULL, OPT_FROM_START },
		{ "now", no_argument, NULL, OPT_NOW },
		{ "windows", required_argument, NULL, OPT_WINDOWS },
		{ "interval", required_argument, NULL, OPT_INTERVAL },
		{ "logdir", required_argument, NULL, 'o' },
		{ "session", required_argument, NULL, OPT_SESSION },
		{ "max-events", required_argument, NULL, OPT_MAX_EVENTS },
		{ "library", required_argument, NULL, OPT_LIBRARY },
		{ "devtrace", required_argument, NULL, OPT_DEVTRACE },
		{ "sched", no_argument, NULL, OPT_SCHED },
		{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "no-agent", no_argument, NULL, OPT_NO_AGENT },
		{ "cpu-priority", required_argument, NULL, OPT_CPU_PRIORITY },
		{ "quiet", no_argument, NULL, 'q' },
		CLI_COMMON_LONGOPTS,
		{}
	};
	struct recorder_opts *o = &a->opts;
	uint64_t v;
	int opt;

	o->sz = sizeof(*o);
	o->pids = a->pids;
	o->libraries = a->libraries;
	o->devtrace_paths = a->devtrace;
	/* --arm-timeout left 0 unless given: the recorder's 30 s then, and
	 * --duration may bound a wait for a runtime (recorder.h). */
	o->windows = 1;
	/* As the daemon: the trainer first while acceltrace keeps up. */
	o->cpu_priority = RECORDER_CPU_IDLE;
	a->logdir = "acceltrace-logs";
	/* '+': stop at the first non-option, so "-- CMD -x" reaches CMD. */
	while ((opt = getopt_long(argc, argv, "+:p:ad:o:q" CLI_COMMON_SHORTOPTS,
				  longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (cli_parse_uint(optarg, &v) || !v || v > INT32_MAX)
				return cli_bad_value("record", "--pid", optarg, "a process id");
			if (o->n_pids == MAX_PIDS)
				return cli_bad_value("record", "--pid", optarg,
						     "at most 64 processes");
			a->pids[o->n_pids++] = v;
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
			    o->steps > RECORDER_MAX_STEPS)
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
		case OPT_FROM_START: o->from_start = true; break;
		/* What a target doing nothing the probes see is doing: when
		 * its threads go off and on CPU. */
		case OPT_NOW: o->now = o->sched = true; break;
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
		case 'o': a->logdir = optarg; break;
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
			a->libraries[o->n_libraries++] = optarg;
			break;
		case OPT_DEVTRACE:
			if (o->n_devtrace_paths == MAX_DEVTRACE)
				return cli_bad_value("record", "--devtrace", optarg,
						     "at most 256 buffers");
			a->devtrace[o->n_devtrace_paths++] = optarg;
			break;
		case OPT_SCHED: o->sched = true; break;
		case OPT_NO_AGENT: a->no_agent = true; break;
		case OPT_CPU_PRIORITY:
			if (!strcmp(optarg, "idle"))
				o->cpu_priority = RECORDER_CPU_IDLE;
			else if (!strcmp(optarg, "normal"))
				o->cpu_priority = RECORDER_CPU_NORMAL;
			else
				return cli_bad_value("record", "--cpu-priority", optarg,
						     "idle or normal");
			break;
		case 'q': a->quiet = true; break;
		case OPT_FORMAT:
			if (parse_formats(optarg, a))
				return cli_bad_value("record", "--format", optarg,
						     "a comma-separated list of xspace, perfetto, json");
			break;
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
	o->device_detail = !a->no_agent;
	o->no_agents = a->no_agent;
	return 0;
}

/* ---------------------------------------------------------------- agent */

/* The agent library: ACCELTRACE_AGENT_LIB, else beside this binary (a build
 * tree), else ../lib/acceltrace/ from it (an install). */
static bool find_agent(char *path, size_t len)
{
	const char *env = getenv("ACCELTRACE_AGENT_LIB");
	static const char *const rel[] = {
		"libacceltrace-agent.so", "../lib/acceltrace/libacceltrace-agent.so",
	};
	char exe[4096], *slash;

	if (env && env[0]) {
		snprintf(path, len, "%s", env);
		return !access(path, R_OK);
	}
	if (procfs_self_exe(exe, sizeof(exe)))
		return false;
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if ((size_t)snprintf(path, len, "%s/%s", exe, rel[i]) < len && !access(path, R_OK))
			return true;
	}
	return false;
}

/* @path first in LD_PRELOAD, before what the user preloads. */
static void preload(const char *path)
{
	const char *was = getenv("LD_PRELOAD");
	char *both;

	if (!was || !was[0]) {
		setenv("LD_PRELOAD", path, 1);
		return;
	}
	if (strstr(was, path))
		return;
	if (asprintf(&both, "%s %s", path, was) < 0)
		return;		/* then CUDA's hook alone */
	setenv("LD_PRELOAD", both, 1);
	free(both);
}

/*
 * What `record -- CMD` launches gets the agent: through CUDA's injection
 * hook (libcuda loads it at cuInit) and LD_PRELOAD (for a PJRT plugin's
 * profiler; each process then holds a dormant control page and thread).
 * An injection library the user set (Nsight's) is left alone, and then
 * the agent is not preloaded either: one profiler of the device at once.
 */
static void load_agent_into_command(void)
{
	const char *set = getenv("CUDA_INJECTION64_PATH");
	char path[4096] = "";

	if (set && set[0]) {
		log_info("CUDA_INJECTION64_PATH is set (%s): the acceltrace agent is not loaded "
			 "into the command, so no GPU kernels", set);
		return;
	}
	if (!find_agent(path, sizeof(path))) {
		log_warn("the acceltrace agent library was not found (%s): no GPU kernels; "
			 "ACCELTRACE_AGENT_LIB names it", path[0] ? path : "libacceltrace-agent.so");
		return;
	}
	setenv("CUDA_INJECTION64_PATH", path, 1);
	preload(path);
	log_debug("CUDA_INJECTION64_PATH=%s and LD_PRELOAD=%s for the command", path,
		  getenv("LD_PRELOAD"));
}

/* ---------------------------------------------------------------- command */

/*
 * --format: the other formats, converted from the XSpace just written (so
 * they hold exactly what it holds). A failure is reported; the XSpace stays.
 */
static int write_exports(const struct record_args *args, struct written *wr)
{
	struct xs_space *xs = NULL;
	char err_msg[512];
	int err = 0;

	for (int f = 0; f <= EXPORT_CHROME_JSON && !err; f++) {
		if (!args->exports[f])
			continue;
		if (!xs && (err = xs_read_file(wr->path, &xs, err_msg, sizeof(err_msg)))) {
			log_err("cannot convert the capture: %s", err_msg);
			break;
		}
		err = export_path_beside(wr->path, f, wr->exported[f], sizeof(wr->exported[f]));
		if (!err)
			err = export_write_file(xs, f, wr->exported[f]);
		if (err)
			wr->exported[f][0] = 0;
	}
	xs_free(xs);
	return err;
}

/* Each finalized window: written, then summarized. */
static int write_window(void *ctx, struct recorder *rec, uint32_t window)
{
	const struct record_args *args = ctx;
	struct written wr = { .logdir = args->logdir };
	struct xspace_written out;
	int err;

	(void)window;
	err = xspace_write_capture(recorder__capture(rec), wr.logdir, &out);
	if (err)
		return err;	/* the writer said why; no partial file */
	snprintf(wr.path, sizeof(wr.path), "%s", out.path);
	snprintf(wr.session, sizeof(wr.session), "%s", out.session);
	wr.bytes = out.bytes;
	err = write_exports(args, &wr);
	progress__clear(args->progress);
	print_summary(rec, &wr, args->quiet);
	return err;
}

/* What record says while it works (cli/progress.h); -q: errors only. */
static int start_progress(struct record_args *a)
{
	const struct recorder_opts *o = &a->opts;
	char what[128];

	if (a->quiet)
		log_set_verbosity(LOG_ERROR);
	if (o->whole_host)
		snprintf(what, sizeof(what), "every accelerator process on this host");
	else if (o->command)
		snprintf(what, sizeof(what), "%s", o->command[0]);
	else if (o->n_pids == 1)
		snprintf(what, sizeof(what), "pid %d", (int)o->pids[0]);
	else
		snprintf(what, sizeof(what), "%zu processes", o->n_pids);
	a->progress = progress__new(progress_mode_for(a->quiet), what, o->from_start);
	if (!a->progress) {
		log_err("starting: %s", strerror(errno));
		return -ENOMEM;
	}
	a->opts.progress = progress__recorder;
	a->opts.progress_ctx = a->progress;
	return 0;
}

/*
 * With -- CMD: its wait status becomes ours when the capture went well, as
 * a shell gives it: its exit status, or 128 + the signal that killed it.
 */
static int command_status(int status, int rc)
{
	if (rc)
		return rc;
	if (WIFEXITED(status) && WEXITSTATUS(status)) {
		log_info("the command exited with status %d", WEXITSTATUS(status));
		return WEXITSTATUS(status);
	}
	if (WIFSIGNALED(status)) {
		log_warn("the command was killed by signal %d (%s): exit status %d, as a "
			 "shell gives it", WTERMSIG(status), strsignal(WTERMSIG(status)),
			 128 + WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_args args = {};
	struct recorder *rec = NULL;
	int rc = 1, err, status;

	err = parse_options(argc, argv, &args);
	if (err)
		return err < 0 ? 0 : err;
	/* What would fail later is said first, before any probe is loaded:
	 * no privilege, a target that does not exist, a logdir it cannot
	 * write. */
	if (cli_require_privileges("record"))
		return 1;
	for (size_t i = 0; i < args.opts.n_pids; i++)
		if (!procfs_pid_alive(args.pids[i])) {
			log_err("no process with pid %d", (int)args.pids[i]);
			return 1;
		}
	if (store_is_url(args.logdir) && (args.exports[EXPORT_PERFETTO] ||
					   args.exports[EXPORT_CHROME_JSON])) {
		log_err("--perfetto and --chrome-json write beside a local capture; with a "
			"bucket logdir, convert it afterwards: acceltrace convert -O FILE %s",
			args.logdir);
		return 1;
	}
	/* An unwritable logdir (a bucket's refused credential) is said now,
	 * not after the whole window. */
	err = xprof_logdir_check(args.logdir);
	if (err) {
		log_err("cannot write captures to %s: %s", args.logdir, io_error_reason(err));
		return 1;
	}
	say_space(&args);
	if (start_progress(&args))
		return 1;
	args.opts.interrupts = &interrupts;
	install_signals();
	if (args.opts.command && !args.no_agent)
		load_agent_into_command();
	rec = recorder__new(&args.opts);
	if (!rec) {
		log_err("starting the recorder failed: %s", strerror(errno));
		return 1;
	}
	err = recorder__attach(rec);
	if (err)
		goto out;
	err = recorder__run(rec, write_window, &args);
	if (err)
		goto out;
	rc = 0;
out:
	if (fflush(stdout) || ferror(stdout)) {
		log_err("writing to standard output failed");
		rc = 1;
	}
	/* With -- CMD the command runs on after the capture: detach first, so
	 * it does not pay for probes nobody reads while we wait for it. */
	recorder__detach(rec);
	if (!recorder__wait_command(rec, &status))
		rc = command_status(status, rc);
	recorder__free(rec);
	progress__free(args.progress);
	return rc;
}
