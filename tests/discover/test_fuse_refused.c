// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A file on FUSE, whose server stops answering, mapped by a traced process
 * (this one): acceltrace refuses it without asking the file system
 * anything. A minimal FUSE server (a thread speaking the kernel's protocol
 * on /dev/fuse, in this test's own mount namespace) serves one file, a
 * devtrace buffer by its first bytes, until the file is mapped (readable
 * and executable, as a runtime library or a buffer would be); then it
 * answers nothing more and counts what it is asked. Opening the file by
 * its mapping (proc_map__open), as a devtrace buffer (mapped_file_open),
 * and the buffer search over the process must each end at once with a
 * refusal, and the server must have been asked nothing: no getattr, no
 * statfs, no read, any of which would hang acceltrace on a server that
 * does not answer. Root only (mount, /dev/fuse, map_files).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/fuse.h>

#include "test.h"
#include "acceltrace/devtrace.h"
#include "discover/devtrace_buffers.h"
#include "discover/mapped_files.h"
#include "discover/proc_maps.h"

#define FILE_INO 2
#define FILE_SIZE 4096

static int fuse_fd = -1;
static volatile int answering = 1;
static volatile int asked_after;	/* requests once it stopped answering */

static void reply(uint64_t unique, int error, const void *body, size_t len)
{
	char buf[sizeof(struct fuse_out_header) + 256];
	struct fuse_out_header *h = (void *)buf;

	h->len = sizeof(*h) + len;
	h->error = error;
	h->unique = unique;
	memcpy(buf + sizeof(*h), body, len);
	if (write(fuse_fd, buf, h->len) < 0)
		return;	/* the kernel gave up on the request */
}

static void fill_attr(struct fuse_attr *a, uint64_t nodeid)
{
	memset(a, 0, sizeof(*a));
	a->ino = nodeid;
	a->mode = nodeid == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0755;
	a->nlink = 1;
	a->size = nodeid == FUSE_ROOT_ID ? 0 : FILE_SIZE;
	a->blksize = 4096;
}

static void serve(const struct fuse_in_header *in, const void *arg)
{
	switch (in->opcode) {
	case FUSE_INIT: {
		struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
					   .minor = FUSE_KERNEL_MINOR_VERSION,
					   .max_write = 4096, .max_readahead = 0 };

		reply(in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out o = { .nodeid = FILE_INO };

		if (strcmp(arg, "buffer")) {
			reply(in->unique, -ENOENT, NULL, 0);
			break;
		}
		fill_attr(&o.attr, FILE_INO);
		reply(in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out o = {};	/* attr_valid 0: never cached */

		fill_attr(&o.attr, in->nodeid);
		reply(in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_OPEN: {
		struct fuse_open_out o = { .fh = 1 };

		reply(in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_READ: {
		char page[256] = {};
		uint64_t magic = DEVTRACE_MAGIC;

		memcpy(page, &magic, sizeof(magic));
		reply(in->unique, 0, page, sizeof(page));
		break;
	}
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		break;		/* no reply */
	case FUSE_FLUSH:
	case FUSE_RELEASE:
		reply(in->unique, 0, NULL, 0);
		break;
	default:
		reply(in->unique, -ENOSYS, NULL, 0);
	}
}

static volatile int stop;

static void *server(void *unused)
{
	static char buf[1 << 17];

	(void)unused;
	while (!stop) {
		struct pollfd pfd = { .fd = fuse_fd, .events = POLLIN };
		const struct fuse_in_header *in = (void *)buf;
		ssize_t n;

		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = read(fuse_fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(*in))
			return NULL;	/* unmounted: the connection is gone */
		if (!answering) {
			/* The file's release at the traced process's exit is
			 * sent in the background: nobody waits on it. */
			if (in->opcode != FUSE_FORGET && in->opcode != FUSE_BATCH_FORGET &&
			    in->opcode != FUSE_INTERRUPT && in->opcode != FUSE_RELEASE) {
				asked_after++;
				fprintf(stderr, "the silent server was asked: opcode %u\n",
					in->opcode);
			}
			continue;
		}
		serve(in, buf + sizeof(*in));
	}
	return NULL;
}

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

	close(fuse_fd);		/* the parent's alone: closing it ends the connection */
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
	ASSERT_EQ(mapped_file_open(getpid(), link, DEVTRACE_MAGIC, 8, NULL, NULL, &st), -ENOTSUP,
		  "as a devtrace buffer: refused");
	ASSERT_GE(devtrace_buffers_find(getpid(), NULL, count_found, &found), 0,
		  "the buffer search over this process ends");
	ASSERT_EQ(found, 0, "and finds nothing on FUSE");
	proc_maps__free(maps);
	return test_exit();
}

int main(void)
{
	char dir[] = "/tmp/acceltrace-fuse.XXXXXX", mnt[64], file[80], opts[128], c;
	int up[2], down[2], status = 0;
	bool finished = false;
	pthread_t th;
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
	fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other",
		 fuse_fd);
	if (!ASSERT_GE(fuse_fd, 0, "/dev/fuse") || !ASSERT_OK(mkdir(mnt, 0755), "mkdir") ||
	    !ASSERT_OK(mount("acceltrace-test", mnt, "fuse", MS_NOSUID | MS_NODEV, opts),
		       "mount FUSE") ||
	    !ASSERT_OK(pipe(up), "pipe") || !ASSERT_OK(pipe(down), "pipe"))
		goto out;
	pthread_create(&th, NULL, server, NULL);
	child = fork();
	if (child == 0)
		_exit(traced(file, up[1], down[0]));
	if (ASSERT_EQ(read(up[0], &c, 1), 1, "the file is mapped")) {
		answering = 0;
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
	stop = 1;
	pthread_join(th, NULL);
	close(fuse_fd);
	if (!finished)
		waitpid(child, &status, 0);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "its checks held");
	ASSERT_EQ(asked_after, 0, "the FUSE server was asked nothing");
	umount2(mnt, MNT_DETACH);
out:
	rmdir(mnt);
	rmdir(dir);
	return test_exit();
}
