// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Steps, in the order a capture can tell them:
 * 1. a device `Steps` line (XProf's own step markers);
 * 2. framework step markers on the host (`step_num` on a root event named
 *    `train...`/`test...` or `TraceContext`, or carrying `_r`);
 * 3. without markers: one execution of the dominant program on the device
 *    (analyze/steps.c's rule: the program with the most device time), from
 *    `XLA Modules`, or from device ops grouped into executions by
 *    (program, correlation id) as GPU kernels of one launch share them.
 * Other programs (eval between train steps, one-off initialisation) are
 * not steps; their device time falls in the step they ran in.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/steps.h"
#include "lib/array.h"
#include "lib/hashmap.h"
#include "lib/strtab.h"
#include "report/report_internal.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* A step's start and its number, sorted together. */
struct numbered {
	int64_t start, num;
};

static int cmp_numbered(const void *a, const void *b)
{
	return cmp_i64(&((const struct numbered *)a)->start, &((const struct numbered *)b)->start);
}

/*
 * Steps with numbers (markers' step_num): sorted by start, their numbers
 * kept in c->step_nums when every step has one (a fleet aligns hosts'
 * steps by them). Takes v.
 */
static int take_numbered(struct report_ctx *c, struct numbered *v, size_t n, int64_t end)
{
	int64_t *starts = calloc(n ? n : 1, sizeof(*starts));
	int64_t *nums = calloc(n ? n : 1, sizeof(*nums));
	bool all = n > 0;

	if (!starts || !nums) {
		free(starts);
		free(nums);
		free(v);
		return -ENOMEM;
	}
	array_sort(v, n, sizeof(*v), cmp_numbered);
	for (size_t i = 0; i < n; i++) {
		starts[i] = v[i].start;
		nums[i] = v[i].num;
		all &= v[i].num >= 0;
	}
	free(v);
	if (all)
		c->step_nums = nums;
	else
		free(nums);
	c->step_starts = starts;
	c->n_step_starts = n;
	c->steps_end_ps = end;
	c->r->n_steps = n;
	return 0;
}

/* The event's step_num, or -1. */
static int64_t step_num_of(const struct xs_event *e)
{
	int64_t v;

	return xs_stat_int(xs_event_stat(e, "step_num"), &v) && v >= 0 ? v : -1;
}

static int take_starts(struct report_ctx *c, int64_t *starts, size_t n, int64_t end)
{
	array_sort(starts, n, sizeof(*starts), cmp_i64);
	c->step_starts = starts;
	c->n_step_starts = n;
	c->steps_end_ps = end;
	c->r->n_steps = n;
	return 0;
}

/* A step acceltrace clipped at the window start: its true start is unseen. */
static bool began_before_window(const struct xs_event *e)
{
	const struct xs_stat *c = xs_event_stat(e, "acceltrace.clipped");

	return c && c->type == XS_STAT_STR && (!strcmp(c->s, "start") || !strcmp(c->s, "both"));
}

/*
 * Steps from a Steps line. A step that began before the window counts as
 * found but starts no measured step (like XProf's incomplete steps): the
 * time before the window was not observed.
 */
static int steps_from_line(struct report_ctx *c, const struct xs_plane *p,
			   const struct xs_line *l)
{
	struct numbered *starts = calloc(l->n_events ? l->n_events : 1, sizeof(*starts));
	int64_t end = 0;
	size_t n = 0;
	int ret;

	if (!starts)
		return -ENOMEM;
	for (size_t i = 0; i < l->n_events; i++) {
		if (!began_before_window(&l->events[i]))
			starts[n++] = (struct numbered){ l->events[i].start_ps,
							 step_num_of(&l->events[i]) };
		if (l->events[i].start_ps + l->events[i].dur_ps > end)
			end = l->events[i].start_ps + l->events[i].dur_ps;
	}
	c->dev = p;
	c->r->step_device = p->name;
	snprintf(c->r->step_program, sizeof(c->r->step_program), "%s",
		 l->n_events ? l->events[0].meta->name : "");
	ret = take_numbered(c, starts, n, end);
	c->r->n_steps = l->n_events;
	return ret;
}

static bool is_host_step_marker(const struct xs_event *e)
{
	const char *n = e->meta->name;

	if (!xs_event_stat(e, "step_num"))
		return false;
	if (xs_event_stat(e, "_r") || !strcmp(n, "TraceContext"))
		return true;
	return (!strncmp(n, "train", 5) || !strncmp(n, "test", 4)) && !strchr(n, '/');
}

static int steps_from_host_markers(struct report_ctx *c)
{
	const struct xs_line *best = NULL;
	size_t best_n = 0;
	struct numbered *starts;
	int64_t end = 0;
	size_t n = 0;

	if (!c->host)
		return 0;
	for (size_t i = 0; i < c->host->n_lines; i++) {
		const struct xs_line *l = &c->host->lines[i];
		size_t k = 0;

		for (size_t j = 0; j < l->n_events; j++)
			k += is_host_step_marker(&l->events[j]);
		if (k > best_n) {
			best = l;
			best_n = k;
		}
	}
	if (!best)
		return 0;
	starts = calloc(best_n, sizeof(*starts));
	if (!starts)
		return -ENOMEM;
	for (size_t j = 0; j < best->n_events; j++) {
		const struct xs_event *e = &best->events[j];

		if (!is_host_step_marker(e))
			continue;
		starts[n++] = (struct numbered){ e->start_ps, step_num_of(e) };
		if (e->start_ps + e->dur_ps > end)
			end = e->start_ps + e->dur_ps;
	}
	c->r->step_source = "framework step markers on the host";
	c->loop = best;
	c->r->step_device = "host";
	snprintf(c->r->step_program, sizeof(c->r->step_program), "%s",
		 best->events[0].meta->name);
	return take_numbered(c, starts, n, end);
}

/* One device execution, gathered from its ops or its module event. */
struct execution {
	struct step_candidate cand;
	const struct xs_plane *plane;
};

struct exec_set {
	struct execution *v;
	size_t n, cap;
	struct strtab *programs;
	struct hashmap *by_key;		/* (program << 32 | plane, correlation) -> index + 1 */
};

static int exec_add(struct exec_set *s, const struct xs_plane *p, size_t plane_idx,
		    uint32_t program, uint64_t corr, bool grouped, int64_t a, int64_t b)
{
	uintptr_t idx = 0;

	if (grouped)
		idx = (uintptr_t)hashmap__get(s->by_key, (uint64_t)program << 32 | plane_idx, corr);
	if (idx) {
		struct step_candidate *m = &s->v[idx - 1].cand;

		if ((uint64_t)a / 1000 < m->start_ns)
			m->start_ns = a / 1000;
		if ((uint64_t)b / 1000 > m->end_ns)
			m->end_ns = b / 1000;
		return 0;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		struct execution *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n] = (struct execution){
		.cand = { .pid = 0, .device = (uint32_t)plane_idx, .program = program,
			  .start_ns = a / 1000, .end_ns = b / 1000, .launch_id = corr },
		.plane = p,
	};
	s->n++;
	if (grouped && hashmap__put(s->by_key, (uint64_t)program << 32 | plane_idx, corr,
				    (void *)(uintptr_t)s->n, NULL))
		return -ENOMEM;
	return 0;
}

/* The program an op belongs to: hlo_module's name, else program_id's number. */
static uint32_t op_program(struct exec_set *s, const struct xs_event *e, bool *ok)
{
	const struct xs_stat *st = xs_event_stat(e, "hlo_module");
	char buf[48];
	int64_t id;

	*ok = true;
	if (st && st->type == XS_STAT_STR && st->s[0])
		return strtab__intern(s->programs, st->s, strlen(st->s));
	if (xs_stat_int(xs_event_stat(e, "program_id"), &id)) {
		snprintf(buf, sizeof(buf), "program %" PRId64, id);
		return strtab__intern(s->programs, buf, strlen(buf));
	}
	*ok = false;
	return 0;
}

static int gather_executions(struct report_ctx *c, struct exec_set *s, bool from_ops)
{
	for (size_t i = 0; i < c->xs->n_planes; i++) {
		const struct xs_plane *p = &c->xs->planes[i];

		if (!xs_is_device_plane(p))
			continue;
		for (size_t j = 0; j < p->n_lines; j++) {
			const struct xs_line *l = &p->lines[j];
			bool modules = !strcmp(l->name, "XLA Modules");

			if (from_ops == modules || (from_ops && line_is_device_summary(l->name)))
				continue;
			for (size_t k = 0; k < l->n_events; k++) {
				const struct xs_event *e = &l->events[k];
				int64_t corr = 0;
				uint32_t prog;
				bool ok = true;

				if (from_ops) {
					prog = op_program(s, e, &ok);
					if (!ok)
						continue;
					xs_stat_int(xs_event_stat(e, "correlation_id"), &corr);
				} else {
					prog = strtab__intern(s->programs, e->meta->name,
							      strlen(e->meta->name));
				}
				if (!prog || exec_add(s, p, i, prog, (uint64_t)corr, from_ops,
						      e->start_ps, e->start_ps + e->dur_ps))
					return -ENOMEM;
			}
		}
	}
	return 0;
}

static int steps_from_executions(struct report_ctx *c, bool from_ops)
{
	struct exec_set s = { 0 };
	struct step_candidate *cands = NULL;
	const struct xs_plane *ref = NULL;
	int64_t *starts = NULL, end = 0;
	uint32_t program;
	size_t n = 0;
	int ret = -ENOMEM;

	s.programs = strtab__new();
	s.by_key = hashmap__new();
	if (!s.programs || !s.by_key)
		goto out;
	ret = gather_executions(c, &s, from_ops);
	if (ret || !s.n)
		goto out;
	ret = -ENOMEM;
	cands = calloc(s.n, sizeof(*cands));
	starts = calloc(s.n, sizeof(*starts));
	if (!cands || !starts)
		goto out;
	for (size_t i = 0; i < s.n; i++)
		cands[i] = s.v[i].cand;
	ret = steps_dominant_program(cands, s.n, &program);
	if (ret) {
		ret = ret == -ENOENT ? 0 : ret;
		goto out;
	}
	/* Steps are measured on the first device that ran the program. */
	for (size_t i = 0; i < s.n; i++) {
		if (s.v[i].cand.program != program)
			continue;
		if (!ref)
			ref = s.v[i].plane;
		if (s.v[i].plane != ref)
			continue;
		starts[n++] = (int64_t)s.v[i].cand.start_ns * 1000;
		if ((int64_t)s.v[i].cand.end_ns * 1000 > end)
			end = (int64_t)s.v[i].cand.end_ns * 1000;
	}
	snprintf(c->r->step_program, sizeof(c->r->step_program), "%s",
		 strtab__str(s.programs, program));
	c->r->step_source = from_ops ?
		"executions of the dominant program, from device ops (no step markers)" :
		"executions of the dominant program, from XLA Modules (no step markers)";
	c->dev = ref;
	c->r->step_device = ref->name;
	ret = take_starts(c, starts, n, end);
	starts = NULL;
out:
	free(starts);
	free(cands);
	free(s.v);
	strtab__free(s.programs);
	hashmap__free(s.by_key, NULL);
	return ret;
}

int report_find_steps(struct report_ctx *c)
{
	int ret;

	c->r->step_source = "none";
	c->r->step_device = "";
	for (size_t i = 0; i < c->xs->n_planes; i++) {
		const struct xs_plane *p = &c->xs->planes[i];
		const struct xs_line *l;

		if (!xs_is_device_plane(p))
			continue;
		l = xs_line_named(p, "Steps");
		if (l && l->n_events) {
			c->r->step_source = "the device's Steps line (step markers)";
			return steps_from_line(c, p, l);
		}
	}
	ret = steps_from_host_markers(c);
	if (ret || c->n_step_starts)
		return ret;
	ret = steps_from_executions(c, false);
	if (ret || c->n_step_starts)
		return ret;
	ret = steps_from_executions(c, true);
	if (ret || c->n_step_starts)
		return ret;
	return report_missing(c->r, "steps: no Steps line, no framework step markers, no "
			      "XLA Modules and no device ops with program_id or hlo_module; "
			      "step time, step breakdown and input-bound %% are unknown");
}
