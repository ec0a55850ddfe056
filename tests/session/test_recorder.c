// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * session/recorder.c kept open as the daemon keeps it, on a child of this
 * test: its ticks rescan the targets now and then (the counter moves, so
 * the check below can fail), and a window's close only drains: the rings
 * read through its grace, no /proc rescan, though one was due when the
 * close began. The next tick rescans at once.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bpf_test.h"
#include "capture/capture.h"
#include "lib/log.h"
#include "probe/kernel_features.h"
#include "session/recorder.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void test_close_drains_without_rescan(pid_t child)
{
	struct recorder_opts o = { .sz = sizeof(o) };
	struct recorder_stats before, after, next;
	struct recorder *r;
	uint64_t t;

	o.pids = &child;
	o.n_pids = 1;
	o.grace_ns = 300 * 1000000ull;
	r = recorder__new(&o);
	if (!ASSERT_OK_PTR(r, "recorder"))
		return;
	if (!ASSERT_OK(recorder__attach(r), "attach"))
		goto out;
	if (!ASSERT_OK(recorder__open(r, mono_ns()), "open"))
		goto out;
	/* Ticks for 600 ms: rescans every 250 ms at most. */
	for (t = mono_ns(); mono_ns() - t < 600 * 1000000ull;)
		ASSERT_OK(recorder__poll(r), "tick");
	recorder__stats(r, &before);
	ASSERT_GE(before.rescans, 1, "ticks rescan the targets");
	ASSERT_GE(before.drains, 50, "ticks read the rings");
	/* A rescan is due (none for 300 ms) when the close begins. */
	usleep(300 * 1000);
	if (!ASSERT_OK(recorder__close(r, mono_ns()), "close"))
		goto out;
	recorder__stats(r, &after);
	ASSERT_EQ(after.rescans, before.rescans, "the close rescanned nothing");
	ASSERT_EQ(after.full_rescans, before.full_rescans, "nor fully");
	ASSERT_GE(after.drains, before.drains + 1, "the close read the rings");
	ASSERT_TRUE(capture__is_finalized(recorder__capture(r)), "the capture is finalized");
	/* The loop goes on: the next tick does the rescan that was due. */
	if (!ASSERT_OK(recorder__renew(r, NULL), "renew") ||
	    !ASSERT_OK(recorder__open(r, mono_ns()), "reopen"))
		goto out;
	ASSERT_OK(recorder__poll(r), "tick after the close");
	recorder__stats(r, &next);
	ASSERT_EQ(next.rescans, after.rescans + 1, "the next tick rescans at once");
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
	test_close_drains_without_rescan(child);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	return test_exit();
}
