// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devmem_book: one timeline per kernel key, XProf's allocator names, the
 * resolver's say, max_allocators, exits kept then expired, the timelines
 * written into a capture, and the cost of a sample of 1000 aggregates.
 */
#include "test.h"
#include "capture/capture.h"
#include "devmem/devmem_book.h"
#include "devmem/devmem_timeline.h"

#define SEC 1000000000ull
#define HANDLE 0xdead0000ull

struct resolver {
	bool know_handle;
	bool platform_known;	/* device 7's platform said (TPU: not the guess) */
	int calls;
};

static bool resolve(void *ctx, const struct at_mem_agg_key *key, uint32_t *ordinal,
		    const char **platform)
{
	struct resolver *r = ctx;

	r->calls++;
	if (key->flags & MEM_F_DEVICE_HANDLE) {
		if (!r->know_handle)
			return false;
		*ordinal = 3;
		*platform = "tpu";
		return true;
	}
	*ordinal = (uint32_t)key->device;
	/* Device 7's process: no runtime has said its platform yet. */
	*platform = key->device == 7 && !r->platform_known ? NULL : "TPU";
	if (key->layer == MEM_LAYER_CUDA && key->device != 7)
		*platform = "GPU";
	return true;
}

static struct at_mem_agg_key key(uint32_t pid, uint16_t layer, uint64_t device)
{
	return (struct at_mem_agg_key){ .pid = pid, .layer = layer, .device = device };
}

static struct at_mem_agg agg(uint64_t in_use, uint64_t peak)
{
	return (struct at_mem_agg){ .in_use = in_use, .peak = peak, .peak_ns = 5, .allocs = 9,
				    .frees = 4, .frees_unknown = 1 };
}

static const struct devmem_tier small[] = { { SEC, 10 }, { 10 * SEC, 10 } };

static void test_names_and_resolve(void)
{
	struct devmem_book_opts o = { .sz = sizeof(o), .tiers = small, .n_tiers = 2 };
	struct devmem_book *b = devmem_book__new(&o);
	struct resolver r = { 0 };
	struct at_mem_agg_key k;
	struct at_mem_agg a = agg(100, 200);
	struct devmem_book_entry e;

	if (!ASSERT_TRUE(b, "new"))
		return;
	k = key(20, MEM_LAYER_CUDA, 1);
	ASSERT_OK(devmem_book__sample(b, SEC, &k, &a, resolve, &r), "cuda 1");
	k = key(10, MEM_LAYER_CUDA, 7);
	ASSERT_OK(devmem_book__sample(b, SEC, &k, &a, resolve, &r), "unknown platform");
	k = key(10, MEM_LAYER_PJRT, HANDLE);
	k.flags = MEM_F_DEVICE_HANDLE;
	ASSERT_EQ(devmem_book__sample(b, SEC, &k, &a, resolve, &r), -EAGAIN, "not yet named");
	ASSERT_EQ(devmem_book__count(b), 2, "skipped, not misfiled");
	r.know_handle = true;
	ASSERT_OK(devmem_book__sample(b, 2 * SEC, &k, &a, resolve, &r), "named now");
	ASSERT_EQ(devmem_book__count(b), 3, "three");
	/* Named once: later samples do not ask again. */
	r.calls = 0;
	ASSERT_OK(devmem_book__sample(b, 3 * SEC, &k, &a, resolve, &r), "again");
	ASSERT_EQ(r.calls, 0, "resolved once");

	/* Sorted by pid, then layer. */
	ASSERT_OK(devmem_book__entry(b, 0, &e), "entry 0");
	ASSERT_TRUE(!strcmp(e.name, "TPU_3_pjrt_buffers"), "PJRT name (platform upper-cased)");
	ASSERT_EQ(e.alloc.pid, 10, "pid");
	ASSERT_EQ(e.alloc.device, 3, "ordinal");
	ASSERT_EQ(e.alloc.layer, MEM_LAYER_PJRT, "layer");
	ASSERT_OK(devmem_book__entry(b, 1, &e), "entry 1");
	ASSERT_TRUE(!strcmp(e.name, "GPU_7_cuda_reserved"),
		    "no platform yet: the layer's guess (CUDA: GPU)");
	/* Once the platform is known, the name follows; the timeline stays. */
	r.platform_known = true;
	k = key(10, MEM_LAYER_CUDA, 7);
	ASSERT_OK(devmem_book__sample(b, 4 * SEC, &k, &a, resolve, &r), "named again");
	ASSERT_OK(devmem_book__entry(b, 1, &e), "entry 1 again");
	ASSERT_TRUE(!strcmp(e.name, "TPU_7_cuda_reserved"), "renamed once the platform is known");
	r.calls = 0;
	ASSERT_OK(devmem_book__sample(b, 5 * SEC, &k, &a, resolve, &r), "and after");
	ASSERT_EQ(r.calls, 0, "not asked again");
	ASSERT_OK(devmem_book__entry(b, 2, &e), "entry 2");
	ASSERT_TRUE(!strcmp(e.name, "GPU_1_cuda_reserved"), "CUDA name");
	ASSERT_EQ(e.in_use, 100, "in use");
	ASSERT_EQ(e.peak, 200, "peak");
	ASSERT_EQ(e.peak_ns, 5, "peak when");
	ASSERT_EQ(e.allocs, 9, "allocs");
	ASSERT_EQ(e.frees, 4, "frees");
	ASSERT_EQ(e.frees_unknown, 1, "frees unknown");
	ASSERT_EQ(devmem_book__entry(b, 3, &e), -ENOENT, "past the end");

	/* A layer without a name is refused, not named "(null)". */
	k = key(30, 9, 0);
	ASSERT_EQ(devmem_book__sample(b, SEC, &k, &a, resolve, &r), -EINVAL, "unknown layer");
	devmem_book__free(b);
}

static void test_max_allocators(void)
{
	struct devmem_book_opts o = { .sz = sizeof(o), .tiers = small, .n_tiers = 2,
				      .max_allocators = 2 };
	struct devmem_book *b = devmem_book__new(&o);
	struct resolver r = { 0 };
	struct at_mem_agg a = agg(1, 1);

	if (!ASSERT_TRUE(b, "new"))
		return;
	for (uint32_t pid = 1; pid <= 4; pid++) {
		struct at_mem_agg_key k = key(pid, MEM_LAYER_CUDA, 0);
		int err = devmem_book__sample(b, SEC, &k, &a, resolve, &r);

		ASSERT_EQ(err, pid <= 2 ? 0 : -ENOSPC, "bounded");
	}
	ASSERT_EQ(devmem_book__count(b), 2, "two kept");
	ASSERT_EQ(devmem_book__refused(b), 2, "two refused");
	devmem_book__free(b);
}

static void test_exit_and_expiry(void)
{
	struct devmem_book_opts o = { .sz = sizeof(o), .tiers = small, .n_tiers = 2,
				      .keep_after_exit_ns = 60 * SEC };
	struct devmem_book *b = devmem_book__new(&o);
	struct resolver r = { 0 };
	struct at_mem_agg_key k1 = key(1, MEM_LAYER_CUDA, 0), k2 = key(2, MEM_LAYER_CUDA, 0);
	struct at_mem_agg a = agg(10, 10), later = agg(99, 99);
	struct devmem_book_entry e;

	if (!ASSERT_TRUE(b, "new"))
		return;
	ASSERT_OK(devmem_book__sample(b, SEC, &k1, &a, resolve, &r), "pid 1");
	ASSERT_OK(devmem_book__sample(b, SEC, &k2, &a, resolve, &r), "pid 2");
	devmem_book__process_exited(b, 1, 5 * SEC);
	ASSERT_OK(devmem_book__sample(b, 6 * SEC, &k1, &later, resolve, &r), "after exit");
	ASSERT_OK(devmem_book__entry(b, 0, &e), "entry");
	ASSERT_EQ(e.in_use, 10, "the timeline stopped at the exit");
	ASSERT_EQ(e.exited_ns, 5 * SEC, "exited when");
	devmem_book__expire(b, 64 * SEC);
	ASSERT_EQ(devmem_book__count(b), 2, "kept a while");
	devmem_book__expire(b, 65 * SEC);
	ASSERT_EQ(devmem_book__count(b), 1, "then dropped");
	ASSERT_OK(devmem_book__entry(b, 0, &e), "the other");
	ASSERT_EQ(e.alloc.pid, 2, "pid 2 stays");
	devmem_book__free(b);
}

static void test_to_capture(void)
{
	struct devmem_book_opts o = { .sz = sizeof(o), .tiers = small, .n_tiers = 2 };
	struct capture_opts co = { .sz = sizeof(co), .hostname = "h", .session = "s" };
	struct devmem_book *b = devmem_book__new(&o);
	struct capture *cap = capture__new(&co);
	struct resolver r = { 0 };
	struct at_mem_agg_key k1 = key(1, MEM_LAYER_CUDA, 0), k2 = key(2, MEM_LAYER_CUDA, 1);
	struct capture_mem_allocator a;
	const struct capture_mem_point *p;
	size_t n;

	if (!ASSERT_TRUE(b && cap, "new"))
		goto out;
	/* A leak of 1000 bytes a second for 50 s: 10 fine, 4 coarse points. */
	for (uint64_t s = 0; s < 50; s++) {
		struct at_mem_agg a1 = agg(1000 * s, 1000 * s), a2 = agg(5, 5);

		ASSERT_OK(devmem_book__sample(b, s * SEC, &k1, &a1, resolve, &r), "sample 1");
		ASSERT_OK(devmem_book__sample(b, s * SEC, &k2, &a2, resolve, &r), "sample 2");
	}
	ASSERT_EQ(devmem_book__to_capture(b, cap, 1, 0), 1, "pid 1's");
	ASSERT_EQ(capture__num_mem_timelines(cap), 1, "one timeline");
	p = capture__mem_timeline(cap, 0, &a, &n);
	if (!ASSERT_TRUE(p, "timeline"))
		goto out;
	ASSERT_TRUE(!strcmp(capture__string(cap, a.name), "GPU_0_cuda_reserved"), "named");
	ASSERT_EQ(a.pid, 1, "pid");
	ASSERT_EQ(n, 14, "points");
	ASSERT_EQ(p[0].ts_ns, 0, "from the start");
	ASSERT_EQ(p[0].span_ns, 10 * SEC, "coarse");
	ASSERT_EQ(p[n - 1].in_use, 49000, "to now");
	ASSERT_EQ(devmem_book__to_capture(b, cap, 0, 45 * SEC), 2, "every process, since 45 s");
	p = capture__mem_timeline(cap, 0, &a, &n);
	ASSERT_EQ(n, 5, "replaced: since 45 s");
out:
	capture__free(cap);
	devmem_book__free(b);
}

static void test_refused_opts(void)
{
	const struct devmem_tier bad[] = { { 10, 4 }, { 15, 4 } };
	struct devmem_book_opts o = { .sz = sizeof(o), .tiers = bad, .n_tiers = 2 };

	errno = 0;
	ASSERT_TRUE(!devmem_book__new(&o) && errno == EINVAL, "bad tiers");
	o.n_tiers = DEVMEM_MAX_TIERS + 1;
	ASSERT_TRUE(!devmem_book__new(&o) && errno == EINVAL, "too many tiers");
}

/* The daemon samples every aggregate once a second: 1000 must be cheap. */
static void test_sample_cost(void)
{
	struct devmem_book *b = devmem_book__new(NULL);
	struct resolver r = { 0 };
	struct devmem_timeline *young;
	struct timespec t0, t1;
	double per_round_us;
	size_t bytes;

	if (!ASSERT_TRUE(b, "new (defaults)"))
		return;
	for (uint32_t i = 0; i < 1000; i++) {
		struct at_mem_agg_key k = key(1000 + i / 2, MEM_LAYER_CUDA, i % 2);
		struct at_mem_agg a = agg(i, i);

		ASSERT_OK(devmem_book__sample(b, 0, &k, &a, resolve, &r), "first");
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t s = 1; s <= 100; s++) {
		for (uint32_t i = 0; i < 1000; i++) {
			struct at_mem_agg_key k = key(1000 + i / 2, MEM_LAYER_CUDA, i % 2);
			struct at_mem_agg a = agg(i + s, i + s);

			devmem_book__sample(b, s * SEC, &k, &a, resolve, &r);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	per_round_us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 100 / 1e3;
	bytes = devmem_book__bytes(b);
	printf("1000 aggregates: %.1f us a round; book %zu bytes after 100 s (%.0f KiB each)\n",
	       per_round_us, bytes, bytes / 1000.0 / 1024);
	/* A 1% budget of the daemon's second, generous for a loaded CI box. */
	ASSERT_LE((long long)per_round_us, 10000, "a round under 10 ms");
	/* 100 s old: each timeline has its finest tier only (the coarser
	 * ones come at 10 min), what a new one holds, and a little more. */
	young = devmem_timeline__new(NULL, 0);
	if (ASSERT_TRUE(young, "a default timeline"))
		ASSERT_LE(bytes, 1000 * (devmem_timeline__bytes(young) + 1024),
			  "each allocator: its finest tier and 1 KiB");
	devmem_timeline__free(young);
	devmem_book__free(b);
}

int main(void)
{
	test_names_and_resolve();
	test_max_allocators();
	test_exit_and_expiry();
	test_to_capture();
	test_refused_opts();
	test_sample_cost();
	return test_exit();
}
