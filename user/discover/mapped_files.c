// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Shared files of a process, found through /proc and opened once by inode
 * (mapped_files.h): through /proc/PID/map_files and /proc/PID/fd, the
 * kernel's links to the files themselves, so no name the process controls
 * is looked up (a container's files are reached in its own mount namespace,
 * an unlinked one is still found).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "discover/mapped_files.h"
#include "discover/proc_maps.h"
#include "discover/procfs.h"
#include "discover/safe_open.h"

int mapped_file_open(pid_t pid, const struct mapped_file *f, uint64_t magic, off_t min_size,
		     int (*skip)(void *ctx, int path_fd, const struct stat *st), void *ctx,
		     struct stat *st)
{
	struct safe_open_want want = { .min_size = min_size, .mounts = f->mounts };
	uint64_t head = 0;
	int fd, pfd;

	/* Looked at without opening it (O_PATH runs no driver's open), read
	 * only if a regular file on a local file system: that same inode. */
	pfd = safe_open(pid, f->open_path, &want, st);
	if (pfd < 0)
		return pfd;
	if (skip && skip(ctx, pfd, st)) {
		close(pfd);
		return -EEXIST;
	}
	fd = safe_reopen(pfd, O_RDONLY);
	close(pfd);
	if (fd < 0)
		return fd;
	if (pread(fd, &head, sizeof(head), 0) != sizeof(head) || head != magic) {
		close(fd);	/* or not created yet: a later rescan sees it */
		return -ENOTSUP;
	}
	return fd;
}

struct walk {
	pid_t pid;
	void (*fn)(void *ctx, const struct mapped_file *f);
	void *ctx;
	const struct mount_table *mounts;
};

static int walk_fd(void *ctx, int fd, const char *target)
{
	struct walk *w = ctx;
	struct mapped_file f = { .path = target, .mounts = w->mounts };
	char p[64];

	if (target[0] != '/' || !strncmp(target, "/dev/", 5))
		return 0;	/* sockets, pipes, device nodes */
	snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)w->pid, fd);
	f.open_path = p;
	w->fn(w->ctx, &f);
	return 0;
}

int mapped_files_for_each(pid_t pid, void (*fn)(void *ctx, const struct mapped_file *f),
			  void *ctx)
{
	struct proc_maps *maps = proc_maps__read(pid);
	/* One read of the process's mounts for every file of the walk. */
	struct mount_table *mounts = procfs_mount_table(pid);
	struct walk w = { .pid = pid, .fn = fn, .ctx = ctx, .mounts = mounts };
	char p[96];
	int err;

	if (!maps) {
		err = -errno;
		mount_table__free(mounts);
		return err;
	}
	/* A shared file is data, never mapped executable. */
	for (size_t i = 0; i < proc_maps__count(maps); i++) {
		const struct proc_map *m = proc_maps__get(maps, i);
		struct mapped_file f = { .open_path = p, .path = m->path, .mounts = mounts };

		if (!proc_map__is_file(m) || m->x || m->path[0] != '/')
			continue;
		/* The mapping's own link: the mapped file, whatever its
		 * name says now, in a container or deleted. */
		snprintf(p, sizeof(p), "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)m->start, (unsigned long long)m->end);
		fn(ctx, &f);
	}
	proc_maps__free(maps);
	err = procfs_for_each_fd(pid, walk_fd, &w);
	mount_table__free(mounts);
	return err < 0 ? err : 0;
}
