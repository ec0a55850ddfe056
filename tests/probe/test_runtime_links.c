// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Runtime probes' links (probe/runtime_links.c), through uprobe_multi links
 * where the kernel has them and through per-probe perf uprobes (both run):
 * probes attached at once record each call of their own function exactly
 * (entries, returns, the detail one); a pid scope naming another process
 * leaves this process's text without a breakpoint (its first byte is the
 * compiler's, not int3) and records nothing, while a scope naming this one
 * writes the breakpoint and records; detached, nothing records; one probe
 * detached alone from a shared link keeps its id from the next probe.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf_test.h"
#include "self_offset.h"
#include "lib/log.h"
#include "probe/packed_records.h"
#include "probe/probe_session.h"

#define CALLS 20
#define INT3 0xcc

__attribute__((noinline)) int link_fn_a(int x)
{
	asm volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int link_fn_b(int x)
{
	asm volatile("" ::: "memory");
	return x + 2;
}

__attribute__((noinline)) int link_fn_c(int x)
{
	asm volatile("" ::: "memory");
	return x + 3;
}

static int (*const fns[3])(int) = { link_fn_a, link_fn_b, link_fn_c };

struct seen {
	int entries[AT_MAX_PROBES];
	int returns[AT_MAX_PROBES];
};

static int on_record(void *ctx, const void *data, size_t size)
{
	const struct ev_header *h = data;
	struct ev_rt_call r;
	struct seen *s = ctx;

	/* The ring's records are packed (probe/packed_records.h). */
	if (size < sizeof(*h) || h->type != EV_RT_CALL || h->pid != (uint32_t)getpid() ||
	    rt_record__unpack(&r, data, size) || r.probe_id >= AT_MAX_PROBES)
		return 0;
	if (r.flags & RT_F_NO_RETURN)
		s->entries[r.probe_id]++;
	else
		s->returns[r.probe_id]++;
	return 0;
}

static void call_all(struct probe_session *ps, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 0; i < CALLS; i++)
		for (int f = 0; f < 3; f++)
			fns[f](i);
	probe_session__drain(ps);
}

static uint8_t first_byte(int (*fn)(int))
{
	return *(volatile const uint8_t *)fn;
}

static void run_mode(const char *what, struct features *f, pid_t other)
{
	struct probe_session_opts opts = { .sz = sizeof(opts) };
	struct rt_probe_spec spec[3] = {
		{ .flags = 0 },				/* entry only */
		{ .flags = RT_SPEC_RETURN },		/* paired */
		{ .flags = RT_SPEC_RETURN | RT_SPEC_DETAIL },
	};
	const struct rt_probe_spec *specs[3] = { &spec[0], &spec[1], &spec[2] };
	uint64_t offs[3];
	uint8_t orig = first_byte(link_fn_a);
	struct probe_session *ps;
	struct seen *s = calloc(1, sizeof(*s));
	int ids[3], id, self = getpid();

	fprintf(stderr, "--- %s\n", what);
	for (int i = 0; i < 3; i++)
		offs[i] = self_file_offset(fns[i]);
	opts.features = f;
	opts.ring_bytes = 1 << 20;
	ps = probe_session__open(&opts, on_record, s);
	if (!ASSERT_OK_PTR(ps, "open and load") || !s)
		goto out;
	ASSERT_EQ(probe_session__uprobe_multi(ps), f->r[FEAT_UPROBE_MULTI].available,
		  "the attach mode follows the feature");
	ASSERT_OK(probe_session__attach_kernel(ps), "attach kernel programs");
	ASSERT_OK(probe_session__trace_pid(ps, self, TRACED_TARGET), "trace self");

	/* Scoped to another process: no breakpoint here, nothing recorded. */
	ASSERT_EQ(probe_session__set_pid_scope(ps, &other, 1), 1, "scope: the other process");
	ASSERT_EQ(probe_session__attach_runtime_many(ps, specs, "/proc/self/exe", offs, 3, ids),
		  3, "three probes attached at once, for the other process");
	ASSERT_EQ(first_byte(link_fn_a), orig, "no breakpoint in this process's text");
	call_all(ps, s);
	ASSERT_EQ(s->entries[ids[0]] + s->returns[ids[1]] + s->returns[ids[2]], 0,
		  "nothing recorded here");
	probe_session__detach_runtime_many(ps, ids, 3);

	/* Scoped to this process: the breakpoint, and every call. */
	ASSERT_EQ(probe_session__set_pid_scope(ps, &self, 1), 1, "scope: this process");
	ASSERT_EQ(probe_session__attach_runtime_many(ps, specs, "/proc/self/exe", offs, 3, ids),
		  3, "attached again, for this process");
	ASSERT_EQ(first_byte(link_fn_a), INT3, "the breakpoint is in this process's text");
	call_all(ps, s);
	ASSERT_EQ(s->entries[ids[0]], CALLS, "entry-only probe: each call once");
	ASSERT_EQ(s->returns[ids[1]], CALLS, "paired probe: each call, at its return");
	ASSERT_EQ(s->returns[ids[2]], CALLS, "detail probe: each call, at its return");
	ASSERT_EQ(s->entries[ids[1]] + s->entries[ids[2]], 0, "no paired call split in two");

	/* One detached alone: the others still record, its id is held. */
	ASSERT_OK(probe_session__detach_runtime(ps, ids[0]), "detach one");
	call_all(ps, s);
	ASSERT_EQ(s->returns[ids[1]], CALLS, "its batch-mates still record");
	id = probe_session__attach_runtime(ps, &spec[0], "/proc/self/exe", offs[0], -1);
	ASSERT_GE(id, 0, "another probe attached");
	if (probe_session__uprobe_multi(ps))
		ASSERT_NEQ(id, ids[0], "a shared link's detached id is not given out again");
	call_all(ps, s);
	ASSERT_EQ(s->entries[id], CALLS, "the new probe records each call");
	probe_session__detach_runtime(ps, id);
	probe_session__detach_runtime_many(ps, ids + 1, 2);
	ASSERT_EQ(probe_session__runtime_probes(ps), 0, "none attached");
	ASSERT_EQ(first_byte(link_fn_a), orig, "the breakpoint is gone with the links");
	call_all(ps, s);
	ASSERT_EQ(s->returns[ids[1]] + s->entries[id], 0, "detached: nothing recorded");

	/* Unscoped (every process): this one traps too. */
	ASSERT_EQ(probe_session__set_pid_scope(ps, NULL, 0), 0, "no scope");
	id = probe_session__attach_runtime(ps, &spec[0], "/proc/self/exe", offs[2], -1);
	call_all(ps, s);
	ASSERT_EQ(id >= 0 ? s->entries[id] : -1, CALLS, "unscoped: each call recorded");
out:
	probe_session__free(ps);
	free(s);
}

int main(void)
{
	struct features f;
	pid_t child;

	if (!test_require_bpf(&f))
		return TEST_SKIP;
	/* The other process: alive, never calling the probed functions. */
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	if (!ASSERT_GE(child, 1, "fork"))
		return test_exit();
	if (f.r[FEAT_UPROBE_MULTI].available)
		run_mode("uprobe_multi links", &f, child);
	else
		test_skip_part("no uprobe_multi links here: only perf uprobes run");
	f.r[FEAT_UPROBE_MULTI].available = false;
	run_mode("perf uprobes", &f, child);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return test_exit();
}
