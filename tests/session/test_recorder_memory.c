// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * session/recorder_memory.c on a child of this test: an aggregate written
 * into the kernel's device-memory map as the probes would (pid, CUDA
 * layer, device 1) is sampled into the recorder's book at its rate and
 * named as XProf names allocators; a change shows at the next sample; the
 * child's exit stops its timeline and drops its kernel entry; the window's
 * capture carries the timeline.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_test.h"
#include "capture/capture.h"
#include "devmem/devmem_book.h"
#include "lib/log.h"
#include "probe/kernel_features.h"
#include "probe/probe_session.h"
#include "probe/probe_session_internal.h"
#include "session/recorder.h"
#include "acceltrace.skel.h"

#define MS 1000000ull

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The book's entry of @pid, polling the recorder until @until holds. */
static bool poll_entry(struct recorder *r, uint32_t pid, struct devmem_book_entry *e,
		       bool (*until)(const struct devmem_book_entry *e, uint64_t arg),
		       uint64_t arg)
{
	uint64_t deadline = mono_ns() + 5000 * MS;

	while (mono_ns() < deadline) {
		const struct devmem_book *b = recorder__mem_book(r);

		recorder__poll(r);
		for (size_t i = 0; b && !devmem_book__entry(b, i, e); i++) {
			if (e->alloc.pid == pid && until(e, arg))
				return true;
		}
	}
	return false;
}

static bool in_use_is(const struct devmem_book_entry *e, uint64_t v)
{
	return e->in_use == v;
}

static bool exited(const struct devmem_book_entry *e, uint64_t unused)
{
	(void)unused;
	return e->exited_ns != 0;
}

static void test_sampled(pid_t child)
{
	static const struct devmem_tier tiers[] = { { 10 * MS, 100 }, { 100 * MS, 100 } };
	struct recorder_opts o = { .sz = sizeof(o) };
	struct at_mem_agg_key key = { .pid = (uint32_t)child, .layer = MEM_LAYER_CUDA,
				      .device = 1 };
	struct at_mem_agg agg = { .in_use = 4096, .peak = 8192, .allocs = 3 };
	struct devmem_book_entry e;
	struct probe_session *ps;
	struct recorder *r;
	const char *tail;
	int fd, status;

	o.pids = &child;
	o.n_pids = 1;
	o.mem_sample_ns = 10 * MS;
	o.mem_tiers = tiers;
	o.n_mem_tiers = 2;
	r = recorder__new(&o);
	if (!ASSERT_OK_PTR(r, "recorder"))
		return;
	if (!ASSERT_OK(recorder__attach(r), "attach") ||
	    !ASSERT_OK(recorder__open(r, mono_ns()), "open"))
		goto out;
	ps = recorder__probe_session(r);
	fd = bpf_map__fd(ps->skel->maps.mem_agg);
	if (!ASSERT_OK(bpf_map_update_elem(fd, &key, &agg, BPF_ANY), "aggregate written"))
		goto out;
	if (!ASSERT_TRUE(poll_entry(r, child, &e, in_use_is, 4096), "sampled into the book"))
		goto out;
	tail = e.name ? strchr(e.name, '_') : NULL;
	ASSERT_TRUE(tail && !strcmp(tail, "_1_cuda_reserved"), "named <PLATFORM>_1_cuda_reserved");
	ASSERT_EQ(e.alloc.device, 1, "device ordinal");
	ASSERT_EQ(e.peak, 8192, "peak");
	ASSERT_EQ(e.allocs, 3, "allocs");
	agg.in_use = 12288;
	agg.peak = 12288;
	ASSERT_OK(bpf_map_update_elem(fd, &key, &agg, BPF_ANY), "aggregate changed");
	ASSERT_TRUE(poll_entry(r, child, &e, in_use_is, 12288), "the change sampled");

	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	ASSERT_TRUE(poll_entry(r, child, &e, exited, 0), "the exit stops its timeline");
	ASSERT_EQ(e.in_use, 12288, "the last sample kept");
	ASSERT_EQ(bpf_map_lookup_elem(fd, &key, &agg) ? errno : 0, ENOENT,
		  "its kernel entry dropped");

	if (!ASSERT_OK(recorder__close(r, mono_ns()), "close"))
		goto out;
	ASSERT_EQ(capture__num_mem_timelines(recorder__capture(r)), 1,
		  "the capture carries the timeline");
out:
	recorder__detach(r);
	recorder__free(r);
}

int main(void)
{
	struct features f;
	pid_t child;
	int status;

	if (!test_require_bpf(&f))
		return TEST_SKIP;
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	if (!ASSERT_TRUE(child > 0, "fork"))
		return test_exit();
	test_sampled(child);
	if (!kill(child, SIGKILL))
		waitpid(child, &status, 0);
	return test_exit();
}
