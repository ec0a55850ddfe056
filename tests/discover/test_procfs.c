// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * discover/procfs.c on this process and its children: command names of the
 * process and of a named thread, fd targets (a file, an eventfd), the fd
 * walk, liveness of a running child, a zombie and a reaped one, the
 * kernel's read accounting (a thread's preads counted for the process);
 * the environment, the owner, an fd opened again, /proc paths.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "test.h"
#include "discover/procfs.h"

struct walk {
	int want_fd;
	char target[320];
	int seen;
};

static int on_fd(void *ctx, int fd, const char *target)
{
	struct walk *w = ctx;

	w->seen++;
	if (fd == w->want_fd)
		snprintf(w->target, sizeof(w->target), "%s", target);
	return 0;
}

static int stop_at_first(void *ctx, int fd, const char *target)
{
	(void)ctx;
	(void)target;
	return fd + 1000;
}

static pthread_barrier_t named;
static pid_t thread_tid;

static void *thread_main(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "pt_data_worker");
	thread_tid = syscall(SYS_gettid);
	pthread_barrier_wait(&named);
	pthread_barrier_wait(&named);
	return NULL;
}

static void test_names(void)
{
	char comm[64], tiny[4];
	pthread_t th;

	prctl(PR_SET_NAME, "procfs-test");
	ASSERT_OK(procfs_comm(getpid(), 0, comm, sizeof(comm)), "own comm");
	ASSERT_STREQ(comm, "procfs-test", "process name, no newline");
	ASSERT_OK(procfs_comm(getpid(), 0, tiny, sizeof(tiny)), "short buffer");
	ASSERT_STREQ(tiny, "pro", "truncated");
	pthread_barrier_init(&named, NULL, 2);
	if (!ASSERT_OK(pthread_create(&th, NULL, thread_main, NULL), "thread"))
		return;
	pthread_barrier_wait(&named);
	ASSERT_OK(procfs_comm(getpid(), thread_tid, comm, sizeof(comm)), "thread comm");
	ASSERT_STREQ(comm, "pt_data_worker", "thread name");
	pthread_barrier_wait(&named);
	pthread_join(th, NULL);
	ASSERT_EQ(procfs_comm(getpid(), thread_tid, comm, sizeof(comm)), -ENOENT,
		  "an exited thread");
	ASSERT_STREQ(comm, "", "empty name on failure");
}

static void test_fds(void)
{
	char path[] = "/tmp/procfs-test-XXXXXX", target[320];
	struct walk w = {};
	int fd = mkstemp(path), efd = eventfd(0, EFD_CLOEXEC);

	if (!ASSERT_GE(fd, 0, "temp file") || !ASSERT_GE(efd, 0, "eventfd"))
		return;
	ASSERT_OK(procfs_fd_path(getpid(), fd, target, sizeof(target)), "file fd");
	ASSERT_STREQ(target, path, "file target");
	ASSERT_OK(procfs_fd_path(getpid(), efd, target, sizeof(target)), "eventfd");
	ASSERT_STREQ(target, "anon_inode:[eventfd]", "eventfd target");
	ASSERT_EQ(procfs_fd_path(getpid(), 9999, target, sizeof(target)), -ENOENT,
		  "closed fd");
	w.want_fd = fd;
	ASSERT_OK(procfs_for_each_fd(getpid(), on_fd, &w), "walk");
	ASSERT_STREQ(w.target, path, "walk finds the file");
	ASSERT_GE(w.seen, 5, "walk sees stdio, the file and the eventfd");
	ASSERT_GE(procfs_for_each_fd(getpid(), stop_at_first, NULL), 1000,
		  "a nonzero return stops the walk and is returned");
	ASSERT_LE(procfs_for_each_fd(999999999, on_fd, &w), -1, "no such process");
	close(fd);
	close(efd);
	unlink(path);
}

#define READS 20
#define READ_LEN 512

static int reads_fd;

static void *reader(void *arg)
{
	char buf[READ_LEN];

	(void)arg;
	for (int i = 0; i < READS; i++)
		if (pread(reads_fd, buf, sizeof(buf), 0) != READ_LEN)
			return (void *)1;
	return NULL;
}

/* Reads of every thread count for the process, whichever thread read. */
static void test_io_reads(void)
{
	char path[] = "/tmp/at-procfs-XXXXXX", buf[READ_LEN] = {};
	uint64_t c0, b0, c1, b1;
	pthread_t th;
	void *ret;

	reads_fd = mkstemp(path);
	if (!ASSERT_GE(reads_fd, 0, "temp file"))
		return;
	unlink(path);
	ASSERT_EQ(write(reads_fd, buf, sizeof(buf)), READ_LEN, "content");
	ASSERT_OK(procfs_io_reads(getpid(), &c0, &b0), "read accounting");
	pthread_create(&th, NULL, reader, NULL);
	pthread_join(th, &ret);
	ASSERT_EQ(ret, NULL, "the thread's preads");
	ASSERT_OK(procfs_io_reads(getpid(), &c1, &b1), "again");
	/* /proc/PID/io is read with read(2) too: at least. */
	ASSERT_GE(c1 - c0, READS, "every pread counted");
	ASSERT_GE(b1 - b0, READS * READ_LEN, "and its bytes");
	ASSERT_EQ(procfs_io_reads(999999999, &c1, &b1), -ENOENT, "no such process");
	close(reads_fd);
}

static void test_alive(void)
{
	pid_t child = fork();
	int status;

	if (child == 0) {
		pause();
		_exit(0);
	}
	if (!ASSERT_GE(child, 0, "fork"))
		return;
	ASSERT_TRUE(procfs_pid_alive(getpid()), "self alive");
	ASSERT_TRUE(procfs_pid_alive(child), "child alive");
	kill(child, SIGKILL);
	/* A zombie until reaped: not alive, though kill(pid, 0) answers. */
	for (int i = 0; i < 200 && procfs_pid_alive(child); i++)
		usleep(5000);
	ASSERT_FALSE(procfs_pid_alive(child), "zombie is not alive");
	ASSERT_OK(kill(child, 0), "the zombie still answers kill(pid, 0)");
	waitpid(child, &status, 0);
	ASSERT_FALSE(procfs_pid_alive(child), "reaped");
}

static void note_tid(void *ctx, pid_t tid, pid_t ns_tid)
{
	int *n = ctx;

	/* Outside a namespace of its own the ids are the host's. */
	if (tid == ns_tid && tid == (pid_t)syscall(SYS_gettid))
		n[0]++;
	n[1]++;
}

/* In a new PID namespace (unshare), its first process is pid 1 there, and
 * its thread is named by that namespace. Run in a child of the test: a
 * process whose namespace's pid 1 has died can fork no more, and the test
 * itself must (LeakSanitizer forks its tracer at exit). */
static void ns_half(void)
{
	int status = 0;
	pid_t child;

	if (unshare(CLONE_NEWPID)) {
		test_skip_part("unshare(CLONE_NEWPID) refused (%s): the namespace half not run",
		       strerror(errno));
		return;
	}
	child = fork();	/* the first child of the new namespace: its pid 1 */
	if (child == 0) {
		pause();
		_exit(0);
	}
	if (!ASSERT_GE(child, 1, "fork"))
		return;
	ASSERT_EQ(procfs_ns_pid(child, 0), 1, "in its namespace the child is pid 1");
	ASSERT_EQ(procfs_ns_pid(child, child), 1, "and its thread is thread 1");
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
}

/* Outside a container each id is its own; in a namespace, see ns_half. */
static void test_ns_ids(void)
{
	int n[2] = { 0, 0 }, status = 0;
	pid_t helper;

	ASSERT_EQ(procfs_ns_pid(getpid(), 0), getpid(), "own pid outside a namespace");
	ASSERT_OK(procfs_for_each_ns_tid(getpid(), note_tid, n), "threads");
	ASSERT_EQ(n[0], 1, "this thread, the same id on both sides");
	ASSERT_GE(n[1], 1, "every thread listed");
	ASSERT_LE(procfs_ns_pid(999999999, 0), -1, "no such process: an error");
	fflush(NULL);
	helper = fork();
	if (helper == 0) {
		ns_half();
		fflush(NULL);
		_exit(test_failures ? 1 : 0);
	}
	if (!ASSERT_GE(helper, 1, "fork the namespace half"))
		return;
	waitpid(helper, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "the namespace half held (its checks above)");
}

static int count_tid(void *ctx, pid_t tid)
{
	int *n = ctx;

	n[0]++;
	if (tid == thread_tid)
		n[1]++;
	return 0;
}

/* acceltrace about itself: its threads, its run delay, its executable. */
/* A process's parent, whatever its name holds. */
static void test_ppid(void)
{
	pid_t ppid = -1;

	ASSERT_OK(procfs_ppid(getpid(), &ppid), "own parent");
	ASSERT_EQ(ppid, getppid(), "as getppid() says");
	ASSERT_OK(procfs_parse_ppid("42 (a) b (c) ) S 7 42 42 0 -1", &ppid),
		  "a name with spaces and parentheses");
	ASSERT_EQ(ppid, 7, "field 4, after the name's last ')'");
	ASSERT_EQ(procfs_parse_ppid("42 (no close S 7", &ppid), -EINVAL, "no ')'");
	ASSERT_EQ(procfs_parse_ppid("42 (x) S", &ppid), -EINVAL, "cut short");
	ASSERT_EQ(procfs_parse_ppid("42 (x) S -3 1", &ppid), -EINVAL, "a negative parent");
}

static void test_self(void)
{
	char exe[4096], want[4096];
	uint64_t delay = ~0ull;
	int n[2] = { 0, 0 };
	pthread_t th;
	ssize_t len;

	pthread_barrier_init(&named, NULL, 2);
	if (ASSERT_OK(pthread_create(&th, NULL, thread_main, NULL), "thread")) {
		pthread_barrier_wait(&named);
		ASSERT_OK(procfs_for_each_tid(getpid(), count_tid, n), "own threads");
		ASSERT_EQ(n[0], 2, "both threads listed");
		ASSERT_EQ(n[1], 1, "the second by its id");
		pthread_barrier_wait(&named);
		pthread_join(th, NULL);
	}
	ASSERT_OK(procfs_self_run_delay(&delay), "own run delay");
	ASSERT_NEQ(delay, ~0ull, "read");
	len = readlink("/proc/self/exe", want, sizeof(want) - 1);
	want[len > 0 ? len : 0] = '\0';
	ASSERT_OK(procfs_self_exe(exe, sizeof(exe)), "own executable");
	ASSERT_STREQ(exe, want, "its path");
	ASSERT_EQ(procfs_self_exe(exe, 4), -ENAMETOOLONG, "a short buffer");
}

/* What the actuator asks of /proc through here: a process's environment
 * (NUL-separated, a variable set at run time included: environ is the
 * process's memory), its owner, our own fd opened again for writing, and
 * the paths of its root and of a mapping. */
static void test_environ_and_paths(void)
{
	char *env = NULL, path[128];
	int fd, again;
	size_t len = 0;
	bool found = false;
	uid_t uid = (uid_t)-1;

	if (ASSERT_OK(procfs_environ(getpid(), &env, &len), "environ read")) {
		for (char *p = env; p < env + len; p += strlen(p) + 1)
			found |= !strncmp(p, "PATH=", 5);
		ASSERT_TRUE(found, "PATH= among the entries");
		ASSERT_TRUE(len > 0 && env[len - 1] == '\0', "each entry NUL-ended");
	}
	free(env);
	ASSERT_EQ(procfs_environ(999999999, &env, &len), -ENOENT, "no such process");
	ASSERT_OK(procfs_owner_uid(getpid(), &uid), "owner");
	ASSERT_EQ(uid, getuid(), "our uid");
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	again = procfs_reopen_own_fd(fd, O_WRONLY | O_CLOEXEC);
	ASSERT_TRUE(again >= 0 && write(again, "x", 1) == 1, "opened again for writing");
	close(again);
	close(fd);
	ASSERT_TRUE(procfs_reopen_own_fd(-1, O_RDONLY) < 0, "no such fd");
	procfs_root_path(42, path, sizeof(path));
	ASSERT_STREQ(path, "/proc/42/root", "root path");
	procfs_map_file_path(42, 0x7f0000001000ull, 0x7f0000003000ull, path, sizeof(path));
	ASSERT_STREQ(path, "/proc/42/map_files/7f0000001000-7f0000003000", "mapping path");
}

int main(void)
{
	test_environ_and_paths();
	test_names();
	test_ppid();
	test_self();
	test_fds();
	test_alive();
	test_io_reads();
	test_ns_ids();
	return test_exit();
}
