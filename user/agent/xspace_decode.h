/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reads the device timeline out of a serialized XSpace
 * (user/output/xplane.proto), as a PJRT plugin's profiler hands it over:
 * every event of the "XLA Modules" and "XLA Ops" lines of the device planes
 * ("/device:TPU:0", ...), with the names and stats the agent writes into
 * devtrace. The bytes come from a plugin, so nothing in them is trusted:
 * every length is checked, work and memory are bounded by the input's size
 * and by xspace_limits, and a malformed message is refused as a whole
 * before any event is delivered. libc only (the agent lives in other
 * processes), no protobuf library.
 */
#ifndef ACCELTRACE_AGENT_XSPACE_DECODE_H
#define ACCELTRACE_AGENT_XSPACE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum xspace_line_kind {
	XSPACE_LINE_MODULES,	/* "XLA Modules": one event per program execution */
	XSPACE_LINE_OPS,	/* "XLA Ops": one event per op */
};

/* Text from the message: not NUL-terminated, valid during the callback. */
struct xspace_text {
	const char *s;
	size_t len;
};

struct xspace_event {
	uint32_t device;		/* N of "/device:<kind>:N" */
	enum xspace_line_kind line;
	struct xspace_text name;	/* the event metadata's name */
	struct xspace_text category;	/* stat "hlo_category" (or "category"); may be empty */
	int64_t start_ns;		/* the clock of the XSpace (CLOCK_REALTIME) */
	int64_t duration_ps;
	uint64_t run_id;		/* stat "run_id" (modules), when has_run_id */
	bool has_run_id;
	uint64_t flops;			/* stat "flops", 0 when absent */
	uint64_t bytes;			/* stat "bytes_accessed", 0 when absent */
};

struct xspace_limits {
	size_t max_bytes;		/* a larger input is refused */
	size_t max_events;		/* events delivered at most (the rest counted) */
	size_t max_metadata;		/* metadata entries per plane at most */
};

struct xspace_counts {
	size_t planes;			/* device planes read */
	uint64_t devices[4];		/* bit N: a plane of device N (N < 256), events or not */
	size_t events;			/* delivered */
	size_t events_over;		/* past max_events, not delivered */
	size_t events_unnamed;		/* metadata id not in the plane's map */
};

/* 0 to go on; nonzero stops the decode, which returns it. */
typedef int (*xspace_event_fn)(void *ctx, const struct xspace_event *ev);

/*
 * Delivers the device events of @buf (@len bytes; trailing zero bytes,
 * which XLA's profiler appends, are allowed). Returns 0, -EINVAL for a
 * malformed message (nothing delivered), -E2BIG over max_bytes, -ENOMEM,
 * or the callback's nonzero value.
 */
int xspace_decode(const uint8_t *buf, size_t len, const struct xspace_limits *lim,
		  xspace_event_fn fn, void *ctx, struct xspace_counts *counts);

#endif /* ACCELTRACE_AGENT_XSPACE_DECODE_H */
