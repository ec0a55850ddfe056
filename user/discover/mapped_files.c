// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Shared files of a process, found through /proc and opened once by inode
 * (mapped_files.h). Paths are opened through /proc/PID/root so a process in
 * a container is read in its own mount namespace, and through
 * /proc/PID/map_files or /proc/PID/fd so a file whose name was unlinked is
 * still found.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "discover/mapped_files.h"
#include "discover/proc_maps.h"
#include "discover/procfs.h"

/* FUSE, NFS, SMB, 9P, Ceph: served by a process or over a network. */
static bool remote_fs(int path_fd)
{
	static const unsigned long remote[] = {
		0x65735546, 0x6969, 0xff534d42, 0xfe534d42, 0x517b, 0x01021997, 0x00c36400,
	};
	struct statfs sf;

	/* statfs on FUSE asks its daemon too; the magic is told by the
	 * kernel for every other file system, before any read. */
	if (fstatfs(path_fd, &sf))
		return true;
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if ((unsigned long)sf.f_type == remote[i])
			return true;
	return false;
}

int mapped_file_open(const char *open_path, uint64_t magic, off_t min_size,
		     int (*skip)(void *ctx, int path_fd, const struct stat *st), void *ctx,
		     struct stat *st)
{
	uint64_t head = 0;
	char self[64];
	int fd, pfd, err;

	/* Look at what the path names without opening it (O_PATH runs no
	 * driver's open), and open only a regular file, that same inode. */
	pfd = open(open_path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st) || !S_ISREG(st->st_mode) || st->st_size < min_size) {
		close(pfd);
		return -ENOTSUP;
	}
	if (skip && skip(ctx, pfd, st)) {
		close(pfd);
		return -EEXIST;
	}
	if (remote_fs(pfd)) {
		close(pfd);
		return -ENOTSUP;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	err = -errno;
	close(pfd);
	if (fd < 0)
		return err;
	if (pread(fd, &head, sizeof(head), 0) != sizeof(head) || head != magic) {
		close(fd);	/* or not created yet: a later rescan sees it */
		return -ENOTSUP;
	}
	return fd;
}

struct walk {
	pid_t pid;
	void (*fn)(void *ctx, const char *open_path, const char *path);
	void *ctx;
};

static int walk_fd(void *ctx, int fd, const char *target)
{
	struct walk *w = ctx;
	char p[64];

	if (target[0] != '/' || !strncmp(target, "/dev/", 5))
		return 0;	/* sockets, pipes, device nodes */
	snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)w->pid, fd);
	w->fn(w->ctx, p, target);
	return 0;
}

int mapped_files_for_each(pid_t pid,
			  void (*fn)(void *ctx, const char *open_path, const char *path),
			  void *ctx)
{
	struct walk w = { .pid = pid, .fn = fn, .ctx = ctx };
	struct proc_maps *maps = proc_maps__read(pid);
	char p[4200];
	int err;

	if (!maps)
		return -errno;
	/* A shared file is data, never mapped executable. */
	for (size_t i = 0; i < proc_maps__count(maps); i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		if (!proc_map__is_file(m) || m->x || m->path[0] != '/')
			continue;
		if (m->deleted)
			snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", (int)pid,
				 (unsigned long long)m->start, (unsigned long long)m->end);
		else
			snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, m->path);
		fn(ctx, p, m->path);
	}
	proc_maps__free(maps);
	err = procfs_for_each_fd(pid, walk_fd, &w);
	return err < 0 ? err : 0;
}
