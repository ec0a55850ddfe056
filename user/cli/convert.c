// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * acceltrace convert CAPTURE --to perfetto|json: a capture (any producer's
 * XSpace) as Perfetto's protobuf trace or Chrome trace JSON (gzip).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_CONTEXT "convert"
#include "cli/cli.h"
#include "export/export.h"
#include "lib/json_writer.h"
#include "lib/log.h"
#include "reader/capture_files.h"
#include "reader/xspace_reader.h"
#include "store/store.h"

void usage_convert(FILE *out)
{
	fprintf(out,
		"Usage: acceltrace convert [options] --to FORMAT CAPTURE\n"
		"\n"
		"Converts a capture (an .xplane.pb from acceltrace or another profiler, a\n"
		"session directory or a logdir, or the same in a bucket: gs://B/P,\n"
		"s3://B/P) to another trace format:\n"
		"  perfetto   Perfetto's native protobuf trace (HOST.perfetto-trace):\n"
		"             a track per thread and per device line, interned names,\n"
		"             a clock snapshot, flows from launches to device work\n"
		"  json       Chrome trace-event JSON, gzipped (HOST.trace.json.gz)\n"
		"Spans acceltrace clipped to its window are given their true times.\n"
		"A session of several hosts (HOST.xplane.pb each) becomes one trace,\n"
		"SESSION/all_hosts.perfetto-trace (or .trace.json.gz), with a process\n"
		"group per host (\"h1: python3\", \"h1 /device:TPU:0\"), pids another host\n"
		"uses remapped, hosts aligned on the wall clock by each capture's start.\n"
		"\n"
		"Options:\n"
		"  -t, --to FORMAT      perfetto or json (required)\n"
		"  -O, --output PATH    the file to write (one output only: one file or one\n"
		"                       session; default: beside each .xplane.pb, in its\n"
		"                       bucket for a bucket's; a bucket URL uploads it); a\n"
		"                       warning when its name does not end as the\n"
		"                       format's does\n"
		"      --per-host       a session's hosts each to a file of its own\n"
		"                       (HOST.perfetto-trace), not one trace of them all\n"
		CLI_COMMON_HELP
		"\n"
		"See docs/export.md.\n"
		"\n"
		"Examples:\n"
		"  acceltrace convert --to perfetto /tmp/tb\n"
		"  acceltrace convert --to perfetto -O fleet.pftrace LOGDIR/plugins/profile/SESSION\n"
		"  acceltrace convert --to json -O trace.json.gz HOST.xplane.pb\n");
}

/* The output path: out, or the default beside in; NULL when too long. */
static const char *output_path(const char *in, const char *out, enum export_format f,
			       char *path, size_t len)
{
	if (!out) {
		if (export_path_beside(in, f, path, len)) {
			log_err("%s: the output path is too long", in);
			return NULL;
		}
		return path;
	}
	if (!export_path_fits(out, f, path, len)) {
		/* Written all the same: the name is the user's to choose. */
		log_warn("%s will hold %s, which its name does not say; a name "
			 "ending in %s fits%s%s%s", out,
			 f == EXPORT_PERFETTO ? "Perfetto's protobuf trace" :
						"gzip-compressed Chrome trace JSON",
			 f == EXPORT_PERFETTO ? "'.perfetto-trace'" : "'.json.gz'",
			 path[0] ? " (" : "", path, path[0] ? ")" : "");
	}
	return out;
}

/*
 * Where an output goes when a bucket is involved: -O s3://... or gs://...,
 * or by default beside a capture that came from a bucket (@in_shown, its
 * URL). The file is written locally first (@local: the spool for -O, the
 * download's directory beside it), then uploaded to @url. 0: no bucket.
 */
static int bucket_output(const char *in_shown, bool downloaded, const char *out,
			 const char *local_default, char *local, size_t local_len, char *url,
			 size_t url_len)
{
	const char *base;
	int n;

	if (out && store_is_url(out)) {
		/* gs://B/P/NAME: an object's name after the bucket. */
		if (store_url_normalise(out, url, url_len) ||
		    (base = strrchr(url, '/')) < url + 5 || !base[1]) {
			log_err("-O %s: name an object in a bucket (gs://BUCKET/PATH/FILE)", out);
			return -EINVAL;
		}
		mkdir(store_spool_dir(), 0750);
		n = snprintf(local, local_len, "%s/convert-%d-%s", store_spool_dir(),
			     (int)getpid(), base + 1);
	} else if (!out && downloaded) {
		base = strrchr(local_default, '/');
		n = snprintf(local, local_len, "%s", local_default);
		if (n >= 0 && (size_t)n < local_len)
			n = snprintf(url, url_len, "%.*s/%s", (int)(strrchr(in_shown, '/') - in_shown),
				     in_shown, base ? base + 1 : local_default);
	} else {
		return 0;
	}
	return n < 0 || (size_t)n >= local_len ? -ENAMETOOLONG : 1;
}

/* @local uploaded as @url, never over an object; removed once there. */
static int upload_output(const char *local, const char *url)
{
	char parent[STORE_MAX_URL];
	const char *slash = strrchr(url, '/');
	struct store *s;
	int err;

	snprintf(parent, sizeof(parent), "%.*s", (int)(slash - url), url);
	s = store__open(parent);
	if (!s)
		return -errno;
	err = store__put_file(s, slash + 1, local);
	store__free(s);
	if (err == -EEXIST)
		log_err("%s exists: not replaced; the output is kept at %s", url, local);
	else if (err)
		log_err("the output could not be uploaded to %s: it is kept at %s", url, local);
	else
		unlink(local);
	return err;
}

static int convert_one(const struct capture_file *file, const char *out,
		       enum export_format f, struct json_writer *jw)
{
	const char *in = file->path;
	struct xs_space *xs;
	char err[512], path[4096], local[4096], url[4096];
	int ret, to_bucket;

	out = output_path(in, out, f, path, sizeof(path));
	if (!out)
		return 1;
	to_bucket = bucket_output(file->shown, file->downloaded, out == path ? NULL : out, path,
				  local, sizeof(local), url, sizeof(url));
	if (to_bucket == -ENAMETOOLONG)
		log_err("%s: the output path is too long", file->shown);
	if (to_bucket < 0)
		return 1;
	ret = xs_read_file(in, &xs, err, sizeof(err));
	if (ret) {
		log_err("%s", err);
		return 1;
	}
	ret = export_write_file(xs, f, to_bucket ? local : out);
	xs_free(xs);
	if (ret)
		return 1;
	if (to_bucket && upload_output(local, url))
		return 1;
	if (to_bucket)
		out = url;
	in = file->shown;
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

/*
 * One session's hosts into one trace: out, or all_hosts.<format's suffix>
 * in the session directory. Every host must be read.
 */
static int convert_session(const struct capture_file *files, size_t n, const char *out,
			   enum export_format f, struct json_writer *jw)
{
	struct xs_space **xs = calloc(n, sizeof(*xs));
	const char **hosts = calloc(n, sizeof(*hosts));
	const char *slash = strrchr(files[0].path, '/');
	int dir_len = slash ? (int)(slash - files[0].path) : 1;
	const char *dir = slash ? files[0].path : ".";
	char err[512], path[4096], beside[4096], local[4096], url[4096], shown[4096];
	int ret = 1, to_bucket;

	if (!xs || !hosts) {
		log_err("out of memory");
		goto out;
	}
	if ((size_t)snprintf(beside, sizeof(beside), "%.*s/all_hosts.xplane.pb", dir_len,
			     dir) >= sizeof(beside)) {
		log_err("%s: the output path is too long", files[0].path);
		goto out;
	}
	out = output_path(beside, out, f, path, sizeof(path));
	if (!out)
		goto out;
	/* A bucket's session: beside its objects (the first host's URL names
	 * the session's directory). */
	snprintf(shown, sizeof(shown), "%s", files[0].shown);
	to_bucket = bucket_output(shown, files[0].downloaded, out == path ? NULL : out, path,
				  local, sizeof(local), url, sizeof(url));
	if (to_bucket == -ENAMETOOLONG)
		log_err("%s: the output path is too long", files[0].shown);
	if (to_bucket < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		hosts[i] = files[i].host;
		if (xs_read_file(files[i].path, &xs[i], err, sizeof(err))) {
			log_err("%s (the session's other hosts are not converted without it; "
				"--per-host converts each alone)", err);
			goto out;
		}
	}
	if (export_write_hosts((const struct xs_space *const *)xs, hosts, n, f,
			       to_bucket ? local : out))
		goto out;
	if (to_bucket && upload_output(local, url))
		goto out;
	if (to_bucket) {
		out = url;
		/* What to call the input: the session's URL. */
		dir = shown;
		dir_len = (int)(strrchr(shown, '/') - shown);
	}
	ret = 0;
	if (jw) {
		jw_start_object(jw);
		snprintf(beside, sizeof(beside), "%.*s", dir_len, dir);
		jw_string_field(jw, "input", beside);
		jw_name(jw, "hosts");
		jw_start_array(jw);
		for (size_t i = 0; i < n; i++)
			jw_string(jw, hosts[i]);
		jw_end_array(jw);
		jw_name(jw, "inputs");
		jw_start_array(jw);
		for (size_t i = 0; i < n; i++)
			jw_string(jw, files[i].shown);
		jw_end_array(jw);
		jw_string_field(jw, "output", out);
		jw_string_field(jw, "format", export_format_name(f));
		jw_end_object(jw);
	} else {
		printf("%.*s (%zu hosts) -> %s\n", dir_len, dir, n, out);
	}
out:
	for (size_t i = 0; xs && i < n; i++)
		xs_free(xs[i]);
	free(xs);
	free(hosts);
	return ret;
}

/* Files from files[0] in the same directory (one session's hosts). */
static size_t same_dir_run(const struct capture_file *files, size_t n)
{
	size_t j = 1;

	while (j < n && capture_files_same_dir(&files[0], &files[j]))
		j++;
	return j;
}

enum { OPT_PER_HOST = 256 };

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "output", required_argument, NULL, 'O' },
		{ "per-host", no_argument, NULL, OPT_PER_HOST },
		CLI_COMMON_LONGOPTS,
		{}
	};
	const char *to = NULL, *output = NULL;
	struct json_writer *jw = NULL;
	struct capture_file *files;
	enum export_format f;
	char err[512];
	size_t n, outputs = 0;
	bool per_host = false;
	int opt, rc = 0;

	while ((opt = getopt_long(argc, argv, ":t:O:" CLI_COMMON_SHORTOPTS, longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 't': to = optarg; break;
		case 'O': output = optarg; break;
		case OPT_PER_HOST: per_host = true; break;
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
	for (size_t i = 0, j; i < n; i = j) {
		j = i + same_dir_run(files + i, n - i);
		outputs += per_host ? j - i : 1;
	}
	if (output && outputs > 1) {
		log_err("--output names one file, but %s holds %zu captures that make %zu "
			"outputs", argv[optind], n, outputs);
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
	for (size_t i = 0, j; i < n; i = j) {
		j = i + same_dir_run(files + i, n - i);
		if (j - i > 1 && !per_host) {
			rc |= convert_session(files + i, j - i, output, f, jw);
			continue;
		}
		for (size_t k = i; k < j; k++)
			rc |= convert_one(&files[k], output, f, jw);
	}
	if (jw) {
		jw_end_array(jw);
		fputc('\n', stdout);
		jw_free(jw);
	}
	capture_files_free(files, n);
	return rc;
}
