// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Shared, unlinked files in the agent's directory (agent_files.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_files.h"

/*
 * Each candidate directory in turn. The space is reserved up front
 * (fallocate): a write into a mapped file that a full tmpfs cannot back
 * would kill the process with SIGBUS, and a container's /dev/shm is often
 * 64 MiB.
 */
static void *map_in(const char *dir, const char *what, size_t size)
{
	char path[4096];
	struct timespec ts;
	void *map;
	int fd, err;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(path, sizeof(path), "%s/acceltrace-agent-%d-%s-%lx", dir, (int)getpid(), what,
		 (unsigned long)ts.tv_nsec ^ ((unsigned long)ts.tv_sec << 30));
	/* Exclusive and no link followed: the directory may be shared. */
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return NULL;
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err)
		goto fail;
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		goto fail;
	}
	unlink(path);
	close(fd);
	return map;
fail:
	unlink(path);
	close(fd);
	errno = err;
	return NULL;
}

void *agent_map_new_file(const char *what, size_t size)
{
	const char *dirs[] = { getenv("ACCELTRACE_AGENT_DIR"), "/dev/shm", "/tmp" };
	void *map;
	int err = ENOENT;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!dirs[i] || !dirs[i][0])
			continue;
		map = map_in(dirs[i], what, size);
		if (map)
			return map;
		err = errno;
		if (i == 0)
			break;	/* the directory the operator chose, or none */
	}
	errno = err;
	return NULL;
}
