// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent (user/agent/, docs/agent.md) in a process of its own, driven
 * through its control page by acceltrace's own side of it
 * (attach/agent_links.h), with the simulated driver and CUPTI of
 * tests/sim/. The agent is one per process, so each case forks:
 *
 * - loaded: a control page, dormant, no buffer, no CUPTI;
 * - a lease turns it on (a GPU buffer appears, found by its magic, GPU and
 *   per-stream), a kernel launched then is in it, a flush is carried out,
 *   and the lease's end turns it off again;
 * - no libcupti, and CUPTI refusing (as a host that restricts profiling
 *   to administrators): unavailable, with the reason in the page;
 * - a clock read on a busy host (SIM_CUPTI_TIMESTAMP_STALL_US): the
 *   buffer's clock pairs still agree with the clock to 200 us;
 * - unshare(CLONE_NEWUSER) through the agent's unshare: its thread paused
 *   around it and running after (a lease turns it on);
 * - a forked child lets go of its parent's page;
 * - a process that exited has its link let go.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "test.h"
#include "acceltrace/agent_control.h"
#include "acceltrace/devtrace.h"
#include "attach/agent_links.h"
#include "discover/devtrace_buffers.h"

#define MS 1000000ull

static char dir[] = "/tmp/acceltrace-agent-test.XXXXXX";
static char agent_path[4096], cupti_path[4096], drv_path[4096];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

	nanosleep(&ts, NULL);
}

/* Loads the driver (as the process's CUDA) and the agent, as libcuda's
 * cuInit would. */
static bool load_agent(void)
{
	int (*init)(void);
	void *h;

	if (!dlopen(drv_path, RTLD_NOW | RTLD_GLOBAL))
		return ASSERT_TRUE(false, "the simulated driver loads");
	h = dlopen(agent_path, RTLD_NOW | RTLD_LOCAL);
	if (!ASSERT_OK_PTR(h, "the agent loads"))
		return false;
	init = (int (*)(void))dlsym(h, "InitializeInjection");
	if (!ASSERT_OK_PTR(init, "InitializeInjection exported"))
		return false;
	return ASSERT_EQ(init(), 1, "InitializeInjection");
}

/* The agent's status once @want holds, polled up to 3 s. */
static const struct agent_status *wait_state(struct agent_links *l, uint32_t want)
{
	const struct agent_status *st = NULL;

	for (int i = 0; i < 300; i++) {
		agent_links__poll(l);
		st = agent_links__status(l, 0);
		if (st && st->state == want)
			return st;
		sleep_ms(10);
	}
	return st;
}

struct found {
	int gpu_buffers;	/* ours, GPU, per stream */
	uint64_t records;
};

static int count_buffer(void *ctx, int fd, const char *path)
{
	struct devtrace_header h;
	struct found *f = ctx;

	(void)path;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    (h.flags & DEVTRACE_F_STREAMS) && !strcmp(h.platform, "GPU") &&
	    h.owner_pid == (__u32)getpid()) {
		f->gpu_buffers++;
		f->records += h.write_seq;
	}
	close(fd);
	return 0;
}

static struct found buffers(void)
{
	struct devtrace_seen *seen = devtrace_seen__new();
	struct found f = { 0 };

	devtrace_buffers_find(getpid(), seen, count_buffer, &f);
	devtrace_seen__free(seen);
	return f;
}

/* Dormant, then on with a lease, a kernel recorded, a flush, off. */
static void case_lease(void)
{
	int (*launch)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
		      unsigned, void *, void **, void **);
	int (*sync)(void);
	struct agent_links *l = agent_links__new();
	const struct agent_status *st;
	uint64_t before;

	setenv("ACCELTRACE_AGENT_CUPTI", cupti_path, 1);
	if (!ASSERT_OK_PTR(l, "links") || !load_agent())
		return;
	ASSERT_EQ(agent_links__find(l, getpid()), 1, "the control page found by its magic");
	ASSERT_EQ(agent_links__find(l, getpid()), 0, "and found once");
	agent_links__poll(l);
	st = agent_links__status(l, 0);
	if (!ASSERT_OK_PTR(st, "status"))
		return;
	ASSERT_EQ(st->state, AGENT_STATE_DORMANT, "dormant when loaded");
	ASSERT_EQ(st->backends, AGENT_BACKEND_CUPTI | AGENT_BACKEND_PJRT, "CUPTI and PJRT backends");
	ASSERT_EQ(st->buffers, 0, "no buffer while dormant");
	ASSERT_EQ(buffers().gpu_buffers, 0, "no devtrace buffer while dormant");

	agent_links__want(l, now_ns() + 5000 * MS, now_ns());
	st = wait_state(l, AGENT_STATE_ACTIVE);
	if (!ASSERT_TRUE(st && st->state == AGENT_STATE_ACTIVE, "a lease turns it on"))
		return;
	ASSERT_EQ(st->buffers, 1, "one GPU buffer");
	ASSERT_EQ(buffers().gpu_buffers, 1, "found by its magic: GPU, per stream, ours");
	before = buffers().records;

	launch = dlsym(RTLD_DEFAULT, "cuLaunchKernel");
	sync = dlsym(RTLD_DEFAULT, "cuCtxSynchronize");
	if (ASSERT_OK_PTR(launch, "cuLaunchKernel") && ASSERT_OK_PTR(sync, "cuCtxSynchronize")) {
		ASSERT_OK(launch((void *)0x1, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), "launch");
		ASSERT_OK(sync(), "sync");
	}
	ASSERT_EQ(agent_links__flush(l), 1, "an active agent asked to flush");
	for (int i = 0; i < 300 && !agent_links__flushed(l); i++)
		sleep_ms(10);
	ASSERT_TRUE(agent_links__flushed(l), "the flush carried out");
	ASSERT_GE(buffers().records, before + 2, "the kernel and its launch in the buffer");
	agent_links__poll(l);
	ASSERT_GE(agent_links__status(l, 0)->records, 2, "records counted in the page");

	agent_links__want(l, 0, now_ns());
	st = wait_state(l, AGENT_STATE_DORMANT);
	ASSERT_TRUE(st && st->state == AGENT_STATE_DORMANT, "the lease let go: dormant again");
	ASSERT_EQ(st->activations, 1, "one activation");
	agent_links__free(l);
}

struct clock_pairs {
	unsigned int n;
	uint64_t worst_ns;	/* largest |host - device| of a pair */
};

/* The CLOCK_SYNC records of our GPU buffer. CUPTI's clock here is the
 * agent's own CLOCK_MONOTONIC callback, so a true pair has host == ts. */
static int scan_clock_pairs(void *ctx, int fd, const char *path)
{
	struct clock_pairs *p = ctx;
	struct devtrace_header h;
	struct devtrace_record r;

	(void)path;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) || strcmp(h.platform, "GPU") ||
	    h.owner_pid != (__u32)getpid() || h.write_seq > h.record_capacity)
		return 0;
	for (__u64 seq = 1; seq <= h.write_seq; seq++) {
		off_t at = (off_t)(h.records_offset + (seq - 1) * sizeof(r));
		uint64_t off;

		if (pread(fd, &r, sizeof(r), at) != (ssize_t)sizeof(r) ||
		    r.kind != DEVTRACE_CLOCK_SYNC)
			continue;
		off = r.arg > r.ts ? r.arg - r.ts : r.ts - r.arg;
		p->n++;
		if (off > p->worst_ns)
			p->worst_ns = off;
	}
	return 0;
}

/* Every clock read stalls 20 ms but one in four: the agent's pairs are
 * the tight ones, or none. One loose pair would move every kernel by
 * 10 ms (a CI run on a busy 2-CPU host saw exactly that). */
static void case_busy_clock(void)
{
	struct agent_links *l = agent_links__new();
	struct devtrace_seen *seen;
	struct clock_pairs p = { 0 };
	const struct agent_status *st;

	setenv("ACCELTRACE_AGENT_CUPTI", cupti_path, 1);
	setenv("SIM_CUPTI_TIMESTAMP_STALL_US", "20000", 1);
	if (!ASSERT_OK_PTR(l, "links") || !load_agent())
		return;
	ASSERT_EQ(agent_links__find(l, getpid()), 1, "control page");
	agent_links__want(l, now_ns() + 5000 * MS, now_ns());
	st = wait_state(l, AGENT_STATE_ACTIVE);
	if (!ASSERT_TRUE(st && st->state == AGENT_STATE_ACTIVE, "a lease turns it on"))
		return;
	ASSERT_EQ(agent_links__flush(l), 1, "asked to flush");
	for (int i = 0; i < 300 && !agent_links__flushed(l); i++)
		sleep_ms(10);
	seen = devtrace_seen__new();
	devtrace_buffers_find(getpid(), seen, scan_clock_pairs, &p);
	devtrace_seen__free(seen);
	ASSERT_GE(p.n, 1, "clock pairs in the buffer");
	ASSERT_LE(p.worst_ns, 200000, "every pair within 200 us of the clock");
	agent_links__want(l, 0, now_ns());
	wait_state(l, AGENT_STATE_DORMANT);
	agent_links__free(l);
}

/* A lease the agent cannot honour: unavailable, and why. */
static void case_unavailable(const char *cupti, const char *fail, const char *why)
{
	struct agent_links *l = agent_links__new();
	const struct agent_status *st;

	setenv("ACCELTRACE_AGENT_CUPTI", cupti, 1);
	if (fail)
		setenv("SIM_CUPTI_FAIL", fail, 1);
	if (!ASSERT_OK_PTR(l, "links") || !load_agent())
		return;
	ASSERT_EQ(agent_links__find(l, getpid()), 1, "control page");
	agent_links__want(l, now_ns() + 5000 * MS, now_ns());
	st = wait_state(l, AGENT_STATE_UNAVAILABLE);
	if (ASSERT_TRUE(st && st->state == AGENT_STATE_UNAVAILABLE, "unavailable"))
		ASSERT_STRCONTAINS(st->message, why, "the reason in the page");
	agent_links__free(l);
}

static int threads_now(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* unshare(CLONE_NEWUSER) refuses a multithreaded caller: the agent's
 * unshare pauses its thread around it, and the thread runs on after (a
 * lease still turns it on). */
static void case_unshare(void)
{
	struct agent_links *l = agent_links__new();
	const struct agent_status *st = NULL;
	int (*unshare_fn)(int);
	void *h;
	int ret;

	setenv("ACCELTRACE_AGENT_CUPTI", cupti_path, 1);
	if (!ASSERT_OK_PTR(l, "links") || !load_agent())
		return;
	ASSERT_EQ(threads_now(), 2, "the process and the agent's thread");
	ASSERT_EQ(agent_links__find(l, getpid()), 1, "the control page found");
	h = dlopen(agent_path, RTLD_NOW | RTLD_NOLOAD);
	*(void **)&unshare_fn = h ? dlsym(h, "unshare") : NULL;
	if (!ASSERT_OK_PTR(unshare_fn, "the agent's unshare"))
		return;
	ret = unshare_fn(CLONE_NEWUSER);
	if (ret && errno == EPERM) {
		printf("SKIP-PART: user namespaces not allowed here\n");
		return;
	}
	ASSERT_EQ(ret, 0, "unshare(CLONE_NEWUSER) with the agent's thread");
	ASSERT_EQ(threads_now(), 2, "its thread started again after");
	/* It answers a lease: on, or (no uid mapped in the new namespace
	 * yet, so no file for its buffers) unavailable, saying why. */
	agent_links__want(l, now_ns() + 5000 * MS, now_ns());
	for (int i = 0; i < 300; i++, sleep_ms(10)) {
		agent_links__poll(l);
		st = agent_links__status(l, 0);
		if (st && st->state != AGENT_STATE_DORMANT)
			break;
	}
	ASSERT_TRUE(st && st->state != AGENT_STATE_DORMANT, "its thread answers a lease after");
	agent_links__free(l);
}

/* A forked child does not pass for its parent's agent. */
static void case_fork(void)
{
	struct agent_links *l = agent_links__new();
	int status = 0;
	pid_t child;

	setenv("ACCELTRACE_AGENT_CUPTI", cupti_path, 1);
	if (!ASSERT_OK_PTR(l, "links") || !load_agent())
		return;
	child = fork();
	if (child == 0) {
		struct agent_links *c = agent_links__new();

		_exit(c && agent_links__find(c, getpid()) == 0 ? 0 : 1);
	}
	ASSERT_EQ(waitpid(child, &status, 0), child, "child");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "the child let go of its parent's page");
	ASSERT_EQ(agent_links__find(l, getpid()), 1, "the parent keeps it");
	agent_links__free(l);
}

/* A process with an agent exits: its link is let go (fd, mapping). */
static void case_exit(void)
{
	struct agent_links *l = agent_links__new();
	int status = 0, fds;
	pid_t child;

	setenv("ACCELTRACE_AGENT_CUPTI", cupti_path, 1);
	if (!ASSERT_OK_PTR(l, "links"))
		return;
	fds = test_open_fds();
	child = fork();
	if (child == 0) {
		if (load_agent())
			pause();
		_exit(1);
	}
	for (int i = 0; i < 300 && agent_links__find(l, child) <= 0; i++)
		sleep_ms(10);
	ASSERT_EQ(agent_links__count(l), 1, "the child's agent found");
	agent_links__drop_exited(l);
	ASSERT_EQ(agent_links__count(l), 1, "kept while it runs");
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	agent_links__drop_exited(l);
	ASSERT_EQ(agent_links__count(l), 0, "let go once it exited");
	ASSERT_EQ(test_open_fds(), fds, "its fd closed");
	agent_links__free(l);
}

/* Runs @fn in a child of its own; its checks count here. */
static void in_child(const char *what, void (*fn)(void))
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		test_failures = 0;	/* this case's own, not the cases' before */
		fn();
		_exit(test_failures ? 1 : 0);
	}
	waitpid(pid, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, what);
}

static void no_cupti(void)
{
	case_unavailable("/nonexistent/libcupti.so.13", NULL, "no libcupti");
}

static void refused(void)
{
	case_unavailable(cupti_path, "privileges", "administrators");
}

int main(void)
{
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : "build";
	char *abs = realpath(out, NULL);

	if (!ASSERT_OK_PTR(abs, "build directory") || !ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	snprintf(agent_path, sizeof(agent_path), "%s/libacceltrace-agent.so", abs);
	snprintf(cupti_path, sizeof(cupti_path), "%s/sim/cuda/libcupti.so.13", abs);
	snprintf(drv_path, sizeof(drv_path), "%s/sim/cuda/libsimdrv.so", abs);
	free(abs);
	if (access(agent_path, R_OK) || access(cupti_path, R_OK)) {
		ASSERT_TRUE(false, "the agent and the simulated CUPTI are built (make all)");
		return test_exit();
	}
	/* The agent's files go here; the sim's truth nowhere. */
	setenv("ACCELTRACE_AGENT_DIR", dir, 1);
	unsetenv("SIM_CUPTI_FAIL");
	in_child("lease: dormant, on, a kernel, a flush, off", case_lease);
	in_child("no libcupti: unavailable", no_cupti);
	in_child("CUPTI refused: unavailable", refused);
	in_child("a busy host's clock reads: tight pairs only", case_busy_clock);
	in_child("unshare(CLONE_NEWUSER): the thread paused, then on again", case_unshare);
	in_child("fork", case_fork);
	in_child("exit", case_exit);
	rmdir(dir);
	return test_exit();
}
