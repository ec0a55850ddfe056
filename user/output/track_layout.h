/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Laying out one track of a capture for a viewer that shows a window of
 * time and nests overlapping spans: which spans overlap the window, their
 * times clipped to it, their order (clipped start ascending, the longer
 * first), and the row each goes on, so that on every row each span lies
 * within the span it overlaps. Spans that only partly overlap (neither nests
 * in the other) go to extra rows. Written against the capture model only;
 * what a row becomes (an XLine, a Perfetto track) is the writer's business.
 *
 *	struct track_layout *l = track_layout__new();
 *	err = track_layout__run(l, spans, n, ws, we);
 *	order = track_layout__order(l); slot = track_layout__slot(l);
 *	for (k = 0; k < track_layout__count(l); k++)
 *		// span spans[order[k]] goes to position slot[k] of the
 *		// row-major sequence; track_layout__row() gives each row's range
 *	track_layout__free(l);
 *
 * The object keeps its buffers between runs, grown to the largest track.
 */
#ifndef ACCELTRACE_TRACK_LAYOUT_H
#define ACCELTRACE_TRACK_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capture/capture.h"

struct track_layout;

/* NULL and errno on failure. */
struct track_layout *track_layout__new(void);
/* Accepts NULL. */
void track_layout__free(struct track_layout *l);

/*
 * Lays out sp[0..n), a track's spans sorted as capture__track_spans()
 * returns them (start ascending, end descending), for the window
 * [ws, we]. 0 or -ENOMEM (then the layout is empty).
 */
int track_layout__run(struct track_layout *l, const struct capture_span *sp,
		      size_t n, uint64_t ws, uint64_t we);

/* Spans laid out by the last run (those that overlap the window). */
size_t track_layout__count(const struct track_layout *l);
/* Spans of the last run wholly outside the window (not laid out). */
uint64_t track_layout__outside(const struct track_layout *l);
/* By layout position k < count: the span's index in sp[]. */
const uint32_t *track_layout__order(const struct track_layout *l);
/*
 * By layout position k: its place in the row-major sequence (row 0's spans
 * in layout order, then row 1's, ...).
 */
const uint32_t *track_layout__slot(const struct track_layout *l);
/* Rows used by the last run (0 when nothing overlaps the window). */
size_t track_layout__rows(const struct track_layout *l);
/* Row j's spans are slots [*first, *first + *count). */
void track_layout__row(const struct track_layout *l, size_t j, size_t *first,
		       size_t *count);

/* ---- finding and clipping spans by time ---- */

/* The first index in sp[0..n), sorted by start, whose start is after t. */
size_t track_spans_first_start_after(const struct capture_span *sp, size_t n,
				     uint64_t t);

static inline uint64_t span_clip_start(const struct capture_span *s, uint64_t ws)
{
	return s->start_ns > ws ? s->start_ns : ws;
}

static inline uint64_t span_clip_end(const struct capture_span *s, uint64_t we)
{
	return s->end_ns < we ? s->end_ns : we;
}

/* Whether the span extends outside [ws, we] (a writer that clips says so). */
static inline bool span_is_clipped(const struct capture_span *s, uint64_t ws,
				  uint64_t we)
{
	return s->start_ns < ws || s->end_ns > we;
}

#endif /* ACCELTRACE_TRACK_LAYOUT_H */
