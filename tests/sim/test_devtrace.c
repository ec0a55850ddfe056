// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The devtrace buffer as docs/devtrace.md specifies it: header fields and
 * offsets, the name table, records in sequence order, and overflow: a ring
 * that wraps keeps the newest `capacity` records and a reader counts
 * exactly the ones it lost. A writer thread racing a reader checks that no
 * torn record is ever delivered.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>

#include "test.h"
#include "devtrace_reader.h"
#include "devtrace_writer.h"

struct collect {
	__u64 n, next_seq, bad;
	__u64 first, last;
};

static int collect(void *ctx, const struct devtrace_record *r)
{
	struct collect *c = ctx;

	if (!c->n)
		c->first = r->seq;
	/* Every record's payload is a function of its seq: torn ones are not. */
	if (r->ts != r->seq * 3 || r->correlation_id != r->seq ||
	    r->arg != ~r->seq || r->kind != DEVTRACE_OP_END)
		c->bad++;
	if (c->n && r->seq <= c->last)
		c->bad++;
	c->last = r->seq;
	c->n++;
	return 0;
}

static void fill(struct devtrace_record *r, __u64 seq)
{
	memset(r, 0, sizeof(*r));
	r->kind = DEVTRACE_OP_END;
	r->category = DEVTRACE_CAT_FUSION;
	r->name_id = 0;
	r->ts = seq * 3;
	r->correlation_id = seq;
	r->step = seq / 4;
	r->flops = seq * 100;
	r->bytes = seq * 7;
	r->arg = ~seq;
}

struct race {
	struct devtrace_writer *w;
	__u64 total;
	volatile bool done;
};

static void *writer_main(void *arg)
{
	struct race *rc = arg;
	struct devtrace_record r;
	__u64 s;

	for (s = 311; s <= 310 + rc->total; s++) {
		fill(&r, s);
		devtrace_writer__emit(rc->w, &r);
	}
	rc->done = true;
	return NULL;
}

int main(void)
{
	char dir[] = "/tmp/devtrace-test-XXXXXX", path[256];
	struct devtrace_writer_opts o = {
		.path = path,
		.core = 2,
		.num_cores = 4,
		.device_id = 0,
		.owner_pid = (__u32)getpid(),
		.record_capacity = 100,
		.name_capacity = 4,
		.clock_rate_hz = 940000000,
		.sync_host_ns = 111,
		.sync_device_ts = 222,
		.device_kind = "TPU v4",
	};
	struct devtrace_writer *w = NULL;
	struct devtrace_reader *r = NULL;
	const struct devtrace_header *h;
	struct devtrace_record rec;
	struct collect c = { 0 };
	struct race race = { 0 };
	pthread_t t;
	struct stat st;
	__u64 lost = 0, s;
	long n;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	snprintf(path, sizeof(path), "%s/core2.devtrace", dir);

	w = devtrace_writer__new(&o);
	if (!ASSERT_OK_PTR(w, "writer"))
		goto out;
	r = devtrace_reader__open(path);
	if (!ASSERT_OK_PTR(r, "reader"))
		goto out;
	h = devtrace_reader__header(r);
	ASSERT_EQ(h->magic, DEVTRACE_MAGIC, "magic");
	ASSERT_EQ(h->version, 1, "version");
	ASSERT_EQ(h->header_size, 4096, "header_size");
	ASSERT_EQ(h->record_size, 64, "record_size");
	ASSERT_EQ(h->core, 2, "core");
	ASSERT_EQ(h->num_cores, 4, "num_cores");
	ASSERT_EQ(h->names_offset, 4096, "names_offset");
	ASSERT_EQ(h->records_offset, 8192, "records_offset (page aligned)");
	ASSERT_EQ(h->record_capacity, 100, "capacity");
	ASSERT_EQ(h->clock_rate_hz, 940000000, "rate");
	ASSERT_EQ(h->sync_host_ns, 111, "sync host");
	ASSERT_EQ(h->sync_device_ts, 222, "sync device");
	ASSERT_STREQ(h->device_kind, "TPU v4", "device kind");
	ASSERT_EQ(h->owner_pid, getpid(), "owner pid");
	ASSERT_NEQ(h->run_id, 0, "run id");
	ASSERT_EQ(h->write_seq, 0, "empty");
	/* The file has its final size from the start: a bounded buffer. */
	ASSERT_OK(stat(path, &st), "stat");
	ASSERT_EQ(st.st_size, 8192 + 100 * 64, "file size");

	/* Names: deduplicated per kind, refused when the table is full. */
	ASSERT_EQ(devtrace_writer__name(w, DEVTRACE_NAME_MODULE, "train_step"), 0, "name 0");
	ASSERT_EQ(devtrace_writer__name(w, DEVTRACE_NAME_OP, "fusion.2"), 1, "name 1");
	ASSERT_EQ(devtrace_writer__name(w, DEVTRACE_NAME_OP, "fusion.2"), 1, "same name");
	ASSERT_EQ(devtrace_writer__name(w, DEVTRACE_NAME_MODULE, "fusion.2"), 2, "other kind");
	ASSERT_EQ(devtrace_writer__name(w, DEVTRACE_NAME_OP,
		  "a_name_longer_than_fifty_six_bytes_is_cut_at_fifty_six_bytes_exactly"), 3,
		  "long name");
	ASSERT_EQ(devtrace_writer__name(w, DEVTRACE_NAME_OP, "one.too.many"),
		  DEVTRACE_NO_NAME, "table full");
	ASSERT_STREQ(devtrace_reader__name(r, 1), "fusion.2", "read name 1");
	ASSERT_STREQ(devtrace_reader__name(r, 3),
		     "a_name_longer_than_fifty_six_bytes_is_cut_at_fifty_six_b", "cut name");
	ASSERT_TRUE(devtrace_reader__name(r, 4) == NULL, "no name 4");

	/* Fewer than capacity: all delivered, in order, none lost. */
	for (s = 1; s <= 60; s++) {
		fill(&rec, s);
		ASSERT_EQ(devtrace_writer__emit(w, &rec), s, "emit returns seq");
	}
	n = devtrace_reader__poll(r, collect, &c, &lost);
	ASSERT_EQ(n, 60, "delivered 60");
	ASSERT_EQ(lost, 0, "lost none");
	ASSERT_EQ(c.bad, 0, "intact");
	ASSERT_EQ(devtrace_reader__poll(r, collect, &c, &lost), 0, "nothing new");

	/* Overflow: 250 more into 100 slots. The reader had read up to 60;
	 * the ring now holds 211..310, so 150 are lost, 100 delivered. */
	for (s = 61; s <= 310; s++) {
		fill(&rec, s);
		devtrace_writer__emit(w, &rec);
	}
	memset(&c, 0, sizeof(c));
	n = devtrace_reader__poll(r, collect, &c, &lost);
	ASSERT_EQ(n, 100, "delivered the newest 100");
	ASSERT_EQ(lost, 150, "lost exactly 150");
	ASSERT_EQ(c.first, 211, "oldest kept");
	ASSERT_EQ(c.last, 310, "newest");
	ASSERT_EQ(c.bad, 0, "intact after wrap");
	ASSERT_OK(stat(path, &st), "stat");
	ASSERT_EQ(st.st_size, 8192 + 100 * 64, "still the same size");
	ASSERT_EQ(devtrace_reader__header(r)->write_seq, 310, "write_seq");

	/* A fresh reader of a wrapped ring sees only what is kept. */
	devtrace_reader__free(r);
	r = devtrace_reader__open(path);
	if (!ASSERT_OK_PTR(r, "reopen"))
		goto out;
	lost = 0;
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(devtrace_reader__poll(r, collect, &c, &lost), 100, "reopen delivers 100");
	ASSERT_EQ(lost, 210, "reopen lost 210");

	/* A racing writer: whatever is delivered is whole and in order, and
	 * delivered + lost accounts for every record. */
	race.w = w;
	race.total = 2000000;
	lost = 0;
	memset(&c, 0, sizeof(c));
	if (!ASSERT_OK(pthread_create(&t, NULL, writer_main, &race), "writer thread"))
		goto out;
	while (!race.done)
		devtrace_reader__poll(r, collect, &c, &lost);
	pthread_join(t, NULL);
	devtrace_reader__poll(r, collect, &c, &lost);
	ASSERT_EQ(c.bad, 0, "no torn or out-of-order record under a racing writer");
	ASSERT_EQ(c.n + lost, race.total, "every record delivered or lost");
	ASSERT_EQ(c.last, race.total + 310, "last record");
	fprintf(stderr, "racing reader: %llu delivered, %llu lost\n",
		(unsigned long long)c.n, (unsigned long long)lost);

	devtrace_writer__free(w);
	w = NULL;
	r = devtrace_reader__open(path);
	if (ASSERT_OK_PTR(r, "reopen closed"))
		ASSERT_EQ(devtrace_reader__header(r)->flags & DEVTRACE_F_CLOSED,
			  DEVTRACE_F_CLOSED, "closed flag");
out:
	devtrace_reader__free(r);
	devtrace_writer__free(w);
	unlink(path);
	rmdir(dir);
	return test_exit();
}
