// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Complete-or-absent output files (see atomic_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
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

int atomic_file__finish(struct atomic_file *af, uint64_t expected_size)
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
	return 0;

fail:
	log_err("cannot write %s: %s: %s", af->path, step, io_error_reason(err));
fail_logged:
	discard_tmp(af);
	return err;
}

/*
 * The temporary renamed to @name in @dirfd without replacing what is there:
 * renameat2(RENAME_NOREPLACE), or, where the file system lacks it, a hard
 * link (which never replaces) and the temporary's removal.
 */
static int rename_noreplace(struct atomic_file *af, int dirfd, const char *name)
{
	if (!renameat2(af->dirfd, af->tmp_name, dirfd, name, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -errno;
	if (linkat(af->dirfd, af->tmp_name, dirfd, name, 0))
		return -errno;
	unlinkat(af->dirfd, af->tmp_name, 0);
	return 0;
}

int atomic_file__publish(struct atomic_file *af, int dirfd, const char *dirpath,
			 const char *name, bool replace)
{
	char *path = NULL;
	int err;

	if (!af || af->committed || af->f || !af->tmp_name)
		return -EINVAL;
	if (dirfd < 0)
		dirfd = af->dirfd;
	if (name != af->name || dirfd != af->dirfd) {
		if (asprintf(&path, "%s/%s", dirpath ? dirpath : ".", name) < 0)
			return -ENOMEM;
		free(af->path);
		af->path = path;
	}
	err = replace ? (renameat(af->dirfd, af->tmp_name, dirfd, name) ? -errno : 0) :
	      rename_noreplace(af, dirfd, name);
	if (err == -EEXIST && !replace)
		return err;	/* the caller may try another name */
	if (err) {
		log_err("cannot write %s: rename: %s", af->path, io_error_reason(err));
		discard_tmp(af);
		return err;
	}
	af->committed = true;
	/* Make the rename durable; some file systems cannot fsync a directory. */
	if (fsync(dirfd) && errno != EINVAL && errno != ENOTSUP) {
		err = -errno;
		log_err("cannot write %s: directory fsync: %s", af->path,
			io_error_reason(err));
		unlinkat(dirfd, name, 0);
		return err;
	}
	return 0;
}

int atomic_file__commit(struct atomic_file *af, uint64_t expected_size)
{
	int err = atomic_file__finish(af, expected_size);

	return err ? err : atomic_file__publish(af, -1, NULL, af->name, true);
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
