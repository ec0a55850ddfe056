// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The collector's device timeline from a devtrace buffer written here from
 * the format's page (docs/devtrace.md), not by the simulator: a device
 * clock 50 ppm fast and 2 s ahead of the host, one whole execution of two
 * ops (one an infeed that waits for data), and a second execution whose op
 * is still running at the stop, begun before the window; and a second
 * core of the same device (same run_id) with no clock pair but its
 * header's, whose op 2 s later is converted by the first core's pairs
 * (its own pair alone would be 100 us off). Checked: the lines each span
 * lands on, converted times within 10 us, op stats, the open op kept with
 * its true start and marked, the module's correlation (the launch id).
 *
 * A planned stop (the daemon's trigger) before launch 5, with the records
 * read before the close: launch 5 is the next window's, whole, and the
 * first window holds none of it.
 *
 * The window's start moved past launch 5 (the daemon's flight recorder):
 * what it says of unmatched executions agrees with what it still holds.
 *
 * What it warns of is what was lost, not the window's edges: device work
 * launched before it, launches still queued at its stop.
 *
 * The owner's exit: the buffer is let go once the window is past it, and
 * found and read afresh after.
 */
#include <fcntl.h>
#include <linux/types.h>

#include "test.h"
#include "acceltrace/devtrace.h"
#include "capture/capture.h"
#include "capture_find.h"
#include "collect/collector.h"
#include "discover/devtrace_buffers.h"

#define MS 1000000ull
#define RATE 1000000000ull
#define CAP 64

#define STOP (3000 * MS)

static char path[] = "/tmp/acceltrace-coldt.XXXXXX";
static char path2[] = "/tmp/acceltrace-coldt2.XXXXXX";

/* The device clock: 50 ppm fast, 2 s ahead. */
static uint64_t dev(uint64_t host)
{
	return 2000000000ull + host + host / 20000;
}

static int fd_out;
static uint64_t seq;

static void name(__u32 id, __u16 kind, const char *text)
{
	struct devtrace_name n = { .id = id, .kind = kind, .len = strlen(text) };

	memcpy(n.name, text, n.len);
	ASSERT_EQ(pwrite(fd_out, &n, sizeof(n), 4096 + id * 64), 64, "name");
}

static void rec(__u16 kind, uint64_t host, __u32 name_id, __u8 cat, uint64_t corr,
		uint64_t step, uint64_t arg)
{
	struct devtrace_record r = {
		.seq = ++seq, .ts = dev(host), .kind = kind, .category = cat, .name_id = name_id,
		.correlation_id = corr, .step = step, .arg = arg,
		.flops = kind == DEVTRACE_OP_END ? 1000 : 0,
		.bytes = kind == DEVTRACE_OP_END ? 64 : 0,
	};

	if (kind == DEVTRACE_CLOCK_SYNC)
		r.ts = dev(host), r.arg = host;
	ASSERT_EQ(pwrite(fd_out, &r, sizeof(r), 8192 + ((seq - 1) % CAP) * 64), 64, "record");
}

static void write_buffer(void)
{
	struct devtrace_header h = {
		.version = DEVTRACE_VERSION, .header_size = 4096, .record_size = 64,
		.name_size = 64, .name_capacity = 64, .core = 1, .names_offset = 4096,
		.records_offset = 8192, .record_capacity = CAP, .clock_rate_hz = RATE,
		.run_id = 77, .num_cores = 2, .sync_host_ns = 1 * MS, .sync_device_ts = dev(1 * MS),
		.device_kind = "TPU test", .owner_pid = 4242, .name_count = 4,
	};

	ASSERT_OK(ftruncate(fd_out, 8192 + CAP * 64), "size");
	name(0, DEVTRACE_NAME_MODULE, "train_step");
	name(1, DEVTRACE_NAME_OP, "fusion.1");
	name(2, DEVTRACE_NAME_OP, "infeed.2");
	name(3, DEVTRACE_NAME_OP, "convolution.3");
	/* launch 5: [10 ms, 14 ms]: infeed.2 waits 11..12.5, then fusion.1 */
	rec(DEVTRACE_CLOCK_SYNC, 9 * MS, DEVTRACE_NO_NAME, 0, 0, 0, 0);
	rec(DEVTRACE_MODULE_BEGIN, 10 * MS, 0, 0, 5, 1, 2);
	rec(DEVTRACE_STEP_BEGIN, 10 * MS, DEVTRACE_NO_NAME, 0, 5, 1, 0);
	rec(DEVTRACE_OP_BEGIN, 10 * MS, 2, DEVTRACE_CAT_INFEED, 5, 1, 0);
	rec(DEVTRACE_INFEED_WAIT_BEGIN, 11 * MS, 2, 0, 5, 1, 0);
	rec(DEVTRACE_INFEED_WAIT_END, 12 * MS + MS / 2, 2, 0, 5, 1, 0);
	rec(DEVTRACE_OP_END, 13 * MS, 2, DEVTRACE_CAT_INFEED, 5, 1, 0);
	rec(DEVTRACE_OP_BEGIN, 13 * MS, 1, DEVTRACE_CAT_FUSION, 5, 1, 1);
	rec(DEVTRACE_OP_END, 14 * MS, 1, DEVTRACE_CAT_FUSION, 5, 1, 1);
	rec(DEVTRACE_STEP_END, 14 * MS, DEVTRACE_NO_NAME, 0, 5, 1, 0);
	rec(DEVTRACE_MODULE_END, 14 * MS, 0, 0, 5, 1, 2);
	/* launch 6 from 15 ms: its convolution still runs at the stop */
	rec(DEVTRACE_CLOCK_SYNC, 15 * MS, DEVTRACE_NO_NAME, 0, 0, 0, 0);
	rec(DEVTRACE_MODULE_BEGIN, 15 * MS, 0, 0, 6, 2, 1);
	rec(DEVTRACE_STEP_BEGIN, 15 * MS, DEVTRACE_NO_NAME, 0, 6, 2, 0);
	rec(DEVTRACE_OP_BEGIN, 15 * MS, 3, DEVTRACE_CAT_CONVOLUTION, 6, 2, 0);
	rec(DEVTRACE_CLOCK_SYNC, 16 * MS, DEVTRACE_NO_NAME, 0, 0, 0, 0);
	h.write_seq = h.begin_seq = seq;
	ASSERT_EQ(pwrite(fd_out, &h, sizeof(h), 0), (ssize_t)sizeof(h), "header");
	h.magic = DEVTRACE_MAGIC;	/* last, as a writer does */
	ASSERT_EQ(pwrite(fd_out, &h.magic, 8, 0), 8, "magic");
}

/* Core 0: the header's pair only, one op at 2 s (after the window opened). */
static void write_second_core(void)
{
	struct devtrace_header h = {
		.version = DEVTRACE_VERSION, .header_size = 4096, .record_size = 64,
		.name_size = 64, .name_capacity = 64, .core = 0, .names_offset = 4096,
		.records_offset = 8192, .record_capacity = CAP, .clock_rate_hz = RATE,
		.run_id = 77, .num_cores = 2, .sync_host_ns = 1 * MS, .sync_device_ts = dev(1 * MS),
		.device_kind = "TPU test", .owner_pid = 4242, .name_count = 2,
	};

	seq = 0;
	ASSERT_OK(ftruncate(fd_out, 8192 + CAP * 64), "size");
	name(0, DEVTRACE_NAME_MODULE, "train_step");
	name(1, DEVTRACE_NAME_OP, "dot.9");
	rec(DEVTRACE_MODULE_BEGIN, 2000 * MS, 0, 0, 7, 3, 1);
	rec(DEVTRACE_OP_BEGIN, 2000 * MS, 1, DEVTRACE_CAT_DOT, 7, 3, 0);
	rec(DEVTRACE_OP_END, 2001 * MS, 1, DEVTRACE_CAT_DOT, 7, 3, 0);
	rec(DEVTRACE_MODULE_END, 2001 * MS, 0, 0, 7, 3, 1);
	h.write_seq = h.begin_seq = seq;
	ASSERT_EQ(pwrite(fd_out, &h, sizeof(h), 0), (ssize_t)sizeof(h), "header");
	h.magic = DEVTRACE_MAGIC;
	ASSERT_EQ(pwrite(fd_out, &h.magic, 8, 0), 8, "magic");
}

static const struct capture_span *find(const struct capture *cap, const char *what,
				       enum span_kind kind)
{
	return test_find_span(cap, what, kind, NULL);
}

static bool near(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) <= 10000;
}

static bool has_arg(const struct capture *cap, const struct capture_span *s, const char *key,
		    uint64_t v)
{
	for (uint32_t i = 0; i < s->nargs; i++)
		if (!strcmp(capture__string(cap, s->args[i].key), key))
			return s->args[i].value.u == v;
	return false;
}

static void test_one_window(void)
{
	struct capture_opts copts = { .sz = sizeof(copts), .hostname = "t", .session = "t" };
	struct collector_opts o = { .sz = sizeof(o) };
	const struct capture_span *s;
	struct collector *col = NULL;
	struct capture *cap = NULL;
	int fd;

	cap = capture__new(&copts);
	o.capture = cap;
	col = collector__new(&o);
	if (!ASSERT_OK_PTR(cap, "capture") || !ASSERT_OK_PTR(col, "collector"))
		goto out;
	capture__set_probes_attached(cap, 12 * MS);
	fd = open(path, O_RDONLY);
	ASSERT_EQ(collector__add_devtrace(col, fd, path, NULL), 0, "add");
	ASSERT_OK(collector__open_window(col, 12 * MS), "open window");
	ASSERT_EQ(collector__poll_devtrace(col), 16, "records read");
	/* The second core's buffer joins later; the first's pairs serve it. */
	fd = open(path2, O_RDONLY);
	ASSERT_EQ(collector__add_devtrace(col, fd, path2, NULL), 1, "add while reading");
	ASSERT_EQ(collector__poll_devtrace(col), 4, "second core's records");
	collector__begin_close(col, STOP);
	ASSERT_OK(collector__finish(col), "finish");
	if (!ASSERT_OK(capture__finalize(cap), "finalize"))
		goto out;

	ASSERT_EQ(capture__num_devices(cap), 2, "two cores");
	ASSERT_EQ(capture__device_info(cap, 0)->pid, 4242, "owner_pid");
	ASSERT_EQ(capture__device_info(cap, 0)->core, 1, "core ordinal");
	s = find(cap, "dot.9", SPAN_DEVICE_OP);
	ASSERT_TRUE(s && near(s->start_ns, 2000 * MS) && near(s->end_ns, 2001 * MS),
		    "second core converted with the first core's pairs");
	s = find(cap, "fusion.1", SPAN_DEVICE_OP);
	if (ASSERT_OK_PTR(s, "fusion op")) {
		ASSERT_TRUE(near(s->start_ns, 13 * MS) && near(s->end_ns, 14 * MS), "op times");
		ASSERT_TRUE(has_arg(cap, s, "flops", 1000), "flops");
		ASSERT_TRUE(has_arg(cap, s, "bytes_accessed", 64), "bytes_accessed");
		/* The writer groups it by this launch (step_num, group_id). */
		ASSERT_TRUE(has_arg(cap, s, "launch_id", 5), "launch_id");
		ASSERT_EQ(s->correlation_id, 0, "ops carry no correlation (modules do)");
	}
	s = find(cap, "infeed.2", SPAN_DEVICE_OP);
	ASSERT_TRUE(s && near(s->start_ns, 10 * MS), "infeed op began before the window: true start");
	/* The wait is the second infeed.2 span: the one from 11 ms. */
	s = find(cap, "train_step", SPAN_DEVICE_MODULE);
	if (ASSERT_OK_PTR(s, "module")) {
		ASSERT_EQ(s->correlation_id, 5, "module correlation = launch id");
		ASSERT_TRUE(near(s->start_ns, 10 * MS) && near(s->end_ns, 14 * MS), "module times");
		ASSERT_FALSE(s->flags & SPAN_F_ESTIMATED, "device times, not estimated");
	}
	s = find(cap, "convolution.3", SPAN_DEVICE_OP);
	if (ASSERT_OK_PTR(s, "open op")) {
		ASSERT_TRUE(near(s->start_ns, 15 * MS), "open op true start");
		ASSERT_EQ(s->end_ns, STOP, "open op ends at the stop");
		ASSERT_TRUE(s->flags & SPAN_F_OPEN_AT_STOP, "marked open at stop");
	}
	/* The device's STEP records are not steps: the window's steps are the
	 * dominant program's executions, chosen among the modules. */
	s = find(cap, "train_step", SPAN_DEVICE_STEP);
	ASSERT_TRUE(s && s->correlation_id == 5 && near(s->start_ns, 10 * MS) &&
		    near(s->end_ns, 14 * MS), "the step is the module's execution, by launch");
	ASSERT_EQ(capture__span_count(cap, SPAN_DEVICE_OP), 5, "ops: 2 + wait + open one + dot");
out:
	collector__free(col);
	capture__free(cap);
}

static void test_planned_stop(void)
{
	struct capture_opts copts = { .sz = sizeof(copts), .hostname = "t", .session = "t" };
	struct collector_opts o = { .sz = sizeof(o) };
	const struct capture_span *s;
	struct capture *cap = NULL, *next = NULL;
	struct collector *col = NULL;
	const uint64_t stop = 9 * MS + MS / 2;

	cap = capture__new(&copts);
	next = capture__new(&copts);
	o.capture = cap;
	col = collector__new(&o);
	if (!ASSERT_OK_PTR(cap, "capture") || !ASSERT_OK_PTR(next, "next") ||
	    !ASSERT_OK_PTR(col, "collector"))
		goto out;
	capture__set_probes_attached(cap, 5 * MS);
	ASSERT_EQ(collector__add_devtrace(col, open(path, O_RDONLY), path, NULL), 0, "add");
	ASSERT_OK(collector__open_window(col, 5 * MS), "open window");
	collector__plan_stop(col, stop);
	/* The whole buffer is read before the close, as in the daemon's loop
	 * turn between a trigger's stop and its capture. */
	ASSERT_EQ(collector__poll_devtrace(col), 16, "records read");
	collector__begin_close(col, stop);
	ASSERT_OK(collector__finish(col), "finish");
	if (!ASSERT_OK(capture__finalize(cap), "finalize"))
		goto out;
	ASSERT_EQ(capture__span_count(cap, SPAN_DEVICE_MODULE) +
		  capture__span_count(cap, SPAN_DEVICE_OP), 0, "nothing past the stop in the first");

	if (!ASSERT_OK(collector__set_capture(col, next), "set capture"))
		goto out;
	ASSERT_OK(collector__open_window(col, stop), "the next window opens at the stop");
	collector__begin_close(col, STOP);
	ASSERT_OK(collector__finish(col), "finish next");
	if (!ASSERT_OK(capture__finalize(next), "finalize next"))
		goto out;
	s = find(next, "fusion.1", SPAN_DEVICE_OP);
	ASSERT_TRUE(s && near(s->start_ns, 13 * MS) && near(s->end_ns, 14 * MS),
		    "an op wholly between the stop and the close is the next window's");
	s = find(next, "train_step", SPAN_DEVICE_MODULE);
	ASSERT_TRUE(s && s->correlation_id == 5 && near(s->start_ns, 10 * MS),
		    "launch 5's module, whole");
	s = find(next, "convolution.3", SPAN_DEVICE_OP);
	ASSERT_TRUE(s && near(s->start_ns, 15 * MS) && (s->flags & SPAN_F_OPEN_AT_STOP),
		    "the op running at the next stop, open there");
	ASSERT_EQ(capture__span_count(next, SPAN_DEVICE_OP), 4, "ops: 2 + wait + open one");
out:
	collector__free(col);
	capture__free(cap);
	capture__free(next);
}

static bool has_warning(const struct capture *cap, const char *text)
{
	for (size_t i = 0; i < capture__num_warnings(cap); i++)
		if (strstr(capture__warning(cap, i), text))
			return true;
	return false;
}

/* The window moved past launch 5 (the daemon's): the capture holds none of
 * it, and its execution is not among those it warns of either. */
static void test_forget_before(void)
{
	struct capture_opts copts = { .sz = sizeof(copts), .hostname = "t", .session = "t" };
	struct collector_opts o = { .sz = sizeof(o) };
	struct collector *col = NULL;
	struct capture *cap = NULL;

	cap = capture__new(&copts);
	o.capture = cap;
	col = collector__new(&o);
	if (!ASSERT_OK_PTR(cap, "capture") || !ASSERT_OK_PTR(col, "collector"))
		goto out;
	capture__set_probes_attached(cap, 5 * MS);
	ASSERT_EQ(collector__add_devtrace(col, open(path, O_RDONLY), path, NULL), 0, "add");
	ASSERT_OK(collector__open_window(col, 5 * MS), "open window");
	ASSERT_EQ(collector__poll_devtrace(col), 16, "records read");
	collector__forget_before(col, 14 * MS + MS / 2);
	collector__begin_close(col, STOP);
	ASSERT_OK(collector__finish(col), "finish");
	if (!ASSERT_OK(capture__finalize(cap), "finalize"))
		goto out;
	ASSERT_FALSE(find(cap, "fusion.1", SPAN_DEVICE_OP), "launch 5 forgotten");
	ASSERT_TRUE(find(cap, "convolution.3", SPAN_DEVICE_OP), "launch 6 kept");
	/* No host Executes here: each execution kept is unmatched, launch 6's
	 * only. */
	ASSERT_TRUE(has_warning(cap, "1 device executions (per core) without their host Execute"),
		    "the forgotten execution is not counted unmatched");
out:
	collector__free(col);
	capture__free(cap);
}

/* Host Executes of pid 4242 at @at (ms) for @launch, added before finish. */
static struct capture *window_with_executes(const uint64_t *launch, const double *at, size_t n)
{
	struct capture_opts copts = { .sz = sizeof(copts), .hostname = "t", .session = "t" };
	struct collector_opts o = { .sz = sizeof(o) };
	struct capture *cap = capture__new(&copts);
	struct collector *col = NULL;
	int track;

	o.capture = cap;
	col = cap ? collector__new(&o) : NULL;
	if (!ASSERT_OK_PTR(cap, "capture") || !ASSERT_OK_PTR(col, "collector"))
		goto fail;
	capture__set_probes_attached(cap, 5 * MS);
	ASSERT_EQ(collector__add_devtrace(col, open(path, O_RDONLY), path, NULL), 0, "add");
	ASSERT_OK(collector__open_window(col, 5 * MS), "open window");
	ASSERT_EQ(collector__poll_devtrace(col), 16, "records read");
	track = capture__host_track(cap, 4242, 4242);
	for (size_t i = 0; i < n; i++) {
		struct capture_span e = {
			.start_ns = (uint64_t)(at[i] * MS), .end_ns = (uint64_t)(at[i] * MS) + 50000,
			.correlation_id = launch[i], .track = (uint32_t)track,
			.name = capture__intern(cap, "PjRtLoadedExecutable::Execute"),
			.kind = SPAN_EXECUTE,
		};

		ASSERT_OK(capture__add_span(cap, &e), "host Execute");
	}
	collector__begin_close(col, STOP);
	ASSERT_OK(collector__finish(col), "finish");
	if (!ASSERT_OK(capture__finalize(cap), "finalize"))
		goto fail;
	collector__free(col);
	return cap;
fail:
	collector__free(col);
	capture__free(cap);
	return NULL;
}

/* The window's edges are not losses: device work launched before the
 * window (launch 5: only 6's Execute is in it) and a launch still queued
 * at the stop (8: no device work yet). A launch before those that ran,
 * with no device work (4), is. */
static void test_edges_not_losses(void)
{
	const uint64_t edges[] = { 6, 8 }, lost[] = { 4, 5, 6 };
	const double edges_at[] = { 14.5, 20 }, lost_at[] = { 8, 9.5, 14.5 };
	struct capture *cap = window_with_executes(edges, edges_at, 2);

	if (cap) {
		ASSERT_FALSE(has_warning(cap, "without their host Execute"),
			     "launch 5 began before the window: no device-side warning");
		ASSERT_FALSE(has_warning(cap, "without their device execution"),
			     "launch 8 was queued at the stop: no host-side warning");
		capture__free(cap);
	}
	cap = window_with_executes(lost, lost_at, 3);
	if (cap) {
		ASSERT_TRUE(has_warning(cap, "1 host Executes (per core) without their device execution"),
			    "launch 4, before launches that ran, is lost");
		ASSERT_FALSE(has_warning(cap, "without their host Execute"), "5 and 6 joined");
		capture__free(cap);
	}
}

/* The buffer's owner (pid 4242) exits at 20 ms: once the window has moved
 * past the exit, the buffer found in it is closed and forgotten where it
 * was found, and is found afresh (a new process mapping the same file). */
static void test_owner_exit(void)
{
	struct capture_opts copts = { .sz = sizeof(copts), .hostname = "t", .session = "t" };
	struct collector_opts o = { .sz = sizeof(o) };
	struct ev_task exit_rec = {
		.h = { .type = EV_TASK, .pid = 4242, .tid = 4242, .start_ns = 20 * MS,
		       .end_ns = 20 * MS },
		.event = TASK_PROC_EXIT,
	};
	struct devtrace_seen *seen = devtrace_seen__new();
	const struct capture_span *s;
	struct collector *col = NULL;
	struct capture *cap = NULL;
	int fd, fds;

	cap = capture__new(&copts);
	o.capture = cap;
	col = collector__new(&o);
	if (!ASSERT_OK_PTR(cap, "capture") || !ASSERT_OK_PTR(col, "collector") ||
	    !ASSERT_OK_PTR(seen, "seen"))
		goto out;
	capture__set_probes_attached(cap, 5 * MS);
	fd = devtrace_buffer_open(seen, path);
	if (!ASSERT_GE(fd, 0, "found"))
		goto out;
	ASSERT_EQ(devtrace_buffer_open(seen, path), -EEXIST, "found once");
	ASSERT_EQ(collector__add_devtrace(col, fd, path, seen), 0, "add");
	ASSERT_OK(collector__open_window(col, 5 * MS), "open window");
	ASSERT_EQ(collector__poll_devtrace(col), 16, "records read");
	fds = test_open_fds();
	collector__record(col, &exit_rec, sizeof(exit_rec));
	collector__forget_before(col, 19 * MS);
	ASSERT_EQ(test_open_fds(), fds, "kept while the window reaches the exit");
	ASSERT_EQ(devtrace_buffer_open(seen, path), -EEXIST, "still seen");
	collector__forget_before(col, 21 * MS);
	ASSERT_EQ(test_open_fds(), fds - 1, "closed once the window is past the exit");
	fd = devtrace_buffer_open(seen, path);
	if (!ASSERT_GE(fd, 0, "forgotten where it was found: found again"))
		goto out;
	ASSERT_EQ(collector__add_devtrace(col, fd, path, seen), 0, "its index again");
	ASSERT_EQ(collector__poll_devtrace(col), 16, "read afresh");
	collector__begin_close(col, STOP);
	ASSERT_OK(collector__finish(col), "finish");
	if (!ASSERT_OK(capture__finalize(cap), "finalize"))
		goto out;
	/* Read afresh, launch 6 is open again: this pid's exit was before. */
	s = find(cap, "convolution.3", SPAN_DEVICE_OP);
	ASSERT_TRUE(s && near(s->start_ns, 15 * MS), "the buffer's records, read again");
out:
	collector__free(col);
	capture__free(cap);
	devtrace_seen__free(seen);
}

int main(void)
{
	int fd;

	fd_out = mkstemp(path);
	if (!ASSERT_GE(fd_out, 0, "mkstemp"))
		return test_exit();
	write_buffer();
	fd = fd_out;
	fd_out = mkstemp(path2);
	if (!ASSERT_GE(fd_out, 0, "mkstemp"))
		return test_exit();
	write_second_core();
	close(fd_out);
	fd_out = fd;
	test_one_window();
	test_planned_stop();
	test_forget_before();
	test_edges_not_losses();
	test_owner_exit();
	close(fd_out);
	unlink(path);
	unlink(path2);
	return test_exit();
}
