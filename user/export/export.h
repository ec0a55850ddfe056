/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Captures in other trace formats, converted from an XSpace (any
 * producer's, read back with reader/): Perfetto's native protobuf trace
 * and Chrome's trace-event JSON, gzipped. Both come from one timeline
 * (export/timeline.h), so they hold the same spans at the same times.
 */
#ifndef ACCELTRACE_EXPORT_H
#define ACCELTRACE_EXPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "reader/xspace_reader.h"

enum export_format {
	EXPORT_PERFETTO,	/* <stem>.perfetto-trace */
	EXPORT_CHROME_JSON,	/* <stem>.trace.json.gz */
};

struct timeline;

/* "perfetto" or "json" -> *f; -EINVAL for anything else. */
int export_format_parse(const char *name, enum export_format *f);
const char *export_format_name(enum export_format f);
/*
 * The file beside an `.xplane.pb` for a format: `vm.xplane.pb` ->
 * `vm.perfetto-trace` / `vm.trace.json.gz`. 0, or -ENAMETOOLONG.
 */
int export_path_beside(const char *xplane_path, enum export_format f, char *out, size_t len);
/*
 * Whether a file name says what a format writes: '.perfetto-trace' or
 * '.pftrace' for Perfetto, '.json.gz' for gzipped Chrome JSON. When it
 * does not, returns false and puts in out a name that does (`out.json` ->
 * `out.trace.json.gz`: the wrong trace suffix replaced) or "" when that
 * does not fit in len.
 */
bool export_path_fits(const char *path, enum export_format f, char *out, size_t len);
/*
 * Converts xs into path, written atomically (never a partial file). 0 or a
 * negative errno, with the reason logged naming the file.
 */
int export_write_file(const struct xs_space *xs, enum export_format f, const char *path);
/*
 * Several hosts' captures of one session into one file: a process group
 * per host (timeline_build_hosts). 0 or a negative errno, logged.
 */
int export_write_hosts(const struct xs_space *const *xs, const char *const *hosts, size_t n,
		       enum export_format f, const char *path);

/* The writers, to a stream; *bytes is what they wrote. 0 or -errno. */
int perfetto_write_stream(const struct timeline *t, FILE *out, uint64_t *bytes);
int chrome_json_write_stream(const struct timeline *t, FILE *out, uint64_t *bytes);

#endif /* ACCELTRACE_EXPORT_H */
