/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where TensorBoard's profile plugin (XProf) looks for captures:
 * <logdir>/plugins/profile/<session>/<host>.xplane.pb, one directory per
 * session and one file per host in it. A logdir may be a bucket
 * (s3://, gs://: store/store.h): the capture is written in the spool
 * under the same names, then uploaded at the commit, never over an
 * object, and kept in the spool, said, when it cannot be.
 */
#ifndef ACCELTRACE_XPROF_LOGDIR_H
#define ACCELTRACE_XPROF_LOGDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A name that comes from outside (a trigger's session, a ProfilerService
 * request's session or host) and becomes one path component: 1..@max-1
 * bytes of letters, digits, '.', '_', '-' (and ':' when @host, which the
 * file name turns into '_'), not "." or "..". True when it is one.
 */
bool xprof_valid_name(const char *s, size_t max, bool host);

/*
 * <logdir>/plugins/profile/<session>/<host>.xplane.pb into buf, with ':'
 * (and '/') in host replaced by '_' as XProf's own writer does. -EINVAL for
 * an empty host or a session that is empty, ".", ".." or has a '/';
 * -ENAMETOOLONG when it does not fit.
 */
int xprof_profile_path(char *buf, size_t len, const char *logdir,
		       const char *session, const char *host);
/* The file name alone, <host>.xplane.pb, under the same rules. */
int xprof_profile_file_name(char *buf, size_t len, const char *host);
/*
 * Creates <logdir>/plugins/profile/<session> (each missing directory mode
 * 0750) and opens it. The session directory itself must not be a symbolic
 * link. Returns an O_DIRECTORY fd, or -errno with the reason logged.
 */
int xprof_session_dir_open(const char *logdir, const char *session);
/*
 * Checks that captures can be written under @logdir before any is taken:
 * creates <logdir>/plugins/profile (each missing directory mode 0750),
 * creates, writes and removes a temporary file there. 0, or -errno with the
 * reason logged ("read-only file system", "permission denied", ...).
 */
int xprof_logdir_check(const char *logdir);
/* The spool's profile directory, <store_spool_dir()>/plugins/profile,
 * where a bucket's captures are written first: created where missing and
 * opened; an O_DIRECTORY fd, or -errno with the reason logged. */
int xprof_spool_profile_dir_open(void);
/* The bytes free to an unprivileged writer on the filesystem of
 * <logdir>/plugins/profile (created where missing): 0 or -errno. */
int xprof_logdir_free_bytes(const char *logdir, uint64_t *bytes);

/*
 * A capture file being written, <logdir>/plugins/profile/<session>/<host>
 * .xplane.pb, that never replaces one already there. When this host's file
 * exists in @session (a second capture in the same second under the default
 * session, a reused --session), it goes to "<session>-2", "-3", ... (the
 * first free one, up to XPROF_MAX_SESSION_SUFFIX): chosen at the open, and
 * again at the commit if another writer took it meanwhile (the rename never
 * replaces). xprof_profile__session says which, for the user to be told.
 */
#define XPROF_MAX_SESSION 256
#define XPROF_MAX_SESSION_SUFFIX 1000

struct xprof_profile;

/* The session directory created, a temporary file open in it (an atomic
 * file, lib/atomic_file.h). NULL and errno, the reason logged. */
struct xprof_profile *xprof_profile__open(const char *logdir, const char *session,
					  const char *host);
/*
 * The same in a profile directory opened by the caller (@root_fd, kept
 * open by the caller; @root names it in messages and paths): a
 * ProfilerService request's repository_root, opened confined.
 */
struct xprof_profile *xprof_profile__openat(int root_fd, const char *root,
					    const char *session, const char *host);
FILE *xprof_profile__stream(struct xprof_profile *p);
/* Finished and renamed into place, never over another file; 0, or -errno
 * with the reason logged (the temporary removed). */
int xprof_profile__commit(struct xprof_profile *p, uint64_t bytes);
/* Where it is (once committed) or would go. */
const char *xprof_profile__path(const struct xprof_profile *p);
/* The session it went to: the one asked for, or that with a suffix. */
const char *xprof_profile__session(const struct xprof_profile *p);
/* Closes; removes the temporary unless committed. Accepts NULL. */
void xprof_profile__free(struct xprof_profile *p);

#endif /* ACCELTRACE_XPROF_LOGDIR_H */
