// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent's XSpace reader and TPU buffers (user/agent/xspace_decode.h,
 * tpu_buffers.h), against messages made by protobuf-c (another
 * implementation of the wire format):
 * - device planes' "XLA Modules" and "XLA Ops" events come out with their
 *   names, times, run_id, category (as a string and as an interned ref),
 *   flops and bytes; host planes and other lines are left out;
 * - XLA's trailing zero byte is accepted, other trailing bytes are not;
 * - every truncation of a valid message, and every single-byte change of
 *   it, is refused whole or read, never read out of bounds (ASan finds
 *   that), and events past max_events are counted, not delivered;
 * - a real capture (the H100 fixture) reads with no device events (its GPU
 *   planes have stream lines only);
 * - the buffers: executions with their ops, in time order, found and read
 *   back by acceltrace's own devtrace reader.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/types.h>

#include "test.h"
#include "xplane.pb-c.h"
#include "acceltrace/devtrace.h"
#include "agent/tpu_buffers.h"
#include "agent/xspace_decode.h"
#include "devtrace/devtrace_reader.h"
#include "discover/devtrace_buffers.h"

#define T0 1764000000000000000ll	/* a realtime ns */

struct got {
	struct xspace_event ev[64];
	char names[64][64];
	int n;
};

static int take(void *ctx, const struct xspace_event *ev)
{
	struct got *g = ctx;

	if (g->n < 64) {
		g->ev[g->n] = *ev;
		snprintf(g->names[g->n], sizeof(g->names[0]), "%.*s", (int)ev->name.len,
			 ev->name.s);
		g->n++;
	}
	return 0;
}

/* The parts of a message being built, freed once it is packed. */
static void *parts[512];
static size_t nparts;

static void *part(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (p && nparts < sizeof(parts) / sizeof(parts[0]))
		parts[nparts++] = p;
	return p;
}

static void free_parts(void)
{
	while (nparts)
		free(parts[--nparts]);
}

static const struct xspace_limits lim = {
	.max_bytes = 1 << 20, .max_events = 1000, .max_metadata = 1000,
};

/* Stats by metadata id: 1 run_id, 2 flops, 3 bytes_accessed,
 * 4 hlo_category, 5 "fusion" (interned string). */
static Tensorflow__Profiler__XStat *stat_u(int64_t id, uint64_t v)
{
	Tensorflow__Profiler__XStat *s = part(1, sizeof(*s));

	tensorflow__profiler__xstat__init(s);
	s->metadata_id = id;
	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
	s->uint64_value = v;
	return s;
}

static Tensorflow__Profiler__XStat *stat_ref(int64_t id, uint64_t ref)
{
	Tensorflow__Profiler__XStat *s = stat_u(id, 0);

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE;
	s->ref_value = ref;
	return s;
}

static Tensorflow__Profiler__XStat *stat_str(int64_t id, const char *v)
{
	Tensorflow__Profiler__XStat *s = stat_u(id, 0);

	s->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	s->str_value = (char *)v;
	return s;
}

static Tensorflow__Profiler__XEvent *event(int64_t meta, int64_t off_ps, int64_t dur_ps,
					   size_t nstats, Tensorflow__Profiler__XStat **stats)
{
	Tensorflow__Profiler__XEvent *e = part(1, sizeof(*e));

	tensorflow__profiler__xevent__init(e);
	e->metadata_id = meta;
	e->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
	e->offset_ps = off_ps;
	e->duration_ps = dur_ps;
	e->n_stats = nstats;
	e->stats = stats;
	return e;
}

static Tensorflow__Profiler__XLine *line(const char *name, int64_t ts, size_t n,
					 Tensorflow__Profiler__XEvent **ev)
{
	Tensorflow__Profiler__XLine *l = part(1, sizeof(*l));

	tensorflow__profiler__xline__init(l);
	l->name = (char *)name;
	l->timestamp_ns = ts;
	l->n_events = n;
	l->events = ev;
	return l;
}

static void ev_meta(Tensorflow__Profiler__XPlane__EventMetadataEntry **e, int64_t id,
		    const char *name)
{
	Tensorflow__Profiler__XEventMetadata *m = part(1, sizeof(*m));

	tensorflow__profiler__xevent_metadata__init(m);
	m->id = id;
	m->name = (char *)name;
	*e = part(1, sizeof(**e));
	tensorflow__profiler__xplane__event_metadata_entry__init(*e);
	(*e)->key = id;
	(*e)->value = m;
}

static void stat_meta(Tensorflow__Profiler__XPlane__StatMetadataEntry **e, int64_t id,
		      const char *name)
{
	Tensorflow__Profiler__XStatMetadata *m = part(1, sizeof(*m));

	tensorflow__profiler__xstat_metadata__init(m);
	m->id = id;
	m->name = (char *)name;
	*e = part(1, sizeof(**e));
	tensorflow__profiler__xplane__stat_metadata_entry__init(*e);
	(*e)->key = id;
	(*e)->value = m;
}

/* One TPU plane ("/device:TPU:<dev>") with two executions of train_step
 * (run ids 7, 8) of two ops each, an "XLA Ops" line, a "Steps" line that
 * is not read; and a host plane with the same line names. */
static uint8_t *make_space(size_t *len, uint32_t dev)
{
	static char plane_name[32];
	Tensorflow__Profiler__XSpace space = TENSORFLOW__PROFILER__XSPACE__INIT;
	Tensorflow__Profiler__XPlane *planes[2], tpu, host;
	Tensorflow__Profiler__XPlane__EventMetadataEntry *em[3];
	Tensorflow__Profiler__XPlane__StatMetadataEntry *sm[5];
	Tensorflow__Profiler__XEvent *mods[2], *ops[4], *steps[1], *hostev[1];
	Tensorflow__Profiler__XLine *lines[3], *hlines[1];
	uint8_t *buf;

	for (int i = 0; i < 2; i++) {
		Tensorflow__Profiler__XStat **st = part(1, sizeof(*st));

		st[0] = stat_u(1, 7 + (uint64_t)i);
		/* executions at 0 and 10 ms, 5 ms each */
		mods[i] = event(1, (int64_t)i * 10000000000ll, 5000000000ll, 1, st);
		for (int k = 0; k < 2; k++) {
			Tensorflow__Profiler__XStat **os = part(3, sizeof(*os));

			os[0] = stat_u(2, 1000);
			os[1] = stat_u(3, 4096);
			os[2] = k ? stat_str(4, "convolution fusion") : stat_ref(4, 5);
			ops[2 * i + k] = event(2 + k, (int64_t)i * 10000000000ll +
					       k * 2000000000ll, 2000000000ll, 3, os);
		}
	}
	steps[0] = event(1, 0, 1000, 0, NULL);
	hostev[0] = event(1, 0, 1000, 0, NULL);
	lines[0] = line("XLA Modules", T0, 2, mods);
	lines[1] = line("XLA Ops", T0, 4, ops);
	lines[2] = line("Steps", T0, 1, steps);
	hlines[0] = line("XLA Modules", T0, 1, hostev);
	ev_meta(&em[0], 1, "train_step");
	ev_meta(&em[1], 2, "fusion.1");
	ev_meta(&em[2], 3, "convolution.2");
	stat_meta(&sm[0], 1, "run_id");
	stat_meta(&sm[1], 2, "flops");
	stat_meta(&sm[2], 3, "bytes_accessed");
	stat_meta(&sm[3], 4, "hlo_category");
	stat_meta(&sm[4], 5, "fusion");
	tensorflow__profiler__xplane__init(&tpu);
	snprintf(plane_name, sizeof(plane_name), "/device:TPU:%u", dev);
	tpu.name = plane_name;
	tpu.id = dev;
	tpu.n_lines = 3;
	tpu.lines = lines;
	tpu.n_event_metadata = 3;
	tpu.event_metadata = em;
	tpu.n_stat_metadata = 5;
	tpu.stat_metadata = sm;
	tensorflow__profiler__xplane__init(&host);
	host.name = "/host:CPU";
	host.n_lines = 1;
	host.lines = hlines;
	host.n_event_metadata = 1;
	host.event_metadata = em;
	planes[0] = &host;
	planes[1] = &tpu;
	space.n_planes = 2;
	space.planes = planes;
	*len = tensorflow__profiler__xspace__get_packed_size(&space);
	buf = malloc(*len + 1);
	tensorflow__profiler__xspace__pack(&space, buf);
	buf[*len] = 0;	/* XLA's trailing zero */
	free_parts();
	return buf;
}

static void test_events(void)
{
	struct xspace_counts c;
	struct got g = { 0 };
	size_t len;
	uint8_t *buf = make_space(&len, 3);
	int err = xspace_decode(buf, len + 1, &lim, take, &g, &c);

	ASSERT_OK(err, "decode");
	ASSERT_EQ(c.planes, 1, "the TPU plane only");
	ASSERT_EQ(g.n, 6, "2 executions and 4 ops (host and Steps lines left out)");
	if (g.n != 6)
		goto out;
	ASSERT_EQ(g.ev[0].line, XSPACE_LINE_MODULES, "modules first");
	ASSERT_TRUE(!strcmp(g.names[0], "train_step") && g.ev[0].device == 3, "module name, device");
	ASSERT_TRUE(g.ev[0].has_run_id && g.ev[0].run_id == 7 && g.ev[1].run_id == 8, "run ids");
	ASSERT_EQ(g.ev[1].start_ns, T0 + 10000000, "start = line ts + offset");
	ASSERT_EQ(g.ev[1].duration_ps, 5000000000ll, "duration");
	ASSERT_TRUE(!strcmp(g.names[2], "fusion.1") && !strcmp(g.names[3], "convolution.2"),
		    "op names");
	ASSERT_TRUE(g.ev[2].category.len == 6 && !memcmp(g.ev[2].category.s, "fusion", 6),
		    "interned category (ref_value)");
	ASSERT_EQ(tpu_category(g.ev[3].category.s, g.ev[3].category.len),
		  DEVTRACE_CAT_CONVOLUTION, "\"convolution fusion\" is a convolution");
	ASSERT_TRUE(g.ev[2].flops == 1000 && g.ev[2].bytes == 4096, "flops and bytes");
out:
	free(buf);
}

static void test_malformed(void)
{
	struct xspace_counts c;
	struct got g;
	size_t len, refused = 0, read = 0;
	uint8_t *buf = make_space(&len, 0), *copy;
	struct xspace_limits few = lim;

	ASSERT_EQ(xspace_decode(buf, len + 1, &lim, take, &g, &c), 0, "whole: read");
	buf[len] = 7;
	ASSERT_EQ(xspace_decode(buf, len + 1, &lim, take, &g, &c), -EINVAL,
		  "a trailing byte that is not zero: refused");
	/* Each prefix in a buffer of its own size, so ASan sees any overread. */
	for (size_t n = 1; n < len; n++) {
		copy = malloc(n);
		memcpy(copy, buf, n);
		memset(&g, 0, sizeof(g));
		if (xspace_decode(copy, n, &lim, take, &g, &c) == -EINVAL) {
			refused++;
			ASSERT_EQ(g.n, 0, "refused whole: nothing delivered");
		} else {
			read++;
		}
		free(copy);
	}
	ASSERT_TRUE(refused > len / 2, "most truncations refused whole");
	printf("%zu of %zu truncations refused, %zu read\n", refused, len - 1, read);
	for (size_t i = 0; i < len; i++) {
		copy = malloc(len);
		memcpy(copy, buf, len);
		copy[i] ^= 0xff;
		memset(&g, 0, sizeof(g));
		xspace_decode(copy, len, &lim, take, &g, &c);
		free(copy);
	}
	few.max_events = 2;
	memset(&g, 0, sizeof(g));
	ASSERT_OK(xspace_decode(buf, len, &few, take, &g, &c), "bounded");
	ASSERT_TRUE(g.n == 2 && c.events_over == 4, "past max_events counted, not delivered");
	few.max_bytes = len - 1;
	ASSERT_EQ(xspace_decode(buf, len, &few, take, &g, &c), -E2BIG, "over max_bytes");
	free(buf);
}

static void test_fixture(void)
{
	const char *path = "tests/fixtures/h100/jax-profiler.xplane.pb";
	struct xspace_limits big = { .max_bytes = 1u << 30, .max_events = 1u << 24,
				     .max_metadata = 1u << 20 };
	struct xspace_counts c;
	struct got g = { 0 };
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (!ASSERT_TRUE(fd >= 0 && !fstat(fd, &st), "the H100 fixture"))
		return;
	buf = malloc((size_t)st.st_size);
	ASSERT_EQ(read(fd, buf, (size_t)st.st_size), st.st_size, "read");
	close(fd);
	ASSERT_OK(xspace_decode(buf, (size_t)st.st_size, &big, take, &g, &c),
		  "JAX's own H100 capture reads");
	ASSERT_TRUE(c.planes == 1 && g.n == 0, "one device plane, stream lines only");
	free(buf);
}

struct read_back {
	int modules, ops, syncs;
	uint64_t last_ts;
	bool ordered;
};

static int on_record(void *ctx, int buf, const struct devtrace_record *r)
{
	struct read_back *rb = ctx;

	(void)buf;
	if (r->ts < rb->last_ts)
		rb->ordered = false;
	rb->last_ts = r->ts;
	rb->modules += r->kind == DEVTRACE_MODULE_BEGIN;
	rb->ops += r->kind == DEVTRACE_OP_END;
	rb->syncs += r->kind == DEVTRACE_CLOCK_SYNC;
	return 0;
}

static int add_found(void *ctx, int fd, const char *path)
{
	return devtrace_reader__add(ctx, fd, path) < 0 ? -1 : 0;
}

static void test_buffers(void)
{
	char dir[] = "/tmp/acceltrace-tpu-buffers.XXXXXX";
	struct tpu_span s[] = {
		{ .device = 1, .module = false, .name = "fusion.1", .name_len = 8,
		  .start = 1000, .end = 2000, .category = DEVTRACE_CAT_FUSION },
		{ .device = 1, .module = true, .name = "train_step", .name_len = 10,
		  .start = 1000, .end = 5000, .run_id = 7, .has_run_id = true },
		{ .device = 1, .module = false, .name = "dot.2", .name_len = 5,
		  .start = 2500, .end = 4000, .category = DEVTRACE_CAT_DOT },
		{ .device = 1, .module = false, .name = "orphan", .name_len = 6,
		  .start = 9000, .end = 9100 },
	};
	struct read_back rb = { .ordered = true };
	struct devtrace_reader_ops ops = { .on_record = on_record, .ctx = &rb };
	struct devtrace_reader_opts ropts = { .sz = sizeof(ropts) };
	struct devtrace_seen *seen = devtrace_seen__new();
	struct tpu_write_counts wc;
	struct devtrace_reader *rd;
	struct tpu_buffers *b;

	if (!ASSERT_TRUE(mkdtemp(dir) && seen, "tmp dir"))
		return;
	setenv("ACCELTRACE_AGENT_DIR", dir, 1);
	b = tpu_buffers__new("TPU");
	if (!ASSERT_TRUE(b, "buffers"))
		return;
	struct tpu_span later[] = {
		{ .device = 1, .module = true, .name = "train_step", .name_len = 10,
		  .start = 8500, .end = 9500, .run_id = 8, .has_run_id = true },
		{ .device = 1, .module = false, .name = "stray", .name_len = 5,
		  .start = 8000, .end = 8100 },
	};

	ASSERT_OK(tpu_buffers__write(b, s, 4, &wc), "write");
	ASSERT_TRUE(wc.orphan_ops == 0, "the op after the last execution is kept for the next");
	/* The next collection brings the execution it belongs to. */
	ASSERT_OK(tpu_buffers__write(b, later, 2, &wc), "write the next collection");
	ASSERT_TRUE(wc.orphan_ops == 1, "an op before any execution of its own is left out");
	ASSERT_EQ(tpu_buffers__count(b), 1, "one device, one buffer");
	rd = devtrace_reader__new(&ropts, &ops);
	if (ASSERT_TRUE(rd, "reader")) {
		/* Found as acceltrace finds them: by magic among the mappings. */
		ASSERT_EQ(devtrace_buffers_find(getpid(), seen, add_found, rd), 1,
			  "the buffer found among this process's mappings");
		devtrace_reader__poll(rd, 100);
		ASSERT_TRUE(rb.modules == 2 && rb.ops == 3 && rb.syncs >= 4 && rb.ordered,
			    "read back: 2 executions, 3 ops (one carried over), clock pairs, "
			    "in time order");
		devtrace_reader__free(rd);
	}
	devtrace_seen__free(seen);
	tpu_buffers__free(b);
	rmdir(dir);
}

int main(void)
{
	test_events();
	test_malformed();
	test_fixture();
	test_buffers();
	return test_exit();
}
