// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The XSpace as a file: written atomically (lib/atomic_file.h) to a path,
 * or into a logdir where XProf finds it (output/xprof_logdir.h), with the
 * reason a write failed logged in words.
 */
#include <errno.h>
#include <inttypes.h>

#include "capture/capture.h"
#include "lib/atomic_file.h"
#include "output/xprof_logdir.h"
#include "output/xspace_writer.h"

#define LOG_CONTEXT "xspace"
#include "lib/log.h"

static int write_to(const struct capture *c, struct atomic_file *af,
		    const struct xspace_write_opts *opts)
{
	uint64_t bytes = 0;
	int err;

	err = xspace_write_stream(c, atomic_file__stream(af), opts, &bytes);
	switch (err) {
	case 0:
		return atomic_file__commit(af, bytes);
	case -EFBIG:
		log_err("cannot write %s: the capture is larger than %" PRIu64
			" bytes (one XSpace holds at most 2 GiB); shorten the window "
			"or lower the span budget", atomic_file__path(af),
			opts && opts->max_bytes ? opts->max_bytes : XSPACE_MAX_BYTES);
		break;
	case -EAGAIN:
		log_err("cannot write %s: the capture is not finalized",
			atomic_file__path(af));
		break;
	case -EOVERFLOW:
		log_err("cannot write %s: the capture window is too long for "
			"picosecond offsets", atomic_file__path(af));
		break;
	default:
		log_err("cannot write %s: %s", atomic_file__path(af), io_error_reason(err));
		break;
	}
	return err;
}

int xspace_write_file(const struct capture *c, const char *path,
		      const struct xspace_write_opts *opts)
{
	struct atomic_file *af;
	int err;

	af = atomic_file__open(path);
	if (!af)
		return -errno;
	err = write_to(c, af, opts);
	atomic_file__free(af);
	return err;
}

int xspace_write_capture(const struct capture *c, const char *logdir,
			 char *path_out, size_t len)
{
	struct atomic_file *af;
	int err;

	af = xprof_profile_open(logdir, capture__session(c), capture__hostname(c),
				path_out, len);
	if (!af)
		return -errno;
	err = write_to(c, af, NULL);
	atomic_file__free(af);
	return err;
}
