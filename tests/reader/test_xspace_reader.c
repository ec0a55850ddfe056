// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * reader/: an XSpace packed with protobuf-c read back into the generic
 * model (names resolved, ref_value interned strings, metadata stats,
 * absolute times, events sorted outer to inner); refusals of empty,
 * truncated, corrupt and impossible files; capture arguments resolved to
 * files (one file, a session directory, a logdir).
 */
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>

#include "test.h"
#include "reader/capture_files.h"
#include "reader/xspace_reader.h"
#include "xplane.pb-c.h"

typedef Tensorflow__Profiler__XStat pb_stat;

static pb_stat int_stat(int64_t id, int64_t v)
{
	pb_stat s = TENSORFLOW__PROFILER__XSTAT__INIT;

	s.metadata_id = id;
	s.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	s.int64_value = v;
	return s;
}

/* A plane of two lines, metadata stats and an interned string; packed. */
static uint8_t *sample(size_t *len, int64_t bad_duration)
{
	static Tensorflow__Profiler__XStatMetadata sm[3] = {
		TENSORFLOW__PROFILER__XSTAT_METADATA__INIT,
		TENSORFLOW__PROFILER__XSTAT_METADATA__INIT,
		TENSORFLOW__PROFILER__XSTAT_METADATA__INIT,
	};
	static Tensorflow__Profiler__XPlane__StatMetadataEntry sme[3];
	static Tensorflow__Profiler__XPlane__StatMetadataEntry *smep[3];
	static Tensorflow__Profiler__XEventMetadata em = TENSORFLOW__PROFILER__XEVENT_METADATA__INIT;
	static Tensorflow__Profiler__XPlane__EventMetadataEntry eme =
		TENSORFLOW__PROFILER__XPLANE__EVENT_METADATA_ENTRY__INIT;
	static Tensorflow__Profiler__XPlane__EventMetadataEntry *emep[1] = { &eme };
	static pb_stat meta_stat, ev_stat, ref_stat;
	static pb_stat *meta_stats[1] = { &meta_stat }, *ev_stats[2] = { &ev_stat, &ref_stat };
	static Tensorflow__Profiler__XEvent ev[3] = {
		TENSORFLOW__PROFILER__XEVENT__INIT, TENSORFLOW__PROFILER__XEVENT__INIT,
		TENSORFLOW__PROFILER__XEVENT__INIT,
	};
	static Tensorflow__Profiler__XEvent *evp[3] = { &ev[0], &ev[1], &ev[2] };
	static Tensorflow__Profiler__XLine line = TENSORFLOW__PROFILER__XLINE__INIT;
	static Tensorflow__Profiler__XLine *linep[1] = { &line };
	static Tensorflow__Profiler__XPlane plane = TENSORFLOW__PROFILER__XPLANE__INIT;
	static Tensorflow__Profiler__XPlane *planep[1] = { &plane };
	static char *hosts[1] = { "tpu-host" };
	static char *warnings[1] = { "ring buffer drops: 3" };
	Tensorflow__Profiler__XSpace space = TENSORFLOW__PROFILER__XSPACE__INIT;
	static const char *names[3] = { "flops", "hlo_category", "infeed" };
	uint8_t *buf;

	for (int i = 0; i < 3; i++) {
		tensorflow__profiler__xstat_metadata__init(&sm[i]);
		sm[i].id = i + 1;
		sm[i].name = (char *)names[i];
		tensorflow__profiler__xplane__stat_metadata_entry__init(&sme[i]);
		sme[i].key = i + 1;
		sme[i].value = &sm[i];
		smep[i] = &sme[i];
	}
	meta_stat = int_stat(1, 1000);
	ev_stat = int_stat(1, 7);	/* the event's own flops win over the metadata's */
	tensorflow__profiler__xstat__init(&ref_stat);
	ref_stat.metadata_id = 2;
	ref_stat.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE;
	ref_stat.ref_value = 3;
	em.id = 5;
	em.name = "convolution.1";
	em.n_stats = 1;
	em.stats = meta_stats;
	eme.key = 5;
	eme.value = &em;
	/* Out of order, and one nested in another with the same start. */
	for (int i = 0; i < 3; i++) {
		tensorflow__profiler__xevent__init(&ev[i]);
		ev[i].metadata_id = 5;
		ev[i].data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
	}
	ev[0].offset_ps = 5000;
	ev[0].duration_ps = 100;
	ev[1].offset_ps = 1000;
	ev[1].duration_ps = 200;
	ev[1].n_stats = 2;
	ev[1].stats = ev_stats;
	ev[2].offset_ps = 1000;
	ev[2].duration_ps = bad_duration ? bad_duration : 900;
	ev[2].metadata_id = 99;	/* no such metadata */
	line.id = 3;
	line.name = "XLA Ops";
	line.timestamp_ns = 10;
	line.n_events = 3;
	line.events = evp;
	plane.id = 0;
	plane.name = "/device:TPU:0";
	plane.n_lines = 1;
	plane.lines = linep;
	plane.n_event_metadata = 1;
	plane.event_metadata = emep;
	plane.n_stat_metadata = 3;
	plane.stat_metadata = smep;
	space.n_planes = 1;
	space.planes = planep;
	space.n_hostnames = 1;
	space.hostnames = hosts;
	space.n_warnings = 1;
	space.warnings = warnings;
	*len = tensorflow__profiler__xspace__get_packed_size(&space);
	buf = malloc(*len);
	if (buf)
		tensorflow__profiler__xspace__pack(&space, buf);
	return buf;
}

static void test_model(void)
{
	struct xs_space *xs = NULL;
	const struct xs_line *l;
	const struct xs_stat *s;
	char err[256];
	size_t len;
	uint8_t *buf = sample(&len, 0);
	int64_t v;

	if (!ASSERT_OK_PTR(buf, "pack") ||
	    !ASSERT_OK(xs_read_buffer(buf, len, "sample", &xs, err, sizeof(err)), err))
		goto out;
	ASSERT_EQ(xs->n_planes, 1, "planes");
	ASSERT_STREQ(xs->hostnames[0], "tpu-host", "host name");
	ASSERT_STREQ(xs->warnings[0], "ring buffer drops: 3", "warning");
	ASSERT_EQ(xs->n_events, 3, "events counted");
	ASSERT_TRUE(xs_is_device_plane(&xs->planes[0]), "device plane");
	l = xs_line_named(&xs->planes[0], "XLA Ops");
	if (!ASSERT_OK_PTR(l, "line by name"))
		goto out;
	/* Sorted by start, longest first: 10 ns line start + offsets. */
	ASSERT_EQ(l->events[0].start_ps, 11000, "first start (absolute)");
	ASSERT_EQ(l->events[0].dur_ps, 900, "outer event first");
	ASSERT_STREQ(l->events[0].meta->name, "(unknown event metadata)", "missing metadata");
	ASSERT_EQ(l->events[1].dur_ps, 200, "inner event second");
	ASSERT_EQ(l->events[2].start_ps, 15000, "last");
	s = xs_event_stat(&l->events[1], "hlo_category");
	ASSERT_TRUE(s && s->type == XS_STAT_STR && !strcmp(s->s, "infeed"),
		    "ref_value resolved to the interned string");
	ASSERT_TRUE(xs_stat_int(xs_event_stat(&l->events[1], "flops"), &v) && v == 7,
		    "event stat before metadata stat");
	ASSERT_TRUE(xs_stat_int(xs_event_stat(&l->events[2], "flops"), &v) && v == 1000,
		    "metadata stat");
	ASSERT_TRUE(!xs_event_stat(&l->events[2], "hlo_category"), "absent stat");
	ASSERT_STREQ(l->display_name, "XLA Ops", "display name falls back to the name");
out:
	xs_free(xs);
	free(buf);
}

static void test_refusals(void)
{
	struct xs_space *xs = NULL;
	char err[256], path[] = "/tmp/xs-test-XXXXXX";
	size_t len;
	uint8_t *buf = sample(&len, 0), *neg;
	size_t neg_len;
	int fd;

	if (!ASSERT_OK_PTR(buf, "pack"))
		return;
	ASSERT_EQ(xs_read_buffer(buf, len - 7, "cut", &xs, err, sizeof(err)), -EINVAL,
		  "truncated");
	ASSERT_STRCONTAINS(err, "truncated or corrupt", "truncated: the reason");
	ASSERT_TRUE(xs == NULL, "nothing returned");
	buf[3] ^= 0xff;
	buf[4] = 0xff;
	ASSERT_EQ(xs_read_buffer(buf, len, "flipped", &xs, err, sizeof(err)), -EINVAL,
		  "corrupt bytes");
	ASSERT_EQ(xs_read_buffer(buf, 0, "empty", &xs, err, sizeof(err)), -EINVAL, "empty");
	ASSERT_STRCONTAINS(err, "empty (0 bytes)", "empty: the reason");
	neg = sample(&neg_len, -5);
	if (ASSERT_OK_PTR(neg, "pack negative")) {
		ASSERT_EQ(xs_read_buffer(neg, neg_len, "neg", &xs, err, sizeof(err)), -EINVAL,
			  "negative duration");
		ASSERT_STRCONTAINS(err, "negative duration", "negative: the reason");
	}
	ASSERT_EQ(xs_read_file("/nonexistent/x.xplane.pb", &xs, err, sizeof(err)), -ENOENT,
		  "missing file");
	ASSERT_STRCONTAINS(err, "/nonexistent/x.xplane.pb", "missing: names the file");
	fd = mkstemp(path);
	if (ASSERT_GE(fd, 0, "temp file")) {
		close(fd);
		ASSERT_EQ(xs_read_file(path, &xs, err, sizeof(err)), -EINVAL, "0-byte file");
		unlink(path);
	}
	free(neg);
	free(buf);
}

/*
 * A plane with events but no stat or event metadata, as acceltrace's own
 * captures have: the name tables are empty (no array at all), and looking
 * names up in them must be a miss, not a call with a NULL array (undefined;
 * UBSan in make check-sanitize and the fuzz smoke stops on it).
 */
static void test_bare_plane(void)
{
	static Tensorflow__Profiler__XEvent ev = TENSORFLOW__PROFILER__XEVENT__INIT;
	static Tensorflow__Profiler__XEvent *evp[1] = { &ev };
	static pb_stat st, *stp[1] = { &st };
	Tensorflow__Profiler__XLine line = TENSORFLOW__PROFILER__XLINE__INIT;
	Tensorflow__Profiler__XLine *linep[1] = { &line };
	Tensorflow__Profiler__XPlane plane = TENSORFLOW__PROFILER__XPLANE__INIT;
	Tensorflow__Profiler__XPlane *planep[1] = { &plane };
	Tensorflow__Profiler__XSpace space = TENSORFLOW__PROFILER__XSPACE__INIT;
	struct xs_space *xs = NULL;
	char err[256];
	uint8_t *buf;
	size_t len;

	st = int_stat(4, 9);
	ev.metadata_id = 3;
	ev.duration_ps = 5;
	ev.n_stats = 1;
	ev.stats = stp;
	line.name = "bare";
	line.n_events = 1;
	line.events = evp;
	plane.name = "/host:CPU";
	plane.n_lines = 1;
	plane.lines = linep;
	space.n_planes = 1;
	space.planes = planep;
	len = tensorflow__profiler__xspace__get_packed_size(&space);
	buf = malloc(len);
	if (!ASSERT_OK_PTR(buf, "malloc"))
		return;
	tensorflow__profiler__xspace__pack(&space, buf);
	if (ASSERT_OK(xs_read_buffer(buf, len, "bare", &xs, err, sizeof(err)), err)) {
		const struct xs_event *e = &xs->planes[0].lines[0].events[0];

		ASSERT_STREQ(e->meta->name, "(unknown event metadata)", "no event metadata");
		ASSERT_EQ(e->n_stats, 1, "the stat kept");
		ASSERT_STREQ(e->stats[0].name, "", "no stat metadata: no name");
	}
	xs_free(xs);
	free(buf);
}

/*
 * A double stat read as an integer: a file can say 1e300 or NaN, which have
 * no int64_t value (the cast is undefined); those are not numbers to use.
 */
static void test_stat_numbers(void)
{
	static const double bad[] = { 1e300, -1e300, 9223372036854775808.0, NAN, INFINITY };
	struct xs_stat s = { .name = "x", .type = XS_STAT_DOUBLE };
	int64_t v;

	s.d = 3.75;
	ASSERT_TRUE(xs_stat_int(&s, &v) && v == 3, "3.75 reads as 3");
	s.d = -9223372036854775808.0;
	ASSERT_TRUE(xs_stat_int(&s, &v) && v == INT64_MIN, "-2^63 fits");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s.d = bad[i];
		v = 42;
		if (!ASSERT_FALSE(xs_stat_int(&s, &v), "a double without an int64 value"))
			fprintf(stderr, "  %g read as %lld\n", bad[i], (long long)v);
	}
	/* Ids (program_id fingerprints) keep their bits. */
	s.type = XS_STAT_UINT;
	s.u = UINT64_MAX;
	ASSERT_TRUE(xs_stat_int(&s, &v) && v == -1, "a uint64 id keeps its bits");
}

static void touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY, 0600);

	if (fd >= 0)
		close(fd);
}

static void test_capture_files(void)
{
	char dir[] = "/tmp/xs-files-XXXXXX", p[512], err[256];
	struct capture_file *f;
	size_t n;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "temp dir"))
		return;
	snprintf(p, sizeof(p), "%s/plugins", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/plugins/profile", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/plugins/profile/2026_01_02_00_00_00", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/plugins/profile/2026_01_01_00_00_00", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/plugins/profile/2026_01_02_00_00_00/h.xplane.pb", dir);
	touch(p);
	snprintf(p, sizeof(p), "%s/plugins/profile/2026_01_01_00_00_00/h.xplane.pb", dir);
	touch(p);
	if (ASSERT_OK(capture_files_find(dir, &f, &n, err, sizeof(err)), "logdir")) {
		ASSERT_EQ(n, 2, "both sessions");
		ASSERT_STREQ(f[0].session, "2026_01_01_00_00_00", "oldest first");
		capture_files_free(f, n);
	}
	snprintf(p, sizeof(p), "%s/plugins/profile/2026_01_01_00_00_00", dir);
	if (ASSERT_OK(capture_files_find(p, &f, &n, err, sizeof(err)), "session dir")) {
		ASSERT_EQ(n, 1, "its file");
		capture_files_free(f, n);
	}
	snprintf(p, sizeof(p), "%s/plugins/profile/2026_01_01_00_00_00/h.xplane.pb", dir);
	if (ASSERT_OK(capture_files_find(p, &f, &n, err, sizeof(err)), "one file")) {
		ASSERT_STREQ(f[0].session, "2026_01_01_00_00_00", "its session");
		capture_files_free(f, n);
	}
	snprintf(p, sizeof(p), "%s/plugins/profile", dir);
	if (ASSERT_OK(capture_files_find(p, &f, &n, err, sizeof(err)), "plugins/profile")) {
		ASSERT_EQ(n, 2, "its sessions");
		capture_files_free(f, n);
	}
	ASSERT_EQ(capture_files_find("/nonexistent", &f, &n, err, sizeof(err)), -ENOENT,
		  "missing");
	snprintf(p, sizeof(p), "%s/plugins/profile/2026_01_01_00_00_00/h.xplane.pb", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/plugins/profile/2026_01_02_00_00_00/h.xplane.pb", dir);
	unlink(p);
	ASSERT_EQ(capture_files_find(dir, &f, &n, err, sizeof(err)), -ENOENT, "no files");
	ASSERT_STRCONTAINS(err, "no .xplane.pb", "no files: the reason");
	/* A directory whose name has glob characters is that directory, not
	 * a pattern (run[1] once found run1/'s files instead of its own). */
	snprintf(p, sizeof(p), "%s/run[1]", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/run[1]/x.xplane.pb", dir);
	touch(p);
	snprintf(p, sizeof(p), "%s/run1", dir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/run1/y.xplane.pb", dir);
	touch(p);
	snprintf(p, sizeof(p), "%s/run[1]/", dir);
	if (ASSERT_OK(capture_files_find(p, &f, &n, err, sizeof(err)), "run[1]")) {
		ASSERT_EQ(n, 1, "run[1]: one file");
		ASSERT_STRCONTAINS(f[0].path, "/run[1]/x.xplane.pb", "run[1]: its own file");
		capture_files_free(f, n);
	}
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	if (system(p))
		fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
	test_model();
	test_refusals();
	test_bare_plane();
	test_stat_numbers();
	test_capture_files();
	return test_exit();
}
