/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Shared by the report's analyses; not part of its interface. */
#ifndef ACCELTRACE_REPORT_INTERNAL_H
#define ACCELTRACE_REPORT_INTERNAL_H

#include "report/report.h"

/* A set of time intervals [a, b) in ps; merged, they are sorted and disjoint. */
struct interval {
	int64_t a, b;
};

struct intervals {
	struct interval *v;
	size_t n, cap;
};

int iv_add(struct intervals *s, int64_t a, int64_t b);
void iv_merge(struct intervals *s);
/* Time of [a, b) that merged set s covers. */
int64_t iv_covered(const struct intervals *s, int64_t a, int64_t b);
void iv_free(struct intervals *s);

/* What the analyses share while a report is built. */
struct report_ctx {
	const struct xs_space *xs;
	struct report *r;
	/* The whole capture's events (a per-process view holds fewer): what
	 * its losses are weighed against. */
	size_t capture_events;
	const struct xs_plane *dev;		/* the reference device, or NULL */
	struct intervals busy;			/* its compute */
	struct intervals input_dev;		/* its input ops (infeed, H2D copies) */
	/* Its op-level lines: XLA Ops, or every stream of a GPU (one a
	 * stream: a program may make hundreds). */
	const struct xs_line **ops_lines;
	size_t n_ops_lines, cap_ops_lines;
	int64_t *step_starts;			/* steps on dev (or the host), sorted */
	int64_t *step_nums;			/* their step_num stats, or NULL */
	size_t n_step_starts;
	int64_t steps_end_ps;			/* end of the last step's device work */
	const struct xs_plane *host;		/* "/host:CPU", or NULL */
	const struct xs_line *loop;		/* the step loop's thread, or NULL */
	int64_t span_start_ps;			/* the capture's first event (0 if none) */
};

/* Records a sentence in r->losses or r->missing; -ENOMEM on failure. */
int report_lost(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int report_missing(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Names by what they do, whatever the producer (report_names.c). */
bool name_is_launch(const char *name);
bool name_is_h2d(const char *name);
bool name_is_file_read(const char *name);
bool name_is_preprocess(const char *name);
bool category_is_input(const char *hlo_category);
bool line_is_device_summary(const char *line_name);

/* The analyses, in the order report_build runs them. */
int report_device_activity(struct report_ctx *c);
int report_find_steps(struct report_ctx *c);
int report_step_breakdown(struct report_ctx *c);
int report_host_idle(struct report_ctx *c, int64_t a, int64_t b);
/* Device idle %% over [a, b) when there are no steps to measure it by. */
void report_device_idle_span(struct report_ctx *c, int64_t a, int64_t b);
int report_top_ops(struct report_ctx *c);
/* Each event's duration less its direct children's, into self[]. */
int line_self_times(const struct xs_line *l, int64_t *self);
int report_input_pipeline(struct report_ctx *c);
int report_losses(struct report_ctx *c);
int report_still_running(struct report_ctx *c);
int report_thread_waits(struct report_ctx *c);
int report_memory(struct report_ctx *c);
void report_environment(struct report_ctx *c);
/* Whether the capture holds enough for a verdict (report_complete.c). */
void report_completeness(struct report_ctx *c);
void report_recommend(struct report *r);

#endif /* ACCELTRACE_REPORT_INTERNAL_H */
