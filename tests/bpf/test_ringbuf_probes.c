// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loads the feature-probe object with its uprobe and syscall-tracepoint
 * programs together, attaches the uprobe to a function of this test binary,
 * fires both alternately from this process, and checks what arrives through
 * the ring buffer: one record per trigger, in trigger order, from this
 * thread, with CLOCK_MONOTONIC timestamps inside each trigger's window.
 */
#include <linux/types.h>
#include <sys/syscall.h>
#include <time.h>
#include <bpf/libbpf.h>

#include "test.h"
#include "acceltrace/feature_probe.h"
#include "feature_probe.skel.h"

#define ROUNDS 200

__attribute__((noinline, used)) void test_uprobe_target(int i)
{
	asm volatile("" : : "r"(i) : "memory");
}

struct expect {
	__u32 kind;
	__u64 lo, hi;		/* the trigger's CLOCK_MONOTONIC window */
};

struct seen {
	struct expect want[2 * ROUNDS];
	int n;
	int bad_kind, bad_time, bad_tid, bad_seq;
	__u64 seq[FP_KIND_MAX];
	__u32 tid;
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct seen *s = ctx;
	const struct fp_record *r = data;
	const struct expect *w;

	if (size < sizeof(*r) || s->n >= 2 * ROUNDS) {
		s->bad_kind++;
		return 0;
	}
	w = &s->want[s->n++];
	if (r->type != w->kind)
		s->bad_kind++;
	if (r->ts_ns < w->lo || r->ts_ns > w->hi)
		s->bad_time++;
	if (r->tid != s->tid || r->tgid != (__u32)getpid())
		s->bad_tid++;
	if (r->type < FP_KIND_MAX && r->seq != ++s->seq[r->type])
		s->bad_seq++;
	return 0;
}

int main(void)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uopts, .func_name = "test_uprobe_target");
	struct feature_probe *skel = NULL;
	struct bpf_link *ulink = NULL, *tlink = NULL;
	struct ring_buffer *rb = NULL;
	static struct seen s;
	struct bpf_program *p;
	int err;

	test_require_root("loads BPF programs");
	s.tid = syscall(SYS_gettid);

	skel = feature_probe__open();
	if (!ASSERT_OK_PTR(skel, "open"))
		goto out;
	skel->rodata->target_tgid = getpid();
	skel->rodata->trigger_syscall_nr = SYS_getppid;
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, p == skel->progs.fp_uprobe ||
					     p == skel->progs.fp_syscall_tp);
	err = feature_probe__load(skel);
	if (!ASSERT_OK(err, "load"))
		goto out;

	ulink = bpf_program__attach_uprobe_opts(skel->progs.fp_uprobe, 0,
						"/proc/self/exe", 0, &uopts);
	if (!ASSERT_OK_PTR(ulink, "attach uprobe"))
		goto out;
	tlink = bpf_program__attach(skel->progs.fp_syscall_tp);
	if (!ASSERT_OK_PTR(tlink, "attach tracepoint"))
		goto out;
	rb = ring_buffer__new(bpf_map__fd(skel->maps.fp_events), on_record, &s, NULL);
	if (!ASSERT_OK_PTR(rb, "ring buffer"))
		goto out;

	for (int i = 0; i < ROUNDS; i++) {
		struct expect *u = &s.want[2 * i], *t = &s.want[2 * i + 1];

		u->kind = FP_UPROBE;
		u->lo = mono_ns();
		test_uprobe_target(i);
		u->hi = mono_ns();
		t->kind = FP_SYSCALL_TP;
		t->lo = mono_ns();
		syscall(SYS_getppid);
		t->hi = mono_ns();
		/* Drain as we go: the ring holds 64 KiB, and order must hold. */
		if (i % 50 == 49)
			ring_buffer__consume(rb);
	}
	err = ring_buffer__consume(rb);
	ASSERT_GE(err, 0, "consume");

	ASSERT_EQ(s.n, 2 * ROUNDS, "records received");
	ASSERT_EQ(skel->bss->hits[FP_UPROBE], ROUNDS, "uprobe hits counted in BPF");
	ASSERT_EQ(skel->bss->hits[FP_SYSCALL_TP], ROUNDS, "tracepoint hits counted in BPF");
	ASSERT_EQ(skel->bss->ringbuf_drops, 0, "ring buffer drops");
	ASSERT_EQ(s.bad_kind, 0, "records in trigger order");
	ASSERT_EQ(s.bad_time, 0, "timestamps inside their trigger window");
	ASSERT_EQ(s.bad_tid, 0, "records carry this thread and process");
	ASSERT_EQ(s.bad_seq, 0, "per-kind sequence numbers");
out:
	ring_buffer__free(rb);
	bpf_link__destroy(tlink);
	bpf_link__destroy(ulink);
	feature_probe__destroy(skel);
	return test_exit();
}
