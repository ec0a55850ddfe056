// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Files a traced process names, opened once and checked: see safe_open.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#define LOG_CONTEXT "open"
#include "lib/log.h"
#include "discover/procfs.h"
#include "discover/safe_open.h"

/*
 * File systems whose files the kernel serves from a local disk or from
 * memory. Anything else (fuse.*, nfs, cifs, 9p, ceph, virtiofs...) is
 * served by a process or over a network: a read may never return.
 * debugfs and sysfs: where drivers expose their devtrace buffers.
 */
static const char *const local_fstypes[] = {
	"ext2", "ext3", "ext4", "xfs", "btrfs", "bcachefs", "f2fs", "zfs", "jfs",
	"vfat", "exfat", "tmpfs", "ramfs", "overlay", "squashfs", "erofs", "iso9660",
	"debugfs", "sysfs", "tracefs",
};

bool safe_open_fstype_local(const char *fstype)
{
	for (size_t i = 0; i < sizeof(local_fstypes) / sizeof(local_fstypes[0]); i++)
		if (!strcmp(fstype, local_fstypes[i]))
			return true;
	return false;
}

/*
 * The type of the file system @path_fd lies on, without a call into that
 * file system (statfs on FUSE asks its server): the mount's id from statx
 * (AT_STATX_DONT_SYNC: cached attributes, no FUSE or NFS request), its type
 * from @mounts, else from the mount table of @pid, else of acceltrace's
 * namespace. 0, or -errno (-ENOENT: in no table).
 */
static int fstype_of(pid_t pid, int path_fd, const struct mount_table *mounts,
		     char *fstype, size_t len)
{
	const char *type = NULL;
	struct statx stx;

	if (statx(path_fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx))
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -ENOTSUP;	/* before 5.8: cannot tell */
	type = mount_table__type(mounts, stx.stx_mnt_id);
	if (type) {
		snprintf(fstype, len, "%s", type);
		return 0;
	}
	/* Not in the table given (mounted since), or none given: the
	 * process's namespace, then acceltrace's. */
	for (int i = 0; i < (pid ? 2 : 1); i++) {
		struct mount_table *t = procfs_mount_table(i ? 0 : pid);

		type = mount_table__type(t, stx.stx_mnt_id);
		if (type)
			snprintf(fstype, len, "%s", type);
		mount_table__free(t);
		if (type)
			return 0;
	}
	return -ENOENT;
}

/* The checks of safe_open() on an O_PATH descriptor: 0 or -errno. */
static int check(pid_t pid, int pfd, const char *path, const struct safe_open_want *want,
		 struct stat *st)
{
	char fstype[64];
	int err = fstype_of(pid, pfd, want ? want->mounts : NULL, fstype, sizeof(fstype));

	if (err) {
		log_debug("%s: cannot tell its file system: %s", path, strerror(-err));
		return -ENOTSUP;
	}
	if (!safe_open_fstype_local(fstype)) {
		log_debug("%s: on a %s file system, not read", path, fstype);
		return -ENOTSUP;
	}
	/* Local: a stat cannot hang now. */
	if (fstat(pfd, st))
		return -errno;
	if (!S_ISREG(st->st_mode) || (want && st->st_size < want->min_size))
		return -ENOTSUP;
	if (!want || !want->same_file)
		return 0;
	if (st->st_ino != want->ino)
		return -ESTALE;
	/* Kernels before 6.8 link an overlayfs mapping to the overlay file,
	 * whose st_dev is the overlay's while maps shows the real file's. */
	if (st->st_dev != want->dev && strcmp(fstype, "overlay"))
		return -ESTALE;
	return 0;
}

int safe_open(pid_t pid, const char *path, const struct safe_open_want *want,
	      struct stat *st)
{
	int pfd = open(path, O_PATH | O_CLOEXEC);
	int err;

	if (pfd < 0)
		return -errno;
	err = check(pid, pfd, path, want, st);
	if (err) {
		close(pfd);
		return err;
	}
	return pfd;
}

int safe_open_in_root(pid_t pid, const char *path, const struct safe_open_want *want,
		      struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	char root[64];
	int rfd, pfd, err;

	if (pid)
		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	else
		snprintf(root, sizeof(root), "/");
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	pfd = syscall(SYS_openat2, rfd, path, &how, sizeof(how));
	err = -errno;
	close(rfd);
	if (pfd < 0)
		return err;
	err = check(pid, pfd, path, want, st);
	if (err) {
		close(pfd);
		return err;
	}
	return pfd;
}

int safe_reopen(int path_fd, int flags)
{
	char self[64];
	int fd;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
	fd = open(self, flags | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}
