// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace report CAPTURE: what the run was doing, in the terminal
 * (XProf's Overview and Input Pipeline, computed from the capture).
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define LOG_CONTEXT "report"
#include "lib/array.h"
#include "cli/cli.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "reader/capture_files.h"
#include "reader/xspace_processes.h"
#include "reader/xspace_reader.h"
#include "report/report.h"
#include "report/report_fleet.h"

void usage_report(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace report [options] CAPTURE\n"
		"\n"
		"Says what a captured run was doing: step time and where it goes\n"
		"(input wait, compute, other), whether the job is input-bound\n"
		"(XProf's thresholds: >= 5%% moderately, >= 20%% highly), device and\n"
		"host idle time, the top device ops, the input pipeline, what the\n"
		"capture lost and what it cannot tell. Reads XSpace from any producer\n"
		"(acceltrace, JAX's or TensorFlow's profiler).\n"
		"\n"
		"CAPTURE is an .xplane.pb file, a session directory, or a logdir\n"
		"(LOGDIR/plugins/profile/SESSION/HOST.xplane.pb), here or in a bucket\n"
		"(gs://B/P, s3://B/P: downloaded, then removed); every file found is\n"
		"reported, oldest session first. A session of several hosts\n"
		"(HOST.xplane.pb each) is reported host by host, then as a fleet: the\n"
		"hosts side by side, the slowest by median step time, its gap to the\n"
		"others, the spread of step times and whether the slowest is a\n"
		"straggler (> 5%% slower and more than the step-time noise).\n"
		"\n"
		"A capture of several processes that drive a device (a whole-host\n"
		"capture of two jobs) is reported process by process: each from its own\n"
		"devices, threads and device memory, headed by its pid and command.\n"
		"\n"
		"Options:\n"
		"      --pid PID        only that process's report\n"
		"      --steps N|all    step rows in the text (default 20); -j lists every\n"
		"                       step in steps.list whatever this says\n"
		"      --memory         device memory in full: the largest allocations at\n"
		"                       each peak, churn per step, timelines (else two\n"
		"                       lines an allocator; -j has all of it)\n"
		"  -w, --wide           names in full: no fitting to the terminal's width\n"
		"                       (else $COLUMNS, the terminal's, or 120 columns)\n"
		CLI_COMMON_HELP
		"\n"
		"With -j: one JSON object for one report (its \"process\": {pid, name}, or\n"
		"null for a whole capture), else {\"reports\": [...]},\n"
		"with \"fleet\": {...} for a session of several hosts (\"fleets\": [...]\n"
		"for a logdir's sessions);\n"
		"the keys are documented in docs/report.md.\n"
		"\n"
		"Examples:\n"
		"  acceltrace report /tmp/tb\n"
		"  acceltrace report /tmp/tb/plugins/profile/SESSION/HOST.xplane.pb\n"
		"  acceltrace report -j /tmp/tb > report.json\n");
}

/* The columns a line may take: $COLUMNS, the terminal's, or 120. */
static size_t text_width(void)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	uint64_t v;

	if (env && !cli_parse_uint(env, &v) && v >= 40 && v <= 4096)
		return v;
	if (isatty(STDOUT_FILENO) && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_col >= 40)
		return ws.ws_col;
	return 120;
}

/* What every file's report is asked for, and the JSON output's state. */
struct report_args {
	struct report_text_opts text;
	int64_t pid;		/* --pid: that process only; 0: each process */
	struct json_writer *jw;	/* NULL: text */
	/* One file: its reports go in {"reports": [...]} once it has
	 * several (one per process). */
	bool one_file, wrapped;
};

/* One report: joins the fleet, then printed (text headed by @heading). */
static int emit(const struct report *r, const struct capture_file *f,
		struct report_args *a, struct fleet *fleet, const char *heading)
{
	char label[512];
	int ret = 0;

	if (fleet) {
		int64_t *ns = calloc(r->n_complete + 1, sizeof(*ns));
		int64_t *num = calloc(r->n_complete + 1, sizeof(*num));
		bool numbered = r->n_complete > 0;

		for (size_t i = 0; ns && num && i < r->n_complete; i++) {
			ns[i] = r->steps[i].time_ps / 1000;
			num[i] = r->steps[i].step_num;
			numbered &= num[i] >= 0;
		}
		/* A host of several processes is one fleet member each. */
		if (r->pid > 0)
			snprintf(label, sizeof(label), "%s (pid %lld)", f->host, (long long)r->pid);
		else
			snprintf(label, sizeof(label), "%s", f->host);
		if (!ns || !num || fleet__add_host(fleet, label, f->shown, ns,
						   numbered ? num : NULL, r->n_complete,
						   r->device_idle_pct, r->input_bound_pct))
			ret = -ENOMEM;
		free(ns);
		free(num);
		if (ret) {
			log_err("%s: out of memory while comparing hosts", f->shown);
			return 1;
		}
	}
	if (a->jw) {
		report_print_json(r, f->shown, f->host, a->jw);
		return 0;
	}
	if (heading[0])
		printf("%s\n", heading);
	report_print_text(r, f->shown, &a->text, stdout);
	return 0;
}

/* The processes of @xs that drive a device, into *pids (free() it). */
static size_t device_pids(const struct xs_space *xs, int64_t **pids, char *names,
			  size_t len)
{
	struct xs_process *v;
	size_t n, k = 0, used = 0;

	*pids = NULL;
	if (names && len)
		names[0] = '\0';
	if (xs_processes(xs, &v, &n))
		return 0;
	*pids = calloc(n ? n : 1, sizeof(**pids));
	for (size_t i = 0; *pids && i < n; i++) {
		if (!v[i].n_devices)
			continue;
		(*pids)[k++] = v[i].pid;
		if (names && used < len)
			used += snprintf(names + used, len - used, "%s%lld (%s)", k > 1 ? ", " : "",
					 (long long)v[i].pid, v[i].name[0] ? v[i].name : "unnamed");
	}
	free(v);
	return *pids ? k : 0;
}

/* The focus first, the others in their order. */
static void focus_first(int64_t *pids, size_t n, int64_t focus)
{
	for (size_t i = 1; focus && i < n; i++) {
		if (pids[i] != focus)
			continue;
		memmove(pids + 1, pids, i * sizeof(*pids));
		pids[0] = focus;
		return;
	}
}

/*
 * One file's reports; 0, or 1 when it cannot be read. A capture of
 * several processes that drive a device (a whole-host capture of two
 * jobs) is reported process by process, each from its own devices and
 * threads; --pid picks one. With a fleet (a session of several hosts),
 * each report's steps join it and the text is headed by its host.
 */
static int report_file(const struct capture_file *f, struct report_args *a,
		       struct fleet *fleet, size_t nth, size_t of)
{
	struct xs_space *xs;
	struct report r;
	int64_t *pids = NULL;
	size_t n_pids;
	char err[512], names[512], heading[640] = "";
	int64_t focus = 0;
	int ret, rc = 0;

	ret = xs_read_file(f->path, &xs, err, sizeof(err));
	if (ret) {
		log_err("%s", err);
		return 1;
	}
	n_pids = device_pids(xs, &pids, names, sizeof(names));
	if (fleet && !a->jw)
		printf("=== host %s (%zu of %zu in session %s) ===\n", f->host, nth, of,
		       fleet->session);
	if (a->pid > 0) {
		ret = report_build_process(xs, a->pid, &r);
		if (ret == -ESRCH) {
			log_err("%s: no process %lld in this capture; processes with a device: %s",
				f->shown, (long long)a->pid, n_pids ? names : "none");
			rc = 1;
		} else if (ret) {
			log_err("%s: out of memory while analysing", f->shown);
			rc = 1;
		} else {
			rc = emit(&r, f, a, fleet, "");
			report_free(&r);
		}
	} else if (n_pids >= 2) {
		if (a->jw && a->one_file && !a->wrapped) {
			jw_start_object(a->jw);
			jw_name(a->jw, "reports");
			jw_start_array(a->jw);
			a->wrapped = true;
		}
		focus = report_focus_pid(xs);
		focus_first(pids, n_pids, focus);
		for (size_t i = 0; i < n_pids && !rc; i++) {
			ret = report_build_process(xs, pids[i], &r);
			if (ret) {
				log_err("%s: out of memory while analysing", f->shown);
				rc = 1;
				break;
			}
			snprintf(heading, sizeof(heading), "%s=== process %lld (%s), %zu of %zu "
				 "with a device in this capture%s ===", i ? "\n" : "",
				 (long long)pids[i], r.process_name[0] ? r.process_name : "unnamed",
				 i + 1, n_pids, pids[i] == focus ? ", the one it was taken for" : "");
			rc = emit(&r, f, a, fleet, heading);
			report_free(&r);
		}
	} else if (report_build(xs, &r)) {
		log_err("%s: out of memory while analysing", f->shown);
		rc = 1;
	} else {
		rc = emit(&r, f, a, fleet, "");
		report_free(&r);
	}
	free(pids);
	xs_free(xs);
	return rc;
}

/*
 * The files from files[i] on, one directory's (a session's) at a time:
 * each file's report, then the fleet's when the session has several hosts
 * (kept in *fleets for JSON, printed at once as text). 1 on any failure.
 */
static int report_session(const struct capture_file *files, size_t n,
			  struct report_args *a, struct fleet **fleet_out)
{
	struct fleet *fleet = NULL;
	int rc = 0;

	*fleet_out = NULL;
	if (n > 1) {
		fleet = fleet__new(files[0].session);
		if (!fleet) {
			log_err("out of memory");
			return 1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!a->jw && i)
			printf("\n");
		rc |= report_file(&files[i], a, fleet, i + 1, n);
	}
	if (!fleet)
		return rc;
	if (fleet__compute(fleet)) {
		log_err("%s: out of memory while comparing hosts", files[0].session);
		fleet__free(fleet);
		return 1;
	}
	if (a->jw)
		*fleet_out = fleet;
	else {
		fleet_print_text(fleet, stdout);
		fleet__free(fleet);
	}
	return rc;
}

/* The fleets after the reports: one object for one session, else a list. */
static void print_fleets(struct json_writer *jw, struct fleet **fleets, size_t n,
			 bool one_session)
{
	if (one_session) {
		if (n) {
			jw_name(jw, "fleet");
			fleet_print_json(fleets[0], jw);
		}
		return;
	}
	if (!n)
		return;
	jw_name(jw, "fleets");
	jw_start_array(jw);
	for (size_t i = 0; i < n; i++)
		fleet_print_json(fleets[i], jw);
	jw_end_array(jw);
}

enum { OPT_STEPS = 256, OPT_PID, OPT_MEMORY };

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "wide", no_argument, NULL, 'w' },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "memory", no_argument, NULL, OPT_MEMORY },
		CLI_COMMON_LONGOPTS,
		{}
	};
	struct report_args args = { .text = { .max_steps = REPORT_DEFAULT_STEP_ROWS } };
	struct report_text_opts *o = &args.text;
	bool wide = false;
	uint64_t v;
	struct json_writer *jw = NULL;
	struct capture_file *files;
	struct fleet **fleets = NULL;
	size_t n, n_fleets = 0, fleets_cap = 0;
	bool one_session = true;
	char err[512];
	int opt, rc = 0;

	while ((opt = getopt_long(argc, argv, ":w" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		int done;

		switch (opt) {
		case OPT_STEPS:
			if (!strcmp(optarg, "all"))
				o->max_steps = SIZE_MAX;
			else if (!cli_parse_uint(optarg, &v) && v <= SIZE_MAX)
				o->max_steps = v;
			else
				return cli_bad_value("report", "--steps", optarg,
						     "a number of step rows, or all");
			continue;
		case 'w':
			wide = true;
			continue;
		case OPT_MEMORY:
			o->memory_detail = true;
			continue;
		case OPT_PID:
			if (cli_parse_uint(optarg, &v) || !v || v > INT32_MAX)
				return cli_bad_value("report", "--pid", optarg, "a process id");
			args.pid = (int64_t)v;
			continue;
		}
		done = cli_common_or_exit("report", opt, argv, usage_report);
		if (done >= 0)
			return done;
	}
	o->width = wide ? 0 : text_width();
	if (optind >= argc) {
		log_err("name a capture: an .xplane.pb, a session directory or a logdir");
		return EXIT_USAGE;
	}
	if (optind + 1 < argc)
		return cli_bad_argument("report", argv[optind + 1]);
	if (capture_files_find(argv[optind], &files, &n, err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	if (cli_json()) {
		jw = jw_new(stdout, true);
		if (!jw) {
			log_err("out of memory");
			capture_files_free(files, n);
			return 1;
		}
		if (n > 1) {
			jw_start_object(jw);
			jw_name(jw, "reports");
			jw_start_array(jw);
		}
		args.jw = jw;
		args.one_file = n == 1;
	}
	for (size_t i = 0, j; i < n; i = j) {
		struct fleet *fleet;

		for (j = i + 1; j < n && capture_files_same_dir(&files[i], &files[j]); j++)
			;
		if (!jw && i)
			printf("\n");
		rc |= report_session(files + i, j - i, &args, &fleet);
		if (fleet) {
			if (ARRAY_GROW(fleets, fleets_cap, n_fleets + 1)) {
				fleet__free(fleet);
				rc = 1;
				continue;
			}
			fleets[n_fleets++] = fleet;
		}
		one_session = one_session && !i && j == n;
	}
	if (jw) {
		if (n > 1 || args.wrapped) {
			jw_end_array(jw);
			print_fleets(jw, fleets, n_fleets, one_session);
			jw_end_object(jw);
		}
		fputc('\n', stdout);
		jw_free(jw);
	}
	for (size_t i = 0; i < n_fleets; i++)
		fleet__free(fleets[i]);
	free(fleets);
	capture_files_free(files, n);
	if (fflush(stdout)) {
		log_err("cannot write the report: %m");
		rc = 1;
	}
	return rc;
}
