// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devtrace read throughput on one core: the simulator's writer fills a
 * 65,536-slot buffer with batches of records (not timed), and the reader
 * (user/devtrace/) catches up after each (timed), once through io_uring with
 * registered buffers and once with plain pread() doing the same reads: the
 * floor to beat. Reported per engine: records per second delivered, and the
 * records lost, which must be 0 (the writer never laps the reader here).
 *
 * Environment: BENCH_REPS (default 5), BENCH_DEVTRACE_RECORDS per repetition
 * and engine (default 4,000,000), BENCH_DEVTRACE_BATCH records written
 * between polls (default 60,000).
 */
#include <fcntl.h>
#include <stdbool.h>

#include "bench.h"
#include "devtrace_writer.h"
#include "devtrace/devtrace_reader.h"
#include "lib/log.h"

#define CAPACITY 65536

static int count(void *ctx, int buf, const struct devtrace_record *r)
{
	uint64_t *sum = ctx;

	*sum += r->ts;	/* touch every record, as a consumer would */
	return 0;
}

/* Records per second of one run; lost records in *lost. */
static double run(const char *path, bool use_pread, uint64_t total, uint64_t batch,
		  uint64_t *lost)
{
	struct devtrace_writer_opts wo = {
		.path = path, .num_cores = 1, .owner_pid = getpid(),
		.record_capacity = CAPACITY, .clock_rate_hz = 1000000000,
		.sync_host_ns = bench_now_ns(), .sync_device_ts = 1, .device_kind = "bench",
	};
	struct devtrace_reader_opts ro = { .sz = sizeof(ro), .io = { .force_pread = use_pread } };
	struct devtrace_reader_ops ops = { .on_record = count };
	struct devtrace_buffer_stats st;
	struct devtrace_writer *w = NULL;
	struct devtrace_reader *r = NULL;
	struct devtrace_record rec = { .kind = DEVTRACE_OP_END, .name_id = DEVTRACE_NO_NAME,
				       .category = DEVTRACE_CAT_FUSION };
	uint64_t sum = 0, done = 0, ns = 0, t0;
	double rate = -1;
	long got;

	ops.ctx = &sum;
	w = devtrace_writer__new(&wo);
	r = devtrace_reader__new(&ro, &ops);
	if (!w || !r) {
		fprintf(stderr, "bench_devtrace: setup: %s\n", strerror(errno));
		goto out;
	}
	if (devtrace_reader__add(r, open(path, O_RDONLY | O_CLOEXEC), path) < 0)
		goto out;
	if (!use_pread && devtrace_reader__engine(r) != DEVTRACE_IO_URING_FIXED)
		fprintf(stderr, "bench_devtrace: io_uring engine is %s\n",
			devtrace_io__engine_name(devtrace_reader__engine(r)));
	while (done < total) {
		for (uint64_t i = 0; i < batch; i++) {
			rec.ts++;
			rec.correlation_id = rec.ts;
			devtrace_writer__emit(w, &rec);
		}
		t0 = bench_now_ns();
		for (uint64_t want = batch; want;) {
			got = devtrace_reader__poll(r, 0);
			if (got <= 0)
				break;
			want -= (uint64_t)got < want ? (uint64_t)got : want;
		}
		ns += bench_now_ns() - t0;
		done += batch;
	}
	devtrace_reader__stats(r, 0, &st);
	*lost = st.lost + st.bad;
	if (st.delivered != done)
		fprintf(stderr, "bench_devtrace: delivered %llu of %llu\n",
			(unsigned long long)st.delivered, (unsigned long long)done);
	rate = st.delivered / (ns / 1e9);
out:
	devtrace_reader__free(r);
	devtrace_writer__free(w);
	unlink(path);
	return rate;
}

int main(void)
{
	struct bench_metric uring = { "dt.read.uring", "Mrec/s" },
			    floor_ = { "dt.read.pread", "Mrec/s" },
			    lost = { "dt.read.lost", "records" };
	uint64_t total = bench_env("BENCH_DEVTRACE_RECORDS", 4000000);
	uint64_t batch = bench_env("BENCH_DEVTRACE_BATCH", 60000);
	int reps = bench_env("BENCH_REPS", 5);
	char path[] = "/tmp/acceltrace-bench-devtrace.XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0) {
		perror("bench_devtrace: mkstemp");
		return 1;
	}
	close(fd);
	if (batch > CAPACITY)
		batch = CAPACITY;
	bench_pin(0);
	for (int i = 0; i < reps; i++) {
		uint64_t l1 = 0, l2 = 0;
		/* Alternate the order so neither engine always runs warm. */
		double a = i % 2 ? run(path, false, total, batch, &l1) : -1;
		double b = run(path, true, total, batch, &l2);

		if (!(i % 2))
			a = run(path, false, total, batch, &l1);
		if (a < 0 || b < 0)
			return 1;
		bench_add(&uring, a / 1e6);
		bench_add(&floor_, b / 1e6);
		bench_add(&lost, (double)(l1 + l2));
	}
	bench_print(&uring);
	bench_print(&floor_);
	bench_print(&lost);
	return 0;
}
