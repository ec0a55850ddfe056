// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace report CAPTURE: what the run was doing, in the terminal
 * (XProf's Overview and Input Pipeline, computed from the capture).
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define LOG_CONTEXT "report"
#include "cli/cli.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "reader/capture_files.h"
#include "reader/xspace_reader.h"
#include "report/report.h"

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
		"(LOGDIR/plugins/profile/SESSION/HOST.xplane.pb); every file found is\n"
		"reported, oldest session first.\n"
		"\n"
		"Options:\n"
		"      --steps N|all    step rows in the text (default 20); -j lists every\n"
		"                       step in steps.list whatever this says\n"
		"  -w, --wide           names in full: no fitting to the terminal's width\n"
		"                       (else $COLUMNS, the terminal's, or 120 columns)\n"
		CLI_COMMON_HELP
		"\n"
		"With -j: one JSON object for one file, else {\"reports\": [...]};\n"
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

/* One file's report; 0, or 1 when it cannot be read. */
static int report_file(const struct capture_file *f, const struct report_text_opts *o,
		       struct json_writer *jw)
{
	struct xs_space *xs;
	struct report r;
	char err[512];
	int ret;

	ret = xs_read_file(f->path, &xs, err, sizeof(err));
	if (ret) {
		log_err("%s", err);
		return 1;
	}
	ret = report_build(xs, &r);
	if (ret) {
		log_err("%s: out of memory while analysing", f->path);
		xs_free(xs);
		return 1;
	}
	if (jw)
		report_print_json(&r, f->path, jw);
	else
		report_print_text(&r, f->path, o, stdout);
	report_free(&r);
	xs_free(xs);
	return 0;
}

enum { OPT_STEPS = 256 };

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "wide", no_argument, NULL, 'w' },
		CLI_COMMON_LONGOPTS,
		{}
	};
	struct report_text_opts o = { .max_steps = REPORT_DEFAULT_STEP_ROWS };
	bool wide = false;
	uint64_t v;
	struct json_writer *jw = NULL;
	struct capture_file *files;
	size_t n;
	char err[512];
	int opt, rc = 0;

	while ((opt = getopt_long(argc, argv, ":w" CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
		int done;

		switch (opt) {
		case OPT_STEPS:
			if (!strcmp(optarg, "all"))
				o.max_steps = SIZE_MAX;
			else if (!cli_parse_uint(optarg, &v) && v <= SIZE_MAX)
				o.max_steps = v;
			else
				return cli_bad_value("report", "--steps", optarg,
						     "a number of step rows, or all");
			continue;
		case 'w':
			wide = true;
			continue;
		}
		done = cli_common_or_exit("report", opt, argv, usage_report);
		if (done >= 0)
			return done;
	}
	o.width = wide ? 0 : text_width();
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
	}
	for (size_t i = 0; i < n; i++) {
		if (!jw && i)
			printf("\n");
		rc |= report_file(&files[i], &o, jw);
	}
	if (jw) {
		if (n > 1) {
			jw_end_array(jw);
			jw_end_object(jw);
		}
		fputc('\n', stdout);
		jw_free(jw);
	}
	capture_files_free(files, n);
	if (fflush(stdout)) {
		log_err("cannot write the report: %m");
		rc = 1;
	}
	return rc;
}
