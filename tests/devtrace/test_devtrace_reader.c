// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The devtrace reader against buffers written by the simulator's writer
 * (tests/sim/devtrace_writer.c, a second implementation of the format):
 * delivery and names, exact loss when the ring overran the reader, a run_id
 * change, buffers added while the reader is open and removed (closed, their
 * counts kept, their index reused), batching across buffers
 * (a poll's submissions do not grow with the number of buffers), a racing
 * writer that never yields a torn record, and corrupted buffers: bad
 * records skipped and counted, bad headers refused, no crash; name tables
 * as hostile input: a sparse file announcing 2^24 names is refused at once
 * in bounded memory, and a full table of the largest size accepted is read
 * a bounded part per poll, its records waiting for their names, none lost.
 * Every case runs with io_uring and with the pread engine.
 */
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "test.h"
#include "devtrace_writer.h"
#include "devtrace/devtrace_reader.h"
#include "acceltrace/devtrace_publish.h"

static char dir[] = "/tmp/acceltrace-devtrace.XXXXXX";
/* Name entries the reader may read of a buffer in one poll: 4096 (its
 * NAMES_PER_POLL); a sixteenth of the largest table. */
#define NAMES_LIMIT_PER_POLL 4096
static int force_pread;

struct seen {
	uint64_t n, bad_content, out_of_order, runs;
	uint64_t stop_at;	/* stop the poll at the n-th record (0: never) */
	uint64_t last_seq[16];
	struct devtrace_reader *r;
	char first_name[64];
};

/* Every field of a test record is derived from its seq, so a torn record
 * (fields of two seqs) shows. */
static void fill(struct devtrace_record *rec, uint64_t seq, __u32 name)
{
	memset(rec, 0, sizeof(*rec));
	rec->ts = 1000 + seq * 10;
	rec->kind = DEVTRACE_OP_END;
	rec->category = DEVTRACE_CAT_FUSION;
	rec->name_id = name;
	rec->correlation_id = seq * 7;
	rec->step = seq;
	rec->flops = seq * 1000003;
	rec->bytes = seq ^ 0x5a5a5a5a;
	rec->arg = seq % 3;
}

static bool consistent(const struct devtrace_record *rec)
{
	uint64_t s = rec->seq;

	return rec->ts == 1000 + s * 10 && rec->correlation_id == s * 7 && rec->step == s &&
	       rec->flops == s * 1000003 && rec->bytes == (s ^ 0x5a5a5a5a) && rec->arg == s % 3;
}

static void on_run(void *ctx, int buf, const struct devtrace_header *h)
{
	struct seen *s = ctx;

	s->runs++;
	s->last_seq[buf % 16] = 0;
}

static int on_record(void *ctx, int buf, const struct devtrace_record *rec)
{
	struct seen *s = ctx;
	const char *name;

	s->n++;
	if (!consistent(rec))
		s->bad_content++;
	if (rec->seq <= s->last_seq[buf % 16])
		s->out_of_order++;
	s->last_seq[buf % 16] = rec->seq;
	name = devtrace_reader__name(s->r, buf, rec->name_id, NULL);
	if (name && !s->first_name[0])
		snprintf(s->first_name, sizeof(s->first_name), "%s", name);
	return s->n == s->stop_at;
}

static struct devtrace_reader *reader(struct seen *s, size_t max_batch)
{
	struct devtrace_reader_opts o = { .sz = sizeof(o), .max_batch_records = max_batch,
					  .io = { .force_pread = force_pread } };
	struct devtrace_reader_ops ops = { .on_run = on_run, .on_record = on_record, .ctx = s };

	memset(s, 0, sizeof(*s));
	s->r = devtrace_reader__new(&o, &ops);
	return s->r;
}

static struct devtrace_writer *writer(const char *name, uint64_t cap, uint32_t core)
{
	char path[256];
	struct devtrace_writer_opts o = {
		.path = path, .core = core, .num_cores = 8, .device_id = 0, .owner_pid = getpid(),
		.record_capacity = cap, .clock_rate_hz = 1000000000, .sync_host_ns = 5,
		.sync_device_ts = 7, .device_kind = "test",
	};

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return devtrace_writer__new(&o);
}

static int add(struct devtrace_reader *r, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return devtrace_reader__add(r, open(path, O_RDONLY | O_CLOEXEC), path);
}

static void emit_n(struct devtrace_writer *w, uint64_t from, uint64_t n, __u32 name)
{
	struct devtrace_record rec;

	for (uint64_t s = from; s < from + n; s++) {
		fill(&rec, s, name);
		devtrace_writer__emit(w, &rec);
	}
}

static void test_basic_and_overrun(void)
{
	struct devtrace_writer *w = writer("a.devtrace", 64, 0);
	struct devtrace_buffer_stats st;
	struct seen s;
	struct devtrace_reader *r = reader(&s, 0);
	__u32 name;
	int b;

	if (!ASSERT_OK_PTR(w, "writer") || !ASSERT_OK_PTR(r, "reader"))
		goto out;
	if (!force_pread)
		ASSERT_EQ(devtrace_reader__engine(r), DEVTRACE_IO_URING_FIXED, "registered buffers");
	b = add(r, "a.devtrace");
	ASSERT_EQ(b, 0, "add");
	name = devtrace_writer__name(w, DEVTRACE_NAME_OP, "fusion.42");
	ASSERT_EQ(devtrace_reader__poll(r, 0), 0, "nothing yet");
	emit_n(w, 1, 50, name);
	ASSERT_EQ(devtrace_reader__poll(r, 0), 50, "50 delivered");
	ASSERT_STREQ(s.first_name, "fusion.42", "name resolved");
	ASSERT_EQ(s.runs, 1, "one run");
	/* Overrun: 1000 more into 64 slots; exactly 1000 - 64 lost. */
	emit_n(w, 51, 1000, name);
	ASSERT_EQ(devtrace_reader__poll(r, 0), 64, "the ring's 64 delivered");
	devtrace_reader__stats(r, b, &st);
	ASSERT_EQ(st.lost, 1000 - 64, "exact loss");
	ASSERT_EQ(st.delivered + st.lost, 1050, "every seq delivered or lost");
	ASSERT_EQ(s.bad_content + s.out_of_order, 0, "contents");
	ASSERT_EQ(st.header.owner_pid, getpid(), "owner_pid");
	/* Small batches catch up without loss. */
	emit_n(w, 1051, 60, name);
	ASSERT_EQ(devtrace_reader__poll(r, 0), 60, "caught up");
	devtrace_reader__stats(r, b, &st);
	ASSERT_EQ(st.lost, 936, "no new loss");
	/* A buffer that had wrapped before the reader first read it: what it
	 * no longer held is history, not a loss. */
	{
		struct devtrace_writer *w2 = writer("late.devtrace", 64, 1);
		int b2;

		emit_n(w2, 1, 1000, DEVTRACE_NO_NAME);
		b2 = add(r, "late.devtrace");
		ASSERT_EQ(devtrace_reader__poll(r, 0), 64, "late: the ring's 64");
		devtrace_reader__stats(r, b2, &st);
		ASSERT_EQ(st.before, 1000 - 64, "late: gone before the first read");
		ASSERT_EQ(st.lost, 0, "late: no loss");
		emit_n(w2, 1001, 200, DEVTRACE_NO_NAME);
		ASSERT_EQ(devtrace_reader__poll(r, 0), 64, "late: overrun after");
		devtrace_reader__stats(r, b2, &st);
		ASSERT_EQ(st.lost, 200 - 64, "late: that one is a loss");
		devtrace_writer__free(w2);
	}
	/* A new run (the writer recreates the file): start over. */
	devtrace_writer__free(w);
	w = writer("a.devtrace", 64, 0);
	name = devtrace_writer__name(w, DEVTRACE_NAME_OP, "conv.1");
	emit_n(w, 1, 5, name);
	memset(s.first_name, 0, sizeof(s.first_name));
	ASSERT_EQ(devtrace_reader__poll(r, 0), 5, "new run read from its seq 1");
	ASSERT_EQ(s.runs, 3, "run change seen (and the late buffer's run)");
	ASSERT_STREQ(s.first_name, "conv.1", "new run's names");
out:
	devtrace_writer__free(w);
	devtrace_reader__free(r);
}

/* Of @r's eight caught-up buffers, one removed (its owner gone): closed,
 * not read on, its counts kept in the totals, its index given to the next
 * buffer added. */
static void test_remove(struct devtrace_reader *r, struct seen *s, struct devtrace_writer **w)
{
	struct devtrace_buffer_stats before, after, st;
	int fds = test_open_fds();

	devtrace_reader__totals(r, &before);
	ASSERT_TRUE(devtrace_reader__caught_up(r, 3), "caught up");
	emit_n(w[3], 151, 10, DEVTRACE_NO_NAME);
	ASSERT_EQ(devtrace_reader__poll(r, 1), 10, "read");
	emit_n(w[3], 161, 5, DEVTRACE_NO_NAME);
	s->stop_at = s->n + 2;
	ASSERT_EQ(devtrace_reader__poll(r, 0), 2, "stopped after 2");
	ASSERT_FALSE(devtrace_reader__caught_up(r, 3), "3 published, not read");
	s->stop_at = 0;
	ASSERT_EQ(devtrace_reader__poll(r, 0), 3, "read");
	ASSERT_TRUE(devtrace_reader__caught_up(r, 3), "caught up again");
	devtrace_reader__totals(r, &before);
	devtrace_reader__remove(r, 3);
	ASSERT_EQ(test_open_fds(), fds - 1, "its fd closed");
	emit_n(w[3], 166, 10, DEVTRACE_NO_NAME);
	emit_n(w[4], 151, 10, DEVTRACE_NO_NAME);
	ASSERT_EQ(devtrace_reader__poll(r, 0), 10, "the removed one not read");
	devtrace_reader__totals(r, &after);
	ASSERT_EQ(after.delivered, before.delivered + 10, "its counts kept in the totals");
	devtrace_reader__stats(r, 3, &st);
	ASSERT_EQ(st.state, DEVTRACE_BUF_REMOVED, "removed");
	ASSERT_EQ(add(r, "core3.devtrace"), 3, "its index reused");
	ASSERT_EQ(devtrace_reader__count(r), 8, "no new index");
	ASSERT_EQ(devtrace_reader__poll(r, 0), 175, "read afresh: all the ring holds");
	devtrace_reader__remove(r, 3);
	devtrace_reader__remove(r, 3);	/* twice: nothing more */
	ASSERT_EQ(test_open_fds(), fds - 1, "closed once");
}

/* Buffers added while open, and one batch of reads serving all of them. */
static void test_many_buffers(void)
{
	struct devtrace_writer *w[8] = {};
	struct seen s;
	struct devtrace_reader *r = reader(&s, 0);
	uint64_t before;
	char name[32];

	if (!ASSERT_OK_PTR(r, "reader"))
		return;
	for (int i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "core%d.devtrace", i);
		w[i] = writer(name, 256, i);
		if (!ASSERT_OK_PTR(w[i], "writer"))
			goto out;
		emit_n(w[i], 1, 100, DEVTRACE_NO_NAME);
		if (i < 2)
			ASSERT_EQ(add(r, name), i, "add");
	}
	ASSERT_EQ(devtrace_reader__poll(r, 0), 200, "two buffers");
	for (int i = 2; i < 8; i++) {
		snprintf(name, sizeof(name), "core%d.devtrace", i);
		ASSERT_EQ(add(r, name), i, "added while open");
	}
	for (int i = 0; i < 8; i++)
		emit_n(w[i], 101, 50, DEVTRACE_NO_NAME);
	before = devtrace_reader__submits(r);
	ASSERT_EQ(devtrace_reader__poll(r, 0), 6 * 150 + 2 * 50, "all eight");
	if (!force_pread)
		/* headers, records, headers again: batched, not per buffer */
		ASSERT_LE(devtrace_reader__submits(r) - before, 4, "submits per poll");
	ASSERT_EQ(s.bad_content + s.out_of_order, 0, "contents");
	test_remove(r, &s, w);
out:
	for (int i = 0; i < 8; i++)
		devtrace_writer__free(w[i]);
	devtrace_reader__free(r);
}

struct race {
	struct devtrace_writer *w;
	atomic_bool stop;
	uint64_t written;
};

static void *race_writer(void *arg)
{
	struct race *x = arg;
	uint64_t s = 1;

	while (!atomic_load(&x->stop) || s < 200000) {
		struct devtrace_record rec;

		fill(&rec, s++, DEVTRACE_NO_NAME);
		devtrace_writer__emit(x->w, &rec);
		if (!(s % 64))
			sched_yield();	/* let the reader keep up some of the time */
		if (s > 3000000)
			break;
	}
	x->written = s - 1;
	return NULL;
}

/* The writer laps a small ring while the reader copies: whatever is
 * delivered is whole, and every seq is delivered or counted lost. */
static void test_racing_writer(void)
{
	struct race x = { .w = writer("race.devtrace", 128, 0) };
	struct devtrace_buffer_stats st;
	struct seen s;
	struct devtrace_reader *r = reader(&s, 48);
	pthread_t t;
	int b;

	if (!ASSERT_OK_PTR(x.w, "writer") || !ASSERT_OK_PTR(r, "reader"))
		goto out;
	b = add(r, "race.devtrace");
	if (!ASSERT_OK(pthread_create(&t, NULL, race_writer, &x), "thread"))
		goto out;
	for (int i = 0; i < 20000; i++)
		if (devtrace_reader__poll(r, 1) < 0)
			break;
	atomic_store(&x.stop, true);
	pthread_join(t, NULL);
	while (devtrace_reader__poll(r, 0) > 0)
		;
	devtrace_reader__stats(r, b, &st);
	ASSERT_EQ(s.bad_content, 0, "no torn record delivered");
	ASSERT_EQ(s.out_of_order, 0, "seq order");
	ASSERT_EQ(st.delivered + st.lost + st.before, x.written,
		  "delivered + lost (+ gone before the first read) = written");
	ASSERT_EQ(st.bad + st.unknown, 0, "nothing bad");
	ASSERT_GE(st.delivered, 1, "something delivered");
	fprintf(stderr, "race: %llu written, %llu delivered, %llu lost (%llu torn)\n",
		(unsigned long long)x.written, (unsigned long long)st.delivered,
		(unsigned long long)st.lost, (unsigned long long)st.torn);
out:
	devtrace_writer__free(x.w);
	devtrace_reader__free(r);
}

static void poke(const char *name, uint64_t off, const void *bytes, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	ASSERT_EQ(pwrite(fd, bytes, len, off), (ssize_t)len, "poke");
	close(fd);
}

static uint64_t records_offset(const char *name)
{
	struct devtrace_header h = {};
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	ASSERT_EQ(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h), "header");
	close(fd);
	return h.records_offset;
}

static void test_corrupted_records(void)
{
	struct devtrace_writer *w = writer("bad.devtrace", 256, 0);
	struct devtrace_buffer_stats st;
	uint64_t v64, rec_off;
	struct seen s;
	struct devtrace_reader *r = reader(&s, 0);
	__u32 v32;
	__u16 v16;
	__u8 v8;
	int b;

	if (!ASSERT_OK_PTR(w, "writer") || !ASSERT_OK_PTR(r, "reader"))
		goto out;
	devtrace_writer__name(w, DEVTRACE_NAME_OP, "op");
	emit_n(w, 1, 200, 0);
	rec_off = records_offset("bad.devtrace");
#define AT(seq, field) (rec_off + ((seq) - 1) * 64 + offsetof(struct devtrace_record, field))
	v64 = 999999;
	poke("bad.devtrace", AT(10, seq), &v64, 8);		/* torn: wrong seq */
	v16 = 77;
	poke("bad.devtrace", AT(20, kind), &v16, 2);		/* a kind from the future */
	v32 = 5000;
	poke("bad.devtrace", AT(30, name_id), &v32, 4);		/* no such name */
	v64 = UINT64_MAX / 2;
	poke("bad.devtrace", AT(40, ts), &v64, 8);		/* time jumps ahead */
	v8 = 200;
	poke("bad.devtrace", AT(50, category), &v8, 1);		/* no such category */
	v16 = 0;
	poke("bad.devtrace", AT(60, kind), &v16, 2);		/* empty: ignored */
	b = add(r, "bad.devtrace");
	ASSERT_EQ(devtrace_reader__poll(r, 0), 200 - 6, "good records delivered");
	devtrace_reader__stats(r, b, &st);
	ASSERT_EQ(st.torn, 1, "torn counted");
	ASSERT_EQ(st.lost, 1, "torn is lost");
	ASSERT_EQ(st.unknown, 1, "unknown kind skipped");
	/* 30, 40 (its successor shows its ts lies) and 50 */
	ASSERT_EQ(st.bad, 3, "bad records counted");
	ASSERT_EQ(st.empty, 1, "empty ignored");
	ASSERT_EQ(st.delivered + st.lost + st.bad + st.unknown + st.empty, 200, "accounting");
	ASSERT_EQ(s.bad_content, 0, "delivered records whole");
out:
	devtrace_writer__free(w);
	devtrace_reader__free(r);
}

/* Headers no reader should follow: refused with a reason, never read past. */
static void test_corrupted_headers(void)
{
	static const struct {
		uint64_t off;
		uint64_t val;
		int width;
		const char *what;
	} cases[] = {
		{ offsetof(struct devtrace_header, record_capacity), 1ull << 60, 8, "capacity" },
		{ offsetof(struct devtrace_header, magic), 0x1234, 8, "magic" },
		{ offsetof(struct devtrace_header, version), 9, 4, "version" },
		{ offsetof(struct devtrace_header, records_offset), 4095, 8, "alignment" },
		{ offsetof(struct devtrace_header, name_capacity), 1u << 30, 4, "names" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct devtrace_writer *w = writer("hdr.devtrace", 64, 0);
		struct devtrace_buffer_stats st;
		struct seen s;
		struct devtrace_reader *r = reader(&s, 0);
		int b;

		if (!ASSERT_OK_PTR(w, "writer") || !ASSERT_OK_PTR(r, "reader")) {
			devtrace_writer__free(w);
			devtrace_reader__free(r);
			return;
		}
		emit_n(w, 1, 10, DEVTRACE_NO_NAME);
		devtrace_writer__free(w);
		poke("hdr.devtrace", cases[i].off, &cases[i].val, cases[i].width);
		b = add(r, "hdr.devtrace");
		ASSERT_EQ(devtrace_reader__poll(r, 0), 0, cases[i].what);
		devtrace_reader__stats(r, b, &st);
		ASSERT_EQ(st.state, DEVTRACE_BUF_FAILED, cases[i].what);
		ASSERT_TRUE(st.error[0], "reason stated");
		devtrace_reader__free(r);
	}
	/* A file cut short after the reader checked it: reads fail, counted. */
	{
		struct devtrace_writer *w = writer("short.devtrace", 64, 0);
		struct devtrace_buffer_stats st;
		struct seen s;
		struct devtrace_reader *r = reader(&s, 0);
		char path[256];
		int b;

		emit_n(w, 1, 10, DEVTRACE_NO_NAME);
		b = add(r, "short.devtrace");
		ASSERT_EQ(devtrace_reader__poll(r, 0), 10, "before");
		emit_n(w, 11, 10, DEVTRACE_NO_NAME);
		snprintf(path, sizeof(path), "%s/short.devtrace", dir);
		ASSERT_OK(truncate(path, records_offset("short.devtrace") + 64 * 12), "truncate");
		ASSERT_GE(devtrace_reader__poll(r, 0), 0, "no crash");
		devtrace_reader__stats(r, b, &st);
		ASSERT_GE(st.read_errors, 1, "read error counted");
		ASSERT_TRUE(st.error[0], "reason stated");
		devtrace_writer__free(w);
		devtrace_reader__free(r);
	}
}

/* Random garbage over the whole ring: no crash, accounting holds. */
static void test_garbage(void)
{
	struct devtrace_writer *w = writer("junk.devtrace", 512, 0);
	struct devtrace_buffer_stats st;
	struct seen s;
	struct devtrace_reader *r = reader(&s, 0);
	unsigned char junk[4096];
	int b;

	if (!ASSERT_OK_PTR(w, "writer") || !ASSERT_OK_PTR(r, "reader"))
		goto out;
	devtrace_writer__name(w, DEVTRACE_NAME_OP, "op");
	emit_n(w, 1, 400, 0);
	srand(12345);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = rand();
	poke("junk.devtrace", records_offset("junk.devtrace") + 64 * 100, junk, sizeof(junk));
	b = add(r, "junk.devtrace");
	ASSERT_GE(devtrace_reader__poll(r, 0), 300, "records outside the junk");
	devtrace_reader__stats(r, b, &st);
	ASSERT_EQ(st.delivered + st.lost + st.bad + st.unknown + st.empty, 400, "accounting");
	ASSERT_GE(st.torn, 60, "junk slots torn");
out:
	devtrace_writer__free(w);
	devtrace_reader__free(r);
}

/* ---------------------------------------------------------------- name tables */

/*
 * A buffer file made here, not by the writer: @name_capacity entries, all
 * published (name_count), most of them a sparse file's holes; entry
 * @named_id holds "last_name"; @n_recs records, record i naming
 * @rec_names[i].
 */
static bool sparse_buffer(const char *name, uint32_t name_capacity, uint32_t named_id,
			  const uint32_t *rec_names, size_t n_recs)
{
	struct devtrace_header h = {};
	struct devtrace_name e = { .id = named_id, .kind = DEVTRACE_NAME_OP, .len = 9 };
	uint64_t size = devtrace_layout(name_capacity, 64, NULL, NULL);
	char path[256];
	bool ok;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return false;
	devtrace_header__init_layout(&h, name_capacity, 64);
	h.magic = DEVTRACE_MAGIC;
	h.run_id = 1;
	h.clock_rate_hz = 1000000000;
	h.num_cores = 1;
	h.name_count = name_capacity;
	h.write_seq = h.begin_seq = n_recs;
	memcpy(e.name, "last_name", 9);
	ok = !ftruncate(fd, size) &&
	     pwrite(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	     pwrite(fd, &e, sizeof(e), h.names_offset + (uint64_t)named_id * sizeof(e)) ==
		     (ssize_t)sizeof(e);
	for (size_t i = 0; ok && i < n_recs; i++) {
		struct devtrace_record rec;

		fill(&rec, i + 1, rec_names[i]);
		rec.seq = i + 1;
		ok = pwrite(fd, &rec, sizeof(rec), h.records_offset + i * sizeof(rec)) ==
		     (ssize_t)sizeof(rec);
	}
	close(fd);
	return ok;
}

static long max_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The fastest of three first polls of a fresh reader over @name. */
static double first_poll_time(const char *name)
{
	double best = 1e9;

	for (int i = 0; i < 3; i++) {
		struct seen s;
		struct devtrace_reader *r = reader(&s, 0);
		double t;

		if (!r)
			return -1;
		add(r, name);
		t = now_s();
		devtrace_reader__poll(r, 0);
		t = now_s() - t;
		if (t < best)
			best = t;
		devtrace_reader__free(r);
	}
	return best;
}

/*
 * A sparse file announcing 2^24 names (a GiB of table), every one
 * published, and a record naming the last: refused by its header, in one
 * poll costing about what a small buffer's does, memory unchanged.
 */
static void test_names_announced_huge(void)
{
	const uint32_t last = (1u << 24) - 1, small_names[] = { 3 };
	struct devtrace_buffer_stats st;
	struct seen s;
	struct devtrace_reader *r;
	double t_small, t_huge;
	long rss;
	int b;

	if (!ASSERT_TRUE(sparse_buffer("huge.devtrace", 1u << 24, last, &last, 1),
			 "sparse buffer of 2^24 names") ||
	    !ASSERT_TRUE(sparse_buffer("small.devtrace", 64, 3, small_names, 1), "small buffer"))
		return;
	rss = max_rss_kib();
	r = reader(&s, 0);
	if (!ASSERT_OK_PTR(r, "reader"))
		return;
	b = add(r, "huge.devtrace");
	ASSERT_EQ(devtrace_reader__poll(r, 0), 0, "nothing delivered");
	devtrace_reader__stats(r, b, &st);
	ASSERT_EQ(st.state, DEVTRACE_BUF_FAILED, "refused");
	ASSERT_STRCONTAINS(st.error, "name_capacity", "says why");
	ASSERT_LE(st.names, NAMES_LIMIT_PER_POLL, "names read");
	devtrace_reader__free(r);
	ASSERT_LE(max_rss_kib() - rss, 16 * 1024, "peak memory grew by under 16 MiB");
	t_small = first_poll_time("small.devtrace");
	t_huge = first_poll_time("huge.devtrace");
	printf("first poll: %.3f ms (64 names), %.3f ms (2^24 announced), peak RSS +%ld KiB\n",
	       t_small * 1e3, t_huge * 1e3, max_rss_kib() - rss);
	ASSERT_TRUE(t_small > 0 && t_huge < 20 * t_small,
		    "2^24 names announced: a poll within 20 times a small buffer's");
}

/*
 * The largest table accepted, full (a sparse file), a record naming entry
 * 0 and one naming the last entry: a poll reads a bounded part of the
 * table; the second record waits (not bad, not lost, not nameless) until
 * the polls reach its name, then is delivered with it.
 */
static void test_names_read_a_part_per_poll(void)
{
	const uint32_t cap = DEVTRACE_NAME_CAPACITY_MAX, names[] = { 0, cap - 1 };
	struct devtrace_buffer_stats st;
	struct seen s;
	struct devtrace_reader *r;
	unsigned int polls = 1;
	long rss = max_rss_kib();
	int b;

	if (!ASSERT_TRUE(sparse_buffer("full.devtrace", cap, cap - 1, names, 2),
			 "a full table of the largest size"))
		return;
	r = reader(&s, 0);
	if (!ASSERT_OK_PTR(r, "reader"))
		return;
	b = add(r, "full.devtrace");
	ASSERT_EQ(devtrace_reader__poll(r, 0), 1, "the first record, its name read");
	devtrace_reader__stats(r, b, &st);
	ASSERT_LE(st.names, NAMES_LIMIT_PER_POLL, "a bounded part of the table in one poll");
	ASSERT_EQ(st.bad + st.lost, 0, "the other waits");
	while (s.n < 2 && polls < 2 * cap / NAMES_LIMIT_PER_POLL) {
		devtrace_reader__poll(r, 0);
		polls++;
	}
	devtrace_reader__stats(r, b, &st);
	printf("a full table of %u names: read in %u polls, peak RSS +%ld KiB\n", cap, polls,
	       max_rss_kib() - rss);
	ASSERT_EQ(s.n, 2, "both records delivered");
	ASSERT_EQ(st.names, cap, "every name read");
	ASSERT_EQ(st.bad + st.lost, 0, "none bad or lost");
	ASSERT_STREQ(devtrace_reader__name(r, b, cap - 1, NULL), "last_name", "its name");
	ASSERT_TRUE(devtrace_reader__caught_up(r, b), "caught up");
	ASSERT_LE(max_rss_kib() - rss, 16 * 1024, "peak memory grew by under 16 MiB");
	devtrace_reader__free(r);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	for (force_pread = 0; force_pread < 2; force_pread++) {
		fprintf(stderr, "engine: %s\n", force_pread ? "pread" : "io_uring");
		test_basic_and_overrun();
		test_many_buffers();
		test_racing_writer();
		test_corrupted_records();
		test_corrupted_headers();
		test_garbage();
		test_names_announced_huge();
		test_names_read_a_part_per_poll();
	}
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	return test_exit();
}
