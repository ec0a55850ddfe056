// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU stream lines in the XSpace: a capture of two GPUs with streams
 * (kernels, copies, memsets; an estimated XLA Modules line from the host
 * runtime beside them) is written and read back with protobuf-c. After the
 * fixed lines, one line per stream by stream id: id = the stream id, or
 * with bit 62 for a stream id that is a fixed line's (stream 2), named
 * `Stream #<id>(<work>)` from the spans written (Compute first, then the
 * copies and memsets in a fixed order; a span outside the window counts
 * for nothing, a stream with only such spans has no line), a partial
 * overlap on a stream on an extra line of the same row, events with their
 * correlation ids and args.
 *
 * `test_xspace_streams --emit DIR` writes DIR/streams.xplane.pb for
 * tests/output/test_xspace_streams_decode.sh (Python's protobuf) and
 * tests/report/test_report_streams.sh (`acceltrace report` on it).
 *
 * The capture: a window of 1 ms; four executions of jit_train_step, 200 us
 * apart from 100 us, each 150 us on XLA Modules (estimated) and on the
 * streams of GPU 0: MemcpyH2D [0, 20) us on stream 9, gemm_fusion_dot_2
 * [20, 60) and loop_fusion [60, 70) on stream 7, Memset [65, 75) on
 * stream 9; so each step is 20 us of input, 55 us of compute and 125 us
 * idle. After the last step (from 850 us): the odd cases.
 */
#include "test.h"
#include "capture/capture.h"
#include "output/xspace_writer.h"
#include "xplane.pb-c.h"
#include "xplane_c.h"

#define WS 10000000000ULL		/* window start, CLOCK_MONOTONIC ns */
#define WE (WS + 1000000ULL)		/* 1 ms window */
#define US 1000ULL
#define STEP0 (WS + 100 * US)
#define STEP_GAP (200 * US)
#define NSTEPS 4
#define MOVED (1LL << 62)		/* stream ids 1..3: line id with bit 62 */

typedef Tensorflow__Profiler__XLine XLine;
typedef Tensorflow__Profiler__XEvent XEvent;
typedef Tensorflow__Profiler__XStat XStat;

static struct capture *cap;

static uint32_t I(const char *s)
{
	return capture__intern(cap, s);
}

/* A device op on @track with stream_id (and bytes when nonzero). */
static int op(int track, uint32_t stream, const char *name, uint64_t start,
	      uint64_t end, uint64_t corr, uint64_t bytes)
{
	struct capture_span s = {
		.start_ns = start, .end_ns = end, .track = track,
		.kind = SPAN_DEVICE_OP, .correlation_id = corr, .name = I(name),
	};

	capture_span__add_u64(&s, I("stream_id"), stream);
	if (bytes)
		capture_span__add_u64(&s, I("bytes"), bytes);
	return capture__add_span(cap, &s);
}

static int host(int track, enum span_kind kind, const char *name, uint64_t start,
		uint64_t end, uint64_t corr)
{
	struct capture_span s = {
		.start_ns = start, .end_ns = end, .track = track,
		.kind = kind, .correlation_id = corr, .name = I(name),
	};

	return capture__add_span(cap, &s);
}

static struct capture *build_streams(void)
{
	struct capture_opts opts = {
		.sz = sizeof(opts), .hostname = "gpu-host", .session = "2026_01_01_00_00_00",
	};
	int d0, d1, th, mods, s2, s3, s5, s7, s9, g1s7;
	int err = 0;

	cap = capture__new(&opts);
	if (!cap)
		return NULL;
	capture__set_window(cap, WS, WE);
	capture__set_process(cap, 100, "python3");
	capture__set_thread(cap, 100, 100, "python3", 0);
	th = capture__host_track(cap, 100, 100);
	d0 = capture__device(cap, 100, 0, "NVIDIA H100 80GB HBM3", 0, 0);
	d1 = capture__device(cap, 100, 1, "NVIDIA H100 80GB HBM3", 0, 0);
	err |= capture__device_platform(cap, d0, "GPU", "Nvidia");
	err |= capture__device_platform(cap, d1, "GPU", "Nvidia");
	/* Created out of order: lines come by (device, stream id) all the same. */
	g1s7 = capture__stream_track(cap, d1, 7);
	s9 = capture__stream_track(cap, d0, 9);
	s7 = capture__stream_track(cap, d0, 7);
	s5 = capture__stream_track(cap, d0, 5);
	s3 = capture__stream_track(cap, d0, 3);
	s2 = capture__stream_track(cap, d0, 2);
	mods = capture__device_track(cap, d0, TRACK_DEVICE_MODULES);
	if (th < 0 || g1s7 < 0 || s9 < 0 || s7 < 0 || s5 < 0 || s3 < 0 || s2 < 0 || mods < 0)
		goto fail;

	for (int i = 0; i < NSTEPS; i++) {
		uint64_t t = STEP0 + i * STEP_GAP;
		struct capture_span m = {
			.start_ns = t, .end_ns = t + 150 * US, .track = mods,
			.kind = SPAN_DEVICE_MODULE, .flags = SPAN_F_ESTIMATED,
			.correlation_id = 100 + i, .name = I("jit_train_step"),
		};

		err |= capture__add_span(cap, &m);
		err |= host(th, SPAN_EXECUTE, "PJRT_LoadedExecutable_Execute", t - 10 * US,
			    t - 1 * US, 100 + i);
		err |= host(th, SPAN_HOST_OTHER, "cuGraphLaunch", t - 5 * US, t - 3 * US, 500 + i);
		err |= host(th, SPAN_H2D, "cuMemcpyHtoDAsync_v2", t + 1 * US, t + 2 * US, 200 + i);
		err |= op(s9, 9, "MemcpyH2D", t, t + 20 * US, 200 + i, 4096);
		err |= op(s7, 7, "gemm_fusion_dot_2", t + 20 * US, t + 60 * US, 500 + i, 0);
		err |= op(s7, 7, "loop_fusion", t + 60 * US, t + 70 * US, 500 + i, 0);
		err |= op(s9, 9, "Memset", t + 65 * US, t + 75 * US, 300 + i, 0);
	}
	/* GPU 1 runs the first launch's kernel too. */
	err |= op(g1s7, 7, "gemm_fusion_dot_2", STEP0 + 20 * US, STEP0 + 60 * US, 500, 0);

	/* Odd cases, after the last step's work. Stream 7: a kernel clipped
	 * at the window start, and two graph branches that overlap partially
	 * (the second goes to an extra line). */
	err |= op(s7, 7, "warmup_kernel", WS - 10 * US, WS + 10 * US, 499, 0);
	err |= op(s7, 7, "graph_branch_a", WS + 860 * US, WS + 880 * US, 600, 0);
	err |= op(s7, 7, "graph_branch_b", WS + 870 * US, WS + 890 * US, 600, 0);
	/* Stream 9: a copy wholly before the window names nothing. */
	err |= op(s9, 9, "MemcpyD2D", WS - 50 * US, WS - 40 * US, 601, 4096);
	/* Stream 2 (a fixed line's id): one copy back to the host. */
	err |= op(s2, 2, "MemcpyD2H", WS + 900 * US, WS + 910 * US, 602, 8192);
	/* Stream 3: only after the window, so no line. */
	err |= op(s3, 3, "late_kernel", WE + 10 * US, WE + 20 * US, 603, 0);
	/* Stream 5: every kind, added in no particular order. */
	err |= op(s5, 5, "Memset", WS + 950 * US, WS + 952 * US, 604, 0);
	err |= op(s5, 5, "MemcpyP2P", WS + 940 * US, WS + 945 * US, 605, 1 << 20);
	err |= op(s5, 5, "MemcpyH2H", WS + 935 * US, WS + 938 * US, 606, 64);
	err |= op(s5, 5, "nccl_all_reduce", WS + 920 * US, WS + 930 * US, 607, 0);
	err |= op(s5, 5, "MemcpyD2D", WS + 910 * US, WS + 915 * US, 608, 4096);
	if (err || capture__finalize(cap))
		goto fail;
	return cap;
fail:
	capture__free(cap);
	cap = NULL;
	errno = EINVAL;
	return NULL;
}

/* An event's stat by name; NULL if absent. */
static const XStat *event_stat(const XPlane *p, const XEvent *e, const char *name)
{
	for (size_t i = 0; i < e->n_stats; i++) {
		for (size_t j = 0; j < p->n_stat_metadata; j++) {
			if (p->stat_metadata[j]->key == e->stats[i]->metadata_id &&
			    !strcmp(p->stat_metadata[j]->value->name, name))
				return e->stats[i];
		}
	}
	return NULL;
}

static uint64_t u64_stat(const XPlane *p, const XEvent *e, const char *name)
{
	const XStat *st = event_stat(p, e, name);

	return st && st->value_case == TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE ?
	       st->uint64_value : UINT64_MAX;
}

static void check_line(const XPlane *p, size_t j, int64_t id, int64_t display_id,
		       const char *name, size_t n_events)
{
	const XLine *l;

	if (!ASSERT_TRUE(j < p->n_lines, name))
		return;
	l = p->lines[j];
	ASSERT_STREQ(l->name, name, "line name");
	/* Fixed lines have none (XProf shows the name); streams the name. */
	ASSERT_STREQ(l->display_name, strncmp(name, "Stream #", 8) ? "" : name,
		     "display name");
	if (!ASSERT_EQ(l->id, id, name))
		fprintf(stderr, "  line %zu of %s\n", j, p->name);
	ASSERT_EQ(l->display_id, display_id, name);
	ASSERT_EQ(l->n_events, n_events, name);
}

static void check_file(const char *path)
{
	const XPlane *g0, *g1;
	const XLine *l;
	uint8_t *buf;
	size_t len = 0;
	XSpace *xs;

	buf = xplane_read_file(path, &len);
	if (!ASSERT_OK_PTR(buf, "read back"))
		return;
	xs = tensorflow__profiler__xspace__unpack(NULL, len, buf);
	if (!ASSERT_OK_PTR(xs, "protobuf-c parses the file")) {
		free(buf);
		return;
	}
	g0 = xplane_plane(xs, "/device:GPU:0");
	g1 = xplane_plane(xs, "/device:GPU:1");
	if (!ASSERT_TRUE(g0 && g1, "two GPU planes"))
		goto out;

	/* GPU 0: the fixed line, then streams 2 (moved id), 5, 7 (two lines),
	 * 9; stream 3 had nothing in the window. */
	ASSERT_EQ(g0->n_lines, 6, "GPU:0 lines");
	check_line(g0, 0, 2, 2, "XLA Modules", NSTEPS);
	check_line(g0, 1, MOVED | 2, MOVED | 2, "Stream #2(MemcpyD2H)", 1);
	check_line(g0, 2, 5, 5, "Stream #5(Compute,MemcpyD2D,MemcpyP2P,MemcpyOther,Memset)", 5);
	check_line(g0, 3, 7, 7, "Stream #7(Compute)", 2 * NSTEPS + 2);
	check_line(g0, 4, 7 + (1LL << 32), 7, "Stream #7(Compute)", 1);
	check_line(g0, 5, 9, 9, "Stream #9(MemcpyH2D,Memset)", 2 * NSTEPS);
	ASSERT_EQ(g1->n_lines, 1, "GPU:1 lines");
	check_line(g1, 0, 7, 7, "Stream #7(Compute)", 1);

	if (g0->n_lines == 6) {
		/* Stream 9: the first copy, with its correlation id and args. */
		l = g0->lines[5];
		ASSERT_STREQ(xplane_event_name(g0, l->events[0]->metadata_id), "MemcpyH2D",
			     "stream 9 first event");
		ASSERT_EQ(l->events[0]->offset_ps, 100 * US * 1000, "at the first step");
		ASSERT_EQ(l->events[0]->duration_ps, 20 * US * 1000, "20 us");
		ASSERT_EQ(u64_stat(g0, l->events[0], "correlation_id"), 200, "copy's correlation id");
		ASSERT_EQ(u64_stat(g0, l->events[0], "bytes"), 4096, "bytes");
		ASSERT_EQ(u64_stat(g0, l->events[0], "stream_id"), 9, "stream_id");
		ASSERT_STREQ(xplane_event_name(g0, l->events[1]->metadata_id), "Memset", "then the memset");
		/* Stream 7: the clipped warm-up first, then the first kernel. */
		l = g0->lines[3];
		ASSERT_STREQ(xplane_event_name(g0, l->events[0]->metadata_id), "warmup_kernel", "clipped first");
		ASSERT_TRUE(event_stat(g0, l->events[0], "acceltrace.true_start_ns") != NULL,
			    "its true start");
		ASSERT_STREQ(xplane_event_name(g0, l->events[1]->metadata_id), "gemm_fusion_dot_2", "a kernel");
		ASSERT_EQ(u64_stat(g0, l->events[1], "correlation_id"), 500, "kernel's correlation id");
		ASSERT_STREQ(xplane_event_name(g0, g0->lines[4]->events[0]->metadata_id), "graph_branch_b",
			     "the partial overlap on the extra line");
	}
out:
	tensorflow__profiler__xspace__free_unpacked(xs, NULL);
	free(buf);
}

/* Stream ids that are fixed line ids move, whichever fixed lines there are. */
static void test_fixed_ids(const char *dir)
{
	struct capture_opts o = { .sz = sizeof(o), .hostname = "h", .session = "s" };
	char path[512];
	uint8_t *buf = NULL;
	XSpace *xs = NULL;
	size_t len = 0;
	int d, t;

	cap = capture__new(&o);
	if (!ASSERT_OK_PTR(cap, "new"))
		return;
	capture__set_window(cap, WS, WE);
	d = capture__device(cap, 1, 0, NULL, 0, 0);
	capture__device_platform(cap, d, "GPU", NULL);
	for (uint32_t s = 0; s <= 4; s++) {
		t = capture__stream_track(cap, d, s);
		ASSERT_OK(op(t, s, "k", WS + 10, WS + 20, s + 1, 0), "kernel");
	}
	t = capture__device_track(cap, d, TRACK_DEVICE_OPS);
	ASSERT_OK(op(t, 0, "op", WS + 10, WS + 20, 0, 0), "op");
	ASSERT_OK(capture__finalize(cap), "finalize");
	snprintf(path, sizeof(path), "%s/ids.xplane.pb", dir);
	if (!ASSERT_OK(xspace_write_file(cap, path, NULL), "write"))
		goto out;
	buf = xplane_read_file(path, &len);
	xs = buf ? tensorflow__profiler__xspace__unpack(NULL, len, buf) : NULL;
	if (ASSERT_OK_PTR(xs, "parse") && ASSERT_EQ(xs->planes[1]->n_lines, 6, "six lines")) {
		const XPlane *p = xs->planes[1];
		int64_t want[] = { 3, 0, MOVED | 1, MOVED | 2, MOVED | 3, 4 };

		ASSERT_STREQ(p->name, "/device:GPU:0", "plane");
		for (size_t j = 0; j < 6; j++)
			ASSERT_EQ(p->lines[j]->id, want[j], "line id");
		ASSERT_STREQ(p->lines[0]->name, "XLA Ops", "fixed line first");
		ASSERT_STREQ(p->lines[1]->name, "Stream #0(Compute)", "stream 0 keeps id 0");
		ASSERT_STREQ(p->lines[3]->name, "Stream #2(Compute)", "name keeps the stream id");
	}
out:
	if (xs)
		tensorflow__profiler__xspace__free_unpacked(xs, NULL);
	free(buf);
	capture__free(cap);
	cap = NULL;
}

static int emit(const char *dir)
{
	struct capture *c = build_streams();
	char path[512];
	int err;

	if (!c) {
		perror("build_streams");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/streams.xplane.pb", dir);
	err = xspace_write_file(c, path, NULL);
	capture__free(c);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/test_xspace_streams.XXXXXX", path[512];
	struct capture *c;

	if (argc == 3 && !strcmp(argv[1], "--emit"))
		return emit(argv[2]);
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	ASSERT_TRUE(xprof_line_name(TRACK_DEVICE_STREAM) == NULL,
		    "streams have no fixed line name");
	c = build_streams();
	if (ASSERT_OK_PTR(c, "stream capture")) {
		snprintf(path, sizeof(path), "%s/streams.xplane.pb", dir);
		if (ASSERT_OK(xspace_write_file(c, path, NULL), "write"))
			check_file(path);
		capture__free(c);
	}
	test_fixed_ids(dir);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		fprintf(stderr, "could not remove %s\n", dir);
	return test_exit();
}
