/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Files a traced process shares with acceltrace by a magic number in
 * their first 8 bytes (devtrace buffers, the agent's control page): every
 * regular file the process maps (not executable) or has open, found
 * through /proc and opened once, safely: the path is the process's to
 * change at any moment, so what it names is looked at through O_PATH (no
 * driver's open runs), must be a regular file, and that same inode is
 * opened.
 */
#ifndef ACCELTRACE_MAPPED_FILES_H
#define ACCELTRACE_MAPPED_FILES_H

#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* A candidate file of a process, as mapped_files_for_each() offers it. */
struct mapped_file {
	const char *open_path;	/* /proc/PID/map_files/START-END or /proc/PID/fd/N */
	const char *path;	/* the name the process knows it by */
	/* The process's mount table, read once for the walk (NULL: read
	 * when needed). */
	const struct mount_table *mounts;
};

/*
 * Opens @f's open_path read only if it is a regular file of at least
 * @min_size bytes on a local file system whose first 8 bytes are @magic
 * (safe_open.h: looked at through O_PATH first; @pid, 0 for acceltrace,
 * the process whose mount table tells the file system); @st gets its
 * stat. The fd, or -errno: -ENOTSUP not such a file (or on a file system a
 * process or a network serves, whose reads could hang the caller); @skip
 * (may be NULL), given the file's O_PATH descriptor and stat, said to skip
 * it (-EEXIST) before anything was opened or read.
 */
int mapped_file_open(pid_t pid, const struct mapped_file *f, uint64_t magic, off_t min_size,
		     int (*skip)(void *ctx, int path_fd, const struct stat *st), void *ctx,
		     struct stat *st);

/*
 * Calls @fn with each candidate file of @pid: every regular file it maps
 * (not executable) or has open. Returns 0, or -errno when the process
 * cannot be examined at all.
 */
int mapped_files_for_each(pid_t pid, void (*fn)(void *ctx, const struct mapped_file *f),
			  void *ctx);

#endif /* ACCELTRACE_MAPPED_FILES_H */
