// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A full disk: writes into a 64 KiB tmpfs (mounted in a private mount
 * namespace, so nothing outside sees it) must fail with a message that says
 * the disk is full and names the file, and leave no file, partial or
 * temporary. Covered: the error surfacing in a write (large output), in the
 * final flush (output that fits the stdio buffer), and through
 * xspace_write_capture. Needs root (mount); skips otherwise.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test.h"
#include "lib/atomic_file.h"
#include "capture/capture.h"
#include "output/xspace_writer.h"

static char dir[] = "/tmp/test_enospc.XXXXXX";
static char errfile[600];
static int saved_stderr = -1;

static void capture_stderr(void)
{
	int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
}

static char *restore_stderr(void)
{
	static char buf[4096];
	ssize_t n;
	int fd;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	fd = open(errfile, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	fprintf(stderr, "(captured) %s", buf);
	return buf;
}

/* Regular files under d, recursively (directories are not counted). */
static int count_files(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	char p[1024];
	int n = 0;

	if (!dp)
		return -1;
	while ((e = readdir(dp))) {
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", d, e->d_name);
		if (lstat(p, &st))
			continue;
		if (S_ISDIR(st.st_mode))
			n += count_files(p);
		else
			n++;
	}
	closedir(dp);
	return n;
}

static void write_big(const char *mnt)
{
	char path[700];
	static char block[1 << 20];
	struct atomic_file *af;
	int err = 0;

	snprintf(path, sizeof(path), "%s/big.bin", mnt);
	memset(block, 'x', sizeof(block));
	af = atomic_file__open(path);
	if (af) {
		FILE *f = atomic_file__stream(af);

		if (fwrite(block, 1, sizeof(block), f) != sizeof(block))
			err = -errno;
		else
			err = atomic_file__commit(af, sizeof(block));
	}
	ASSERT_OK_PTR(af, "open on the small fs");
	atomic_file__free(af);
	ASSERT_EQ(err, -ENOSPC, "1 MiB into 64 KiB: ENOSPC");
	ASSERT_EQ(count_files(mnt), 0, "nothing left after a failed write");
}

/* Fill the disk, then write 3 KiB: the write is buffered, the flush fails. */
static void write_at_flush(const char *mnt)
{
	char path[700], filler[700], *msg;
	char small[3000];
	struct atomic_file *af;
	FILE *f;
	int err = -1;

	snprintf(filler, sizeof(filler), "%s/filler", mnt);
	f = fopen(filler, "w");
	if (!ASSERT_OK_PTR(f, "filler"))
		return;
	for (int i = 0; i < 64 * 1024; i++) {
		if (fputc('f', f) == EOF)
			break;
	}
	fclose(f);		/* ENOSPC expected: the disk is now full */

	snprintf(path, sizeof(path), "%s/small.bin", mnt);
	memset(small, 's', sizeof(small));
	capture_stderr();
	af = atomic_file__open(path);
	if (af) {
		f = atomic_file__stream(af);
		/* Buffered: this cannot fail yet. */
		if (fwrite(small, 1, sizeof(small), f) == sizeof(small))
			err = atomic_file__commit(af, sizeof(small));
	}
	atomic_file__free(af);
	msg = restore_stderr();
	ASSERT_EQ(err, -ENOSPC, "flush at commit: ENOSPC");
	ASSERT_STRCONTAINS(msg, "disk full", "message says the disk is full");
	ASSERT_STRCONTAINS(msg, path, "message names the file");
	ASSERT_EQ(count_files(mnt), 1, "only the filler left");
	unlink(filler);
	unlink(path);
}

static void xspace_on_full_disk(const char *mnt)
{
	struct capture_opts opts = {
		.sz = sizeof(opts), .hostname = "tpu-host", .session = "run",
	};
	struct capture *c = capture__new(&opts);
	char logdir[700], want[800], *msg;
	struct xspace_written got;
	uint32_t name;
	int t, err;

	if (!ASSERT_OK_PTR(c, "capture"))
		return;
	t = capture__host_track(c, 1, 1);
	name = capture__intern(c, "op");
	for (int i = 0; i < 50000; i++) {
		struct capture_span s = {
			.start_ns = 1000 + 10 * i, .end_ns = 1005 + 10 * i,
			.track = t, .kind = SPAN_HOST_OTHER, .name = name,
		};

		capture__add_span(c, &s);
	}
	capture__set_window(c, 1000, 1000 + 10 * 50000);
	ASSERT_OK(capture__finalize(c), "finalize");

	snprintf(logdir, sizeof(logdir), "%s/logs", mnt);
	snprintf(want, sizeof(want), "%s/plugins/profile/run/tpu-host.xplane.pb", logdir);
	capture_stderr();
	err = xspace_write_capture(c, logdir, &got);
	msg = restore_stderr();
	ASSERT_EQ(err, -ENOSPC, "XSpace onto a full disk: ENOSPC");
	ASSERT_STRCONTAINS(msg, "disk full", "XSpace message says the disk is full");
	ASSERT_STRCONTAINS(msg, want, "XSpace message names the capture file");
	ASSERT_TRUE(access(want, F_OK) && errno == ENOENT, "no capture file");
	ASSERT_EQ(count_files(mnt), 0, "no partial or temporary file");
	capture__free(c);
}

static int child(void)
{
	char mnt[600];

	if (unshare(CLONE_NEWNS)) {
		printf("SKIP: unshare(CLONE_NEWNS): %s\n", strerror(errno));
		return TEST_SKIP;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		printf("SKIP: making mounts private: %s\n", strerror(errno));
		return TEST_SKIP;
	}
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	mkdir(mnt, 0700);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=64k,mode=0700")) {
		printf("SKIP: mount tmpfs: %s\n", strerror(errno));
		return TEST_SKIP;
	}
	snprintf(errfile, sizeof(errfile), "%s/stderr", dir);
	write_big(mnt);
	write_at_flush(mnt);
	xspace_on_full_disk(mnt);
	umount(mnt);
	return test_exit();
}

int main(void)
{
	char cmd[600];
	int status, rc;
	pid_t pid;

	test_require_root("mounting a small tmpfs in a private mount namespace");
	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(child());
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		rc = 1;
	else
		rc = WEXITSTATUS(status);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return rc;
}
