/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where TensorBoard's profile plugin (XProf) looks for captures:
 * <logdir>/plugins/profile/<session>/<host>.xplane.pb, one directory per
 * session and one file per host in it.
 */
#ifndef ACCELTRACE_XPROF_LOGDIR_H
#define ACCELTRACE_XPROF_LOGDIR_H

#include <stddef.h>

struct atomic_file;

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
 * Creates the session directory and opens <host>.xplane.pb in it as an
 * atomic file (lib/atomic_file.h); its path goes to path_out (may be NULL;
 * -ENAMETOOLONG when it does not fit). NULL and errno, the reason logged.
 */
struct atomic_file *xprof_profile_open(const char *logdir, const char *session,
				       const char *host, char *path_out,
				       size_t len);

#endif /* ACCELTRACE_XPROF_LOGDIR_H */
