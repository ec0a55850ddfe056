// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * XProf's profile directory layout (see xprof_logdir.h): naming the file,
 * creating the directory chain, and opening the capture file there.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/atomic_file.h"
#include "output/xprof_logdir.h"

#define LOG_CONTEXT "output"
#include "lib/log.h"

static bool session_ok(const char *session)
{
	return session && session[0] && !strchr(session, '/') &&
	       strcmp(session, ".") && strcmp(session, "..");
}

int xprof_profile_file_name(char *buf, size_t len, const char *host)
{
	size_t n, i;

	if (!host || !host[0] || !strcmp(host, ".") || !strcmp(host, ".."))
		return -EINVAL;
	n = strlen(host);
	if (n + sizeof(".xplane.pb") > len)
		return -ENAMETOOLONG;
	for (i = 0; i < n; i++)
		buf[i] = host[i] == ':' || host[i] == '/' ? '_' : host[i];
	memcpy(buf + n, ".xplane.pb", sizeof(".xplane.pb"));
	return 0;
}

int xprof_profile_path(char *buf, size_t len, const char *logdir,
		       const char *session, const char *host)
{
	char file[512];
	int n, err;

	if (!logdir || !logdir[0] || !session_ok(session))
		return -EINVAL;
	err = xprof_profile_file_name(file, sizeof(file), host);
	if (err)
		return err;
	n = snprintf(buf, len, "%s/plugins/profile/%s/%s", logdir, session, file);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

/* mkdir -p, following symbolic links (the user's choice of logdir). */
static int mkdir_parents(char *path)
{
	for (char *p = path + 1;; p++) {
		char c = *p;

		if (c != '/' && c != '\0')
			continue;
		*p = '\0';
		if (mkdir(path, 0750) && errno != EEXIST) {
			int err = -errno;

			log_err("cannot create directory %s: %s", path, io_error_reason(err));
			*p = c;
			return err;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

int xprof_session_dir_open(const char *logdir, const char *session)
{
	char *profile = NULL;
	int pfd = -1, fd = -1, err;

	if (!logdir || !logdir[0] || !session_ok(session)) {
		log_err("invalid profile directory: logdir \"%s\", session \"%s\"",
			logdir ? logdir : "", session ? session : "");
		return -EINVAL;
	}
	if (asprintf(&profile, "%s/plugins/profile", logdir) < 0)
		return -ENOMEM;
	err = mkdir_parents(profile);
	if (err)
		goto cleanup;
	pfd = open(profile, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		err = -errno;
		log_err("cannot open directory %s: %s", profile, io_error_reason(err));
		goto cleanup;
	}
	if (mkdirat(pfd, session, 0750) && errno != EEXIST) {
		err = -errno;
		log_err("cannot create directory %s/%s: %s", profile, session,
			io_error_reason(err));
		goto cleanup;
	}
	fd = openat(pfd, session, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		struct stat st;

		err = -errno;
		/* O_NOFOLLOW|O_DIRECTORY on a symlink says ENOTDIR: tell them apart. */
		if (err == -ENOTDIR && !fstatat(pfd, session, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISLNK(st.st_mode))
			err = -ELOOP;
		if (err == -ELOOP || err == -ENOTDIR)
			log_err("refusing %s/%s: %s", profile, session,
				err == -ELOOP ? "it is a symbolic link" : "not a directory");
		else
			log_err("cannot open directory %s/%s: %s", profile, session,
				io_error_reason(err));
		goto cleanup;
	}
	err = fd;
cleanup:
	if (pfd >= 0)
		close(pfd);
	free(profile);
	return err;
}

struct atomic_file *xprof_profile_open(const char *logdir, const char *session,
				       const char *host, char *path_out,
				       size_t len)
{
	struct atomic_file *af = NULL;
	char name[512], *dir = NULL;
	int dirfd, err;

	err = xprof_profile_file_name(name, sizeof(name), host);
	if (err) {
		log_err("cannot name the capture file for host \"%s\": %s",
			host ? host : "", strerror(-err));
		errno = -err;
		return NULL;
	}
	dirfd = xprof_session_dir_open(logdir, session);
	if (dirfd < 0) {
		errno = -dirfd;
		return NULL;
	}
	if (asprintf(&dir, "%s/plugins/profile/%s", logdir, session) < 0) {
		dir = NULL;
		err = -ENOMEM;
		goto cleanup;
	}
	if (path_out && len) {
		int n = snprintf(path_out, len, "%s/%s", dir, name);

		if (n < 0 || (size_t)n >= len) {
			err = -ENAMETOOLONG;
			log_err("capture path %s/%s does not fit the caller's buffer", dir, name);
			goto cleanup;
		}
	}
	af = atomic_file__openat(dirfd, dir, name);
	if (!af)
		err = -errno;
cleanup:
	close(dirfd);
	free(dir);
	if (!af)
		errno = -err;
	return af;
}
