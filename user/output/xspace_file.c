// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The XSpace as a file: written atomically (lib/atomic_file.h) to a path,
 * or into a logdir where XProf finds it (output/xprof_logdir.h), with the
 * reason a write failed logged in words.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "capture/capture.h"
#include "lib/atomic_file.h"
#include "output/xprof_logdir.h"
#include "output/xspace_writer.h"

#define LOG_CONTEXT "xspace"
#include "lib/log.h"

/* Writes the stream; 0 with *bytes for the commit, or -errno (logged). */
static int write_to(const struct capture *c, FILE *f, const char *path,
		    const struct xspace_write_opts *opts, uint64_t *bytes)
{
	int err;

	*bytes = 0;
	err = xspace_write_stream(c, f, opts, bytes);
	switch (err) {
	case 0:
		return 0;
	case -EFBIG:
		log_err("cannot write %s: the capture is larger than %" PRIu64
			" bytes (one XSpace holds at most 2 GiB); shorten the window "
			"or lower the span budget", path,
			opts && opts->max_bytes ? opts->max_bytes : XSPACE_MAX_BYTES);
		break;
	case -EAGAIN:
		log_err("cannot write %s: the capture is not finalized",
			path);
		break;
	case -EOVERFLOW:
		log_err("cannot write %s: the capture window is too long for "
			"picosecond offsets", path);
		break;
	default:
		log_err("cannot write %s: %s", path, io_error_reason(err));
		break;
	}
	return err;
}

int xspace_write_file(const struct capture *c, const char *path,
		      const struct xspace_write_opts *opts)
{
	struct atomic_file *af;
	int err;

	uint64_t bytes;

	af = atomic_file__open(path);
	if (!af)
		return -errno;
	err = write_to(c, atomic_file__stream(af), path, opts, &bytes);
	if (!err)
		err = atomic_file__commit(af, bytes);
	atomic_file__free(af);
	return err;
}

/* Writes into @p, a profile opened for @c; frees it. */
static int write_profile(const struct capture *c, struct xprof_profile *p,
			 struct xspace_written *out)
{
	uint64_t bytes;
	int err;

	if (!p)
		return -errno;
	err = write_to(c, xprof_profile__stream(p), xprof_profile__path(p), NULL, &bytes);
	if (!err)
		err = xprof_profile__commit(p, bytes);
	if (!err && out) {
		snprintf(out->path, sizeof(out->path), "%s", xprof_profile__path(p));
		snprintf(out->session, sizeof(out->session), "%s", xprof_profile__session(p));
		out->spans = capture__spans_kept(c);
		out->bytes = bytes;
	}
	if (!err && strcmp(xprof_profile__session(p), capture__session(c)))
		log_warn("session %s holds a capture of this host already: this one is "
			 "in session %s (%s)", capture__session(c), xprof_profile__session(p),
			 xprof_profile__path(p));
	xprof_profile__free(p);
	return err;
}

int xspace_write_capture(const struct capture *c, const char *logdir,
			 struct xspace_written *out)
{
	return write_profile(c, xprof_profile__open(logdir, capture__session(c),
						    capture__hostname(c)), out);
}

int xspace_write_capture_at(const struct capture *c, int root_fd, const char *root,
			    const char *host, struct xspace_written *out)
{
	return write_profile(c, xprof_profile__openat(root_fd, root, capture__session(c),
						      host ? host : capture__hostname(c)),
			     out);
}
