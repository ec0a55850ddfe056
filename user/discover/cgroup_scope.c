// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The daemon's --cgroup: the directory resolved and held, membership by path. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "discover/cgroup_scope.h"
#include "discover/procfs.h"

struct cgroup_scope {
	int fd;
	char dir[PATH_MAX];	/* in the file system, resolved */
	char path[PATH_MAX];	/* from the cgroup2 mount's root */
};

/* Where cgroup v2 is mounted: alone, or beside v1 ("hybrid"). */
static const char *const v2_mounts[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };

static bool is_cgroup2(const char *dir)
{
	struct statfs sf;

	return !statfs(dir, &sf) && sf.f_type == CGROUP2_SUPER_MAGIC;
}

/* Sets @s->path: @s->dir less the mount it lies in, found as the highest
 * ancestor on the same cgroup2 file system. */
static void path_in_hierarchy(struct cgroup_scope *s, dev_t dev)
{
	char up[PATH_MAX];
	size_t root = strlen(s->dir);

	snprintf(up, sizeof(up), "%s", s->dir);
	for (;;) {
		char *slash = strrchr(up, '/');
		struct stat st;

		if (!slash || slash == up)
			break;
		*slash = '\0';
		if (stat(up, &st) || st.st_dev != dev || !is_cgroup2(up))
			break;
		root = slash - up;
	}
	snprintf(s->path, sizeof(s->path), "%s", s->dir[root] ? s->dir + root : "/");
}

struct cgroup_scope *cgroup_scope__open(const char *path, char *err, size_t err_len)
{
	struct cgroup_scope *s;
	char full[PATH_MAX];
	const char *mount = NULL;
	struct stat st;
	int e;

	if (!path || !*path) {
		snprintf(err, err_len, "cgroup: empty path");
		errno = EINVAL;
		return NULL;
	}
	if (path[0] != '/') {
		for (size_t i = 0; i < sizeof(v2_mounts) / sizeof(v2_mounts[0]) && !mount; i++)
			if (is_cgroup2(v2_mounts[i]))
				mount = v2_mounts[i];
		if (!mount) {
			snprintf(err, err_len, "cgroup %s: no cgroup v2 hierarchy is mounted at "
				 "/sys/fs/cgroup or /sys/fs/cgroup/unified (name the directory "
				 "by its absolute path)", path);
			errno = ENOENT;
			return NULL;
		}
		if ((size_t)snprintf(full, sizeof(full), "%s/%s", mount, path) >= sizeof(full)) {
			snprintf(err, err_len, "cgroup %s: path too long", path);
			errno = ENAMETOOLONG;
			return NULL;
		}
		path = full;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->fd = -1;
	if (!realpath(path, s->dir) || stat(s->dir, &st)) {
		e = errno;
		snprintf(err, err_len, "cgroup %s: %s", path,
			 e == ENOENT ? "no such cgroup (create it, or name an existing one)"
				     : strerror(e));
		goto fail;
	}
	if (!S_ISDIR(st.st_mode) || !is_cgroup2(s->dir)) {
		e = ENOTDIR;
		snprintf(err, err_len, "cgroup %s: not a cgroup v2 directory%s", path,
			 S_ISDIR(st.st_mode) ? " (cgroup v1 hierarchies are not supported)" : "");
		goto fail;
	}
	path_in_hierarchy(s, st.st_dev);
	s->fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->fd < 0) {
		e = errno;
		snprintf(err, err_len, "cgroup %s: %s", path, strerror(e));
		goto fail;
	}
	return s;
fail:
	cgroup_scope__free(s);
	errno = e;
	return NULL;
}

void cgroup_scope__free(struct cgroup_scope *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s);
}

int cgroup_scope__fd(const struct cgroup_scope *s)
{
	return s->fd;
}

const char *cgroup_scope__path(const struct cgroup_scope *s)
{
	return s->path;
}

const char *cgroup_scope__dir(const struct cgroup_scope *s)
{
	return s->dir;
}

bool cgroup_scope__holds_path(const struct cgroup_scope *s, const char *cgroup_path)
{
	size_t n = strlen(s->path);

	if (!strcmp(s->path, "/"))
		return cgroup_path[0] == '/';
	return !strncmp(cgroup_path, s->path, n) &&
	       (cgroup_path[n] == '\0' || cgroup_path[n] == '/');
}

bool cgroup_scope__holds(const struct cgroup_scope *s, pid_t pid)
{
	char cg[PATH_MAX];

	/* A path as long as the buffer may have been cut: not ours to claim. */
	if (procfs_cgroup(pid, cg, sizeof(cg)) || strlen(cg) >= sizeof(cg) - 1)
		return false;
	return cgroup_scope__holds_path(s, cg);
}
