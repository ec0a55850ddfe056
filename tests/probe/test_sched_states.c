// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Thread states and exits as the task programs report them, now that they
 * read the state from the task and a process's end from its live-thread
 * count (bpf/task.bpf.c: the tracepoint arguments that carried them exist
 * only on newer kernels): a thread blocked in a pipe read leaves the CPU
 * sleeping (state TASK_INTERRUPTIBLE), one that yields leaves it runnable
 * (0); a traced child whose second thread ends first records that thread's
 * exit alone, and its own end one process exit, once. Probes fire from
 * this process, traced by pid, and its child.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf_test.h"
#include "lib/log.h"
#include "probe/probe_session.h"

#define TASK_INTERRUPTIBLE 1
#define YIELDS 200

struct seen {
	pid_t child;
	uint32_t blocked_tid, yield_tid[2];
	int blocked_sleeping, blocked_outs, yield_runnable, yield_outs;
	int child_thread_exits, child_proc_exits, child_exits_after_proc;
};

static int on_record(void *ctx, const void *data, size_t size)
{
	const struct ev_header *h = data;
	struct seen *s = ctx;

	if (size < sizeof(*h))
		return 0;
	if (h->type == EV_SCHED_SWITCH && size >= sizeof(struct ev_sched_switch)) {
		const struct ev_sched_switch *r = data;

		if (r->prev_pid != (uint32_t)getpid())
			return 0;
		if (r->prev_tid == s->blocked_tid) {
			s->blocked_outs++;
			s->blocked_sleeping += r->prev_state == TASK_INTERRUPTIBLE;
		} else if (r->prev_tid == s->yield_tid[0] || r->prev_tid == s->yield_tid[1]) {
			s->yield_outs++;
			s->yield_runnable += r->prev_state == 0;
		}
	} else if (h->type == EV_TASK && size >= sizeof(struct ev_task) &&
		   h->pid == (uint32_t)s->child) {
		const struct ev_task *t = data;

		if (t->event == TASK_EXIT && h->tid != h->pid)
			s->child_thread_exits++;
		if (t->event == TASK_PROC_EXIT)
			s->child_proc_exits++;
		else if (s->child_proc_exits)
			s->child_exits_after_proc++;
	}
	return 0;
}

struct blocker {
	int fd;
	uint32_t tid;
};

static void *blocked_reader(void *arg)
{
	struct blocker *b = arg;
	char c;

	__atomic_store_n(&b->tid, (uint32_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	return read(b->fd, &c, 1) == 1 ? NULL : (void *)1;
}

/* Two threads on one CPU, yielding to each other: each yield with the
 * other runnable there switches, and the one leaving stays runnable. */
struct yielders {
	uint32_t tid[2];
	int ready;
};

static void *yielder(void *arg)
{
	struct yielders *y = arg;
	int me = __atomic_fetch_add(&y->ready, 1, __ATOMIC_SEQ_CST);
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one);
	__atomic_store_n(&y->tid[me], (uint32_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&y->ready, __ATOMIC_SEQ_CST) < 2)
		;
	for (int i = 0; i < YIELDS; i++)
		sched_yield();
	return NULL;
}

/* Waits until @tid sleeps (state S in /proc), or 5 s. */
static bool wait_sleeping(uint32_t tid)
{
	char path[64], line[256];

	snprintf(path, sizeof(path), "/proc/self/task/%u/stat", tid);
	for (int i = 0; i < 500; i++) {
		FILE *f = fopen(path, "re");
		char *close_paren;

		if (f && fgets(line, sizeof(line), f) && (close_paren = strrchr(line, ')')) &&
		    close_paren[1] == ' ' && close_paren[2] == 'S') {
			fclose(f);
			return true;
		}
		if (f)
			fclose(f);
		usleep(10 * 1000);
	}
	return false;
}

static void test_states(struct probe_session *ps, struct seen *s)
{
	struct blocker b = { .fd = -1 };
	struct yielders y = {};
	int pipefd[2];
	pthread_t th, th2;
	void *ret;

	if (!ASSERT_OK(pipe(pipefd), "pipe"))
		return;
	b.fd = pipefd[0];
	ASSERT_OK(pthread_create(&th, NULL, blocked_reader, &b), "blocked reader");
	while (!__atomic_load_n(&b.tid, __ATOMIC_SEQ_CST))
		sched_yield();
	s->blocked_tid = b.tid;
	ASSERT_TRUE(wait_sleeping(b.tid), "the reader sleeps in its read");
	ASSERT_EQ(write(pipefd[1], "x", 1), 1, "wake it");
	pthread_join(th, &ret);
	ASSERT_EQ(ret, NULL, "its read returned");

	ASSERT_OK(pthread_create(&th, NULL, yielder, &y), "a yielder");
	ASSERT_OK(pthread_create(&th2, NULL, yielder, &y), "another");
	while (!__atomic_load_n(&y.tid[0], __ATOMIC_SEQ_CST) ||
	       !__atomic_load_n(&y.tid[1], __ATOMIC_SEQ_CST))
		sched_yield();
	s->yield_tid[0] = y.tid[0];
	s->yield_tid[1] = y.tid[1];
	pthread_join(th, NULL);
	pthread_join(th2, NULL);
	probe_session__drain(ps);

	ASSERT_GE(s->blocked_sleeping, 1, "the blocked reader left the CPU sleeping");
	ASSERT_GE(s->yield_outs, 1, "the yielders left the CPU");
	ASSERT_GE(s->yield_runnable, YIELDS, "runnable as they yield to each other");
	/* Each leaves the CPU not runnable as it ends; on a loaded host a
	 * few more (a fault that sleeps, the start barrier) are allowed, a
	 * state read wrongly would make it most of them. */
	ASSERT_LE(s->yield_outs - s->yield_runnable, 2 + s->yield_runnable / 50,
		  "not runnable only as each ends (and a few others on a loaded host)");
	close(pipefd[0]);
	close(pipefd[1]);
}

static void *short_thread(void *arg)
{
	(void)arg;
	return NULL;
}

/* A traced child: a thread of it ends, then the child itself. */
static void test_exits(struct probe_session *ps, struct seen *s)
{
	int go[2], status;
	pthread_t th;
	char c;

	if (!ASSERT_OK(pipe(go), "pipe"))
		return;
	s->child = fork();
	if (s->child == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		pthread_create(&th, NULL, short_thread, NULL);
		pthread_join(th, NULL);
		_exit(0);
	}
	close(go[0]);
	if (!ASSERT_GE(s->child, 0, "fork"))
		return;
	ASSERT_OK(probe_session__trace_pid(ps, s->child, TRACED_TARGET), "trace the child");
	ASSERT_EQ(write(go[1], "x", 1), 1, "start it");
	close(go[1]);
	ASSERT_EQ(waitpid(s->child, &status, 0), s->child, "wait for it");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "it exited 0");
	probe_session__drain(ps);

	ASSERT_EQ(s->child_thread_exits, 1, "its thread's exit, recorded");
	ASSERT_EQ(s->child_proc_exits, 1, "its end: one process exit");
	ASSERT_EQ(s->child_exits_after_proc, 0, "nothing of it after its end");
	ASSERT_FALSE(probe_session__pid_traced(ps, s->child), "untraced at its end");
}

int main(void)
{
	struct probe_session_opts opts = { .sz = sizeof(opts) };
	struct probe_session *ps = NULL;
	struct seen s = {};
	struct features f;

	if (!test_require_bpf(&f))
		return TEST_SKIP;
	opts.features = &f;
	opts.sched_switch = true;
	opts.ring_bytes = 1 << 20;
	ps = probe_session__open(&opts, on_record, &s);
	if (!ASSERT_OK_PTR(ps, "open and load"))
		goto out;
	if (!ASSERT_OK(probe_session__attach_kernel(ps), "attach kernel programs"))
		goto out;
	ASSERT_OK(probe_session__trace_pid(ps, getpid(), TRACED_TARGET), "trace self");
	test_states(ps, &s);
	test_exits(ps, &s);
out:
	probe_session__free(ps);
	return test_exit();
}
