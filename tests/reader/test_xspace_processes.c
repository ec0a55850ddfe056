// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * reader/xspace_processes.c on captures built in the reader's model: the
 * processes of a whole-host capture (device planes by acceltrace.pid,
 * thread lines by acceltrace.thread_pids, extra lines of a thread by its
 * display_id, counter lines and older captures by the "(pid N" after the
 * name), a view holding one process's planes and lines only, and hostile
 * labels and maps: a name claiming another pid, a pid out of range, a map
 * whose length is no whole number of pairs; parents from
 * acceltrace.processes (a worker's threads in its ancestor's view), and
 * loops, cut stats and strings past their bound.
 */
#include <string.h>

#include "test.h"
#include "reader/xspace_processes.h"

#define COUNTER_LINE (1ll << 62)

static struct xs_stat pid_stat(int64_t pid)
{
	return (struct xs_stat){ .name = "acceltrace.pid", .type = XS_STAT_INT, .i = pid };
}

/* (tid, pid) pairs, little-endian, with @extra stray bytes after them. */
static size_t pack(uint8_t *buf, const uint32_t (*pairs)[2], size_t n, size_t extra)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++)
			for (int b = 0; b < 4; b++)
				buf[len++] = (uint8_t)(pairs[i][k] >> (8 * b));
	memset(buf + len, 0x7f, extra);
	return len + extra;
}

struct sample {
	struct xs_space xs;
	struct xs_plane planes[4];
	struct xs_line host_lines[6];
	struct xs_stat dev_stats[2], host_stats[2];
	struct xs_event ev;
	struct xs_event_meta meta;
	uint8_t map[64];
};

/*
 * Two jobs: pid 10 (threads 10 "jobA", 11 with an extra line) drives
 * /device:TPU:0, pid 20 (thread 20 "jobB", a counter line) /device:TPU:1;
 * a Task Environment plane belongs to neither.
 */
static void sample_init(struct sample *s, bool with_map)
{
	static const uint32_t pairs[][2] = { { 10, 10 }, { 11, 10 }, { 20, 20 } };

	memset(s, 0, sizeof(*s));
	s->meta = (struct xs_event_meta){ .name = "e", .display_name = "" };
	s->ev = (struct xs_event){ .meta = &s->meta, .start_ps = 1, .dur_ps = 1 };
	s->dev_stats[0] = pid_stat(10);
	s->dev_stats[1] = pid_stat(20);
	s->planes[0] = (struct xs_plane){ .name = "/device:TPU:0", .stats = &s->dev_stats[0],
					  .n_stats = 1 };
	s->planes[1] = (struct xs_plane){ .name = "/device:TPU:1", .stats = &s->dev_stats[1],
					  .n_stats = 1 };
	s->host_lines[0] = (struct xs_line){ .id = 10, .display_id = 10, .name = "jobA",
					     .display_name = "jobA (pid 10)" };
	s->host_lines[1] = (struct xs_line){ .id = 11, .display_id = 11, .name = "pt_data_pin",
					     .display_name = "pt_data_pin (pid 10)" };
	s->host_lines[2] = (struct xs_line){ .id = 11 + (1ll << 32), .display_id = 11,
					     .name = "pt_data_pin",
					     .display_name = "pt_data_pin (pid 10)" };
	/* A name that claims another process: only what follows it counts. */
	s->host_lines[3] = (struct xs_line){ .id = 20, .display_id = 20, .name = "jobB (pid 10)",
					     .display_name = "jobB (pid 10) (pid 20, was x)" };
	s->host_lines[4] = (struct xs_line){ .id = COUNTER_LINE, .display_id = COUNTER_LINE,
					     .name = "Device memory: TPU_0_pjrt_buffers (pid 20)",
					     .display_name = "" };
	for (size_t i = 0; i < 5; i++) {
		s->host_lines[i].events = &s->ev;
		s->host_lines[i].n_events = 1;
	}
	s->host_stats[0] = (struct xs_stat){ .name = "acceltrace.thread_pids",
					     .type = XS_STAT_BYTES, .bytes = s->map,
					     .len = pack(s->map, pairs, 3, 3) };
	s->planes[2] = (struct xs_plane){ .name = "/host:CPU", .lines = s->host_lines,
					  .n_lines = 5, .stats = s->host_stats,
					  .n_stats = with_map ? 1 : 0 };
	s->planes[3] = (struct xs_plane){ .name = "Task Environment" };
	s->xs = (struct xs_space){ .planes = s->planes, .n_planes = 4 };
}

static void check_processes(const char *what, bool with_map)
{
	struct sample s;
	struct xs_process *v;
	size_t n;

	sample_init(&s, with_map);
	if (!ASSERT_OK(xs_processes(&s.xs, &v, &n), what))
		return;
	if (ASSERT_EQ(n, 2, "two processes") && v) {
		ASSERT_EQ(v[0].pid, 10, "by pid");
		ASSERT_STREQ(v[0].name, "jobA", "named by its main thread");
		ASSERT_EQ(v[0].n_devices, 1, "pid 10 drives one device");
		ASSERT_EQ(v[0].n_lines, 3, "its two threads' three lines");
		ASSERT_EQ(v[1].pid, 20, "pid 20");
		ASSERT_STREQ(v[1].name, "jobB (pid 10)", "its name, whatever it says");
		ASSERT_EQ(v[1].n_lines, 2, "its thread and its counter line");
	}
	free(v);
}

static void check_scope(void)
{
	struct sample s;
	struct xs_space *view;
	const struct xs_plane *host;

	sample_init(&s, true);
	view = xs_scope_process(&s.xs, 10);
	if (!ASSERT_OK_PTR(view, "a view of pid 10"))
		return;
	ASSERT_EQ(view->n_planes, 3, "its device, the host, Task Environment");
	ASSERT_TRUE(xs_plane_named(view, "/device:TPU:0"), "its device");
	ASSERT_FALSE(xs_plane_named(view, "/device:TPU:1"), "not the other job's");
	ASSERT_TRUE(xs_plane_named(view, "Task Environment"), "a plane of no process stays");
	host = xs_plane_named(view, "/host:CPU");
	if (ASSERT_OK_PTR((void *)host, "the host plane") && ASSERT_EQ(host->n_lines, 3, "3 lines")) {
		ASSERT_EQ(host->lines[0].id, 10, "its main thread");
		ASSERT_EQ(host->lines[2].id, 11 + (1ll << 32), "a thread's extra line with it");
	}
	ASSERT_EQ(view->n_events, 3, "the view's events: its lines'");
	ASSERT_EQ(s.planes[2].n_lines, 5, "the capture itself unchanged");
	xs_scope_free(view);

	view = xs_scope_process(&s.xs, 20);
	if (ASSERT_OK_PTR(view, "a view of pid 20")) {
		host = xs_plane_named(view, "/host:CPU");
		ASSERT_EQ(host ? host->n_lines : 0, 2, "its thread and its memory counter line");
		xs_scope_free(view);
	}
	xs_scope_free(NULL);
}

/* The sample, with pid 30 (a worker thread of its own, no device) and
 * acceltrace.processes saying @json. */
static void sample_with_worker(struct sample *s, const char *json)
{
	static const uint32_t pairs[][2] = { { 10, 10 }, { 11, 10 }, { 20, 20 }, { 30, 30 } };

	sample_init(s, true);
	s->host_lines[5] = (struct xs_line){ .id = 30, .display_id = 30, .name = "worker",
					     .display_name = "worker (pid 30)",
					     .events = &s->ev, .n_events = 1 };
	s->planes[2].n_lines = 6;
	s->host_stats[0].len = pack(s->map, pairs, 4, 0);
	s->host_stats[1] = (struct xs_stat){ .name = "acceltrace.processes", .type = XS_STAT_STR,
					     .s = json };
	s->planes[2].n_stats = 2;
}

static int64_t reported_in(const struct sample *s, int64_t pid)
{
	struct xs_process *v;
	int64_t got = -1;
	size_t n;

	if (xs_processes(&s->xs, &v, &n))
		return -2;
	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid)
			got = v[i].reported_in;
	free(v);
	return got;
}

/* A device-less child's threads go to its nearest ancestor with a device;
 * loops, lies and malformed stats give it to no one. */
static void check_origins(void)
{
	struct sample s;
	struct xs_process *v;
	struct xs_space *view;
	size_t n;

	sample_with_worker(&s, "{\"version\": 1, \"processes\": ["
			   "{\"pid\": 10, \"ppid\": 1, \"container\": \"abc\", \"pod\": \"p1\"},"
			   "{\"pid\": 30, \"ppid\": 31, \"name\": \"w\", \"x\": [1.5, {}]},"
			   "{\"pid\": 31, \"ppid\": 10}]}");
	if (ASSERT_OK(xs_processes(&s.xs, &v, &n), "processes with origins")) {
		ASSERT_TRUE(n == 3 && v[0].pid == 10 && !strcmp(v[0].container, "abc") &&
			    !strcmp(v[0].pod, "p1") && v[0].ppid == 1, "pid 10's container and pod");
		ASSERT_TRUE(n == 3 && v[2].pid == 30 && v[2].ppid == 31 && v[2].reported_in == 10,
			    "30, through 31, to its grandparent 10");
		ASSERT_TRUE(n == 3 && v[1].reported_in == 20, "a process with a device: itself");
		free(v);
	}
	view = xs_scope_process(&s.xs, 10);
	if (ASSERT_OK_PTR(view, "a view of 10")) {
		const struct xs_plane *host = xs_plane_named(view, "/host:CPU");

		ASSERT_EQ(host ? host->n_lines : 0, 4, "its three lines and its worker's");
		xs_scope_free(view);
	}
	sample_with_worker(&s, "{\"processes\": [{\"pid\": 30, \"ppid\": 31},"
			   "{\"pid\": 31, \"ppid\": 30}]}");
	ASSERT_EQ(reported_in(&s, 30), 0, "a loop of parents: no one's");
	sample_with_worker(&s, "{\"processes\": [{\"pid\": 30, \"ppid\": 30}]}");
	ASSERT_EQ(reported_in(&s, 30), 0, "its own parent: no one's");
	sample_with_worker(&s, "{\"processes\": [{\"pid\": 30, \"ppid\": 10}");
	ASSERT_EQ(reported_in(&s, 30), 0, "a cut stat is none");
	sample_with_worker(&s, "{\"processes\": [{\"pid\": 30, \"ppid\": 10, \"container\": "
			   "\"0123456789012345678901234567890123456789012345678901234567890123456789"
			   "0123456789\"}]}");
	ASSERT_EQ(reported_in(&s, 30), 0, "a container id past its bound: the stat is none");
}

/* Labels that must name no process. */
static void check_hostile_labels(void)
{
	static const char *const labels[] = {
		"t (pid 0)", "t (pid -4)", "t (pid 99999999999)", "t (pid )", "t (pid 12x)",
		"other (pid 10)",	/* not after the line's own name */
	};
	struct sample s;
	struct xs_process *v;
	size_t n;

	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		sample_init(&s, false);
		s.planes[2].n_lines = 1;
		s.host_lines[0] = (struct xs_line){ .id = 30, .display_id = 30, .name = "t",
						    .display_name = labels[i] };
		s.xs.n_planes = 3;
		s.dev_stats[0] = pid_stat(0);
		s.dev_stats[1] = pid_stat(-1);
		if (!ASSERT_OK(xs_processes(&s.xs, &v, &n), labels[i]))
			continue;
		ASSERT_EQ(n, 0, labels[i]);
		free(v);
	}
}

int main(void)
{
	check_processes("with acceltrace.thread_pids", true);
	check_processes("an older capture: by the lines' labels", false);
	check_scope();
	check_origins();
	check_hostile_labels();
	return test_exit();
}
