// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where a Profile may write: repository roots compared as normalised
 * strings against the allowed ones, then opened one component at a time
 * beneath the allowed root's fd with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS) (O_NOFOLLOW where the
 * kernel has no openat2), so that a symbolic link planted anywhere under
 * the logdir is refused rather than followed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LOG_CONTEXT "profiler"
#include "lib/log.h"
#include "output/xprof_logdir.h"
#include "profiler_service/profiler_roots.h"
#include "store/store.h"

int profiler_path_normalise(const char *in, char *out, size_t len)
{
	size_t o = 0;
	const char *p = in;

	if (store_is_url(in))
		return store_url_normalise(in, out, len);
	if (!in || in[0] != '/')
		return -EINVAL;
	while (*p) {
		const char *c;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		c = p;
		while (*p && *p != '/')
			p++;
		n = p - c;
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return -EINVAL;
		if (o + 1 + n + 1 > len)
			return -ENAMETOOLONG;
		out[o++] = '/';
		memcpy(out + o, c, n);
		o += n;
	}
	if (!o) {
		if (len < 2)
			return -ENAMETOOLONG;
		out[o++] = '/';
	}
	out[o] = '\0';
	return 0;
}

/* True when @path is @base or under it (both normalised; a bucket's URL
 * and a path are never beneath one another). */
static bool beneath(const char *base, const char *path, bool or_equal)
{
	size_t n = strlen(base);

	if (store_is_url(base) != store_is_url(path))
		return false;
	if (!strcmp(base, "/"))
		return or_equal || strcmp(path, "/");
	if (strncmp(base, path, n))
		return false;
	return path[n] == '/' || (or_equal && !path[n]);
}

static int add_root(struct profiler_roots *r, const char *path, bool is_logdir)
{
	char norm[PROFILER_MAX_PATH];

	if (r->n >= PROFILER_MAX_ROOTS)
		return -E2BIG;
	if (profiler_path_normalise(path, norm, sizeof(norm)))
		return -EINVAL;
	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->root[i].path, norm) && r->root[i].is_logdir == is_logdir)
			return 0;
	snprintf(r->root[r->n].path, sizeof(r->root[r->n].path), "%s", norm);
	r->root[r->n].is_logdir = is_logdir;
	r->n++;
	return 0;
}

int profiler_roots__init(struct profiler_roots *r, const char *logdir, const char *roots)
{
	char abs[PROFILER_MAX_PATH], *real;
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (store_is_url(logdir)) {
		err = add_root(r, logdir, true);
		if (err)
			log_err("the logdir %s is no usable bucket URL", logdir);
		if (err)
			return -EINVAL;
		goto more;
	}
	/* The logdir as configured (the path TensorBoard is given) and as it
	 * resolves, either of which a client may send. */
	if (logdir && logdir[0] == '/') {
		snprintf(abs, sizeof(abs), "%s", logdir);
	} else if (logdir && logdir[0]) {
		char cwd[PROFILER_MAX_PATH / 2];

		if (!getcwd(cwd, sizeof(cwd)))
			return -errno;
		snprintf(abs, sizeof(abs), "%s/%s", cwd, logdir);
	} else {
		return -EINVAL;
	}
	add_root(r, abs, true);
	real = realpath(logdir, NULL);
	if (real) {
		add_root(r, real, true);
		free(real);
	}
	if (!r->n) {
		log_err("the logdir %s is no usable path for repository roots", logdir);
		return -EINVAL;
	}
more:
	while (roots && *roots) {
		/* A bucket's "s3://" is not a separator. */
		const char *end = strchr(store_is_url(roots) ? roots + 5 : roots, ':');
		size_t n = end ? (size_t)(end - roots) : strlen(roots);
		char one[PROFILER_MAX_PATH];

		if (n && n < sizeof(one)) {
			memcpy(one, roots, n);
			one[n] = '\0';
			err = add_root(r, one, false);
		} else if (n) {
			err = -ENAMETOOLONG;
		}
		if (err) {
			log_err("profiler-roots: \"%.*s\" is no absolute path or bucket URL "
				"(s3://, gs://) without \".\" and \"..\" components (or there are "
				"more than %d)", (int)n, roots, PROFILER_MAX_ROOTS);
			return -EINVAL;
		}
		roots = end ? end + 1 : roots + n;
	}
	return 0;
}

int profiler_roots__match(const struct profiler_roots *r, const char *root, size_t *which)
{
	for (size_t i = 0; i < r->n; i++) {
		/* Under the logdir, not the logdir itself; an allowed root, or
		 * under it. */
		if (beneath(r->root[i].path, root, !r->root[i].is_logdir)) {
			*which = i;
			return 0;
		}
	}
	return -EPERM;
}

/* One component @name in @dirfd, never a symbolic link: an fd or -errno. */
static int open_component(int dirfd, const char *name)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	static bool no_openat2;
	int fd = -1;

	if (!no_openat2) {
		fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
		if (fd >= 0)
			return fd;
		if (errno != ENOSYS)
			return -errno;
		no_openat2 = true;
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* -ELOOP when @name in @dirfd is a symbolic link, else @err. */
static int symlink_or(int dirfd, const char *name, int err)
{
	struct stat st;

	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
		return -ELOOP;
	return err;
}

static enum grpc_status open_error(int err)
{
	switch (err) {
	case -ELOOP:
	case -EXDEV:
	case -EACCES:
	case -EPERM:
		return GRPC_STATUS_PERMISSION_DENIED;
	case -ENOTDIR:
	case -EEXIST:
		return GRPC_STATUS_FAILED_PRECONDITION;
	case -EINVAL:
		return GRPC_STATUS_INVALID_ARGUMENT;
	default:
		return GRPC_STATUS_INTERNAL;
	}
}

/*
 * A bucket root: the components a client adds beneath the allowed prefix
 * are held to a session's characters (there is no "exists" to trust in a
 * bucket); the fd is the spool's profile directory, where the capture is
 * written before it is uploaded under @root.
 */
static int bucket_root(const char *root, const char *rest, enum grpc_status *code, char *why,
		       size_t why_len)
{
	int fd;

	while (*rest) {
		const char *c;
		char comp[NAME_MAX + 1];
		size_t n;

		while (*rest == '/')
			rest++;
		c = rest;
		while (*rest && *rest != '/')
			rest++;
		n = rest - c;
		if (!n)
			break;
		snprintf(comp, sizeof(comp), "%.*s", (int)(n < NAME_MAX ? n : NAME_MAX), c);
		if (n > NAME_MAX || !xprof_valid_name(comp, NAME_MAX + 1, false)) {
			*code = GRPC_STATUS_INVALID_ARGUMENT;
			snprintf(why, why_len, "repository_root %s: \"%.64s\": the prefixes a "
				 "Profile adds in a bucket are letters, digits, '.', '_' and '-'",
				 root, comp);
			return -EINVAL;
		}
	}
	fd = xprof_spool_profile_dir_open();
	if (fd < 0) {
		*code = GRPC_STATUS_INTERNAL;
		snprintf(why, why_len, "repository_root %s: the spool %s: %s", root,
			 store_spool_dir(), strerror(-fd));
	}
	return fd;
}

int profiler_roots__open(const struct profiler_roots *r, size_t which, const char *root,
			 const char *session, enum grpc_status *code, char *why,
			 size_t why_len)
{
	const char *base = r->root[which].path, *rest = root + strlen(base);
	char comp[PROFILER_MAX_PATH];
	int fd, err;

	if (store_is_url(base))
		return bucket_root(root, rest, code, why, why_len);
	/* The allowed root itself is the operator's: opened as configured. */
	fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		*code = GRPC_STATUS_INTERNAL;
		snprintf(why, why_len, "cannot open %s: %s", base, strerror(-err));
		return err;
	}
	while (*rest) {
		const char *c;
		size_t n;
		int next;

		while (*rest == '/')
			rest++;
		if (!*rest)
			break;
		c = rest;
		while (*rest && *rest != '/')
			rest++;
		n = rest - c;
		memcpy(comp, c, n);
		comp[n] = '\0';
		next = open_component(fd, comp);
		if (next == -ENOENT) {
			/* A directory a client makes is held to a session's
			 * characters: no control bytes or newlines in names
			 * (they forged log lines); one that exists (a run
			 * directory "lr=0.1,bs=32") is the operator's. */
			if (!xprof_valid_name(comp, NAME_MAX + 1, false)) {
				err = -EINVAL;
				goto fail;
			}
			if (mkdirat(fd, comp, 0750) && errno != EEXIST) {
				err = -errno;
				goto fail;
			}
			next = open_component(fd, comp);
		}
		if (next < 0) {
			err = next == -ENOTDIR ? symlink_or(fd, comp, next) : next;
			goto fail;
		}
		close(fd);
		fd = next;
	}
	/* The session directory is created later, the same way
	 * (output/xprof_logdir.c); one planted as a symlink is said now. */
	if (session && symlink_or(fd, session, 0)) {
		err = -ELOOP;
		snprintf(comp, sizeof(comp), "%s", session);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	*code = open_error(err);
	if (err == -ELOOP || err == -EXDEV)
		snprintf(why, why_len, "repository_root %s: \"%s\" is a symbolic link; "
			 "acceltrace writes through none", root, comp);
	else if (err == -EINVAL)
		snprintf(why, why_len, "repository_root: would create \"%.64s\": the "
			 "directories a Profile creates are letters, digits, '.', '_' and '-'",
			 comp);
	else
		snprintf(why, why_len, "repository_root %s: \"%s\": %s", root, comp,
			 strerror(-err));
	return err;
}
