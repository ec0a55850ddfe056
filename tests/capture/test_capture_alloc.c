// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The capture model under allocation failure (tests/harness/alloc_fail.h):
 * a small capture is built (processes, threads and renames, devices, host,
 * device and GPU stream tracks, spans with args over the span budget,
 * warnings, losses) and
 * finalized, with the n-th allocation failing, for n = 0, 1, 2, ... until
 * an attempt sees no failure; once with that one failure only, once with
 * every allocation from the n-th on failing.
 *
 * Each call must return -ENOMEM (or NULL with errno ENOMEM), or succeed,
 * or degrade as capture.h says (a name that could not be interned reads as
 * "" and finalize says names were lost; a prune that found no memory keeps
 * the span). The model must stay consistent: the spans that were accepted
 * are exactly those kept plus those the budget dropped, every track sorted;
 * a finalize that failed succeeds when tried again with memory. Nothing
 * leaks: the heap in use after capture__free is what it was before (and
 * `valgrind --leak-check=full` on this test says so too).
 */
#include <malloc.h>

#include "test.h"
#include "alloc_fail.h"
#include "capture/capture.h"
#include "capture/capture_memory.h"
#include "lib/log.h"

/* Freed chunks in glibc's per-thread cache count as in use: off with it. */
#define NO_TCACHE "glibc.malloc.tcache_count=0"

#define MAX_SPANS 40
#define SPANS_PER_TRACK 25
#define MAX_ATTEMPTS 100000

struct result {
	bool ok;		/* every check held */
	char why[160];
};

#define CHECK(r, cond, ...) do {						\
	if (!(cond) && (r)->ok) {						\
		(r)->ok = false;						\
		snprintf((r)->why, sizeof((r)->why), __VA_ARGS__);		\
	}									\
} while (0)

/* 0, or -ENOMEM: what every fallible call may return here. */
static bool ok_or_nomem(long ret)
{
	return ret >= 0 || ret == -ENOMEM;
}

/* Builds, finalizes and checks one capture; the caller sets the failure. */
static void attempt(struct result *r, bool single)
{
	struct capture_opts o = { .sz = sizeof(o), .hostname = "h", .session = "s",
				  .max_spans = MAX_SPANS, .window = 2 };
	uint64_t accepted[SPAN_KIND__COUNT] = {}, kept = 0, mem_accepted = 0;
	bool lost_seen = false;
	int refused;		/* a call on thread 101 returned -ENOMEM */
	int tracks[4], ntracks = 0, dev[2];
	struct capture *c;
	uint32_t key, val;
	int err;

	errno = 0;
	c = capture__new(&o);
	if (!c) {
		CHECK(r, errno == ENOMEM, "capture__new: NULL with errno %d", errno);
		return;
	}
	CHECK(r, !strcmp(capture__session(c), "s_w2"), "session %s", capture__session(c));

	err = capture__set_process(c, 100, "trainer");
	CHECK(r, ok_or_nomem(err), "set_process %d", err);
	err = capture__set_thread(c, 100, 100, "python3", 0);
	CHECK(r, ok_or_nomem(err), "set_thread %d", err);
	err = capture__set_thread(c, 100, 101, "pt_data_worker", 5);
	CHECK(r, ok_or_nomem(err), "set_thread %d", err);
	refused = err;
	/* Renames: the history degrades (counted, warned), the name does not. */
	for (int k = 0; k < 3; k++) {
		char name[32];

		snprintf(name, sizeof(name), "worker-%d", k);
		err = capture__rename_thread(c, 100, 101, name, 10 + k);
		CHECK(r, ok_or_nomem(err), "rename_thread %d", err);
		refused |= err;
	}
	err = capture__thread_exited(c, 100, 101, 900);
	CHECK(r, ok_or_nomem(err), "thread_exited %d", err);
	err = capture__process_exited(c, 200, 950);
	CHECK(r, ok_or_nomem(err), "process_exited %d", err);
	dev[0] = capture__device(c, 100, 0, "TPU v4", 275.0, 1200.0);
	CHECK(r, ok_or_nomem(dev[0]), "device %d", dev[0]);
	dev[1] = capture__device(c, 100, 1, NULL, 0, 0);
	CHECK(r, ok_or_nomem(dev[1]), "device %d", dev[1]);

	for (int i = 0; i < 2; i++) {
		int t = capture__host_track(c, 100, 100 + i);

		CHECK(r, ok_or_nomem(t), "host_track %d", t);
		if (t >= 0)
			tracks[ntracks++] = t;
	}
	for (int i = 0; i < 2; i++) {
		int t = dev[i] < 0 ? -ENOENT : i == 0 ?
			capture__device_track(c, dev[i], TRACK_DEVICE_OPS) :
			capture__stream_track(c, dev[i], 7);

		CHECK(r, t >= 0 || t == -ENOMEM || (dev[i] < 0 && t == -ENOENT),
		      "device_track %d", t);
		if (t >= 0)
			tracks[ntracks++] = t;
	}

	errno = 0;
	key = capture__intern(c, "bytes");
	if (!key) {
		CHECK(r, errno == ENOMEM, "intern: 0 with errno %d", errno);
		lost_seen = true;
	}
	val = capture__intern_static(c, "/data/shard-0001");
	lost_seen |= !val;
	for (int t = 0; t < ntracks; t++) {
		for (int i = 0; i < SPANS_PER_TRACK; i++) {
			bool device = t >= ntracks - 2 && capture__track(c, tracks[t])->kind != TRACK_HOST_THREAD;
			struct capture_span s = {
				.start_ns = 1000 + i * 100,
				.end_ns = 1000 + i * 100 + (i % 7) * 10,
				.track = tracks[t],
				.kind = device ? SPAN_DEVICE_OP : (i % 3 ? SPAN_FILE_READ : SPAN_IOCTL),
				.correlation_id = i,
			};
			char name[32];

			snprintf(name, sizeof(name), "op_%d", i % 5);
			errno = 0;
			s.name = capture__intern(c, name);
			if (!s.name) {
				CHECK(r, errno == ENOMEM, "intern: 0 with errno %d", errno);
				lost_seen = true;
			}
			capture_span__add_u64(&s, key, i);
			capture_span__add_str(&s, key, val);
			err = capture__add_span(c, &s);
			CHECK(r, ok_or_nomem(err), "add_span %d", err);
			if (!err)
				accepted[s.kind]++;
		}
	}
	/* Device memory: more events than the budget, out of time order, and
	 * a timeline set twice. */
	for (int i = 0; i < MAX_SPANS + 10; i++) {
		struct capture_mem_event e = {
			.ts_ns = 1000 + (i * 37) % 50 * 10, .tid = 100, .op = i % 2,
			.alloc = { .pid = 100, .name = key ? key : 1, .layer = 1 },
		};

		err = capture__add_mem_event(c, &e);
		CHECK(r, ok_or_nomem(err), "add_mem_event %d", err);
		mem_accepted += !err;
	}
	for (int k = 0; k < 2; k++) {
		struct capture_mem_allocator a = { .pid = 100, .name = 1, .layer = 1 };
		struct capture_mem_point p[3] = { { .ts_ns = 1 }, { .ts_ns = 2 }, { .ts_ns = 3 } };

		err = capture__set_mem_timeline(c, &a, p, 3 - k);
		CHECK(r, ok_or_nomem(err), "set_mem_timeline %d", err);
	}
	capture__warn(c, "warning %d", 1);
	capture__warn(c, "warning %d", 1);
	capture__warn(c, "warning %d", 2);
	capture__count_loss(c, "ring buffer drops", 3);
	capture__count_loss(c, "ring buffer drops", 4);
	capture__set_window(c, 1000, 4000);

	err = capture__finalize(c);
	CHECK(r, ok_or_nomem(err), "finalize %d", err);
	if (err) {
		alloc_fail_off();
		CHECK(r, !capture__is_finalized(c), "a failed finalize leaves it open");
		err = capture__finalize(c);
		CHECK(r, !err, "finalize again, with memory: %d", err);
	}
	alloc_fail_off();
	if (err)
		goto out;

	/* Consistent: accepted == kept + dropped, tracks sorted, in budget. */
	for (int k = 0; k < SPAN_KIND__COUNT; k++) {
		uint64_t in = capture__span_count(c, k), out = capture__spans_dropped(c, k);

		CHECK(r, accepted[k] == in + out, "kind %d: accepted %llu, kept %llu + dropped %llu",
		      k, (unsigned long long)accepted[k], (unsigned long long)in,
		      (unsigned long long)out);
	}
	for (size_t t = 0; t < capture__num_tracks(c); t++) {
		size_t n;
		const struct capture_span *sp = capture__track_spans(c, t, &n);

		CHECK(r, sp != NULL, "track %zu spans", t);
		for (size_t i = 1; sp && i < n; i++)
			CHECK(r, sp[i - 1].start_ns <= sp[i].start_ns, "track %zu unsorted", t);
		for (size_t i = 0; sp && i < n; i++)
			CHECK(r, capture__string(c, sp[i].name) != NULL, "span name id unknown");
		kept += n;
	}
	CHECK(r, kept == capture__spans_kept(c), "kept %llu != %llu",
	      (unsigned long long)kept, (unsigned long long)capture__spans_kept(c));
	CHECK(r, kept <= MAX_SPANS, "over budget: %llu", (unsigned long long)kept);
	CHECK(r, mem_accepted == capture__num_mem_events(c) + capture__mem_events_dropped(c),
	      "memory: accepted %llu, kept %zu + dropped %llu", (unsigned long long)mem_accepted,
	      capture__num_mem_events(c), (unsigned long long)capture__mem_events_dropped(c));
	CHECK(r, capture__num_mem_events(c) <= MAX_SPANS, "memory over budget");
	for (size_t i = 1; i < capture__num_mem_events(c); i++)
		CHECK(r, capture__mem_event(c, i - 1)->ts_ns <= capture__mem_event(c, i)->ts_ns,
		      "memory events unsorted at %zu", i);
	CHECK(r, capture__num_mem_timelines(c) <= 1, "one allocator's timeline, at most");
	for (size_t i = 0; i < capture__num_warnings(c); i++)
		CHECK(r, capture__warning(c, i) != NULL, "warning %zu", i);
	for (size_t i = 0; i < capture__num_losses(c); i++)
		CHECK(r, capture__loss(c, i, NULL) != NULL, "loss %zu", i);
	/* Thread 101's history: 4 names, kept or counted; the latest is its name. */
	{
		int i = capture__find_thread(c, 100, 101);
		const struct capture_thread_name *h;
		const char *latest;
		uint64_t more = 0;
		size_t n = 0;

		h = i >= 0 ? capture__thread_names(c, i, &n, &more) : NULL;
		latest = i >= 0 ? capture__string(c, capture__thread(c, i)->name) : NULL;
		for (size_t k = 0; h && k < n; k++)
			CHECK(r, capture__string(c, h[k].name) && h[k].name,
			      "history entry %zu has no name", k);
		if (single && i >= 0 && !lost_seen && !refused) {
			bool said = false;

			for (size_t k = 0; k < capture__num_warnings(c); k++)
				said |= strstr(capture__warning(c, k), "not kept in name histories") ||
					strstr(capture__warning(c, k), "lost (out of memory)");
			CHECK(r, n + more == 4 || said, "history %zu + %llu names, unreported",
			      n, (unsigned long long)more);
			CHECK(r, !more || said, "%llu renames not kept, unreported",
			      (unsigned long long)more);
			CHECK(r, latest && (!strcmp(latest, "worker-2") || said),
			      "latest name %s", latest ? latest : "(none)");
		}
	}
	/* With one failure, spent before finalize, finalize says names went. */
	if (single && lost_seen) {
		bool said = false;

		for (size_t i = 0; i < capture__num_warnings(c); i++)
			said |= strstr(capture__warning(c, i), "lost (out of memory)") != NULL;
		CHECK(r, said, "lost names not reported");
	}
out:
	capture__free(c);
}

static void run(bool persistent)
{
	long n;

	for (n = 0; n < MAX_ATTEMPTS; n++) {
		struct result r = { .ok = true };
		size_t before, after;
		unsigned long failed;

		before = mallinfo2().uordblks;
		alloc_fail_at(n, persistent);
		attempt(&r, !persistent);
		failed = alloc_fail_off();
		after = mallinfo2().uordblks;
		if (!r.ok) {
			ASSERT_TRUE(false, persistent ? "persistent failure" : "one failure");
			fprintf(stderr, "  failing allocation %ld: %s\n", n, r.why);
			return;
		}
		if (!ASSERT_EQ(after, before, "no leak")) {
			fprintf(stderr, "  failing allocation %ld (%s)\n", n,
				persistent ? "persistent" : "one");
			return;
		}
		if (!failed)
			break;
	}
	ASSERT_LE(n, MAX_ATTEMPTS - 1, "an attempt ran with no failure");
	ASSERT_GE(n, 20, "the scenario allocates");
	printf("%s: %ld attempts\n", persistent ? "persistent" : "one failure", n + 1);
}

int main(int argc, char **argv)
{
	const char *tun = getenv("GLIBC_TUNABLES");

	/* The heap-in-use check needs exact counts: run again without tcache. */
	if (!tun || !strstr(tun, NO_TCACHE)) {
		setenv("GLIBC_TUNABLES", NO_TCACHE, 1);
		execv("/proc/self/exe", argv);
		perror("re-exec without tcache");
		return 1;
	}
	log_set_verbosity(LOG_ERROR);	/* losses logged when out of memory */
	/* Warm stdio's buffers so their allocation is not counted as a leak. */
	printf("capture under allocation failure\n");
	fflush(stdout);
	run(false);
	run(true);
	return test_exit();
}
