// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A poll's budget (probe_session__poll): with more records waiting than
 * the consumer can hand on within its budget, a poll returns once the
 * budget is spent, and the next picks up at the record after the last one
 * handed on: every record arrives once, in order. A drain has no budget.
 *
 * Without it, a consumer starved of CPU never sees a shard empty (libbpf
 * reads until it is) and its caller's tick never runs: the record loop's
 * CPU-priority check, its rescans, its progress line.
 */
#include <time.h>
#include <unistd.h>

#include "bpf_test.h"
#include "self_offset.h"
#include "lib/log.h"
#include "probe/packed_records.h"
#include "probe/probe_session.h"

#define CALLS 6000
#define BUDGET_NS (5 * 1000000ull)
#define COST_NS 20000		/* what each record costs the consumer */

__attribute__((noinline)) int budget_fn(long seq)
{
	asm volatile("" ::: "memory");
	return (int)seq;
}

struct seen {
	long count;
	long out_of_order;
	long next_seq;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* A slow consumer: each record costs it COST_NS of CPU. */
static int on_record(void *ctx, const void *data, size_t size)
{
	const struct ev_header *h = data;
	struct ev_rt_call r;
	struct seen *s = ctx;
	uint64_t until = mono_ns() + COST_NS;

	if (size < sizeof(*h) || h->type != EV_RT_CALL || h->pid != (uint32_t)getpid() ||
	    rt_record__unpack(&r, data, size))
		return 0;
	if ((long)r.vals[0] != s->next_seq)
		s->out_of_order++;
	s->next_seq = (long)r.vals[0] + 1;
	s->count++;
	while (mono_ns() < until)
		;
	return 0;
}

int main(void)
{
	struct probe_session_opts opts = { .sz = sizeof(opts) };
	struct rt_probe_spec spec = { .n_ops = 1 };
	struct probe_session *ps;
	struct seen s = {};
	struct features f;
	uint64_t t0, first_ns;
	int polls = 0, id, n;

	if (!test_require_bpf(&f))
		return TEST_SKIP;
	opts.features = &f;
	opts.ring_bytes = 4 << 20;	/* every call's record fits */
	opts.cpus_per_ring = 1024;	/* one shard: one order */
	opts.poll_budget_ns = BUDGET_NS;
	ps = probe_session__open(&opts, on_record, &s);
	if (!ASSERT_OK_PTR(ps, "open and load"))
		return test_exit();
	ASSERT_OK(probe_session__attach_kernel(ps), "attach kernel programs");
	ASSERT_OK(probe_session__trace_pid(ps, getpid(), TRACED_TARGET), "trace self");
	/* The call's argument, by value: its sequence number. */
	spec.ops[0] = (struct at_fetch_op){ .src = FETCH_ARG0, .size = 8 };
	id = probe_session__attach_runtime(ps, &spec, "/proc/self/exe",
					   self_file_offset(budget_fn), -1);
	if (!ASSERT_GE(id, 0, "attach the probe"))
		goto out;
	for (long i = 0; i < CALLS; i++)
		budget_fn(i);

	t0 = mono_ns();
	n = probe_session__poll(ps, 0);
	first_ns = mono_ns() - t0;
	polls++;
	ASSERT_GE(n, 1, "the first poll hands records on");
	/* Its count is of every record handed on: this process's syscalls too. */
	ASSERT_GE(n, s.count, "and counts those it handed on");
	ASSERT_LE(s.count, CALLS - 1, "but not all of them: its budget ran out");
	/* The budget, the records between two looks at the clock, slack. */
	ASSERT_LE(first_ns, BUDGET_NS + 64 * COST_NS + 20 * 1000000ull,
		  "the first poll returns near its budget");
	ASSERT_EQ(probe_session__polls_cut(ps), 1, "one poll cut short");
	while (s.count < CALLS && polls < 10000) {
		if (probe_session__poll(ps, 0) < 0)
			break;
		polls++;
	}
	ASSERT_EQ(s.count, CALLS, "the next polls pick up where it stopped: every record");
	ASSERT_EQ(s.out_of_order, 0, "once each, in order");
	ASSERT_GE(polls, 3, "over several polls");

	/* A drain reads everything waiting, however long it takes. */
	s.count = 0;
	for (long i = 0; i < CALLS; i++)
		budget_fn(CALLS + i);
	ASSERT_EQ(probe_session__drain(ps), CALLS, "a drain has no budget");
	ASSERT_EQ(s.out_of_order, 0, "in order");
out:
	probe_session__free(ps);
	return test_exit();
}
