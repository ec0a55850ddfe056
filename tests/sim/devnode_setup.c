// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* mknod of the simulated device node (see devnode_setup.h). */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devnode_setup.h"

int devnode_setup_create(const char *dir, bool submit_mode, char *path, size_t len)
{
	char sub[4096];
	struct stat st;

	if (stat("/dev/null", &st))
		return -errno;
	if (!S_ISCHR(st.st_mode))
		return -ENODEV;
	if (submit_mode) {
		snprintf(sub, sizeof(sub), "%s/accel", dir);
		if (mkdir(sub, 0755) && errno != EEXIST)
			return -errno;
	}
	snprintf(path, len, submit_mode ? "%s/accel/accel0" : "%s/accel0", dir);
	unlink(path);
	if (mknod(path, S_IFCHR | 0666, makedev(major(st.st_rdev), minor(st.st_rdev))))
		return -errno;
	return 0;
}

void devnode_setup_remove(const char *dir, bool submit_mode)
{
	char path[4096];

	snprintf(path, sizeof(path), submit_mode ? "%s/accel/accel0" : "%s/accel0", dir);
	unlink(path);
	if (submit_mode) {
		snprintf(path, sizeof(path), "%s/accel", dir);
		rmdir(path);
	}
}
