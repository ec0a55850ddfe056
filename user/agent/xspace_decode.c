// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A bounded reader of the protobuf wire format, for the few XSpace fields
 * the agent needs (xspace_decode.h). Two passes: the first checks the
 * whole message against the schema below (every length inside its parent,
 * every known field with its wire type), the second delivers events. The
 * schema is not recursive, so the walk's depth is fixed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/xspace_decode.h"

enum wire { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

struct pb {
	const uint8_t *p, *end;
};

struct pb_field {
	uint32_t num;
	int wt;
	uint64_t v;		/* WT_VARINT, WT_I64, WT_I32 */
	struct pb sub;		/* WT_LEN */
};

static bool pb_varint(struct pb *b, uint64_t *out)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		if (b->p >= b->end)
			return false;
		c = *b->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;		/* over ten bytes */
}

/* 1: a field in @f; 0: the end; -1: malformed. */
static int pb_next(struct pb *b, struct pb_field *f)
{
	uint64_t tag, len;

	if (b->p >= b->end)
		return 0;
	if (!pb_varint(b, &tag) || tag >> 32 || (tag >> 3) == 0)
		return -1;
	f->num = (uint32_t)(tag >> 3);
	f->wt = (int)(tag & 7);
	switch (f->wt) {
	case WT_VARINT:
		return pb_varint(b, &f->v) ? 1 : -1;
	case WT_I64:
		if (b->end - b->p < 8)
			return -1;
		memcpy(&f->v, b->p, 8);
		b->p += 8;
		return 1;
	case WT_I32: {
		uint32_t v;

		if (b->end - b->p < 4)
			return -1;
		memcpy(&v, b->p, 4);
		f->v = v;
		b->p += 4;
		return 1;
	}
	case WT_LEN:
		if (!pb_varint(b, &len) || len > (uint64_t)(b->end - b->p))
			return -1;
		f->sub.p = b->p;
		f->sub.end = b->p + len;
		b->p += len;
		return 1;
	default:
		return -1;	/* groups (3, 4) and reserved types */
	}
}

/* ---------------------------------------------------------------- schema */

enum msg { M_NONE, M_SPACE, M_PLANE, M_LINE, M_EVENT, M_STAT, M_EVMETA, M_STATMETA,
	   M_EVMETA_ENTRY, M_STATMETA_ENTRY };

struct field_rule {
	enum msg msg;
	uint32_t num;
	int wt;
	enum msg sub;		/* WT_LEN holding a message; M_NONE: bytes */
};

/* The fields read, with their types (user/output/xplane.proto). */
static const struct field_rule rules[] = {
	{ M_SPACE, 1, WT_LEN, M_PLANE },
	{ M_PLANE, 1, WT_VARINT, M_NONE }, { M_PLANE, 2, WT_LEN, M_NONE },
	{ M_PLANE, 3, WT_LEN, M_LINE }, { M_PLANE, 4, WT_LEN, M_EVMETA_ENTRY },
	{ M_PLANE, 5, WT_LEN, M_STATMETA_ENTRY }, { M_PLANE, 6, WT_LEN, M_STAT },
	{ M_LINE, 2, WT_LEN, M_NONE }, { M_LINE, 3, WT_VARINT, M_NONE },
	{ M_LINE, 4, WT_LEN, M_EVENT },
	{ M_EVENT, 1, WT_VARINT, M_NONE }, { M_EVENT, 2, WT_VARINT, M_NONE },
	{ M_EVENT, 3, WT_VARINT, M_NONE }, { M_EVENT, 4, WT_LEN, M_STAT },
	{ M_STAT, 1, WT_VARINT, M_NONE }, { M_STAT, 2, WT_I64, M_NONE },
	{ M_STAT, 3, WT_VARINT, M_NONE }, { M_STAT, 4, WT_VARINT, M_NONE },
	{ M_STAT, 5, WT_LEN, M_NONE }, { M_STAT, 7, WT_VARINT, M_NONE },
	{ M_EVMETA_ENTRY, 1, WT_VARINT, M_NONE }, { M_EVMETA_ENTRY, 2, WT_LEN, M_EVMETA },
	{ M_STATMETA_ENTRY, 1, WT_VARINT, M_NONE }, { M_STATMETA_ENTRY, 2, WT_LEN, M_STATMETA },
	{ M_EVMETA, 1, WT_VARINT, M_NONE }, { M_EVMETA, 2, WT_LEN, M_NONE },
	{ M_EVMETA, 5, WT_LEN, M_STAT },
	{ M_STATMETA, 1, WT_VARINT, M_NONE }, { M_STATMETA, 2, WT_LEN, M_NONE },
};

static const struct field_rule *rule_of(enum msg m, uint32_t num)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].msg == m && rules[i].num == num)
			return &rules[i];
	return NULL;
}

/* Every field of @b well formed, known ones with their wire types. */
static bool valid(struct pb b, enum msg m)
{
	struct pb_field f;
	int r;

	while ((r = pb_next(&b, &f)) > 0) {
		const struct field_rule *rule = rule_of(m, f.num);

		if (!rule)
			continue;	/* unknown fields are skipped, as protobuf does */
		if (rule->wt != f.wt)
			return false;
		if (rule->sub != M_NONE && !valid(f.sub, rule->sub))
			return false;
	}
	return r == 0;
}

/* ---------------------------------------------------------------- metadata */

struct meta {
	int64_t id;
	struct xspace_text name;
};

struct meta_table {
	struct meta *v;
	size_t n, cap;
};

static int meta_cmp(const void *a, const void *b)
{
	const struct meta *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static const struct xspace_text *meta_name(const struct meta_table *t, int64_t id)
{
	struct meta key = { .id = id }, *m;

	if (!t->n)
		return NULL;
	m = bsearch(&key, t->v, t->n, sizeof(*t->v), meta_cmp);
	return m ? &m->name : NULL;
}

/* An entry of a map<int64, XEventMetadata or XStatMetadata>: its key and
 * its value's name. */
static void read_entry(struct pb b, struct meta *out)
{
	struct pb_field f, g;

	memset(out, 0, sizeof(*out));
	while (pb_next(&b, &f) > 0) {
		if (f.num == 1 && f.wt == WT_VARINT)
			out->id = (int64_t)f.v;
		else if (f.num == 2 && f.wt == WT_LEN)
			while (pb_next(&f.sub, &g) > 0)
				if (g.num == 2 && g.wt == WT_LEN) {
					out->name.s = (const char *)g.sub.p;
					out->name.len = (size_t)(g.sub.end - g.sub.p);
				}
	}
}

static int meta_add(struct meta_table *t, const struct meta *m, size_t max)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct meta *v;

		if (t->n >= max)
			return 0;	/* bounded: later entries go unnamed */
		if (cap > max)
			cap = max;
		v = realloc(t->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = *m;
	return 0;
}

/* ---------------------------------------------------------------- planes */

struct plane_ctx {
	const struct xspace_limits *lim;
	struct xspace_counts *counts;
	xspace_event_fn fn;
	void *ctx;
	uint32_t device;
	struct meta_table events, stats;
};

static bool text_is(const struct xspace_text *t, const char *s)
{
	size_t n = strlen(s);

	return t && t->len == n && !memcmp(t->s, s, n);
}

/* "/device:<kind>:<N>" (not the host's, nor a custom plane): N. */
static bool device_of(const struct xspace_text *name, uint32_t *device)
{
	static const char prefix[] = "/device:";
	size_t i, n = name->len;
	uint64_t v = 0;

	if (n <= sizeof(prefix) - 1 || memcmp(name->s, prefix, sizeof(prefix) - 1) ||
	    (n >= 15 && !memcmp(name->s, "/device:CUSTOM:", 15)))
		return false;
	for (i = n; i > 0 && name->s[i - 1] >= '0' && name->s[i - 1] <= '9'; i--)
		;
	if (i == n || i == 0 || name->s[i - 1] != ':' || n - i > 6)
		return false;
	for (; i < n; i++)
		v = v * 10 + (uint64_t)(name->s[i] - '0');
	*device = (uint32_t)v;
	return true;
}

static void read_stat(struct plane_ctx *pc, struct pb b, struct xspace_event *ev)
{
	const struct xspace_text *key = NULL;
	struct xspace_text str = { 0 };
	uint64_t u = 0;
	bool has_u = false, has_str = false;
	struct pb_field f;

	while (pb_next(&b, &f) > 0) {
		switch (f.num) {
		case 1: key = meta_name(&pc->stats, (int64_t)f.v); break;
		case 2: {	/* double */
			double d;

			memcpy(&d, &f.v, sizeof(d));
			has_u = d >= 0 && d < 1.8e19;
			u = has_u ? (uint64_t)d : 0;
			break;
		}
		case 3: case 4: u = f.v; has_u = true; break;
		case 5:
			str.s = (const char *)f.sub.p;
			str.len = (size_t)(f.sub.end - f.sub.p);
			has_str = true;
			break;
		case 7: {	/* an interned string: a stat metadata's name */
			const struct xspace_text *t = meta_name(&pc->stats, (int64_t)f.v);

			if (t) {
				str = *t;
				has_str = true;
			}
			break;
		}
		}
	}
	if (!key)
		return;
	if (text_is(key, "run_id") && has_u) {
		ev->run_id = u;
		ev->has_run_id = true;
	} else if (text_is(key, "flops") && has_u) {
		ev->flops = u;
	} else if (text_is(key, "bytes_accessed") && has_u) {
		ev->bytes = u;
	} else if ((text_is(key, "hlo_category") || text_is(key, "category")) && has_str) {
		ev->category = str;
	}
}

static int read_event(struct plane_ctx *pc, struct pb b, enum xspace_line_kind line,
		      int64_t line_ts)
{
	struct xspace_event ev = { .device = pc->device, .line = line };
	const struct xspace_text *name = NULL;
	int64_t offset_ps = 0;
	struct pb_field f;

	while (pb_next(&b, &f) > 0) {
		if (f.num == 1)
			name = meta_name(&pc->events, (int64_t)f.v);
		else if (f.num == 2)
			offset_ps = (int64_t)f.v;
		else if (f.num == 3)
			ev.duration_ps = (int64_t)f.v;
		else if (f.num == 4)
			read_stat(pc, f.sub, &ev);
	}
	if (!name) {
		pc->counts->events_unnamed++;
		return 0;
	}
	if (pc->counts->events >= pc->lim->max_events) {
		pc->counts->events_over++;
		return 0;
	}
	if (ev.duration_ps < 0)
		ev.duration_ps = 0;
	ev.name = *name;
	/* Saturating: a plugin's absurd offset must not wrap around. */
	if (__builtin_add_overflow(line_ts, offset_ps / 1000, &ev.start_ns))
		ev.start_ns = offset_ps > 0 ? INT64_MAX : INT64_MIN;
	pc->counts->events++;
	return pc->fn(pc->ctx, &ev);
}

static int read_line(struct plane_ctx *pc, struct pb b)
{
	struct xspace_text name = { 0 };
	struct pb events = b, at = b;
	enum xspace_line_kind kind;
	int64_t ts = 0;
	struct pb_field f;
	int err;

	while (pb_next(&at, &f) > 0) {
		if (f.num == 2) {
			name.s = (const char *)f.sub.p;
			name.len = (size_t)(f.sub.end - f.sub.p);
		} else if (f.num == 3) {
			ts = (int64_t)f.v;
		}
	}
	if (text_is(&name, "XLA Modules"))
		kind = XSPACE_LINE_MODULES;
	else if (text_is(&name, "XLA Ops"))
		kind = XSPACE_LINE_OPS;
	else
		return 0;
	while (pb_next(&events, &f) > 0) {
		if (f.num != 4)
			continue;
		err = read_event(pc, f.sub, kind, ts);
		if (err)
			return err;
	}
	return 0;
}

static int read_plane(struct plane_ctx *pc, struct pb b)
{
	struct xspace_text name = { 0 };
	struct pb at = b;
	struct pb_field f;
	struct meta m;
	int err = 0;

	while (pb_next(&at, &f) > 0)
		if (f.num == 2) {
			name.s = (const char *)f.sub.p;
			name.len = (size_t)(f.sub.end - f.sub.p);
		}
	if (!device_of(&name, &pc->device))
		return 0;
	pc->counts->planes++;
	if (pc->device < 256)
		pc->counts->devices[pc->device / 64] |= 1ull << (pc->device % 64);
	pc->events.n = pc->stats.n = 0;
	for (at = b; !err && pb_next(&at, &f) > 0;) {
		if (f.num == 4 || f.num == 5) {
			read_entry(f.sub, &m);
			err = meta_add(f.num == 4 ? &pc->events : &pc->stats, &m,
				       pc->lim->max_metadata);
		}
	}
	if (err)
		return err;
	if (pc->events.n)
		qsort(pc->events.v, pc->events.n, sizeof(struct meta), meta_cmp);
	if (pc->stats.n)
		qsort(pc->stats.v, pc->stats.n, sizeof(struct meta), meta_cmp);
	for (at = b; !err && pb_next(&at, &f) > 0;)
		if (f.num == 3)
			err = read_line(pc, f.sub);
	return err;
}

/*
 * XLA's profiler hands over its message and one zero byte more: where a
 * top-level tag should begin, zero bytes to the end close the message
 * (tag 0 is no field). Anything else there is malformed.
 */
static bool message_end(struct pb *b)
{
	struct pb at = *b;
	struct pb_field f;

	while (at.p < at.end) {
		if (*at.p == 0) {
			for (const uint8_t *q = at.p; q < at.end; q++)
				if (*q)
					return false;
			b->end = at.p;
			return true;
		}
		if (pb_next(&at, &f) < 0)
			return false;
	}
	return true;
}

int xspace_decode(const uint8_t *buf, size_t len, const struct xspace_limits *lim,
		  xspace_event_fn fn, void *ctx, struct xspace_counts *counts)
{
	struct plane_ctx pc = { .lim = lim, .counts = counts, .fn = fn, .ctx = ctx };
	struct pb b;
	struct pb_field f;
	int err = 0;

	memset(counts, 0, sizeof(*counts));
	if (len > lim->max_bytes)
		return -E2BIG;
	b.p = buf;
	b.end = buf + len;
	if (!message_end(&b) || !valid(b, M_SPACE))
		return -EINVAL;
	while (!err && pb_next(&b, &f) > 0)
		if (f.num == 1)
			err = read_plane(&pc, f.sub);
	free(pc.events.v);
	free(pc.stats.v);
	return err;
}
