/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which `.xplane.pb` files a capture argument names: the file itself, every
 * host's file of a session directory, or every session of a logdir
 * (`<logdir>/plugins/profile/<session>/<host>.xplane.pb`), oldest first.
 * The same of a bucket (s3://, gs://: store/store.h), whose files are
 * downloaded first, at most CAPTURE_FILES_MAX_DOWNLOADS of them.
 */
#ifndef ACCELTRACE_CAPTURE_FILES_H
#define ACCELTRACE_CAPTURE_FILES_H

#include <stdbool.h>
#include <stddef.h>

#define CAPTURE_FILES_MAX_DOWNLOADS 256

struct capture_file {
	char *path;	/* the file to read (a bucket's: downloaded into a temporary directory) */
	char *shown;	/* what to call it: the path, or the object's URL */
	bool downloaded;	/* removed, with its directories, when freed */
	char *session;	/* the session directory's name ("" for a lone file elsewhere) */
	char *host;	/* the host XProf names by the file: its name less .xplane.pb */
};

/*
 * Whether two files are in the same directory (one session's hosts, when
 * that directory is a session).
 */
bool capture_files_same_dir(const struct capture_file *a, const struct capture_file *b);

/* 0 and a list of at least one file, or a negative errno and a sentence in err. */
int capture_files_find(const char *arg, struct capture_file **files, size_t *n,
		       char *err, size_t errlen);
void capture_files_free(struct capture_file *files, size_t n);

#endif /* ACCELTRACE_CAPTURE_FILES_H */
