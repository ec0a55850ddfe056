// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Capture paths: which files a capture argument names (reader/), and where
 * a capture of a session and host is written (output/). The input is
 * NUL-separated fields: the argument, a session name, a host name, then
 * paths to create under a scratch directory first (a trailing '/' makes a
 * directory). Every file found must lie under the argument's directory,
 * and a written path under its session's, whatever the names hold.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>

#include "fuzz_input.h"
#include "output/xprof_logdir.h"
#include "reader/capture_files.h"

#define MAX_FIELDS 12

static char root[64];

static int remove_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	return remove(p) && errno != ENOENT ? -1 : 0;
}

static void remove_root(void)
{
	nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Creates @rel under root: no absolute path, no "..", nothing outside. */
static void create(const char *rel)
{
	char path[4200], *slash;
	size_t n = strlen(rel);

	if (!n || rel[0] == '/' || strstr(rel, "..") || n > 200)
		return;
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
	}
	if (rel[n - 1] != '/')
		close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
}

static void check_found(const char *arg)
{
	struct capture_file *files;
	char err[512], dir[4200];
	size_t n, len;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/%s", root, arg);
	if (capture_files_find(dir, &files, &n, err, sizeof(err)))
		return;
	if (!stat(dir, &st) && S_ISDIR(st.st_mode)) {
		len = strlen(dir);
		while (len > 1 && dir[len - 1] == '/')
			len--;
		for (size_t i = 0; i < n; i++)
			if (strncmp(files[i].path, dir, len) || files[i].path[len] != '/')
				abort();	/* a file outside the directory named */
	}
	capture_files_free(files, n);
}

static void check_written(const char *session, const char *host)
{
	char path[4096], want[4096];
	size_t len;

	if (xprof_profile_path(path, sizeof(path), root, session, host))
		return;
	len = (size_t)snprintf(want, sizeof(want), "%s/plugins/profile/%s/", root, session);
	if (strncmp(path, want, len) || strchr(path + len, '/') || strstr(path, "/../"))
		abort();	/* written outside its session directory */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), *field[MAX_FIELDS] = { 0 };
	size_t n = 0;

	if (!root[0]) {
		snprintf(root, sizeof(root), "/tmp/fuzz-capture-path.%d", (int)getpid());
		mkdir(root, 0700);
		atexit(remove_root);
	}
	for (char *p = s; n < MAX_FIELDS && p <= s + size; p += strlen(p) + 1)
		field[n++] = p;
	for (size_t i = 3; i < n; i++)
		create(field[i]);
	if (n > 0 && !strstr(field[0], ".."))
		check_found(field[0]);
	if (n > 2)
		check_written(field[1], field[2]);
	nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	mkdir(root, 0700);
	free(s);
	return 0;
}
