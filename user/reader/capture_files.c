// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* XProf's directory layout, read back (output/xprof_logdir.c writes it). */
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader/capture_files.h"

void capture_files_free(struct capture_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(files[i].path);
		free(files[i].session);
		free(files[i].host);
	}
	free(files);
}

/* The name of the directory holding PATH. */
static char *session_of(const char *path)
{
	char *copy = strdup(path), *dir, *name;

	if (!copy)
		return NULL;
	dir = dirname(copy);
	name = strdup(basename(dir));
	free(copy);
	return name;
}

/* The host a file names (XProf's <host>.xplane.pb): its name less the suffix. */
static char *host_of(const char *path)
{
	static const char ext[] = ".xplane.pb";
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (n > sizeof(ext) - 1 && !strcmp(base + n - (sizeof(ext) - 1), ext))
		n -= sizeof(ext) - 1;
	return strndup(base, n);
}

bool capture_files_same_dir(const struct capture_file *a, const struct capture_file *b)
{
	const char *sa = strrchr(a->path, '/'), *sb = strrchr(b->path, '/');
	size_t na = sa ? (size_t)(sa - a->path) : 0, nb = sb ? (size_t)(sb - b->path) : 0;

	return na == nb && !strncmp(a->path, b->path, na);
}

static int add_file(struct capture_file **files, size_t *n, const char *path)
{
	struct capture_file *grown = realloc(*files, (*n + 1) * sizeof(**files));

	if (!grown)
		return -ENOMEM;
	*files = grown;
	grown[*n].path = strdup(path);
	grown[*n].session = session_of(path);
	grown[*n].host = host_of(path);
	if (!grown[*n].path || !grown[*n].session || !grown[*n].host) {
		free(grown[*n].path);
		free(grown[*n].session);
		free(grown[*n].host);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

/* Files matching DIR/PATTERN, sorted (glob sorts; session names are times). */
static int add_glob(const char *dir, const char *pattern, struct capture_file **files,
		    size_t *n)
{
	size_t len = strlen(dir);
	char *pat;
	glob_t g;
	int ret = 0;

	/* "session/" and "session" name the same directory: no "//" in paths. */
	while (len > 1 && dir[len - 1] == '/')
		len--;
	/* The directory is a name, not a pattern: "run[1]" must not match
	 * run1/, nor "a*" every a.../ beside it. */
	pat = malloc(2 * len + strlen(pattern) + 2);
	if (!pat)
		return -ENOMEM;
	for (size_t i = 0, k = 0;; i++) {
		if (i == len) {
			sprintf(pat + k, "/%s", pattern);
			break;
		}
		if (strchr("*?[]\\", dir[i]))
			pat[k++] = '\\';
		pat[k++] = dir[i];
	}
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && !ret; i++)
			ret = add_file(files, n, g.gl_pathv[i]);
		globfree(&g);
	}
	free(pat);
	return ret;
}

int capture_files_find(const char *arg, struct capture_file **files, size_t *n,
		       char *err, size_t errlen)
{
	struct stat st;
	int ret;

	*files = NULL;
	*n = 0;
	if (stat(arg, &st)) {
		ret = -errno;
		snprintf(err, errlen, "cannot read capture %s: %s", arg, strerror(errno));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		ret = add_file(files, n, arg);
		if (ret)
			snprintf(err, errlen, "out of memory");
		return ret;
	}
	ret = add_glob(arg, "*.xplane.pb", files, n);
	if (!ret && !*n)
		ret = add_glob(arg, "plugins/profile/*/*.xplane.pb", files, n);
	if (!ret && !*n)
		ret = add_glob(arg, "*/*.xplane.pb", files, n);
	if (ret) {
		capture_files_free(*files, *n);
		*files = NULL;
		*n = 0;
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	if (!*n) {
		snprintf(err, errlen, "no .xplane.pb in %s: give a capture file, a session "
			 "directory or a logdir (LOGDIR/plugins/profile/SESSION/HOST.xplane.pb)",
			 arg);
		return -ENOENT;
	}
	return 0;
}
