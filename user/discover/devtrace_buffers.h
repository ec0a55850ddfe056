/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finds a process's devtrace buffers (docs/devtrace.md) by the format's ABI
 * alone, not by where any one producer puts them: every regular file the
 * process has mapped or open whose first 8 bytes are DEVTRACE_MAGIC. A
 * buffer a driver exposes elsewhere (debugfs) is named with
 * `record --devtrace PATH` instead.
 */
#ifndef ACCELTRACE_DEVTRACE_BUFFERS_H
#define ACCELTRACE_DEVTRACE_BUFFERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct devtrace_seen;

/* Files already handed over, by (dev, ino), so rescans add each once. */
struct devtrace_seen *devtrace_seen__new(void);
void devtrace_seen__free(struct devtrace_seen *s);
/* The file (@dev, @ino) was let go: a later rescan may hand it over again
 * (a new process mapping it). */
void devtrace_seen__forget(struct devtrace_seen *s, dev_t dev, ino_t ino);

/*
 * Opens @path (read only) if it is a devtrace buffer not seen yet: the fd,
 * or -errno (-ENOTSUP: not a devtrace buffer; -EEXIST: seen).
 */
int devtrace_buffer_open(struct devtrace_seen *seen, const char *path);

/*
 * Calls @fn with each new devtrace buffer @pid maps or has open: an fd the
 * callee owns from then on, and the file's path. The number found, or
 * -errno when the process cannot be examined.
 */
int devtrace_buffers_find(pid_t pid, struct devtrace_seen *seen,
			  int (*fn)(void *ctx, int fd, const char *path), void *ctx);

#endif /* ACCELTRACE_DEVTRACE_BUFFERS_H */
