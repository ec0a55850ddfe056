// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devtrace_io's runs on io_uring, with pipes as the files that answer late
 * (a FUSE or NFS file that stalls, seen from the reader):
 *
 * - short reads: a read served ten bytes at a time is asked again for the
 *   rest until whole;
 * - side by side: of a run's first group, A's data comes only after B's
 *   was read, which a chain (A, then B, then the second group) never lets
 *   happen;
 * - run_then: the second group starts only after the first is whole, the
 *   rest of a short read included (a file changed just before the first
 *   group's last bytes are written is seen changed);
 * - partial submission: a kernel that takes two SQEs per submission (as one
 *   short of memory takes fewer, through a test option) gets the rest
 *   submitted again, and no wait is for a read it never took;
 * - the timeout: a read that never gets data ends the run at the timeout
 *   with -ETIMEDOUT while the others finish, the second group of a
 *   run_then that never started is -EAGAIN, and the ring serves the next
 *   run;
 * - the reader: a buffer whose reads time out is put aside (the capture's
 *   warning says why) while another buffer's records keep coming;
 * - as root, a read the kernel cannot cancel (a FUSE file whose server
 *   holds its reads: tests/harness/fuse_server.h): the ring and its
 *   staging area are let go of and a new ring serves the next run.
 *
 * A watchdog fails the test rather than let a hang hold the suite.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "test.h"
#include "fuse_server.h"
#include "devtrace_writer.h"
#include "devtrace/devtrace_io.h"
#include "devtrace/devtrace_reader.h"

#define TIMEOUT_MS 300

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "FAIL: a run hung\n");
	_exit(1);
}

static struct devtrace_io *new_io(void)
{
	struct devtrace_io_opts o = { .sz = sizeof(o), .timeout_ms = TIMEOUT_MS };

	return devtrace_io__new(&o);
}

static void read_of(struct devtrace_read *r, int fd, void *dst, uint32_t len, uint64_t off)
{
	*r = (struct devtrace_read){ .fd = fd, .dst = dst, .len = len, .off = off };
}

/* Writes @pipe_fd ten bytes at a time, 5 ms apart; before the last ten,
 * @file_fd's first bytes become "AFTER" (when file_fd >= 0). */
struct dribble {
	int pipe_fd, file_fd;
};

static void *dribble(void *arg)
{
	struct dribble *d = arg;
	char chunk[10];

	for (int i = 0; i < 10; i++) {
		memset(chunk, 'a' + i, sizeof(chunk));
		usleep(5000);
		if (i == 9 && d->file_fd >= 0 && pwrite(d->file_fd, "AFTER", 5, 0) != 5)
			return (void *)1;
		if (write(d->pipe_fd, chunk, sizeof(chunk)) != sizeof(chunk))
			return (void *)1;
	}
	return NULL;
}

static void test_short_reads(struct devtrace_io *io)
{
	char *dst = devtrace_io__staging(io);
	struct dribble d = { .file_fd = -1 };
	struct devtrace_read r;
	int p[2];
	pthread_t th;
	bool whole = true;

	if (!ASSERT_OK(pipe(p), "pipe"))
		return;
	d.pipe_fd = p[1];
	read_of(&r, p[0], dst, 100, 0);
	pthread_create(&th, NULL, dribble, &d);
	ASSERT_OK(devtrace_io__run(io, &r, 1), "run");
	pthread_join(th, NULL);
	ASSERT_EQ(r.err, 0, "no error");
	ASSERT_EQ(r.done, 100, "read whole, ten bytes at a time");
	for (int i = 0; i < 100; i++)
		whole &= dst[i] == 'a' + i / 10;
	ASSERT_TRUE(whole, "each piece where it belongs");
	close(p[0]);
	close(p[1]);
}

/* B is written first; A only once B's bytes were read. */
struct after_b {
	int a, b;
};

static void *write_b_then_a(void *arg)
{
	struct after_b *x = arg;
	int left = 1;

	if (write(x->b, "BBBBBBBB", 8) != 8)
		return (void *)1;
	for (int i = 0; i < 400 && left; i++) {
		usleep(5000);
		ioctl(x->b, FIONREAD, &left);	/* the read end's: see below */
	}
	return write(x->a, "AAAAAAAA", 8) == 8 ? NULL : (void *)1;
}

static void test_side_by_side(struct devtrace_io *io, int file_fd)
{
	char *dst = devtrace_io__staging(io);
	struct devtrace_read r[2], then;
	int a[2], b[2];
	struct after_b x;
	pthread_t th;
	uint64_t t0;

	if (!ASSERT_OK(pipe(a), "pipe a") || !ASSERT_OK(pipe(b), "pipe b"))
		return;
	/* FIONREAD on a pipe's write end counts what waits on it too. */
	x.a = a[1];
	x.b = b[1];
	read_of(&r[0], a[0], dst, 8, 0);
	read_of(&r[1], b[0], dst + 64, 8, 0);
	read_of(&then, file_fd, dst + 128, 8, 0);
	pthread_create(&th, NULL, write_b_then_a, &x);
	t0 = now_ms();
	ASSERT_OK(devtrace_io__run_then(io, r, 2, &then, 1), "run_then");
	pthread_join(th, NULL);
	ASSERT_TRUE(r[0].err == 0 && r[0].done == 8, "A read (it waited on B's read)");
	ASSERT_TRUE(r[1].err == 0 && r[1].done == 8, "B read first");
	ASSERT_TRUE(then.err == 0 && then.done == 8, "then the second group");
	ASSERT_LE(now_ms() - t0, TIMEOUT_MS - 1, "well before the timeout: not chained");
	for (int i = 0; i < 2; i++) {
		close(a[i]);
		close(b[i]);
	}
}

static void test_then_after_rest(struct devtrace_io *io, int file_fd)
{
	char *dst = devtrace_io__staging(io);
	struct dribble d = { .file_fd = file_fd };
	struct devtrace_read r, then;
	int p[2];
	pthread_t th;

	if (!ASSERT_OK(pipe(p), "pipe") ||
	    !ASSERT_EQ(pwrite(file_fd, "BEFORE", 6, 0), 6, "the file before"))
		return;
	d.pipe_fd = p[1];
	read_of(&r, p[0], dst, 100, 0);
	read_of(&then, file_fd, dst + 4096, 5, 0);
	pthread_create(&th, NULL, dribble, &d);
	ASSERT_OK(devtrace_io__run_then(io, &r, 1, &then, 1), "run_then");
	pthread_join(th, NULL);
	ASSERT_TRUE(r.err == 0 && r.done == 100, "the first group whole");
	ASSERT_TRUE(then.err == 0 && then.done == 5, "the second read");
	ASSERT_TRUE(!memcmp(dst + 4096, "AFTER", 5),
		    "the second group ran after the first's last bytes, not its first");
	close(p[0]);
	close(p[1]);
}

/* The kernel takes two SQEs of each submission: the rest are submitted
 * again, and only what it took is waited for. */
static void test_partial_submit(int file_fd)
{
	struct devtrace_io_opts o = { .sz = sizeof(o), .timeout_ms = TIMEOUT_MS,
				      .test_submit_max = 2 };
	struct devtrace_io *io = devtrace_io__new(&o);
	struct devtrace_read r[7], then[3];
	uint64_t before, t0;
	char *dst;

	if (!ASSERT_OK_PTR(io, "a ring taking two at a time"))
		return;
	dst = devtrace_io__staging(io);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 7; i++)
			read_of(&r[i], file_fd, dst + 128 * i, 100, 0);
		for (int i = 0; i < 3; i++)
			read_of(&then[i], file_fd, dst + 2048 + 128 * i, 100, 0);
		before = devtrace_io__submits(io);
		t0 = now_ms();
		if (round == 0)
			ASSERT_OK(devtrace_io__run(io, r, 7), "run");
		else
			ASSERT_OK(devtrace_io__run_then(io, r, 7, then, 3), "run_then");
		ASSERT_LE(now_ms() - t0, TIMEOUT_MS - 1, "no wait for what was not submitted");
		for (int i = 0; i < 7; i++)
			ASSERT_TRUE(!r[i].err && r[i].done == 100, "every read done");
		for (int i = 0; round && i < 3; i++)
			ASSERT_TRUE(!then[i].err && then[i].done == 100, "then the second group");
		ASSERT_GE(devtrace_io__submits(io) - before, round ? 5 : 4,
			  "two at a time: submitted again until all were taken");
	}
	devtrace_io__free(io);
}

static void test_timeout(struct devtrace_io *io, int file_fd)
{
	char *dst = devtrace_io__staging(io);
	struct devtrace_read r[3], then;
	uint64_t t0, took;
	int p[2];

	if (!ASSERT_OK(pipe(p), "pipe"))
		return;
	/* The middle read never gets a byte: its writer says nothing. */
	read_of(&r[0], file_fd, dst, 100, 0);
	read_of(&r[1], p[0], dst + 256, 100, 0);
	read_of(&r[2], file_fd, dst + 512, 100, 0);
	t0 = now_ms();
	ASSERT_OK(devtrace_io__run(io, r, 3), "the run ends");
	took = now_ms() - t0;
	ASSERT_GE(took, TIMEOUT_MS - 10, "at the timeout");
	ASSERT_LE(took, TIMEOUT_MS + 1000, "not much later");
	ASSERT_EQ(r[1].err, -ETIMEDOUT, "the silent read timed out");
	ASSERT_TRUE(!r[0].err && r[0].done == 100 && !r[2].err && r[2].done == 100,
		    "the others finished");

	dst = devtrace_io__staging(io);	/* may have moved */
	read_of(&r[0], p[0], dst, 100, 0);
	read_of(&then, file_fd, dst + 256, 100, 0);
	ASSERT_OK(devtrace_io__run_then(io, r, 1, &then, 1), "run_then ends");
	ASSERT_EQ(r[0].err, -ETIMEDOUT, "its first group timed out");
	ASSERT_EQ(then.err, -EAGAIN, "its second never started: to be tried again");

	dst = devtrace_io__staging(io);
	read_of(&r[0], file_fd, dst, 100, 0);
	ASSERT_OK(devtrace_io__run(io, r, 1), "the next run");
	ASSERT_TRUE(!r[0].err && r[0].done == 100, "served");
	ASSERT_EQ(devtrace_io__abandoned_rings(io), 0, "a pipe's read cancels: ring kept");
	close(p[0]);
	close(p[1]);
}

/*
 * Root only: a read of a FUSE file whose server never answers reads (its
 * reads in the background, as libfuse's are) waits on the page, which no
 * cancel ends: at the timeout the ring and its staging area are let go of,
 * to the kernel, and a new ring and area serve the next run. The reads run
 * in a child, the server in this process: should the child wait in the
 * kernel regardless, ending the server's connection frees it, and the test
 * fails rather than hangs.
 */
static int uncancellable_child(const char *path, int file_fd)
{
	struct devtrace_read r[2];
	struct devtrace_io *io = new_io();
	char *old, *dst;
	uint64_t t0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!ASSERT_OK_PTR(io, "a ring") || !ASSERT_GE(fd, 0, "open the FUSE file"))
		return test_exit();
	old = devtrace_io__staging(io);
	read_of(&r[0], fd, old, 4096, 0);
	read_of(&r[1], file_fd, old + 8192, 100, 0);
	t0 = now_ms();
	ASSERT_OK(devtrace_io__run(io, r, 2), "the run ends");
	ASSERT_LE(now_ms() - t0, TIMEOUT_MS + 1000, "at the timeout and the cancel's grace");
	ASSERT_EQ(r[0].err, -ETIMEDOUT, "the held read timed out");
	ASSERT_TRUE(!r[1].err && r[1].done == 100, "the other finished");
	ASSERT_EQ(devtrace_io__abandoned_rings(io), 1, "its ring let go of");
	dst = devtrace_io__staging(io);
	ASSERT_TRUE(dst != old, "a new staging area: the old one may still be written");
	read_of(&r[1], file_fd, dst, 100, 0);
	ASSERT_OK(devtrace_io__run(io, &r[1], 1), "the next run");
	ASSERT_TRUE(!r[1].err && r[1].done == 100, "served by the new ring");
	return test_exit();
}

static void test_uncancellable(const char *dir, int file_fd)
{
	static struct fuse_server srv = { .fd = -1, .size = 1 << 20, .hold_reads = 1 };
	struct pollfd done;
	char mnt[4200], path[4300], verdict = 1;
	int status = 0, p[2];
	pid_t child;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		printf("note: no private mount namespace; the uncancellable read not checked\n");
		return;
	}
	snprintf(mnt, sizeof(mnt), "%s/fuse", dir);
	snprintf(path, sizeof(path), "%s/buffer", mnt);
	if (!ASSERT_OK(pipe(p), "pipe") ||
	    !ASSERT_OK(fuse_server_start(&srv, mnt), "a FUSE server that holds its reads"))
		return;
	child = fork();
	if (child == 0) {
		close(srv.fd);	/* the parent's alone: closing it ends the connection */
		verdict = (char)uncancellable_child(path, file_fd);
		if (write(p[1], &verdict, 1) != 1)
			_exit(1);
		_exit(0);	/* its exit waits on the abandoned read */
	}
	done = (struct pollfd){ .fd = p[0], .events = POLLIN };
	if (ASSERT_EQ(poll(&done, 1, 10000), 1, "the child's run ended, not stuck in the kernel"))
		ASSERT_EQ(read(p[0], &verdict, 1), 1, "its verdict");
	fuse_server_stop(&srv);	/* the abandoned read ends with the connection */
	waitpid(child, &status, 0);
	ASSERT_EQ(verdict, 0, "its checks held");
	close(p[0]);
	close(p[1]);
}

struct seen {
	uint64_t records;
};

static int on_record(void *ctx, int buf, const struct devtrace_record *rec)
{
	(void)buf;
	(void)rec;
	((struct seen *)ctx)->records++;
	return 0;
}

/* A buffer whose reads time out is put aside; another is read on. */
static void test_reader_puts_aside(const char *dir)
{
	struct devtrace_reader_opts o = { .io = { .timeout_ms = TIMEOUT_MS } };
	struct devtrace_reader_ops ops = { .on_record = on_record };
	struct devtrace_writer_opts wo = {
		.core = 0, .num_cores = 1, .owner_pid = getpid(), .record_capacity = 256,
		.clock_rate_hz = 1000000000, .sync_host_ns = 5, .sync_device_ts = 7,
		.device_kind = "test",
	};
	struct devtrace_buffer_stats st;
	struct devtrace_writer *w = NULL;
	struct devtrace_reader *r = NULL;
	struct devtrace_record rec;
	struct seen s = {};
	char path[4200], fifo[4200];
	int good, stuck, fd;

	ops.ctx = &s;
	snprintf(path, sizeof(path), "%s/core0", dir);
	snprintf(fifo, sizeof(fifo), "%s/stalls", dir);
	wo.path = path;
	w = devtrace_writer__new(&wo);
	if (!ASSERT_OK_PTR(w, "a writer") || !ASSERT_OK(mkfifo(fifo, 0600), "mkfifo"))
		goto out;
	r = devtrace_reader__new(&o, &ops);
	if (!ASSERT_OK_PTR(r, "a reader"))
		goto out;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	/* O_RDWR: its open does not wait for a writer, its reads wait. */
	stuck = devtrace_reader__add(r, open(fifo, O_RDWR | O_CLOEXEC), "stalls");
	good = devtrace_reader__add(r, fd, "core0");
	if (!ASSERT_GE(stuck, 0, "add the stalling one") || !ASSERT_GE(good, 0, "add the good one"))
		goto out;
	memset(&rec, 0, sizeof(rec));
	rec.kind = DEVTRACE_OP_END;
	rec.name_id = DEVTRACE_NO_NAME;
	for (int i = 0; i < 3; i++) {
		for (int k = 0; k < 10; k++) {
			rec.ts = 1000 * (10 * i + k);
			devtrace_writer__emit(w, &rec);
		}
		ASSERT_GE(devtrace_reader__poll(r, 0), 0, "poll");
	}
	devtrace_reader__stats(r, stuck, &st);
	ASSERT_EQ(st.state, DEVTRACE_BUF_FAILED, "the stalling buffer is put aside");
	ASSERT_STRCONTAINS(st.error, "timed out", "saying why");
	ASSERT_EQ(st.read_errors, 1, "after one timeout, not read again");
	ASSERT_EQ(s.records, 3 * 10, "the other one's records all came");
out:
	devtrace_reader__free(r);
	devtrace_writer__free(w);
	unlink(path);
	unlink(fifo);
}

int main(void)
{
	char dir[] = "/tmp/acceltrace-devio.XXXXXX", file[64];
	struct devtrace_io *io;
	char page[4096];
	int fd;

	signal(SIGALRM, on_alarm);
	alarm(60);
	if (!mkdtemp(dir)) {
		printf("SKIP: cannot make a temporary directory\n");
		return TEST_SKIP;
	}
	io = new_io();
	if (!ASSERT_OK_PTR(io, "devtrace_io__new"))
		return test_exit();
	if (devtrace_io__engine(io) == DEVTRACE_IO_PREAD) {
		printf("SKIP: no io_uring with timed waits here\n");
		devtrace_io__free(io);
		rmdir(dir);
		return TEST_SKIP;
	}
	snprintf(file, sizeof(file), "%s/file", dir);
	fd = open(file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	memset(page, 'f', sizeof(page));
	if (!ASSERT_EQ(write(fd, page, sizeof(page)), sizeof(page), "a file"))
		return test_exit();
	test_short_reads(io);
	test_side_by_side(io, fd);
	test_then_after_rest(io, fd);
	test_partial_submit(fd);
	test_timeout(io, fd);
	devtrace_io__free(io);
	test_reader_puts_aside(dir);
	if (geteuid() == 0 && !access("/dev/fuse", R_OK | W_OK))
		test_uncancellable(dir, fd);
	else
		printf("note: not root or no /dev/fuse; the uncancellable read not checked\n");
	close(fd);
	unlink(file);
	rmdir(dir);
	return test_exit();
}
