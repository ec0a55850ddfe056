// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace convert CAPTURE --to perfetto|json: a capture (any producer's
 * XSpace) as Perfetto's protobuf trace or Chrome trace JSON (gzip).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#define LOG_CONTEXT "convert"
#include "cli/cli.h"
#include "export/export.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "reader/capture_files.h"
#include "reader/xspace_reader.h"

void usage_convert(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace convert [options] --to FORMAT CAPTURE\n"
		"\n"
		"Converts a capture (an .xplane.pb from acceltrace or another profiler, a\n"
		"session directory or a logdir) to another trace format:\n"
		"  perfetto   Perfetto's native protobuf trace (HOST.perfetto-trace):\n"
		"             a track per thread and per device line, interned names,\n"
		"             a clock snapshot, flows from launches to device work\n"
		"  json       Chrome trace-event JSON, gzipped (HOST.trace.json.gz)\n"
		"Spans acceltrace clipped to its window are given their true times.\n"
		"\n"
		"Options:\n"
		"  -t, --to FORMAT      perfetto or json (required)\n"
		"  -O, --output PATH    the file to write (one input file only; default:\n"
		"                       beside each .xplane.pb); a warning when its\n"
		"                       name does not end as the format's does\n"
		CLI_COMMON_HELP
		"\n"
		"See docs/export.md.\n"
		"\n"
		"Examples:\n"
		"  acceltrace convert --to perfetto /tmp/tb\n"
		"  acceltrace convert --to json -O trace.json.gz HOST.xplane.pb\n");
}

static int convert_one(const char *in, const char *out, enum export_format f,
		       struct json_writer *jw)
{
	struct xs_space *xs;
	char err[512], path[4096];
	int ret;

	if (!out) {
		if (export_path_beside(in, f, path, sizeof(path))) {
			log_err("%s: the output path is too long", in);
			return 1;
		}
		out = path;
	} else if (!export_path_fits(out, f, path, sizeof(path))) {
		/* Written all the same: the name is the user's to choose. */
		log_warn("%s will hold %s, which its name does not say; a name "
			 "ending in %s fits%s%s%s", out,
			 f == EXPORT_PERFETTO ? "Perfetto's protobuf trace" :
						"gzip-compressed Chrome trace JSON",
			 f == EXPORT_PERFETTO ? "'.perfetto-trace'" : "'.json.gz'",
			 path[0] ? " (" : "", path, path[0] ? ")" : "");
	}
	ret = xs_read_file(in, &xs, err, sizeof(err));
	if (ret) {
		log_err("%s", err);
		return 1;
	}
	ret = export_write_file(xs, f, out);
	xs_free(xs);
	if (ret)
		return 1;
	if (jw) {
		jw_start_object(jw);
		jw_string_field(jw, "input", in);
		jw_string_field(jw, "output", out);
		jw_string_field(jw, "format", export_format_name(f));
		jw_end_object(jw);
	} else {
		printf("%s -> %s\n", in, out);
	}
	return 0;
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'O' },
		CLI_COMMON_LONGOPTS,
		{}
	};
	const char *to = NULL, *output = NULL;
	struct json_writer *jw = NULL;
	struct capture_file *files;
	enum export_format f;
	char err[512];
	size_t n;
	int opt, rc = 0;

	while ((opt = getopt_long(argc, argv, ":t:O:" CLI_COMMON_SHORTOPTS, longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 't': to = optarg; break;
		case 'O': output = optarg; break;
		default: {
			int done = cli_common_or_exit("convert", opt, argv, usage_convert);

			if (done >= 0)
				return done;
		}
		}
	}
	if (!to) {
		log_err("name the format: --to perfetto or --to json");
		return EXIT_USAGE;
	}
	if (export_format_parse(to, &f))
		return cli_bad_value("convert", "--to", to, "perfetto or json");
	if (optind >= argc) {
		log_err("name a capture: an .xplane.pb, a session directory or a logdir");
		return EXIT_USAGE;
	}
	if (optind + 1 < argc)
		return cli_bad_argument("convert", argv[optind + 1]);
	if (capture_files_find(argv[optind], &files, &n, err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	if (output && n > 1) {
		log_err("--output names one file, but %s holds %zu captures", argv[optind], n);
		capture_files_free(files, n);
		return EXIT_USAGE;
	}
	if (cli_json()) {
		jw = jw_new(stdout, true);
		if (!jw) {
			capture_files_free(files, n);
			return 1;
		}
		jw_start_array(jw);
	}
	for (size_t i = 0; i < n; i++)
		rc |= convert_one(files[i].path, output, f, jw);
	if (jw) {
		jw_end_array(jw);
		fputc('\n', stdout);
		jw_free(jw);
	}
	capture_files_free(files, n);
	return rc;
}
