// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Export formats by name, their files' names, and writing them atomically. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "export/export.h"
#include "export/timeline.h"
#include "lib/atomic_file.h"

#define LOG_CONTEXT "export"
#include "lib/log.h"

static const struct {
	const char *name, *suffix;
} formats[] = {
	[EXPORT_PERFETTO] = { "perfetto", ".perfetto-trace" },
	[EXPORT_CHROME_JSON] = { "json", ".trace.json.gz" },
};

int export_format_parse(const char *name, enum export_format *f)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(name, formats[i].name)) {
			*f = i;
			return 0;
		}
	return -EINVAL;
}

const char *export_format_name(enum export_format f)
{
	return formats[f].name;
}

int export_path_beside(const char *xplane_path, enum export_format f, char *out, size_t len)
{
	static const char ext[] = ".xplane.pb";
	size_t n = strlen(xplane_path), stem = n;

	if (n >= sizeof(ext) - 1 && !strcmp(xplane_path + n - (sizeof(ext) - 1), ext))
		stem = n - (sizeof(ext) - 1);
	if ((size_t)snprintf(out, len, "%.*s%s", (int)stem, xplane_path,
			     formats[f].suffix) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

bool export_path_fits(const char *path, enum export_format f, char *out, size_t len)
{
	/* What each format's name may end in, and the trace suffixes a name
	 * for the wrong format may carry (replaced in the suggestion). */
	static const char *const fits[][3] = {
		[EXPORT_PERFETTO] = { ".perfetto-trace", ".pftrace" },
		[EXPORT_CHROME_JSON] = { ".json.gz" },
	};
	static const char *const trace_suffixes[] = {
		".trace.json.gz", ".json.gz", ".trace.json", ".json", ".gz",
		".perfetto-trace", ".pftrace", ".xplane.pb", ".pb",
	};
	size_t stem = strlen(path);

	for (size_t i = 0; i < 3 && fits[f][i]; i++)
		if (ends_with(path, fits[f][i]))
			return true;
	for (size_t i = 0; i < sizeof(trace_suffixes) / sizeof(trace_suffixes[0]); i++)
		if (ends_with(path, trace_suffixes[i]) &&
		    strlen(path) > strlen(trace_suffixes[i])) {
			stem = strlen(path) - strlen(trace_suffixes[i]);
			break;
		}
	if (len && (size_t)snprintf(out, len, "%.*s%s", (int)stem, path,
				    formats[f].suffix) >= len)
		out[0] = 0;
	return false;
}

static int write_timeline(struct timeline *t, enum export_format f, const char *path)
{
	struct atomic_file *af;
	uint64_t bytes = 0;
	int err;

	af = atomic_file__open(path);
	if (!af)
		return -errno;
	err = f == EXPORT_PERFETTO ?
	      perfetto_write_stream(t, atomic_file__stream(af), &bytes) :
	      chrome_json_write_stream(t, atomic_file__stream(af), &bytes);
	if (!err)
		err = atomic_file__commit(af, bytes);
	else
		log_err("cannot write %s: %s", path, io_error_reason(err));
	atomic_file__free(af);
	return err;
}

int export_write_file(const struct xs_space *xs, enum export_format f, const char *path)
{
	struct timeline t;
	int err;

	err = timeline_build(xs, &t);
	if (err) {
		log_err("cannot write %s: out of memory", path);
		return err;
	}
	err = write_timeline(&t, f, path);
	timeline_free(&t);
	return err;
}

int export_write_hosts(const struct xs_space *const *xs, const char *const *hosts, size_t n,
		       enum export_format f, const char *path)
{
	struct timeline t;
	int err;

	err = timeline_build_hosts(xs, hosts, n, &t);
	if (err) {
		log_err("cannot write %s: out of memory", path);
		return err;
	}
	err = write_timeline(&t, f, path);
	timeline_free(&t);
	return err;
}
