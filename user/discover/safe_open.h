/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Opening, as root, a file a traced process names: a library it maps, a
 * buffer it shares, a path in its environment. The name is the process's
 * to change at any moment, and what it names may be a FIFO (an open that
 * never returns), a device node (a driver's open runs), or a file a FUSE
 * or network server answers for (any call on it may hang). So the name is
 * resolved once, with O_PATH (nothing is opened, no driver runs), and the
 * descriptor is checked before anything reads through it: on a local file
 * system (told by the mount's type in /proc, which asks no file system), a
 * regular file, the (dev, inode) the caller expects. Every later step
 * (reads, a uprobe's attach through "/proc/self/fd/N") uses that one
 * descriptor, so no second lookup can reach another file.
 */
#ifndef ACCELTRACE_SAFE_OPEN_H
#define ACCELTRACE_SAFE_OPEN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct mount_table;

/* What the file must be, beyond a regular file on a local file system. */
struct safe_open_want {
	off_t min_size;		/* at least this many bytes */
	bool same_file;		/* and this (dev, ino): what /proc/PID/maps said */
	uint64_t dev, ino;
	/* The process's mount table, read once for many files (procfs.h);
	 * NULL: read for this one. */
	const struct mount_table *mounts;
};

/*
 * Opens @path with O_PATH and checks it: @path is a link /proc resolves to
 * the file itself (/proc/PID/map_files/START-END, /proc/PID/fd/N) or a
 * path acceltrace was given. @pid (0: acceltrace) is the process whose
 * mount namespace the file lies in. @want may be NULL; @st gets the file's
 * stat. Returns the O_PATH descriptor, or -errno: -ENOTSUP when it is not
 * a regular file on a local file system (or is smaller than asked),
 * -ESTALE when it is another file than @want's, or the open's error.
 */
int safe_open(pid_t pid, const char *path, const struct safe_open_want *want,
	      struct stat *st);

/*
 * The same for @path as process @pid sees it (an absolute path from its
 * environment): resolved inside its root directory, where ".." and
 * absolute symbolic links stay, and through no /proc magic link.
 */
int safe_open_in_root(pid_t pid, const char *path, const struct safe_open_want *want,
		      struct stat *st);

/*
 * Opens the file @path_fd (from safe_open) names, with @flags (O_RDONLY,
 * O_RDWR; O_NONBLOCK and O_NOCTTY are added): the same inode, no name
 * looked up again. The descriptor, or -errno.
 */
int safe_reopen(int path_fd, int flags);

/* Whether files of @fstype (mountinfo's name) are served by the kernel
 * from local storage or memory, not by a process or over a network. */
bool safe_open_fstype_local(const char *fstype);

#endif /* ACCELTRACE_SAFE_OPEN_H */
