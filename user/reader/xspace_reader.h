/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An XSpace (`.xplane.pb`) from any producer (acceltrace, JAX's or
 * TensorFlow's profiler) as a generic in-memory model: planes, lines,
 * events with absolute times, their metadata and stats, every name already
 * resolved (stat ids to names, ref_value to the string it points at).
 * Analyses and converters read this, never the protobuf structures.
 */
#ifndef ACCELTRACE_XSPACE_READER_H
#define ACCELTRACE_XSPACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum xs_stat_type {
	XS_STAT_NONE,
	XS_STAT_INT,
	XS_STAT_UINT,
	XS_STAT_DOUBLE,
	XS_STAT_STR,	/* str_value, or ref_value resolved to its name */
	XS_STAT_BYTES,	/* bytes_value, compressed_str_value */
};

struct xs_stat {
	const char *name;	/* "" when the stat metadata is missing */
	enum xs_stat_type type;
	union {
		int64_t i;
		uint64_t u;
		double d;
		const char *s;
		const uint8_t *bytes;
	};
	size_t len;		/* bytes of XS_STAT_BYTES */
};

struct xs_event_meta {
	int64_t id;
	const char *name;
	const char *display_name;	/* "" when unset */
	struct xs_stat *stats;
	size_t n_stats;
};

struct xs_event {
	const struct xs_event_meta *meta;	/* never NULL (a placeholder when missing) */
	int64_t start_ps;	/* line timestamp_ns * 1000 + offset_ps */
	int64_t dur_ps;
	int64_t num_occurrences;	/* 0 for ordinary (timed) events */
	struct xs_stat *stats;
	size_t n_stats;
};

struct xs_line {
	int64_t id, display_id;
	const char *name, *display_name;
	int64_t timestamp_ns, duration_ps;
	struct xs_event *events;	/* by (start asc, duration desc) */
	size_t n_events;
};

struct xs_plane {
	int64_t id;
	const char *name;
	struct xs_line *lines;
	size_t n_lines;
	struct xs_stat *stats;
	size_t n_stats;
	struct xs_event_meta *metas;	/* by id */
	size_t n_metas;
	bool has_group_id;	/* "group_id" is among its stat metadata */
};

struct xs_space {
	struct xs_plane *planes;
	size_t n_planes;
	const char *const *hostnames, *const *errors, *const *warnings;
	size_t n_hostnames, n_errors, n_warnings;
	size_t n_events;	/* over all planes */
	void *priv;		/* the decoded message and the model's arrays */
};

/*
 * Reads and decodes PATH. 0 and *out, or a negative errno with a sentence
 * naming the file and the problem in err (missing, unreadable, not an
 * XSpace, truncated or corrupt, times out of range).
 */
int xs_read_file(const char *path, struct xs_space **out, char *err, size_t errlen);
/* The same from bytes already in memory; name is used in messages only. */
int xs_read_buffer(const uint8_t *buf, size_t len, const char *name,
		   struct xs_space **out, char *err, size_t errlen);
void xs_free(struct xs_space *xs);

/* The stat named NAME among stats, or NULL. */
const struct xs_stat *xs_stat_find(const struct xs_stat *stats, size_t n,
				   const char *name);
/* An event's stat: the event's own first, then its metadata's. */
const struct xs_stat *xs_event_stat(const struct xs_event *e, const char *name);
/*
 * A stat's value as a signed/unsigned/double number; false if not numeric,
 * and for xs_stat_int a double with no int64_t value (NaN, beyond 2^63). A
 * uint64 keeps its bits (ids such as program_id fingerprints).
 */
bool xs_stat_int(const struct xs_stat *s, int64_t *v);
bool xs_stat_double(const struct xs_stat *s, double *v);
/* The plane named NAME, or NULL; the line of plane P named NAME, or NULL. */
const struct xs_plane *xs_plane_named(const struct xs_space *xs, const char *name);
const struct xs_line *xs_line_named(const struct xs_plane *p, const char *name);
/* A device plane: "/device:<kind>:<n>" (TPU, GPU, ...), not "/device:CUSTOM". */
bool xs_is_device_plane(const struct xs_plane *p);
/* The event's display name if set, else its name. */
const char *xs_event_label(const struct xs_event *e);

#endif /* ACCELTRACE_XSPACE_READER_H */
