// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cost of device-memory accounting (bpf/devmem_account.bpf.h) per
 * call: an allocation and a free at 10k allocations per second (issue 24's
 * rate), through the real cuMemAlloc_v2 / cuMemFree_v2 pack entries on fake
 * allocators in this binary, with a working set of live allocations, in
 * three configurations measured one after the other in each repetition:
 *
 *   none    nothing attached
 *   plain   the same probes (fetch programs, paired, records) with the
 *           memory descriptor cleared: no accounting
 *   mem     the pack entries as they are: the accounting, and the bytes
 *           and in-use written into each record
 *
 * Each call is timed alone (the pacing between them is not), so a figure
 * is ns per call: the mean of the allocation and the free. Prints BENCH
 * lines (bench.h): mem.call.<config>, and from one pass with the kernel's
 * run-time statistics on, mem.stats.<plain|mem>.return: rt_return's own
 * ns per run, where the accounting is done; and mem.forget.<N>: ms to drop
 * a dead process's N live allocations from the kernel's table.
 * Environment: BENCH_REPS (default 5), BENCH_MEM_PAIRS (pairs per
 * configuration and repetition, default 20000: 2 s at 10k/s),
 * BENCH_MEM_RATE (allocations per second, default 10000), BENCH_MEM_LIVE
 * (the working set, default 1000), BENCH_MEM_FORGET_LIVE (N, default
 * 200000).
 */
#include <inttypes.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench.h"
#include "bench_bpf.h"
#include "lib/log.h"
#include "probe/kernel_features.h"
#include "discover/probe_packs.h"
#include "probe/probe_session.h"
#include "../harness/self_offset.h"	/* its fake allocators' file offsets */

/*
 * The fake allocators, in assembly so that their first instruction is a
 * push (emulated by the kernel, as the real libcuda's entry points are
 * probed): cuMemAlloc_v2(CUdeviceptr *dptr, size_t size) hands out
 * addresses in turn; cuMemFree_v2(dptr) does nothing. Both return 0.
 */
uint64_t bench_next_addr = 0x7f0000000000ull;

asm(".text\n"
    ".globl bench_cuMemAlloc_v2\n.type bench_cuMemAlloc_v2,@function\n"
    ".p2align 4\nbench_cuMemAlloc_v2:\n"
    "	push %rbp\n"
    "	mov bench_next_addr(%rip), %rax\n"
    "	mov %rax, (%rdi)\n"
    "	add %rsi, %rax\n"
    "	mov %rax, bench_next_addr(%rip)\n"
    "	pop %rbp\n"
    "	xor %eax, %eax\n"
    "	ret\n"
    ".size bench_cuMemAlloc_v2, .-bench_cuMemAlloc_v2\n"
    ".globl bench_cuMemFree_v2\n.type bench_cuMemFree_v2,@function\n"
    ".p2align 4\nbench_cuMemFree_v2:\n"
    "	push %rbp\n"
    "	pop %rbp\n"
    "	xor %eax, %eax\n"
    "	ret\n"
    ".size bench_cuMemFree_v2, .-bench_cuMemFree_v2\n");

int bench_cuMemAlloc_v2(uint64_t *dptr, size_t size);
int bench_cuMemFree_v2(uint64_t dptr);

enum config { C_NONE, C_PLAIN, C_MEM, C__N };
static const char *const config_names[C__N] = { "none", "plain", "mem" };

static int drop_record(void *ctx, const void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

/* Attaches the two entries (their memory effect cleared for C_PLAIN). */
static int attach(struct probe_session *ps, enum config cfg, int ids[2])
{
	const char *names[2] = { "cuMemAlloc_v2", "cuMemFree_v2" };
	void *fns[2] = { bench_cuMemAlloc_v2, bench_cuMemFree_v2 };

	for (int i = 0; i < 2; i++) {
		const struct rt_pack_entry *e = rt_pack_entry_named(names[i]);
		struct rt_probe_spec spec;

		if (!e)
			return -ENOENT;
		rt_pack_entry__spec(e, &spec);
		if (cfg == C_PLAIN)
			memset(&spec.mem, 0, sizeof(spec.mem));
		ids[i] = probe_session__attach_runtime(ps, &spec, "/proc/self/exe",
						       self_file_offset(fns[i]), -1);
		if (ids[i] < 0)
			return ids[i];
	}
	return 0;
}

/* @pairs allocation-free pairs at @rate a second over a working set of
 * @live; ns per call. */
static double run_pairs(struct probe_session *ps, long pairs, long rate, long live,
			uint64_t *ring)
{
	uint64_t period = 1000000000ull / rate, next = bench_now_ns(), spent = 0;
	long head = 0;

	for (long i = 0; i < pairs; i++) {
		uint64_t t0, t2, old = ring[head];

		while (bench_now_ns() < next)
			;
		next += period;
		t0 = bench_now_ns();
		bench_cuMemAlloc_v2(&ring[head], 4096 + (i & 255) * 256);
		bench_cuMemFree_v2(old);
		t2 = bench_now_ns();
		spent += t2 - t0;
		head = (head + 1) % live;
		if (ps && i % 1024 == 0)
			probe_session__drain(ps);
	}
	return (double)spent / (2.0 * pairs);
}

/*
 * The kernel's own run time per rt_return run (where a paired call's
 * accounting is done), with and without the accounting: immune to the
 * scheduling noise that the timed loop sees on a busy machine. One pass,
 * statistics on (they add two clock reads per run to every program).
 */
static void stats_pass(struct probe_session *ps, long pairs, long rate, long live,
		       uint64_t *ring)
{
	int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME), fd, ids[2];
	uint64_t ns0, cnt0, ns1, cnt1;

	if (stats_fd < 0) {
		printf("NOTE bench_mem: no BPF run-time statistics here (%s)\n", strerror(errno));
		return;
	}
	fd = probe_session__runtime_prog_fd(ps, RT_SPEC_RETURN | RT_SPEC_ADOPT, true);
	for (int c = C_PLAIN; c < C__N; c++) {
		if (attach(ps, c, ids))
			break;
		bench_prog_stats(fd, &ns0, &cnt0);
		run_pairs(ps, pairs, rate, live, ring);
		bench_prog_stats(fd, &ns1, &cnt1);
		if (cnt1 > cnt0)
			printf("BENCH mem.stats.%s.return ns/run %.1f\n", config_names[c],
			       (double)(ns1 - ns0) / (cnt1 - cnt0));
		for (long i = 0; i < live; i++)
			bench_cuMemFree_v2(ring[i]);
		memset(ring, 0, live * sizeof(*ring));
		probe_session__drain(ps);
		probe_session__detach_runtime_many(ps, ids, 2);
		probe_session__mem_forget_pid(ps, getpid());
	}
	close(stats_fd);
}

/*
 * A dead process's forget (probe_session__mem_forget_pid) with @live
 * allocations in the live table: the walk a daemon does at a traced
 * process's exit, read in batches. ms per forget.
 */
static void forget_pass(struct probe_session *ps, long live)
{
	uint64_t d, t0, spent = 0;
	int ids[2], n = 0;

	if (attach(ps, C_MEM, ids))
		return;
	for (long i = 0; i < live; i++) {
		bench_cuMemAlloc_v2(&d, 4096);
		if (i % 1024 == 0)
			probe_session__drain(ps);
	}
	probe_session__drain(ps);
	probe_session__detach_runtime_many(ps, ids, 2);
	t0 = bench_now_ns();
	n = probe_session__mem_forget_pid(ps, getpid());
	spent = bench_now_ns() - t0;
	printf("BENCH mem.forget.%ld ms %.1f\n", live, spent / 1e6);
	printf("INFO mem-forget %d entries dropped of %ld live\n", n, live);
}

int main(void)
{
	struct probe_session_opts opts = { .sz = sizeof(opts) };
	long reps = bench_env("BENCH_REPS", 5), pairs = bench_env("BENCH_MEM_PAIRS", 20000);
	long rate = bench_env("BENCH_MEM_RATE", 10000), live = bench_env("BENCH_MEM_LIVE", 1000);
	struct bench_metric m[C__N];
	uint64_t losses[LOSS_KIND_MAX], *ring;
	struct probe_session *ps;
	struct features f;
	char missing[512], name[64];
	int ids[2];

	log_route_libbpf();
	features__probe(&f);
	if (!features__can_run(&f, missing, sizeof(missing))) {
		fprintf(stderr, "acceltrace cannot run here: %s\n", missing);
		return 77;
	}
	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	ring = calloc(live, sizeof(*ring));
	opts.features = &f;
	opts.ring_bytes = 8 << 20;
	ps = probe_session__open(&opts, drop_record, NULL);
	if (!ring || !ps || probe_session__attach_kernel(ps) ||
	    probe_session__trace_pid(ps, getpid(), TRACED_TARGET)) {
		fprintf(stderr, "bench_mem: cannot open the probe session\n");
		return 1;
	}
	bench_pin(0);
	memset(m, 0, sizeof(m));
	for (int c = 0; c < C__N; c++) {
		snprintf(name, sizeof(name), "mem.call.%s", config_names[c]);
		m[c].name = strdup(name);
		m[c].unit = "ns";
	}
	for (long r = 0; r < reps; r++) {
		for (int c = 0; c < C__N; c++) {
			if (c != C_NONE && attach(ps, c, ids)) {
				fprintf(stderr, "bench_mem: cannot attach the memory probes\n");
				return 1;
			}
			/* The working set first, untimed; freed after. */
			run_pairs(c == C_NONE ? NULL : ps, live, rate * 10, live, ring);
			bench_add(&m[c], run_pairs(c == C_NONE ? NULL : ps, pairs, rate, live, ring));
			for (long i = 0; i < live; i++)
				bench_cuMemFree_v2(ring[i]);
			memset(ring, 0, live * sizeof(*ring));
			probe_session__drain(ps);
			if (c != C_NONE)
				probe_session__detach_runtime_many(ps, ids, 2);
			probe_session__mem_forget_pid(ps, getpid());
		}
	}
	for (int c = 0; c < C__N; c++)
		bench_print(&m[c]);
	stats_pass(ps, pairs / 4 + 1, rate, live, ring);
	forget_pass(ps, bench_env("BENCH_MEM_FORGET_LIVE", 200000));
	probe_session__losses(ps, losses);
	printf("BENCH mem.lost count %" PRIu64 "\n", losses[LOSS_RINGBUF_FULL] +
	       losses[LOSS_MEM_TABLE_FULL]);
	printf("INFO mem-rate %ld allocations/s, %ld live, %ld pairs per configuration\n",
	       rate, live, pairs);
	probe_session__free(ps);
	free(ring);
	return 0;
}
