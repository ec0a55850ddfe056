// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writer throughput and memory: a synthetic capture of N spans is built
 * and finalized once, then written as an XSpace several times, each time
 * to a fresh temporary file. Reported per size: spans written per second,
 * and the writer's own peak memory, the peak RSS during the write (VmHWM,
 * reset just before it) less the RSS before it.
 *
 * Every line (a thread's track) holds the same number of spans
 * (BENCH_LINE_SPANS, default 100,000), so a bigger capture has more lines,
 * not bigger ones: a writer whose memory is bounded by the largest line
 * shows the same peak at 1M and at 10M spans, while one that holds the
 * capture grows tenfold. Spans carry two args and one of 16 names, like an
 * Execute span. There is no Perfetto writer yet; report.py says so.
 *
 * Environment: BENCH_REPS (default 5; the 10M size runs at most 3),
 * BENCH_WRITER_SIZES (default "1000000,10000000"), BENCH_LINE_SPANS.
 */
#include <malloc.h>
#include <stdbool.h>

#include "bench.h"
#include "capture/capture.h"
#include "lib/log.h"
#include "output/xspace_writer.h"

#define NAMES 16

static struct capture *build(uint64_t n, uint64_t per_line, double *secs)
{
	struct capture_opts opts = { .sz = sizeof(opts), .hostname = "bench",
				     .session = "bench", .max_spans = n };
	uint32_t names[NAMES], k_launch, k_bytes;
	uint64_t t0 = bench_now_ns(), lines = (n + per_line - 1) / per_line;
	struct capture *c = capture__new(&opts);
	uint64_t base = 1000000000ull, done = 0;
	char buf[64];

	if (!c)
		return NULL;
	for (int i = 0; i < NAMES; i++) {
		snprintf(buf, sizeof(buf), "jit_train_step_%d", i);
		names[i] = capture__intern(c, buf);
	}
	k_launch = capture__intern(c, "launch_id");
	k_bytes = capture__intern(c, "bytes");
	capture__set_process(c, 100, "trainer");
	for (uint64_t l = 0; l < lines; l++) {
		int track;

		snprintf(buf, sizeof(buf), "worker_%llu", (unsigned long long)l);
		capture__set_thread(c, 100, 1000 + l, buf, 0);
		track = capture__host_track(c, 100, 1000 + l);
		if (track < 0)
			goto fail;
		for (uint64_t i = 0; i < per_line && done < n; i++, done++) {
			struct capture_span s = {
				.start_ns = base + i * 1000, .end_ns = base + i * 1000 + 700,
				.correlation_id = i + 1, .track = track,
				.name = names[i % NAMES], .kind = SPAN_EXECUTE,
			};

			capture_span__add_u64(&s, k_launch, i);
			capture_span__add_u64(&s, k_bytes, 4096);
			if (capture__add_span(c, &s))
				goto fail;
		}
	}
	if (capture__set_window(c, base, base + per_line * 1000 + 1000) ||
	    capture__finalize(c))
		goto fail;
	*secs = (bench_now_ns() - t0) / 1e9;
	return c;
fail:
	capture__free(c);
	return NULL;
}

static int run_size(uint64_t n, uint64_t per_line, int reps)
{
	struct xspace_write_opts wopts = { .sz = sizeof(wopts) };
	struct bench_metric m_rate = { NULL, "Mspans/s" }, m_extra = { NULL, "MiB" };
	uint64_t rss0 = bench_status_kib("VmRSS"), rss_cap, bytes = 0;
	char name_rate[64], name_extra[64];
	struct capture *c;
	double build_s;
	int err = 0;

	snprintf(name_rate, sizeof(name_rate), "wr.xspace.%llu.rate", (unsigned long long)n);
	snprintf(name_extra, sizeof(name_extra), "wr.xspace.%llu.writer_peak",
		 (unsigned long long)n);
	m_rate.name = name_rate;
	m_extra.name = name_extra;
	c = build(n, per_line, &build_s);
	if (!c) {
		fprintf(stderr, "bench_writer: building a capture of %llu spans failed\n",
			(unsigned long long)n);
		return -ENOMEM;
	}
	rss_cap = bench_status_kib("VmRSS");
	for (int r = 0; r < reps; r++) {
		FILE *f = tmpfile();
		uint64_t before, t0;
		double secs;

		if (!f) {
			err = -errno;
			break;
		}
		/* What an earlier write freed goes back first, or this write
		 * would reuse it unseen. */
		malloc_trim(0);
		bench_reset_peak_rss();
		before = bench_status_kib("VmRSS");
		t0 = bench_now_ns();
		err = xspace_write_stream(c, f, &wopts, &bytes);
		if (!err && fflush(f))
			err = -errno;
		secs = (bench_now_ns() - t0) / 1e9;
		fclose(f);
		if (err) {
			fprintf(stderr, "bench_writer: writing failed: %s\n", strerror(-err));
			break;
		}
		bench_add(&m_rate, n / secs / 1e6);
		bench_add(&m_extra, (bench_status_kib("VmHWM") - before) / 1024.0);
	}
	fprintf(stderr, "bench_writer: %llu spans in %llu lines: built and finalized in %.2f s (%.0f MiB), file %.1f MiB\n",
		(unsigned long long)n, (unsigned long long)((n + per_line - 1) / per_line),
		build_s, (rss_cap - rss0) / 1024.0, bytes / 1048576.0);
	if (!err) {
		bench_print(&m_rate);
		bench_print(&m_extra);
		printf("BENCH wr.xspace.%llu.capture_rss MiB %.1f\n", (unsigned long long)n,
		       (rss_cap - rss0) / 1024.0);
		printf("BENCH wr.xspace.%llu.file MiB %.1f\n", (unsigned long long)n,
		       bytes / 1048576.0);
		printf("BENCH wr.xspace.%llu.build_rate Mspans/s %.3f\n", (unsigned long long)n,
		       n / build_s / 1e6);
	}
	capture__free(c);
	return err;
}

int main(int argc, char **argv)
{
	int reps = bench_env("BENCH_REPS", 5);
	uint64_t per_line = bench_env("BENCH_LINE_SPANS", 100000);
	const char *sizes = getenv("BENCH_WRITER_SIZES");
	char *list, *tok, *save = NULL;
	int err = 0;

	log_set_verbosity(LOG_WARN);
	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	list = strdup(sizes && *sizes ? sizes : "1000000,10000000");
	if (!list)
		return 1;
	for (tok = strtok_r(list, ",", &save); tok && !err;
	     tok = strtok_r(NULL, ",", &save)) {
		uint64_t n = strtoull(tok, NULL, 10);

		if (!n)
			continue;
		err = run_size(n, per_line, n >= 5000000 && reps > 3 ? 3 : reps);
	}
	free(list);
	return err ? 1 : 0;
}
