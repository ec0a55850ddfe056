// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The stats an XSpace event carries: the span's args (constant ones on
 * device planes go to the event's metadata, once), its correlation id,
 * XProf's step grouping (group_id, step_num), the true times of a span
 * clipped to the window, and its flags.
 */
#include <errno.h>
#include <string.h>

#include "lib/array.h"
#include "output/xspace_writer_internal.h"

static const struct {
	uint16_t flag;
	const char *stat;
} flag_stats[] = {
	{ SPAN_F_BEGAN_BEFORE_PROBES, "acceltrace.began_before_probes" },
	{ SPAN_F_OPEN_AT_STOP, "acceltrace.open_at_stop" },
	{ SPAN_F_ENDED_IN_GRACE, "acceltrace.ended_in_grace" },
	{ SPAN_F_TARGET_EXITED, "acceltrace.target_exited" },
	{ SPAN_F_ESTIMATED, "acceltrace.estimated" },
	{ SPAN_F_ERROR, "acceltrace.error" },
};
_Static_assert(sizeof(flag_stats) / sizeof(flag_stats[0]) == NUM_FLAG_STATS,
	       "NUM_FLAG_STATS counts flag_stats");


/* A fixed stat name's id, cached per plane in *slot. */
uint32_t xw_fixed_stat(struct xw *w, uint32_t *slot, const char *name)
{
	if (!*slot)
		*slot = xspace_stats__id(&w->stats, name);
	return *slot;
}

/* The event metadata index for a span's name (its kind's name if none). */
int xw_event_md_index(struct xw *w, const struct capture_span *s, bool *is_new)
{
	const char *name = s->name ? capture__string(w->c, s->name) : NULL;
	uint64_t key;
	uint32_t i;

	if (!name || !name[0]) {
		name = span_kind_name(s->kind);
		key = 1ULL << 32 | s->kind;
	} else {
		key = s->name;
	}
	*is_new = false;
	i = u64_map__get(&w->ev_by_key, key);
	if (i != U64_MAP_NONE)
		return i;
	if (ARRAY_GROW(w->ev, w->ev_cap, w->nev + 1) || u64_map__put(&w->ev_by_key, key, w->nev))
		return -ENOMEM;
	w->ev[w->nev].name = name;
	w->ev[w->nev].nargs = 0;
	*is_new = true;
	return w->nev++;
}

static bool same_arg(const struct capture_arg *a, const struct capture_arg *b)
{
	if (a->key != b->key || a->type != b->type)
		return false;
	switch (a->type) {
	case ARG_U64: return a->value.u == b->value.u;
	case ARG_I64: return a->value.i == b->value.i;
	case ARG_DOUBLE: return !memcmp(&a->value.d, &b->value.d, sizeof(double));
	case ARG_STR: return a->value.str == b->value.str;
	}
	return false;
}

/* Fills st from an arg; false when it cannot be named (skipped). */
bool xw_arg_to_stat(struct xw *w, const struct capture_arg *a, XStat *st)
{
	uint32_t key = xspace_stats__id_of(&w->stats, w->c, a->key);

	if (!key)
		return false;
	tensorflow__profiler__xstat__init(st);
	st->metadata_id = key;
	switch (a->type) {
	case ARG_U64:
		st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
		st->uint64_value = a->value.u;
		break;
	case ARG_I64:
		st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
		st->int64_value = a->value.i;
		break;
	case ARG_DOUBLE:
		st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE;
		st->double_value = a->value.d;
		break;
	case ARG_STR: {
		/* Interned: the value is the name of a stat metadata. */
		uint32_t ref = xspace_stats__id_of(&w->stats, w->c, a->value.str);

		if (ref) {
			st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE;
			st->ref_value = ref;
		} else {
			st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
			st->str_value = (char *)"";
		}
		break;
	}
	default:
		return false;
	}
	return true;
}

static bool is_md_stat(struct xw *w, uint32_t key_sid)
{
	uint32_t id = xspace_stats__id_of(&w->stats, w->c, key_sid);

	return xspace_stats__is_md(&w->stats, id);
}

bool xw_has_stat(XStat **sp, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++) {
		if (sp[i]->metadata_id == id)
			return true;
	}
	return false;
}

/* An int64 stat @name = @v, unless the event already has one (the
 * producer's own). Returns the new count, or -ENOMEM. */
static int int_stat_once(struct xw *w, uint32_t *slot, const char *name, int64_t v,
			 XStat *st, XStat **sp, int n)
{
	uint32_t id = xw_fixed_stat(w, slot, name);

	if (!id)
		return -ENOMEM;
	if (!xw_has_stat(sp, n, id)) {
		xw_stat_int(&st[n], id, v);
		sp[n] = &st[n];
		n++;
	}
	return n;
}

/*
 * The launch an event belongs to: its correlation id, or for device ops,
 * which carry no correlation (XProf would draw a flow to each), their
 * launch_id argument. 0 when none.
 */
static uint64_t launch_of(const struct xw *w, const struct capture_span *s)
{
	if (s->correlation_id)
		return s->correlation_id;
	if (s->kind != SPAN_DEVICE_OP || !w->k_launch_id)
		return 0;
	for (uint32_t i = 0; i < s->nargs && i < CAPTURE_MAX_ARGS; i++)
		if (s->args[i].key == w->k_launch_id &&
		    s->args[i].type == ARG_U64)
			return s->args[i].value.u;
	return 0;
}

/*
 * XProf's grouping: `group_id` on every event of a step's launch (the
 * host's Execute, the device's module and its ops), and `step_num` on the
 * Steps events (step_groups.h). Returns the new count.
 */
static int group_stats(struct xw *w, const struct capture_span *s, XStat *st,
		       XStat **sp, int n)
{
	uint64_t launch = launch_of(w, s);
	int64_t step;

	if (!launch || !step_groups__find(&w->groups, capture__track(w->c, s->track)->pid,
					  launch, &step))
		return n;
	n = int_stat_once(w, &w->st_group, "group_id", step, st, sp, n);
	if (n < 0 || s->kind != SPAN_DEVICE_STEP)
		return n;
	return int_stat_once(w, &w->st_step_num, "step_num", step, st, sp, n);
}

/*
 * An event's stats into st[] (pointers into sp[]): args, correlation_id,
 * clipping and flags. Returns the count, or -ENOMEM.
 */
int xw_event_stats(struct xw *w, const struct capture_span *s,
		       struct event_md *md, bool md_new, XStat *st, XStat **sp)
{
	size_t n = 0;
	uint32_t id;
	int ret;

	for (uint32_t i = 0; i < s->nargs && i < CAPTURE_MAX_ARGS; i++) {
		const struct capture_arg *a = &s->args[i];

		if (w->device_plane && is_md_stat(w, a->key)) {
			bool same = false;

			if (md_new && md->nargs < CAPTURE_MAX_ARGS) {
				md->args[md->nargs++] = *a;
				continue;
			}
			for (uint32_t k = 0; k < md->nargs && !same; k++)
				same = same_arg(&md->args[k], a);
			if (same)
				continue;
		}
		if (!xw_arg_to_stat(w, a, &st[n]) || xw_has_stat(sp, n, st[n].metadata_id))
			continue;
		sp[n] = &st[n];
		n++;
	}
	if (s->correlation_id) {
		id = xw_fixed_stat(w, &w->st_corr, "correlation_id");
		if (!id)
			return -ENOMEM;
		if (!xw_has_stat(sp, n, id)) {
			tensorflow__profiler__xstat__init(&st[n]);
			st[n].metadata_id = id;
			st[n].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
			st[n].uint64_value = s->correlation_id;
			sp[n] = &st[n];
			n++;
		}
	}
	ret = group_stats(w, s, st, sp, n);
	if (ret < 0)
		return ret;
	n = ret;
	if (s->start_ns < w->ws || s->end_ns > w->we) {
		bool cs = s->start_ns < w->ws, ce = s->end_ns > w->we;
		uint32_t ids[3] = {
			xw_fixed_stat(w, &w->st_true_start, STAT_TRUE_START),
			xw_fixed_stat(w, &w->st_true_end, STAT_TRUE_END),
			xw_fixed_stat(w, &w->st_clipped, STAT_CLIPPED),
		};

		if (!ids[0] || !ids[1] || !ids[2])
			return -ENOMEM;
		/* True times relative to the window start; negative before it. */
		xw_stat_int(&st[n], ids[0], (int64_t)(s->start_ns - w->ws));
		sp[n] = &st[n];
		n++;
		xw_stat_int(&st[n], ids[1], (int64_t)(s->end_ns - w->ws));
		sp[n] = &st[n];
		n++;
		tensorflow__profiler__xstat__init(&st[n]);
		st[n].metadata_id = ids[2];
		st[n].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
		st[n].str_value = (char *)(cs && ce ? "both" : cs ? "start" : "end");
		sp[n] = &st[n];
		n++;
	}
	for (size_t f = 0; f < NUM_FLAG_STATS; f++) {
		if (!(s->flags & flag_stats[f].flag))
			continue;
		id = xw_fixed_stat(w, &w->st_flags[f], flag_stats[f].stat);
		if (!id)
			return -ENOMEM;
		xw_stat_int(&st[n], id, 1);
		sp[n] = &st[n];
		n++;
	}
	return n;
}

size_t xw_max_stats(const struct xw *w, const struct capture_span *s)
{
	size_t n = s->nargs < CAPTURE_MAX_ARGS ? s->nargs : CAPTURE_MAX_ARGS;

	n += s->correlation_id != 0;
	n += s->correlation_id || s->kind == SPAN_DEVICE_OP ? 2 : 0;	/* group_id, step_num */
	n += span_is_clipped(s, w->ws, w->we) ? 3 : 0;
	for (size_t f = 0; f < NUM_FLAG_STATS; f++)
		n += !!(s->flags & flag_stats[f].flag);
	return n;
}

