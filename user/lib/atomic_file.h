/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Output files that are either complete or absent.
 *
 * A file is written under a temporary name in its target directory (created
 * with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0640 less the umask), then flushed,
 * checked (stream error, size), fsynced, renamed over the final name, and
 * the directory fsynced. Any failure removes the temporary: no 0-byte or
 * partial file is ever left under the final name, and the reason is logged
 * naming the file (ENOSPC reads "disk full").
 *
 *	af = atomic_file__open(path);
 *	if (!af) { err = -errno; goto cleanup; }
 *	err = write_everything(atomic_file__stream(af), &bytes);
 *	if (err) goto cleanup;
 *	err = atomic_file__commit(af, bytes);
 * cleanup:
 *	atomic_file__free(af);		// removes the temporary unless committed
 */
#ifndef ACCELTRACE_ATOMIC_FILE_H
#define ACCELTRACE_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct atomic_file;

/* A temporary beside path; NULL and errno (logged) on failure. */
struct atomic_file *atomic_file__open(const char *path);
/*
 * The same in the directory open as dirfd (not closed; the object keeps its
 * own duplicate); dirpath only names the directory in messages.
 */
struct atomic_file *atomic_file__openat(int dirfd, const char *dirpath,
					const char *name);
/* The stream to write to (seekable: it is a regular file). */
FILE *atomic_file__stream(struct atomic_file *af);
/* The final path, for messages. */
const char *atomic_file__path(const struct atomic_file *af);
/*
 * Flushes, checks the stream has no error and the file holds exactly
 * expected_size bytes, fsyncs, renames over the final name and fsyncs the
 * directory. 0, or -errno with the reason logged and the temporary removed.
 * atomic_file__finish and atomic_file__publish(af, -1, NULL, name, true).
 */
int atomic_file__commit(struct atomic_file *af, uint64_t expected_size);
/* The first half: flushed, checked, fsynced and closed, not yet renamed.
 * 0, or -errno with the reason logged and the temporary removed. */
int atomic_file__finish(struct atomic_file *af, uint64_t expected_size);
/*
 * The second half, once finished: the temporary renamed to @name in
 * @dirfd (-1: its own directory; @dirpath names it in messages), on the
 * same file system, and the directory fsynced. With @replace false an
 * existing file is never replaced: -EEXIST, not logged, the temporary kept
 * for another try under another name. Else 0, or -errno with the reason
 * logged and the temporary removed.
 */
int atomic_file__publish(struct atomic_file *af, int dirfd, const char *dirpath,
			 const char *name, bool replace);
/* Closes; removes the temporary unless committed. Accepts NULL. */
void atomic_file__free(struct atomic_file *af);

/*
 * Words for an I/O errno (either sign) in messages: "disk full (no space
 * left on device)" for ENOSPC, "disk quota exceeded" for EDQUOT, ...
 */
const char *io_error_reason(int err);

#endif /* ACCELTRACE_ATOMIC_FILE_H */
