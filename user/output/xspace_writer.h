/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writes a finalized capture as a tensorflow.profiler.XSpace, the
 * .xplane.pb file TensorBoard's profile plugin (XProf) opens. The mapping
 * (planes, lines, stats, clipping) is in docs/capture-format.md; where the
 * file goes in a logdir is output/xprof_logdir.h.
 *
 * Streaming: planes are written one line at a time, so the writer's memory
 * is bounded by the largest track plus the per-plane metadata (distinct
 * names), not by the capture.
 */
#ifndef ACCELTRACE_XSPACE_WRITER_H
#define ACCELTRACE_XSPACE_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "capture/capture.h"

/* The Task Environment plane's string stat saying why the capture was
 * taken (capture__set_reason), which report leads with. */
#define STAT_CAPTURE_REASON "acceltrace.capture_reason"
/* ... and its int64 stat naming the process it is about (trigger --pid),
 * whose report comes first. */
#define STAT_FOCUS_PID "acceltrace.focus_pid"
/* ... an int64 stat per span kind the budget dropped, named by the kind
 * ("acceltrace.dropped.device_op"), and the window's records lost on the
 * way (the kernel's rings, device trace buffers overwritten, malformed
 * records: capture__count_event_loss), summed. */
#define STAT_DROPPED_PREFIX "acceltrace.dropped."
#define STAT_LOST_RECORDS "acceltrace.lost_records"

/* What an event can take in the file, for estimates before a window:
 * acceltrace's captures run from about 75 B an event (host calls, device
 * ops) to 150 B (GPU kernels with their launch's stats). */
#define XSPACE_BYTES_PER_EVENT_BOUND 160

/* One protobuf message (the whole file) cannot exceed 2 GiB. */
#define XSPACE_MAX_BYTES ((uint64_t)INT32_MAX)

struct xspace_write_opts {
	size_t sz;		/* sizeof(struct xspace_write_opts) */
	/* Refuse to write more than this (0: XSPACE_MAX_BYTES). -EFBIG. */
	uint64_t max_bytes;
};
#define xspace_write_opts__last_field max_bytes

/*
 * Writes the XSpace to out, which must be seekable (each plane's length is
 * patched in after the plane). Logs nothing: returns 0 or -errno (-EAGAIN:
 * capture not finalized; -ESPIPE: out not seekable; -EFBIG: over
 * max_bytes; -EOVERFLOW: window too long for picoseconds; I/O errors as
 * the stream reported them) and the bytes written through *bytes.
 */
int xspace_write_stream(const struct capture *c, FILE *out,
			const struct xspace_write_opts *opts, uint64_t *bytes);

/* Writes path atomically (lib/atomic_file.h); 0 or -errno, the reason logged. */
int xspace_write_file(const struct capture *c, const char *path,
		      const struct xspace_write_opts *opts);

/* Where xspace_write_capture put a capture. */
struct xspace_written {
	char path[4096];
	/* The session directory it went to: the capture's own, or that with
	 * a suffix ("-2") when that one held this host's capture already. */
	char session[256];
	uint64_t spans;		/* the spans it holds: 0, an empty trace */
	uint64_t bytes;		/* the file's size */
};

/*
 * For `record` and the daemon: creates <logdir>/plugins/profile/<session>/
 * and writes <host>.xplane.pb there atomically (session and host from the
 * capture), never over a capture already there (output/xprof_logdir.h:
 * another session name then). Where it went goes to @out (may be NULL).
 * 0 or -errno, the reason logged.
 */
int xspace_write_capture(const struct capture *c, const char *logdir,
			 struct xspace_written *out);

/*
 * The same under a profile directory the caller opened (@root_fd; @root
 * its path, for messages): <root>/<session>/<host>.xplane.pb, @host
 * instead of the capture's own (NULL: the capture's).
 */
int xspace_write_capture_at(const struct capture *c, int root_fd, const char *root,
			    const char *host, struct xspace_written *out);

/* XProf's line name for a device track kind ("Steps", "XLA Modules",
 * "XLA Ops"); NULL for host threads and for streams, whose lines are named
 * by their stream id and what runs on them ("Stream #14(Compute)"). */
const char *xprof_line_name(enum track_kind kind);

#endif /* ACCELTRACE_XSPACE_WRITER_H */
