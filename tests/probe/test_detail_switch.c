// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The detail switch (the daemon's sampled mode) in the kernel: with it off,
 * a detail uprobe and file reads record nothing while a core uprobe still
 * records (marked RT_F_NO_DETAIL); the per-syscall tracepoints of reads and
 * ioctls are detached (the raw flavour's stay, and the switch turns reads
 * away); the per-process aggregates count the turned-away uprobe hits. On
 * again, the tracepoints are back and everything records; a read blocked
 * across the gap is not finished by an exit its entry never met. Probes
 * fire from this process, traced by pid.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <unistd.h>

#include "bpf_test.h"
#include "self_offset.h"
#include "lib/log.h"
#include "probe/probe_session.h"

#define CALLS 50
#define READ_LEN 100

__attribute__((noinline)) int detail_call(int x)
{
	asm volatile("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int core_call(int x)
{
	asm volatile("" ::: "memory");
	return x + 2;
}

struct seen {
	int detail_id, core_id, fd, efd;
	int detail_calls, core_calls, core_no_detail, reads, efd_reads;
};

static int on_record(void *ctx, const void *data, size_t size)
{
	const struct ev_header *h = data;
	struct seen *s = ctx;

	if (size < sizeof(*h) || h->pid != (uint32_t)getpid())
		return 0;
	if (h->type == EV_RT_CALL && size >= RT_CALL_HEAD) {
		const struct ev_rt_call *r = data;	/* the head is enough */

		if ((int)r->probe_id == s->detail_id) {
			s->detail_calls++;
		} else if ((int)r->probe_id == s->core_id) {
			s->core_calls++;
			if (r->flags & RT_F_NO_DETAIL)
				s->core_no_detail++;
		}
	} else if (h->type == EV_SYSCALL && size >= SYSCALL_HEAD) {
		const struct ev_syscall *sc = data;	/* the head is enough */

		if (sc->sc == SC_PREAD64 && (int)sc->fd == s->fd)
			s->reads++;
		if (sc->sc == SC_READ && (int)sc->fd == s->efd)
			s->efd_reads++;
	}
	return 0;
}

static void exercise(struct probe_session *ps, struct seen *s)
{
	char buf[READ_LEN];

	s->detail_calls = s->core_calls = s->core_no_detail = s->reads = 0;
	for (int i = 0; i < CALLS; i++) {
		detail_call(i);
		core_call(i);
		ASSERT_EQ(pread(s->fd, buf, sizeof(buf), 0), READ_LEN, "pread");
	}
	probe_session__drain(ps);
}

struct blocked_read {
	int fd;
	long tid;	/* set before it reads */
};

static void *blocked_read(void *arg)
{
	struct blocked_read *b = arg;
	uint64_t v;

	__atomic_store_n(&b->tid, syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	return read(b->fd, &v, sizeof(v)) == sizeof(v) ? NULL : (void *)1;
}

/*
 * A completion eventfd read that blocks while detail goes off and on again:
 * with per-syscall tracepoints its exit tracepoint was detached meanwhile,
 * so the exit that comes is not taken to finish the entry from before the
 * gap (no record); the raw flavour saw it whole (one record).
 */
static void test_blocked_across_gap(struct probe_session *ps, struct seen *s, bool raw)
{
	struct blocked_read b = {};
	uint64_t one = 1, v;
	pthread_t th;
	void *ret;

	s->efd = eventfd(0, EFD_CLOEXEC);
	if (!ASSERT_GE(s->efd, 0, "eventfd"))
		return;
	ASSERT_OK(probe_session__set_fd(ps, getpid(), s->efd, FD_EVENTFD), "a completion fd");
	/* With detail on, a read of it is recorded. */
	s->efd_reads = 0;
	ASSERT_EQ(write(s->efd, &one, sizeof(one)), sizeof(one), "post");
	ASSERT_EQ(read(s->efd, &v, sizeof(v)), sizeof(v), "read");
	probe_session__drain(ps);
	ASSERT_EQ(s->efd_reads, 1, "a completion read recorded");

	s->efd_reads = 0;
	b.fd = s->efd;
	pthread_create(&th, NULL, blocked_read, &b);
	/* Its read entered (the entry recorded) before detail goes off. */
	WAIT_UNTIL(, __atomic_load_n(&b.tid, __ATOMIC_SEQ_CST) &&
		   test_thread_blocked_in(b.tid, SYS_read), 5000, "the read blocked");
	ASSERT_OK(probe_session__set_detail(ps, false), "off while it waits");
	ASSERT_OK(probe_session__set_detail(ps, true), "on again");
	ASSERT_EQ(write(s->efd, &one, sizeof(one)), sizeof(one), "wake it");
	pthread_join(th, &ret);
	ASSERT_EQ(ret, NULL, "its read returned");
	probe_session__drain(ps);
	ASSERT_EQ(s->efd_reads, raw ? 1 : 0, raw ? "raw flavour: seen whole" :
		  "no record drawn across the gap");
	close(s->efd);
	s->efd = -1;
}

static void aggregates(struct probe_session *ps, uint64_t v[AGG_MAX])
{
	ASSERT_OK(probe_session__proc_aggregates(ps, getpid(), v), "aggregates");
}

/* One attach flavour: @raw, the raw sys_enter/sys_exit tracepoints, which
 * serve core syscalls too and so stay attached. */
static void run_flavour(const char *what, struct features *f, int fd, bool raw)
{
	struct probe_session_opts opts = { .sz = sizeof(opts) };
	struct rt_probe_spec spec = { .flags = RT_SPEC_RETURN };
	uint64_t a0[AGG_MAX], a1[AGG_MAX], a2[AGG_MAX], losses[LOSS_KIND_MAX];
	uint32_t detail_links, core_links;
	struct probe_session *ps = NULL;
	struct seen s = { .detail_id = -1, .core_id = -1, .fd = fd, .efd = -1 };

	fprintf(stderr, "--- %s\n", what);
	opts.features = f;
	opts.ring_bytes = 1 << 20;
	ps = probe_session__open(&opts, on_record, &s);
	if (!ASSERT_OK_PTR(ps, "open and load"))
		goto out;
	if (!ASSERT_OK(probe_session__attach_kernel(ps), "attach kernel programs"))
		goto out;
	ASSERT_OK(probe_session__trace_pid(ps, getpid(), TRACED_TARGET), "trace self");
	s.core_id = probe_session__attach_runtime(ps, &spec, "/proc/self/exe",
						  self_file_offset(core_call), -1);
	spec.flags |= RT_SPEC_DETAIL;
	s.detail_id = probe_session__attach_runtime(ps, &spec, "/proc/self/exe",
						    self_file_offset(detail_call), -1);
	if (!ASSERT_GE(s.core_id, 0, "core probe") || !ASSERT_GE(s.detail_id, 0, "detail probe"))
		goto out;

	ASSERT_TRUE(probe_session__detail(ps), "detail is on by default");
	exercise(ps, &s);
	ASSERT_EQ(s.detail_calls, CALLS, "detail on: every detail call recorded");
	ASSERT_EQ(s.core_calls, CALLS, "detail on: every core call recorded");
	ASSERT_EQ(s.core_no_detail, 0, "detail on: no call marked without detail");
	ASSERT_EQ(s.reads, CALLS, "detail on: every pread recorded");
	ASSERT_EQ(probe_session__proc_aggregates(ps, getpid(), a0) == -ENOENT ||
		  a0[AGG_DETAIL_SKIPPED] == 0, true, "nothing turned away");
	detail_links = probe_session__kernel_links(ps, true);
	core_links = probe_session__kernel_links(ps, false);
	if (raw)
		ASSERT_EQ(detail_links, 0, "raw flavour: no syscall program is detail only");
	else
		ASSERT_GE(detail_links, 10, "read and ioctl tracepoints attached");

	ASSERT_OK(probe_session__set_detail(ps, false), "detail off");
	ASSERT_FALSE(probe_session__detail(ps), "detail off");
	ASSERT_EQ(probe_session__kernel_links(ps, true), 0, "detail-only programs detached");
	ASSERT_EQ(probe_session__kernel_links(ps, false), core_links, "core programs stay");
	exercise(ps, &s);
	ASSERT_EQ(s.detail_calls, 0, "detail off: no detail call recorded");
	ASSERT_EQ(s.core_calls, CALLS, "detail off: core calls still recorded");
	ASSERT_EQ(s.core_no_detail, CALLS, "detail off: each marked RT_F_NO_DETAIL");
	ASSERT_EQ(s.reads, 0, "detail off: no pread recorded");
	aggregates(ps, a1);
	/* Reads are not turned away: detached, or (raw) left before counting. */
	ASSERT_EQ(a1[AGG_DETAIL_SKIPPED], CALLS, "each detail uprobe entry turned away, counted");
	probe_session__losses(ps, losses);
	ASSERT_EQ(losses[LOSS_RETURN_UNMATCHED], 0,
		  "a detail return without its entry is no loss");

	ASSERT_OK(probe_session__set_detail(ps, true), "detail on again");
	ASSERT_EQ(probe_session__kernel_links(ps, true), detail_links, "attached again");
	exercise(ps, &s);
	ASSERT_EQ(s.detail_calls, CALLS, "on again: detail calls recorded");
	ASSERT_EQ(s.reads, CALLS, "on again: preads recorded");
	aggregates(ps, a2);
	ASSERT_EQ(a2[AGG_DETAIL_SKIPPED], CALLS, "nothing more turned away");
	test_blocked_across_gap(ps, &s, raw);

	ASSERT_EQ(probe_session__forget_pid_aggregates(ps, getpid()), 1, "forget");
	ASSERT_EQ(probe_session__proc_aggregates(ps, getpid(), a2) == -ENOENT ||
		  a2[AGG_DETAIL_SKIPPED] == 0, true, "forgotten (or begun afresh)");
out:
	probe_session__free(ps);
}

int main(void)
{
	char path[] = "/tmp/at-detail-XXXXXX", buf[4096] = {};
	struct features f;
	int fd;

	if (!test_require_bpf(&f))
		return TEST_SKIP;
	fd = mkstemp(path);
	if (!ASSERT_GE(fd, 0, "temp file"))
		return test_exit();
	unlink(path);
	ASSERT_EQ(write(fd, buf, sizeof(buf)), sizeof(buf), "file content");
	run_flavour("syscall tracepoints", &f, fd, false);
	if (f.r[FEAT_RAW_TP].available) {
		f.r[FEAT_SYSCALL_TP].available = false;
		f.r[FEAT_TP_BTF].available = false;
		run_flavour("raw tracepoints", &f, fd, true);
	} else {
		test_skip_part("no raw tracepoints here: the raw flavour not run");
	}
	close(fd);
	return test_exit();
}
