// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Complete-or-absent output files, and XProf's profile directory layout. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/atomic_file.h"

#define LOG_CONTEXT "output"
#include "lib/log.h"

#define TMP_ATTEMPTS 100

struct atomic_file {
	int dirfd;
	FILE *f;
	char *name;		/* final name, in dirfd */
	char *tmp_name;		/* temporary name, in dirfd */
	char *path;		/* dirpath/name, for messages */
	bool committed;
};

const char *io_error_reason(int err)
{
	if (err < 0)
		err = -err;
	switch (err) {
	case ENOSPC: return "disk full (no space left on device)";
	case EDQUOT: return "disk quota exceeded";
	case EFBIG: return "file too large";
	case EIO: return "I/O error";
	case EROFS: return "read-only file system";
	case EACCES: return "permission denied";
	case ELOOP: return "is a symbolic link (refused)";
	default: return strerror(err);
	}
}

static void random_suffix(char *out, size_t n)
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[16];
	static unsigned counter;

	if (n > sizeof(rnd))
		n = sizeof(rnd);
	if (getrandom(rnd, n, GRND_NONBLOCK) != (ssize_t)n) {
		uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20) ^ ++counter;

		for (size_t i = 0; i < n; i++, x = x * 6364136223846793005ULL + 1)
			rnd[i] = x >> 56;
	}
	for (size_t i = 0; i < n; i++)
		out[i] = set[rnd[i] % (sizeof(set) - 1)];
	out[n] = '\0';
}

struct atomic_file *atomic_file__openat(int dirfd, const char *dirpath,
					const char *name)
{
	struct atomic_file *af;
	const char *step = "temporary file";
	char suffix[8];
	int fd = -1, err;

	if (!name || !name[0] || strchr(name, '/')) {
		log_err("cannot write %s/%s: not a file name", dirpath ? dirpath : ".",
			name ? name : "");
		errno = EINVAL;
		return NULL;
	}
	af = calloc(1, sizeof(*af));
	if (!af)
		return NULL;
	af->dirfd = -1;
	af->name = strdup(name);
	if (asprintf(&af->path, "%s/%s", dirpath ? dirpath : ".", name) < 0)
		af->path = NULL;
	if (!af->name || !af->path) {
		err = -ENOMEM;
		goto fail;
	}
	af->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (af->dirfd < 0) {
		err = -errno;
		step = "directory";
		goto fail;
	}
	for (int i = 0; i < TMP_ATTEMPTS; i++) {
		random_suffix(suffix, 6);
		free(af->tmp_name);
		if (asprintf(&af->tmp_name, ".%s.tmp-%s", name, suffix) < 0) {
			af->tmp_name = NULL;
			err = -ENOMEM;
			goto fail;
		}
		fd = openat(af->dirfd, af->tmp_name,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = -errno;
		free(af->tmp_name);
		af->tmp_name = NULL;	/* nothing of ours to remove */
		goto fail;
	}
	af->f = fdopen(fd, "w");
	if (!af->f) {
		err = -errno;
		close(fd);
		goto fail;
	}
	return af;

fail:
	log_err("cannot write %s: %s: %s", af->path ? af->path : name, step,
		io_error_reason(err));
	atomic_file__free(af);
	errno = -err;
	return NULL;
}

struct atomic_file *atomic_file__open(const char *path)
{
	struct atomic_file *af;
	const char *slash;
	char *dir = NULL;
	int dirfd, err;

	if (!path || !path[0]) {
		errno = EINVAL;
		return NULL;
	}
	slash = strrchr(path, '/');
	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, slash - path);
	if (!dir)
		return NULL;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		err = errno;
		log_err("cannot write %s: directory %s: %s", path, dir,
			io_error_reason(err));
		free(dir);
		errno = err;
		return NULL;
	}
	af = atomic_file__openat(dirfd, dir, slash ? slash + 1 : path);
	err = errno;
	close(dirfd);
	free(dir);
	errno = err;
	return af;
}

FILE *atomic_file__stream(struct atomic_file *af)
{
	return af->f;
}

const char *atomic_file__path(const struct atomic_file *af)
{
	return af->path;
}

static int discard_tmp(struct atomic_file *af)
{
	int err = 0;

	if (af->f) {
		fclose(af->f);	/* the write failed already; nothing to check */
		af->f = NULL;
	}
	if (af->tmp_name && !af->committed) {
		if (unlinkat(af->dirfd, af->tmp_name, 0) && errno != ENOENT) {
			err = -errno;
			log_warn("cannot remove temporary file %s in the directory of %s: %s",
				 af->tmp_name, af->path, strerror(-err));
		}
		free(af->tmp_name);
		af->tmp_name = NULL;
	}
	return err;
}

int atomic_file__commit(struct atomic_file *af, uint64_t expected_size)
{
	struct stat st;
	const char *step;
	int err = 0, fd;

	if (!af || af->committed || !af->f)
		return -EINVAL;
	fd = fileno(af->f);

	step = "write";
	if (fflush(af->f)) {
		err = -errno;
		goto fail;
	}
	if (ferror(af->f)) {
		err = -EIO;
		goto fail;
	}
	step = "fsync";
	if (fsync(fd)) {
		err = -errno;
		goto fail;
	}
	step = "size check";
	if (fstat(fd, &st)) {
		err = -errno;
		goto fail;
	}
	if ((uint64_t)st.st_size != expected_size) {
		log_err("cannot write %s: wrote %" PRIu64 " bytes but the file holds %lld",
			af->path, expected_size, (long long)st.st_size);
		err = -EIO;
		goto fail_logged;
	}
	step = "close";
	err = fclose(af->f) ? -errno : 0;
	af->f = NULL;
	if (err)
		goto fail;
	step = "rename";
	if (renameat(af->dirfd, af->tmp_name, af->dirfd, af->name)) {
		err = -errno;
		goto fail;
	}
	af->committed = true;
	/* Make the rename durable; some file systems cannot fsync a directory. */
	if (fsync(af->dirfd) && errno != EINVAL && errno != ENOTSUP) {
		err = -errno;
		log_err("cannot write %s: directory fsync: %s", af->path,
			io_error_reason(err));
		unlinkat(af->dirfd, af->name, 0);
		return err;
	}
	return 0;

fail:
	log_err("cannot write %s: %s: %s", af->path, step, io_error_reason(err));
fail_logged:
	discard_tmp(af);
	return err;
}

void atomic_file__free(struct atomic_file *af)
{
	if (!af)
		return;
	discard_tmp(af);
	if (af->dirfd >= 0)
		close(af->dirfd);
	free(af->tmp_name);
	free(af->name);
	free(af->path);
	free(af);
}

/* ---- XProf's profile layout ------------------------------------------- */

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
