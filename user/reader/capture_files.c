// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* XProf's directory layout, read back (output/xprof_logdir.c writes it),
 * from a directory or from a bucket. */
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "reader/capture_files.h"
#include "store/store.h"

void capture_files_free(struct capture_file *files, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (files[i].downloaded) {
			char *slash;

			/* <tmp>/<session>/<file>: the file, then each directory
			 * once it is empty. */
			unlink(files[i].path);
			for (int up = 0; up < 2 && (slash = strrchr(files[i].path, '/')); up++) {
				*slash = '\0';
				rmdir(files[i].path);
			}
		}
		free(files[i].shown);
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
	memset(&grown[*n], 0, sizeof(grown[*n]));
	grown[*n].path = strdup(path);
	grown[*n].shown = strdup(path);
	grown[*n].session = session_of(path);
	grown[*n].host = host_of(path);
	if (!grown[*n].path || !grown[*n].shown || !grown[*n].session || !grown[*n].host) {
		free(grown[*n].shown);
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

/* ---------------------------------------------------------------- a bucket */

/* The keys under a bucket URL that name captures, in the tiers a local
 * directory is searched in: its own files, its logdir's sessions, its
 * sessions. */
struct bucket_keys {
	char **key[3];
	size_t n[3], cap[3];
	int err;
};

/* "a/b/c" has @slashes '/'s and ends in .xplane.pb. */
static bool key_shape(const char *key, int slashes)
{
	static const char ext[] = ".xplane.pb";
	size_t len = strlen(key);
	int k = 0;

	for (const char *p = key; *p; p++)
		k += *p == '/';
	return k == slashes && len > sizeof(ext) - 1 &&
	       !strcmp(key + len - (sizeof(ext) - 1), ext);
}

static int take_key(const char *key, uint64_t size, void *ctx)
{
	struct bucket_keys *b = ctx;
	int tier = key_shape(key, 0) ? 0 :
		   !strncmp(key, "plugins/profile/", 16) && key_shape(key + 16, 1) ? 1 :
		   key_shape(key, 1) ? 2 : -1;

	(void)size;
	if (tier < 0)
		return 0;
	if (ARRAY_GROW(b->key[tier], b->cap[tier], b->n[tier] + 1) ||
	    !(b->key[tier][b->n[tier]] = strdup(key)))
		return -ENOMEM;
	b->n[tier]++;
	return 0;
}

/* A name from the bucket as one local path component: not "." or "..",
 * no control bytes. */
static bool component_ok(const char *s, size_t n)
{
	if (!n || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

/* @key of @s downloaded to <tmp>/<session>/<file>, added to the list. */
static int download(struct store *s, const char *url, const char *tmp, const char *key,
		    struct capture_file **files, size_t *n, char *err, size_t errlen)
{
	/* A key with no directory is in the session the URL names. */
	const char *url_session = strrchr(url, '/') && strrchr(url, '/') > url + 5 ?
				  strrchr(url, '/') + 1 : "bucket";
	const char *file = strrchr(key, '/'), *session_end = file;
	const char *session;
	char path[4096], shown[4096];
	int ret;

	file = file ? file + 1 : key;
	if (session_end) {
		session = session_end;
		while (session > key && session[-1] != '/')
			session--;
	} else {
		session = url_session;
		session_end = session + strlen(session);
	}
	if (!component_ok(session, session_end - session) ||
	    !component_ok(file, strlen(file))) {
		snprintf(err, errlen, "%s/%s: a name acceltrace does not make a local file of",
			 url, key);
		return -EINVAL;
	}
	ret = snprintf(path, sizeof(path), "%s/%.*s", tmp, (int)(session_end - session),
		       session);
	if (ret < 0 || (size_t)ret + strlen(file) + 2 > sizeof(path)) {
		snprintf(err, errlen, "%s/%s: the name is too long", url, key);
		return -ENAMETOOLONG;
	}
	if (mkdir(path, 0700) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(-ret));
		return ret;
	}
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", file);
	ret = store__get_file(s, key, path);
	if (ret) {
		snprintf(err, errlen, "cannot download %s/%s (said above)", url, key);
		*strrchr(path, '/') = '\0';
		rmdir(path);	/* the session's directory, when nothing else is there */
		return ret;
	}
	ret = add_file(files, n, path);
	if (ret) {
		unlink(path);
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	(*files)[*n - 1].downloaded = true;
	snprintf(shown, sizeof(shown), "%.2000s/%s", url, key);
	free((*files)[*n - 1].shown);
	(*files)[*n - 1].shown = strdup(shown);
	return (*files)[*n - 1].shown ? 0 : -ENOMEM;
}

static int bucket_files(const char *arg, struct capture_file **files, size_t *n, char *err,
			size_t errlen)
{
	char url[STORE_MAX_URL], tmp[4096], *base;
	struct bucket_keys b = { 0 };
	struct store *s = NULL;
	int tier = -1, ret;

	ret = store_url_normalise(arg, url, sizeof(url));
	if (ret) {
		snprintf(err, errlen, "%.200s: no bucket URL", arg);
		return ret;
	}
	base = strrchr(url, '/');
	/* One object: the store is its directory's, the key its name. */
	if (key_shape(base + 1, 0) && base > url + 5) {
		*base = '\0';
		s = store__open(url);
		if (s)
			ret = take_key(base + 1, 0, &b);
	} else {
		s = store__open(url);
		if (s)
			ret = store__list(s, "", take_key, &b);
	}
	if (!s) {
		snprintf(err, errlen, "cannot read %s (said above)", url);
		return -errno;
	}
	if (ret) {
		snprintf(err, errlen, "cannot list %s", url);
		goto out;
	}
	for (int t = 0; t < 3 && tier < 0; t++)
		if (b.n[t])
			tier = t;
	if (tier < 0) {
		ret = -ENOENT;
		snprintf(err, errlen, "no .xplane.pb in %s: give a capture object, a session or a "
			 "logdir (LOGDIR/plugins/profile/SESSION/HOST.xplane.pb)", url);
		goto out;
	}
	if (b.n[tier] > CAPTURE_FILES_MAX_DOWNLOADS) {
		ret = -E2BIG;
		snprintf(err, errlen, "%s holds %zu captures: name one session (at most %d files "
			 "are downloaded)", url, b.n[tier], CAPTURE_FILES_MAX_DOWNLOADS);
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s/download-XXXXXX", store_spool_dir());
	mkdir(store_spool_dir(), 0750);
	if (!mkdtemp(tmp)) {
		ret = -errno;
		snprintf(err, errlen, "cannot make a directory in %s for the download: %s",
			 store_spool_dir(), strerror(-ret));
		goto out;
	}
	for (size_t i = 0; i < b.n[tier] && !ret; i++)
		ret = download(s, url, tmp, b.key[tier][i], files, n, err, errlen);
	rmdir(tmp);	/* when nothing went there */
out:
	for (int t = 0; t < 3; t++) {
		for (size_t i = 0; i < b.n[t]; i++)
			free(b.key[t][i]);
		free(b.key[t]);
	}
	store__free(s);
	return ret;
}

int capture_files_find(const char *arg, struct capture_file **files, size_t *n,
		       char *err, size_t errlen)
{
	struct stat st;
	int ret;

	*files = NULL;
	*n = 0;
	if (store_is_url(arg)) {
		ret = bucket_files(arg, files, n, err, errlen);
		if (ret) {
			capture_files_free(*files, *n);
			*files = NULL;
			*n = 0;
		}
		return ret;
	}
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
