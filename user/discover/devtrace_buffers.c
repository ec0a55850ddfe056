// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Devtrace buffers of a process, found through /proc (see
 * devtrace_buffers.h): opened through the kernel's links to its mappings
 * and fds (mapped_files.h), so a process in a container is read in its own
 * mount namespace and a buffer whose name was unlinked is still found.
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
#include "discover/mapped_files.h"
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

static int already_seen(void *ctx, int path_fd, const struct stat *st)
{
	struct devtrace_seen *seen = ctx;

	(void)path_fd;
	/* A buffer already found costs no second open or read. */
	return seen && hashmap__get(seen->files, st->st_dev, st->st_ino) != NULL;
}

static int check_open(struct devtrace_seen *seen, pid_t pid, const struct mapped_file *f)
{
	struct stat st;
	int fd = mapped_file_open(pid, f, DEVTRACE_MAGIC, DEVTRACE_HEADER_SIZE, already_seen,
				  seen, &st);

	if (fd < 0)
		return fd;
	if (seen && hashmap__put(seen->files, st.st_dev, st.st_ino, (void *)1, NULL)) {
		close(fd);
		return -ENOMEM;
	}
	return fd;
}

int devtrace_buffer_open(struct devtrace_seen *seen, const char *path)
{
	struct mapped_file f = { .open_path = path, .path = path };

	return check_open(seen, 0, &f);
}

struct find_ctx {
	pid_t pid;
	struct devtrace_seen *seen;
	int (*fn)(void *ctx, int fd, const char *path);
	void *ctx;
	int found;
};

static void offer(void *ctx, const struct mapped_file *m)
{
	struct find_ctx *f = ctx;
	int fd = check_open(f->seen, f->pid, m);

	if (fd < 0)
		return;
	f->found++;
	f->fn(f->ctx, fd, m->path);
}

int devtrace_buffers_find(pid_t pid, struct devtrace_seen *seen,
			  int (*fn)(void *ctx, int fd, const char *path), void *ctx)
{
	struct find_ctx f = { .pid = pid, .seen = seen, .fn = fn, .ctx = ctx };
	int err = mapped_files_for_each(pid, offer, &f);

	if (err < 0 && !f.found)
		return err;
	return f.found;
}
