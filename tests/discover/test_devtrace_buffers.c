// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Devtrace buffers found by their magic alone: one this process maps, one
 * it only has open (its name unlinked), none among its other files; each
 * handed over once across rescans; an explicit path that is not a buffer
 * refused.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <linux/types.h>

#include "test.h"
#include "acceltrace/devtrace.h"
#include "discover/devtrace_buffers.h"

static char dir[] = "/tmp/acceltrace-dtfind.XXXXXX";

static int make_file(const char *name, __u64 magic, char *path, size_t len)
{
	static char zero[DEVTRACE_HEADER_SIZE * 2];
	int fd;

	snprintf(path, len, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	if (write(fd, zero, sizeof(zero)) != sizeof(zero) ||
	    pwrite(fd, &magic, sizeof(magic), 0) != sizeof(magic)) {
		close(fd);
		return -1;
	}
	return fd;
}

struct found {
	int n;
	char last[256];
};

static int take(void *ctx, int fd, const char *path)
{
	struct found *f = ctx;

	f->n++;
	snprintf(f->last, sizeof(f->last), "%s", path);
	close(fd);
	return 0;
}

int main(void)
{
	char mapped[256], opened[256], other[256];
	struct devtrace_seen *seen = NULL;
	struct found f = {};
	int fd_map, fd_open, fd_other;
	void *m;

	if (!mkdtemp(dir))
		return 1;
	fd_map = make_file("core0.devtrace", DEVTRACE_MAGIC, mapped, sizeof(mapped));
	fd_open = make_file("unlinked.devtrace", DEVTRACE_MAGIC, opened, sizeof(opened));
	fd_other = make_file("data.bin", 0x1234, other, sizeof(other));
	if (!ASSERT_GE(fd_map, 0, "files") || !ASSERT_GE(fd_open, 0, "files") ||
	    !ASSERT_GE(fd_other, 0, "files"))
		goto out;
	m = mmap(NULL, DEVTRACE_HEADER_SIZE * 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd_map, 0);
	if (!ASSERT_TRUE(m != MAP_FAILED, "mmap"))
		goto out;
	close(fd_map);		/* mapped only */
	unlink(opened);		/* open only, and its name gone */
	seen = devtrace_seen__new();
	if (!ASSERT_OK_PTR(seen, "seen"))
		goto out;
	ASSERT_EQ(devtrace_buffers_find(getpid(), seen, take, &f), 2, "both found");
	ASSERT_EQ(f.n, 2, "both handed over");
	f.n = 0;
	ASSERT_EQ(devtrace_buffers_find(getpid(), seen, take, &f), 0, "once each");
	ASSERT_EQ(devtrace_buffer_open(seen, mapped), -EEXIST, "explicit path already seen");
	ASSERT_EQ(devtrace_buffer_open(seen, other), -ENOTSUP, "not a buffer");
	ASSERT_EQ(devtrace_buffer_open(seen, "/nonexistent/x"), -ENOENT, "missing file");
	ASSERT_EQ(devtrace_buffers_find(999999999, seen, take, &f) < 0, 1, "no such process");
	munmap(m, DEVTRACE_HEADER_SIZE * 2);
out:
	devtrace_seen__free(seen);
	if (fd_open >= 0)
		close(fd_open);
	if (fd_other >= 0)
		close(fd_other);
	unlink(mapped);
	unlink(other);
	rmdir(dir);
	return test_exit();
}
