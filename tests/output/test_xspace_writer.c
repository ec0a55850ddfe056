// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The XSpace writer on a small capture that has every case: spans clipped at
 * either side and both, a span wholly before the window, partial overlaps
 * that need a second line, instants, every arg type, per-op metadata stats
 * on device planes, several processes, a budget cut, warnings and losses,
 * renamed threads (a line named by the latest name, the history in its
 * display name and the host plane's acceltrace.thread_names; a thread only
 * renamed, and a track without spans: no line).
 *
 * Read back here with protobuf-c (structure, nesting, no negative times);
 * tests/output/test_xspace_decode.sh reads the same file with protoc and
 * Python. `test_xspace_writer --emit DIR` writes it for that script.
 *
 * Device types: unknown (NULL or "") and without "TPU", as XProf needs them.
 * Failure paths: not finalized, not seekable, over the size limit, a full
 * device (/dev/full).
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "test.h"
#include "capture/capture.h"
#include "output/xspace_writer.h"
#include "xplane.pb-c.h"
#include "xplane_c.h"

#define WS 10000000000ULL		/* window start, CLOCK_MONOTONIC ns */
#define WE (WS + 1000000ULL)		/* 1 ms window */
#define RT_OFFSET 1700000000000000000LL

typedef Tensorflow__Profiler__XLine XLine;
typedef Tensorflow__Profiler__XEvent XEvent;

static struct capture *cap;

static int span(int track, enum span_kind kind, const char *name, uint64_t start,
		uint64_t end, uint16_t flags, uint64_t corr, struct capture_span *out)
{
	struct capture_span s = {
		.start_ns = start,
		.end_ns = end,
		.track = track,
		.kind = kind,
		.flags = flags,
		.correlation_id = corr,
		.name = capture__intern(cap, name),
	};

	if (out) {
		/* The caller adds args and calls capture__add_span itself. */
		*out = s;
		return 0;
	}
	return capture__add_span(cap, &s);
}

static uint32_t I(const char *s)
{
	return capture__intern(cap, s);
}

/* The sample capture; see tests/output/test_xspace_decode.sh for the checks. */
static struct capture *build_sample(void)
{
	struct capture_opts opts = {
		.sz = sizeof(opts),
		.hostname = "tpu-host:8470",
		.session = "2026_01_01_00_00_00",
		.max_spans = 19,	/* 24 spans: the 5 thread instants go */
	};
	struct capture_span s;
	int t100, t101, t200, d0, d1, steps0, mods0, ops0, steps1;
	int err = 0;

	cap = capture__new(&opts);
	if (!cap)
		return NULL;
	capture__set_window(cap, WS, WE);
	capture__set_realtime_offset(cap, RT_OFFSET);
	capture__set_probes_attached(cap, WS - 500000);
	/* A reason with a newline (a rule's text names a process's name). */
	capture__set_reason(cap, "rule: pid 100 crashed\n(signal 9)");
	capture__set_focus_pid(cap, 100);
	capture__set_process(cap, 100, "trainer");
	capture__set_thread(cap, 100, 100, "python3", 0);
	/* 101 renamed twice (once before its track), 102 only renamed, 103
	 * a track without spans: one line each for 100, 101 and 200. */
	capture__set_thread(cap, 100, 101, "python3", WS - 300);
	capture__rename_thread(cap, 100, 101, "data \"w\"", WS + 15);
	capture__set_process(cap, 200, "trainer2");
	/* trainer2 forked by trainer, in a container of a pod. */
	capture__set_process_origin(cap, 200, 100, "0123456789ab", "pod-uid-1");
	capture__set_thread(cap, 200, 200, "main", 0);
	t100 = capture__host_track(cap, 100, 100);
	t101 = capture__host_track(cap, 100, 101);
	t200 = capture__host_track(cap, 200, 200);
	capture__rename_thread(cap, 100, 101, "pt_data_worker", WS + 20);
	capture__set_thread(cap, 100, 102, "python3", WS + 30);
	capture__rename_thread(cap, 100, 102, "tf_foreach", WS + 40);
	capture__rename_thread(cap, 100, 102, "tf_foreach", WS + 50);
	capture__host_track(cap, 100, 103);

	/* A: began 2 us before the window; nests B and F; C overlaps its end. */
	span(t100, SPAN_EXECUTE, "PjRtLoadedExecutable::Execute", WS - 2000, WS + 5000,
	     0, 7, &s);
	capture_span__add_u64(&s, I("launch_id"), 7);
	err |= capture__add_span(cap, &s);
	span(t100, SPAN_H2D, "BufferFromHostBuffer", WS + 1000, WS + 3000, 0, 0, &s);
	capture_span__add_i64(&s, I("delta"), -5);
	capture_span__add_double(&s, I("ratio"), 0.5);
	capture_span__add_str(&s, I("dtype"), I("bf16"));
	capture_span__add_u64(&s, I("bytes"), 4096);
	err |= capture__add_span(cap, &s);
	err |= span(t100, SPAN_AWAIT, "Event::Await", WS + 4000, WS + 8000, 0, 0, NULL);
	err |= span(t100, SPAN_COMPILE, "Compile", WE - 1000, WE + 5000,
		    SPAN_F_ENDED_IN_GRACE, 0, NULL);
	err |= span(t100, SPAN_HOST_OTHER, "before window", WS - 10000, WS - 5000, 0, 0, NULL);
	err |= span(t100, SPAN_INSTANT_COMPLETION, "ready", WS + 2000, WS + 2000, 0, 0, NULL);
	/* G: open across the whole window, from before the probes. */
	err |= span(t100, SPAN_HOST_OTHER, "train", WS - 100, WE + 100,
		    SPAN_F_OPEN_AT_STOP | SPAN_F_BEGAN_BEFORE_PROBES, 0, NULL);

	for (int i = 0; i < 3; i++) {
		span(t101, SPAN_FILE_READ, "pread64", WS + 100000 * (i + 1),
		     WS + 100000 * (i + 1) + 5000, i == 2 ? SPAN_F_ERROR : 0, 0, &s);
		capture_span__add_str(&s, I("path"), I("/data/shard-0001"));
		capture_span__add_u64(&s, I("bytes"), 65536);
		err |= capture__add_span(cap, &s);
	}
	for (int i = 0; i < 5; i++)
		err |= span(t101, SPAN_INSTANT_THREAD, "thread", WS + 10 * i, WS + 10 * i, 0, 0, NULL);
	err |= span(t200, SPAN_EXECUTE, "PjRtLoadedExecutable::Execute", WS + 500, WS + 900,
		    0, 9, NULL);

	d0 = capture__device(cap, 100, 0, "TPU v4", 275.0, 1200.0);
	d1 = capture__device(cap, 100, 1, "v5e", 0, 0);
	steps0 = capture__device_track(cap, d0, TRACK_DEVICE_STEPS);
	mods0 = capture__device_track(cap, d0, TRACK_DEVICE_MODULES);
	ops0 = capture__device_track(cap, d0, TRACK_DEVICE_OPS);
	steps1 = capture__device_track(cap, d1, TRACK_DEVICE_STEPS);

	span(steps0, SPAN_DEVICE_STEP, "1", WS + 1000, WS + 9000, 0, 7, &s);
	capture_span__add_i64(&s, I("step_num"), 1);
	err |= capture__add_span(cap, &s);
	span(mods0, SPAN_DEVICE_MODULE, "jit_train_step", WS + 1100, WS + 8900, 0, 7, &s);
	capture_span__add_i64(&s, I("program_id"), 42);
	capture_span__add_u64(&s, I("run_id"), 3);
	err |= capture__add_span(cap, &s);
	/* fusion.1 three times: the third with other flops. */
	for (int i = 0; i < 3; i++) {
		uint64_t st = WS + 1200 + 2000 * i;

		span(ops0, SPAN_DEVICE_OP, "fusion.1", st, st + 1000, 0, 0, &s);
		capture_span__add_str(&s, I("hlo_category"), I("convolution"));
		capture_span__add_u64(&s, I("flops"), i == 2 ? 2000 : 1000);
		err |= capture__add_span(cap, &s);
	}
	span(ops0, SPAN_DEVICE_OP, "infeed", WS + 2400, WS + 3100, 0, 0, &s);
	capture_span__add_str(&s, I("hlo_category"), I("infeed"));
	err |= capture__add_span(cap, &s);
	/* fusion.1 #2 is [3200, 4200]: copy.2 overlaps its end, a second line. */
	span(ops0, SPAN_DEVICE_OP, "copy.2", WS + 3500, WS + 4500, 0, 0, &s);
	err |= capture__add_span(cap, &s);
	span(steps1, SPAN_DEVICE_STEP, "1", WS + 1500, WS + 9500, SPAN_F_ESTIMATED, 7, NULL);

	capture__warn(cap, "device 1 trace buffer wrapped");
	capture__count_event_loss(cap, "ring buffer drops", 12);
	capture__count_loss(cap, "spans before the window dropped", 30);	/* an edge */
	capture__count_loss(cap, "unreadable arguments", 0);
	if (err) {
		capture__free(cap);
		errno = EINVAL;
		return NULL;
	}
	if (capture__finalize(cap)) {
		capture__free(cap);
		return NULL;
	}
	return cap;
}

/* Sorted (offset asc, duration desc), nested, nothing negative. */
static bool line_ok(const XLine *l, char *why, size_t len)
{
	int64_t ends[256];
	size_t depth = 0;

	if (l->timestamp_ns < 0 || l->duration_ps < 0) {
		snprintf(why, len, "negative line time");
		return false;
	}
	for (size_t i = 0; i < l->n_events; i++) {
		const XEvent *e = l->events[i];
		int64_t s = e->offset_ps, end = s + e->duration_ps;

		if (e->data_case != TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS ||
		    s < 0 || e->duration_ps < 0) {
			snprintf(why, len, "event %zu: no offset or negative time", i);
			return false;
		}
		if (i) {
			const XEvent *p = l->events[i - 1];

			if (p->offset_ps > s ||
			    (p->offset_ps == s && p->duration_ps < e->duration_ps)) {
				snprintf(why, len, "event %zu out of order", i);
				return false;
			}
		}
		while (depth && ends[depth - 1] <= s && ends[depth - 1] < end)
			depth--;
		if (depth && ends[depth - 1] < end) {
			snprintf(why, len, "event %zu overlaps its predecessor partially", i);
			return false;
		}
		if (depth < 256)
			ends[depth++] = end;
	}
	return true;
}

static const char *plane_stat_str(const XPlane *p, const char *name);

static void check_sample_file(const char *path)
{
	uint8_t *buf;
	size_t len = 0, lines = 0, events = 0;
	XSpace *xs;
	const XPlane *host, *tpu0, *tpu1, *task;
	char why[128];
	bool ok = true;

	buf = xplane_read_file(path, &len);
	if (!ASSERT_OK_PTR(buf, "read back"))
		return;
	xs = tensorflow__profiler__xspace__unpack(NULL, len, buf);
	if (!ASSERT_OK_PTR(xs, "protobuf-c parses the file")) {
		free(buf);
		return;
	}
	ASSERT_EQ(xs->n_hostnames, 1, "one hostname");
	if (xs->n_hostnames)
		ASSERT_STREQ(xs->hostnames[0], "tpu-host_8470", "hostname, ':' replaced");
	ASSERT_EQ(xs->n_planes, 4, "host, two TPUs, task environment");
	host = xplane_plane(xs, "/host:CPU");
	tpu0 = xplane_plane(xs, "/device:TPU:0");
	tpu1 = xplane_plane(xs, "/device:TPU:1");
	task = xplane_plane(xs, "Task Environment");
	ASSERT_TRUE(host && tpu0 && tpu1 && task, "plane names");
	if (!host || !tpu0 || !tpu1 || !task)
		goto out;
	ASSERT_EQ(tpu0->id, 0, "TPU:0 id");
	ASSERT_EQ(tpu1->id, 1, "TPU:1 id");

	for (size_t i = 0; i < xs->n_planes; i++) {
		for (size_t j = 0; j < xs->planes[i]->n_lines; j++) {
			const XLine *l = xs->planes[i]->lines[j];

			lines++;
			events += l->n_events;
			if (!line_ok(l, why, sizeof(why))) {
				ok = false;
				fprintf(stderr, "%s line %s: %s\n", xs->planes[i]->name,
					l->name, why);
			}
		}
	}
	ASSERT_TRUE(ok, "every line sorted, nested, non-negative");
	/* 24 spans - 5 budget - 1 outside the window = 18 events. */
	ASSERT_EQ(events, 18, "events written");
	/* host: 100 (2 lines), 101, 200; TPU:0 Steps, Modules, Ops (2); TPU:1 Steps */
	ASSERT_EQ(lines, 9, "lines written");
	ASSERT_EQ(host->n_lines, 4, "host lines");
	if (host->n_lines >= 2) {
		const XLine *l0 = host->lines[0], *l1 = host->lines[1];

		ASSERT_EQ(l0->id, 100, "first line id = tid");
		ASSERT_EQ(l1->id, 100 + (1LL << 32), "extra line id");
		ASSERT_EQ(l1->display_id, 100, "extra line shares the row");
		ASSERT_STREQ(l0->name, "python3", "thread name");
		ASSERT_STREQ(l0->display_name, "python3 (pid 100)", "display name with pid");
		ASSERT_EQ(l0->n_events, 5, "G, A, B, F, D on the first line");
		ASSERT_EQ(l1->n_events, 1, "C on the second line");
		if (l0->n_events == 5) {
			ASSERT_STREQ(xplane_event_name(host, l0->events[0]->metadata_id), "train",
				     "the longest clipped span first");
			ASSERT_EQ(l0->events[0]->duration_ps, 1000000000LL, "clipped to the window");
			ASSERT_STREQ(xplane_event_name(host, l0->events[1]->metadata_id),
				     "PjRtLoadedExecutable::Execute", "then A");
			ASSERT_EQ(l0->events[1]->offset_ps, 0, "A clipped to 0");
		}
	}
	for (size_t i = 0; i < host->n_lines; i++) {
		const XLine *l = host->lines[i];

		if (l->id != 101)
			continue;
		ASSERT_STREQ(l->name, "pt_data_worker", "101: its latest name");
		ASSERT_STREQ(l->display_name, "pt_data_worker (pid 100, was python3, data \"w\")",
			     "101: pid and earlier names");
	}
	{
		const char *h = plane_stat_str(host, "acceltrace.thread_names");

		ASSERT_STREQ(h, "[{\"pid\":100,\"tid\":101,\"names\":["
			     "{\"name\":\"python3\",\"ns\":-300},"
			     "{\"name\":\"data \\\"w\\\"\",\"ns\":15},"
			     "{\"name\":\"pt_data_worker\",\"ns\":20}],\"more\":0}]",
			     "host plane stat: histories of renamed threads with a line");
	}
	ASSERT_EQ(tpu0->n_lines, 4, "TPU:0 lines");
	ASSERT_EQ(tpu1->n_lines, 1, "TPU:1 lines");
	/* start, stop, probes attached, window start on CLOCK_MONOTONIC */
	ASSERT_EQ(task->n_stats, 8, "task environment stats");
	ASSERT_STREQ(plane_stat_str(task, STAT_CAPTURE_REASON),
		     "rule: pid 100 crashed\xef\xbf\xbd(signal 9)",
		     "the capture's reason, its newline replaced");
	ASSERT_GE(xs->n_warnings, 4, "warnings");
out:
	tensorflow__profiler__xspace__free_unpacked(xs, NULL);
	free(buf);
}

/* A plane stat's string value, by its metadata's name; NULL if absent. */
static const char *plane_stat_str(const XPlane *p, const char *name)
{
	for (size_t i = 0; i < p->n_stats; i++) {
		int64_t id = p->stats[i]->metadata_id;

		for (size_t j = 0; j < p->n_stat_metadata; j++) {
			const Tensorflow__Profiler__XStatMetadata *md = p->stat_metadata[j]->value;

			if (p->stat_metadata[j]->key == id && md && !strcmp(md->name, name))
				return p->stats[i]->value_case ==
				       TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE ?
				       p->stats[i]->str_value : NULL;
		}
	}
	return NULL;
}

/*
 * The capture keeps an unknown device type as id 0; the XProf mapping gives
 * such a device what XProf needs ("TPU", a /device:TPU:N plane), prefixes a
 * type without "TPU", and names device lines in XProf's words. A device
 * whose runtime says GPU is a /device:GPU:N plane with its vendor and no
 * TPU device_type_string.
 */
static void test_device_types(const char *dir)
{
	struct capture_opts o = { .sz = sizeof(o), .hostname = "h", .session = "s" };
	struct capture *c = capture__new(&o);
	const char *types[] = { NULL, "", "TPU v4", "v5e", NULL, "NVIDIA H100" };
	const char *platforms[] = { NULL, NULL, "TPU", NULL, "GPU", "GPU" };
	const char *want[] = { "TPU", "TPU", "TPU v4", "TPU v5e", NULL, NULL };
	char path[512], pname[32];
	uint8_t *buf = NULL;
	XSpace *xs = NULL;
	size_t len = 0;

	ASSERT_STREQ(xprof_line_name(TRACK_DEVICE_STEPS), "Steps", "Steps");
	ASSERT_STREQ(xprof_line_name(TRACK_DEVICE_MODULES), "XLA Modules", "XLA Modules");
	ASSERT_STREQ(xprof_line_name(TRACK_DEVICE_OPS), "XLA Ops", "XLA Ops");
	ASSERT_TRUE(xprof_line_name(TRACK_HOST_THREAD) == NULL, "host: no line name");
	if (!ASSERT_OK_PTR(c, "capture"))
		return;
	ASSERT_EQ(capture__device_platform(c, 0, "GPU", NULL), -ENOENT, "no such device");
	for (int i = 0; i < 6; i++) {
		int d = capture__device(c, 1, i, types[i], 0, 0);
		int t = capture__device_track(c, d, TRACK_DEVICE_MODULES);
		struct capture_span sp = { .start_ns = 10, .end_ns = 20, .track = t,
					   .kind = SPAN_DEVICE_MODULE };

		ASSERT_OK(capture__device_platform(c, d, platforms[i],
						   platforms[i] && !strcmp(platforms[i], "GPU") ?
						   "Nvidia" : NULL), "platform");
		ASSERT_OK(capture__add_span(c, &sp), "device span");
		if (i < 2)
			ASSERT_EQ(capture__device_info(c, d)->type, 0, "unknown type is id 0");
	}
	ASSERT_OK(capture__finalize(c), "finalize");
	snprintf(path, sizeof(path), "%s/types.xplane.pb", dir);
	if (!ASSERT_OK(xspace_write_file(c, path, NULL), "write"))
		goto out;
	buf = xplane_read_file(path, &len);
	xs = buf ? tensorflow__profiler__xspace__unpack(NULL, len, buf) : NULL;
	if (!ASSERT_OK_PTR(xs, "parses"))
		goto out;
	for (int i = 0; i < 6; i++) {
		bool gpu = platforms[i] && !strcmp(platforms[i], "GPU");
		const XPlane *p;

		snprintf(pname, sizeof(pname), "/device:%s:%d", gpu ? "GPU" : "TPU", i);
		p = xplane_plane(xs, pname);
		if (!ASSERT_OK_PTR(p, pname))
			continue;
		if (want[i])
			ASSERT_STREQ(plane_stat_str(p, "device_type_string"), want[i],
				     "device_type_string");
		else
			ASSERT_TRUE(!plane_stat_str(p, "device_type_string"),
				    "a GPU plane has no TPU device_type_string");
		if (gpu)
			ASSERT_STREQ(plane_stat_str(p, "device_vendor"), "Nvidia", "vendor");
		if (gpu && types[i])
			ASSERT_STREQ(plane_stat_str(p, "gpu_device_name"), types[i], "GPU name");
		if (ASSERT_EQ(p->n_lines, 1, "one line"))
			ASSERT_STREQ(p->lines[0]->name, "XLA Modules", "line named by kind");
	}
out:
	if (xs)
		tensorflow__profiler__xspace__free_unpacked(xs, NULL);
	free(buf);
	capture__free(c);
}

static void test_error_paths(struct capture *c, const char *dir)
{
	struct capture_opts o = { .sz = sizeof(o), .hostname = "h", .session = "s" };
	struct xspace_write_opts small = { .sz = sizeof(small), .max_bytes = 100 };
	struct capture *raw = capture__new(&o);
	char path[512];
	uint64_t bytes;
	int pfd[2];
	FILE *f;

	if (ASSERT_OK_PTR(raw, "new")) {
		f = tmpfile();
		ASSERT_EQ(xspace_write_stream(raw, f, NULL, &bytes), -EAGAIN,
			  "refuses a capture that is not finalized");
		fclose(f);
	}
	capture__free(raw);

	if (ASSERT_OK(pipe(pfd), "pipe")) {
		f = fdopen(pfd[1], "w");
		ASSERT_EQ(xspace_write_stream(c, f, NULL, &bytes), -ESPIPE,
			  "refuses a stream it cannot seek");
		fclose(f);
		close(pfd[0]);
	}

	snprintf(path, sizeof(path), "%s/small.xplane.pb", dir);
	ASSERT_EQ(xspace_write_file(c, path, &small), -EFBIG, "over the size limit");
	ASSERT_TRUE(access(path, F_OK) && errno == ENOENT, "no file left when too big");

	f = fopen("/dev/full", "w");
	if (f) {
		int err = xspace_write_stream(c, f, NULL, &bytes);

		ASSERT_EQ(err, -ENOSPC, "/dev/full: disk full reported");
		fclose(f);
	}
}

/* Writes @c to a temporary file and parses it back; NULL on failure. */
static XSpace *write_and_parse(struct capture *c)
{
	uint8_t buf[1 << 16];
	XSpace *xs = NULL;
	FILE *f = tmpfile();
	size_t len;

	if (!ASSERT_OK_PTR(f, "tmpfile"))
		return NULL;
	if (ASSERT_OK(xspace_write_stream(c, f, NULL, NULL), "write")) {
		rewind(f);
		len = fread(buf, 1, sizeof(buf), f);
		xs = tensorflow__profiler__xspace__unpack(NULL, len, buf);
		ASSERT_OK_PTR(xs, "parse");
	}
	fclose(f);
	return xs;
}

/*
 * One process: a renamed thread's display name is "<latest> (was ...)";
 * past the kept names, "+N more"; a thread never renamed has none; a
 * thread whose only activity is renames has no line.
 */
static void test_thread_labels(void)
{
	struct capture_opts o = { .sz = sizeof(o), .hostname = "h", .session = "s" };
	const XPlane *host;
	struct capture *c;
	XSpace *xs;
	int t1, t2;
	char name[16];

	c = capture__new(&o);
	if (!ASSERT_OK_PTR(c, "new"))
		return;
	cap = c;
	capture__set_window(c, WS, WE);
	capture__set_thread(c, 1, 1, "python3", 0);
	capture__set_thread(c, 1, 2, "python3", WS + 1);
	for (int k = 0; k < CAPTURE_MAX_THREAD_NAMES + 3; k++) {
		snprintf(name, sizeof(name), "w%d", k);
		capture__rename_thread(c, 1, 2, name, WS + 10 + k);
	}
	capture__set_thread(c, 1, 3, "python3", WS + 2);
	capture__rename_thread(c, 1, 3, "tf_foreach", WS + 3);
	t1 = capture__host_track(c, 1, 1);
	t2 = capture__host_track(c, 1, 2);
	span(t1, SPAN_FILE_READ, "read", WS + 100, WS + 200, 0, 0, NULL);
	span(t2, SPAN_FILE_READ, "read", WS + 100, WS + 200, 0, 0, NULL);
	if (!ASSERT_OK(capture__finalize(c), "finalize"))
		goto out;
	xs = write_and_parse(c);
	host = xs ? xplane_plane(xs, "/host:CPU") : NULL;
	if (ASSERT_OK_PTR(host, "host plane") && ASSERT_EQ(host->n_lines, 2, "two lines")) {
		const char *h = plane_stat_str(host, "acceltrace.thread_names");

		ASSERT_STREQ(host->lines[0]->name, "python3", "never renamed");
		ASSERT_STREQ(host->lines[0]->display_name, "", "no display name");
		ASSERT_STREQ(host->lines[1]->name, "w18", "the latest name");
		ASSERT_STREQ(host->lines[1]->display_name,
			     "w18 (was python3, w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, "
			     "w11, w12, w13, w14, +4 more)", "bounded history");
		ASSERT_OK_PTR(h, "thread names stat");
		if (h) {
			ASSERT_STRCONTAINS(h, "\"tid\":2,", "thread 2's history");
			ASSERT_STRCONTAINS(h, "{\"name\":\"w14\",\"ns\":24}],\"more\":4}",
					   "16 kept, 4 more");
			ASSERT_TRUE(!strstr(h, "\"tid\":3,") && !strstr(h, "\"tid\":1,"),
				    "only renamed threads with a line");
		}
	}
	tensorflow__profiler__xspace__free_unpacked(xs, NULL);
out:
	capture__free(c);
	cap = NULL;
}

/*
 * Random spans (overlapping every way, many outside or across the window
 * edges) on two tracks: every line written must nest, and every span that
 * overlaps the window must be there exactly once.
 */
static void test_random_nesting(const char *dir)
{
	struct capture_opts o = { .sz = sizeof(o), .hostname = "r", .session = "s" };
	struct capture *c = capture__new(&o);
	uint64_t x = 42, ws = 100000, we = 900000, expect = 0, events = 0, lines = 0;
	size_t len = 0;
	uint8_t *buf;
	XSpace *xs;
	char path[512], why[128];
	bool ok = true;
	int t[2];

	if (!ASSERT_OK_PTR(c, "new"))
		return;
	t[0] = capture__host_track(c, 1, 1);
	t[1] = capture__device_track(c, capture__device(c, 1, 0, NULL, 0, 0),
				     TRACK_DEVICE_OPS);
	for (int i = 0; i < 20000; i++) {
		struct capture_span s = { .track = t[i & 1], .kind = SPAN_HOST_OTHER };
		uint64_t st, dur;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		st = (x >> 20) % 1000000;
		dur = (x >> 44) % 4 == 0 ? 0 : (x >> 50) % 50000;
		s.start_ns = st;
		s.end_ns = st + dur;
		s.name = capture__intern(c, (x >> 40) & 1 ? "a" : "b");
		capture__add_span(c, &s);
		expect += s.end_ns >= ws && s.start_ns <= we;
	}
	capture__set_window(c, ws, we);
	ASSERT_OK(capture__finalize(c), "finalize");
	snprintf(path, sizeof(path), "%s/random.xplane.pb", dir);
	ASSERT_OK(xspace_write_file(c, path, NULL), "write");
	capture__free(c);

	buf = xplane_read_file(path, &len);
	xs = buf ? tensorflow__profiler__xspace__unpack(NULL, len, buf) : NULL;
	if (!ASSERT_OK_PTR(xs, "parse")) {
		free(buf);
		return;
	}
	for (size_t i = 0; i < xs->n_planes; i++) {
		for (size_t j = 0; j < xs->planes[i]->n_lines; j++) {
			const XLine *l = xs->planes[i]->lines[j];

			events += l->n_events;
			lines++;
			if (!line_ok(l, why, sizeof(why))) {
				ok = false;
				fprintf(stderr, "random: %s line %" PRId64 ": %s\n",
					xs->planes[i]->name, l->id, why);
			}
			for (size_t k = 0; k < l->n_events; k++) {
				if (l->events[k]->offset_ps + l->events[k]->duration_ps >
				    (int64_t)(we - ws) * 1000)
					ok = false;
			}
		}
	}
	ASSERT_TRUE(ok, "random spans: every line nests, nothing past the window");
	ASSERT_EQ(events, expect, "random spans: each overlapping span once");
	printf("random spans: %" PRIu64 " events on %" PRIu64 " lines\n", events, lines);
	ASSERT_GE(lines, 4, "random spans: overlaps made extra lines");
	tensorflow__profiler__xspace__free_unpacked(xs, NULL);
	free(buf);
}

static int emit(const char *dir)
{
	struct capture *c = build_sample();
	char path[512];
	int err;

	if (!c) {
		perror("build_sample");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/sample.xplane.pb", dir);
	err = xspace_write_file(c, path, NULL);
	if (!err) {
		snprintf(path, sizeof(path), "%s/logdir", dir);
		err = xspace_write_capture(c, path, NULL);
	}
	capture__free(c);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/test_xspace_writer.XXXXXX", path[512];
	struct xspace_written got;
	struct capture *c;
	struct stat st;

	if (argc == 3 && !strcmp(argv[1], "--emit"))
		return emit(argv[2]);

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	c = build_sample();
	if (!ASSERT_OK_PTR(c, "sample capture"))
		return test_exit();
	ASSERT_EQ(capture__spans_dropped(c, SPAN_INSTANT_THREAD), 5, "budget cut");
	ASSERT_EQ(capture__device(c, 100, 1, NULL, 0, 0), 1, "device lookup after finalize");
	ASSERT_EQ(capture__device(c, 100, 9, NULL, 0, 0), -EBUSY, "no new device after finalize");

	snprintf(path, sizeof(path), "%s/sample.xplane.pb", dir);
	if (ASSERT_OK(xspace_write_file(c, path, NULL), "write file")) {
		check_sample_file(path);
		if (ASSERT_OK(stat(path, &st), "stat"))
			ASSERT_EQ(st.st_mode & 0077 & ~0040, 0, "no access for others");
	}

	snprintf(path, sizeof(path), "%s/logs", dir);
	if (ASSERT_OK(xspace_write_capture(c, path, &got), "write capture")) {
		snprintf(path, sizeof(path),
			 "%s/logs/plugins/profile/2026_01_01_00_00_00/tpu-host_8470.xplane.pb", dir);
		ASSERT_STREQ(got.path, path, "XProf layout path");
		ASSERT_STREQ(got.session, "2026_01_01_00_00_00", "its session");
		ASSERT_OK(access(path, R_OK), "file where XProf looks");
		check_sample_file(path);
	}

	test_error_paths(c, dir);
	capture__free(c);
	test_device_types(dir);
	test_thread_labels();
	test_random_nesting(dir);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		fprintf(stderr, "could not remove %s\n", dir);
	return test_exit();
}
