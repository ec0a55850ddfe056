// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A file on FUSE, whose server stops answering, mapped by a traced process
 * (a child of this test): acceltrace refuses it without asking the file
 * system anything. A minimal FUSE server (tests/harness/fuse_server.h, in
 * this test's own mount namespace) serves one file, a devtrace buffer by
 * its first bytes, until the child has mapped it (readable and executable,
 * as a runtime library or a buffer would be); then it answers nothing more
 * and counts what it is asked. Opening the file by its mapping
 * (proc_map__open), as a devtrace buffer (mapped_file_open), and the
 * buffer search over the child must each end at once with a refusal, and
 * the server must have been asked nothing: no getattr, no statfs, no read,
 * any of which would hang acceltrace on a server that does not answer
 * (a statfs leaves it in D state until the connection is aborted, which
 * this test does after ten seconds, so that it fails rather than hangs).
 * Root only (mount, /dev/fuse, map_files).
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "test.h"
#include "fuse_server.h"
#include "acceltrace/devtrace.h"
#include "discover/devtrace_buffers.h"
#include "discover/mapped_files.h"
#include "discover/proc_maps.h"

#define FILE_SIZE 4096

static struct fuse_server server = { .fd = -1, .size = FILE_SIZE };

static int count_found(void *ctx, int fd, const char *path)
{
	(void)path;
	close(fd);
	(*(int *)ctx)++;
	return 0;
}

/* The traced process: maps the file, says so, waits for the server to go
 * silent, then looks at it as acceltrace does. Its exit: test_exit(). */
static int traced(const char *file, int to_parent, int from_parent)
{
	const struct proc_map *m = NULL;
	struct proc_maps *maps;
	char link[96], c;
	struct stat st;
	int fd, found = 0;
	void *p;

	close(server.fd);	/* the parent's alone: closing it ends the connection */
	fd = open(file, O_RDONLY | O_CLOEXEC);
	p = fd >= 0 ? mmap(NULL, FILE_SIZE, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	if (fd >= 0)
		close(fd);
	if (!ASSERT_TRUE(p != MAP_FAILED, "the FUSE file mapped"))
		return test_exit();
	maps = proc_maps__read(0);
	m = maps ? proc_maps__find(maps, (uintptr_t)p) : NULL;
	if (!ASSERT_OK_PTR(m, "its mapping"))
		return test_exit();
	if (write(to_parent, "m", 1) != 1 || read(from_parent, &c, 1) != 1)
		return 1;
	/* From now on, every request would wait forever. */
	ASSERT_EQ(proc_map__open(0, m, &st), -ENOTSUP, "opened by its mapping: refused");
	snprintf(link, sizeof(link), "/proc/self/map_files/%llx-%llx",
		 (unsigned long long)m->start, (unsigned long long)m->end);
	ASSERT_EQ(mapped_file_open(getpid(), &(struct mapped_file){ .open_path = link, .path = file },
				   DEVTRACE_MAGIC, 8, NULL, NULL, &st), -ENOTSUP,
		  "as a devtrace buffer: refused");
	ASSERT_GE(devtrace_buffers_find(getpid(), NULL, count_found, &found), 0,
		  "the buffer search over this process ends");
	ASSERT_EQ(found, 0, "and finds nothing on FUSE");
	proc_maps__free(maps);
	return test_exit();
}

int main(void)
{
	char dir[] = "/tmp/acceltrace-fuse.XXXXXX", mnt[64], file[80], c;
	uint64_t magic = DEVTRACE_MAGIC;
	int up[2], down[2], status = 0;
	bool finished = false;
	pid_t child;

	test_require_root("mounts a FUSE file system and reads /proc/PID/map_files");
	if (access("/dev/fuse", R_OK | W_OK)) {
		printf("SKIP: no /dev/fuse\n");
		return TEST_SKIP;
	}
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		printf("SKIP: no private mount namespace: %s\n", strerror(errno));
		return TEST_SKIP;
	}
	if (!mkdtemp(dir))
		return TEST_SKIP;
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	snprintf(file, sizeof(file), "%s/buffer", mnt);
	memcpy(server.head, &magic, sizeof(magic));
	if (!ASSERT_OK(fuse_server_start(&server, mnt), "mount and serve FUSE") ||
	    !ASSERT_OK(pipe(up), "pipe") || !ASSERT_OK(pipe(down), "pipe"))
		goto out;
	child = fork();
	if (child == 0)
		_exit(traced(file, up[1], down[0]));
	if (ASSERT_EQ(read(up[0], &c, 1), 1, "the file is mapped")) {
		server.silent = 1;
		ASSERT_EQ(write(down[1], "g", 1), 1, "go");
		/* Ten seconds to look, where a request would wait forever. */
		for (int i = 0; i < 1000 && !finished; i++) {
			finished = waitpid(child, &status, WNOHANG) == child;
			if (!finished)
				usleep(10 * 1000);
		}
		ASSERT_TRUE(finished, "acceltrace's look ended without waiting on the server");
	}
	/* Ends the connection: a request still waiting fails, the child ends. */
	fuse_server_stop(&server);
	if (!finished)
		waitpid(child, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "its checks held");
	ASSERT_EQ(server.asked_silent, 0, "the FUSE server was asked nothing");
out:
	fuse_server_stop(&server);
	rmdir(dir);
	return test_exit();
}
