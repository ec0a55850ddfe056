// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Devtrace buffers of a process, found through /proc (see
 * devtrace_buffers.h). Paths are opened through /proc/PID/root so a
 * process in a container is read in its own mount namespace, and fds
 * through /proc/PID/fd so a buffer whose name was unlinked is still found.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/types.h>

#include "acceltrace/devtrace.h"
#include "discover/devtrace_buffers.h"
#include "discover/proc_maps.h"
#include "discover/procfs.h"
#include "lib/hashmap.h"

struct devtrace_seen {
	struct hashmap *files;	/* (dev, ino) -> marker */
};

struct devtrace_seen *devtrace_seen__new(void)
{
	struct devtrace_seen *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->files = hashmap__new();
	if (!s->files) {
		free(s);
		return NULL;
	}
	return s;
}

void devtrace_seen__free(struct devtrace_seen *s)
{
	if (!s)
		return;
	hashmap__free(s->files, NULL);
	free(s);
}

void devtrace_seen__forget(struct devtrace_seen *s, dev_t dev, ino_t ino)
{
	if (s)
		hashmap__remove(s->files, dev, ino);
}

static int check_open(struct devtrace_seen *seen, const char *open_path)
{
	__u64 magic = 0;
	struct stat st;
	char self[64];
	int fd, pfd, err;

	/*
	 * The path comes from a traced process (its maps, its fds) and may be
	 * swapped for a link to a device node at any time: look at what it
	 * names without opening it (O_PATH runs no driver's open), and open
	 * only a regular file, that same inode.
	 */
	pfd = open(open_path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size < DEVTRACE_HEADER_SIZE) {
		close(pfd);
		return -ENOTSUP;
	}
	/* A buffer already found costs no second open or read. */
	if (seen && hashmap__get(seen->files, st.st_dev, st.st_ino)) {
		close(pfd);
		return -EEXIST;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	err = -errno;
	close(pfd);
	if (fd < 0)
		return err;
	if (pread(fd, &magic, sizeof(magic), 0) != sizeof(magic) || magic != DEVTRACE_MAGIC) {
		err = -ENOTSUP;	/* or not created yet: a later rescan sees it */
		goto fail;
	}
	if (seen && hashmap__put(seen->files, st.st_dev, st.st_ino, (void *)1, NULL)) {
		err = -ENOMEM;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

int devtrace_buffer_open(struct devtrace_seen *seen, const char *path)
{
	return check_open(seen, path);
}

struct find_ctx {
	pid_t pid;
	struct devtrace_seen *seen;
	int (*fn)(void *ctx, int fd, const char *path);
	void *ctx;
	int found;
};

static void offer(struct find_ctx *f, const char *open_path, const char *path)
{
	int fd = check_open(f->seen, open_path);

	if (fd < 0)
		return;
	f->found++;
	f->fn(f->ctx, fd, path);
}

static int offer_fd(void *ctx, int fd, const char *target)
{
	struct find_ctx *f = ctx;
	char p[64];

	if (target[0] != '/' || !strncmp(target, "/dev/", 5))
		return 0;	/* sockets, pipes, device nodes */
	snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)f->pid, fd);
	offer(f, p, target);
	return 0;
}

int devtrace_buffers_find(pid_t pid, struct devtrace_seen *seen,
			  int (*fn)(void *ctx, int fd, const char *path), void *ctx)
{
	struct find_ctx f = { .pid = pid, .seen = seen, .fn = fn, .ctx = ctx };
	struct proc_maps *maps = proc_maps__read(pid);
	char p[4200];
	int err;

	if (!maps)
		return -errno;
	/* A buffer is a data file, never mapped executable. */
	for (size_t i = 0; i < proc_maps__count(maps); i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		if (!proc_map__is_file(m) || m->x || m->path[0] != '/')
			continue;
		if (m->deleted)
			snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", (int)pid,
				 (unsigned long long)m->start, (unsigned long long)m->end);
		else
			snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, m->path);
		offer(&f, p, m->path);
	}
	proc_maps__free(maps);
	err = procfs_for_each_fd(pid, offer_fd, &f);
	if (err < 0 && !f.found)
		return err;
	return f.found;
}
