// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The XSpace writer. protobuf-c builds and packs each XLine (with its
 * events and stats), each metadata entry and each plane stat; the outer
 * framing (XSpace fields, XPlane fields) is written here, with each plane's
 * length written as a fixed-width 5-byte varint placeholder and patched
 * once the plane is done. Parsers accept such non-minimal varints
 * (tests/output/test_xspace_decode.sh proves it with protoc and Python).
 *
 * Memory: one track's events at a time (reused buffers, grown to the
 * largest track), plus per-plane tables of the distinct names in use.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "lib/atomic_file.h"
#include "capture/capture.h"
#include "xplane.pb-c.h"
#include "lib/array.h"
#include "lib/u64_map.h"
#include "output/xspace_writer.h"

#define LOG_CONTEXT "xspace"
#include "lib/log.h"

typedef Tensorflow__Profiler__XEvent XEvent;
typedef Tensorflow__Profiler__XStat XStat;
typedef Tensorflow__Profiler__XLine XLine;
typedef Tensorflow__Profiler__XEventMetadata XEventMetadata;
typedef Tensorflow__Profiler__XStatMetadata XStatMetadata;

#define WIRE_VARINT 0
#define WIRE_LEN 2
#define PLANE_LEN_BYTES 5	/* 35 bits: every length under the 2 GiB cap */

/* XSpace and XPlane field numbers (user/output/xplane.proto). */
#define XSPACE_PLANES 1
#define XSPACE_WARNINGS 3
#define XSPACE_HOSTNAMES 4
#define XPLANE_ID 1
#define XPLANE_NAME 2
#define XPLANE_LINES 3
#define XPLANE_EVENT_METADATA 4
#define XPLANE_STAT_METADATA 5
#define XPLANE_STATS 6

/* Line ids of device lines; extra lines for overlaps add k << 32. */
#define LINE_ID_STEPS 1
#define LINE_ID_MODULES 2
#define LINE_ID_OPS 3
#define EXTRA_LINE_SHIFT 32

#define STAT_TRUE_START "acceltrace.true_start_ns"
#define STAT_TRUE_END "acceltrace.true_end_ns"
#define STAT_CLIPPED "acceltrace.clipped"

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
#define NUM_FLAG_STATS (sizeof(flag_stats) / sizeof(flag_stats[0]))

/*
 * Per-op constants that XProf reads from XEventMetadata.stats, not from the
 * event (xprof-contract.md 1.2, "Metadata-level stats"). On device planes
 * these args go to the metadata of the event's name, from its first
 * occurrence; an occurrence with a different value carries it itself.
 */
static const char *const metadata_stat_names[] = {
	"program_id", "hlo_category", "tf_op", "tf_op_name", "flops",
	"model_flops", "bytes_accessed", "raw_bytes_accessed",
	"memory_access_breakdown", "deduplicated_name", "source",
	"source_stack", "hlo_module", "long_name", "shape_with_layout",
};

/* Stats an event can carry: args, correlation id, clipping (3), flags. */
#define MAX_EVENT_STATS (CAPTURE_MAX_ARGS + 1 + 3 + NUM_FLAG_STATS)

/* ---- small tables ------------------------------------------------------ */

#define NO_ID U64_MAP_NONE


#define GROW(arr, cap, need) ARRAY_GROW(arr, cap, need)

/*
 * A plane's stat metadata: names (unique, by content) -> ids from 1. The
 * names point into the capture's strings or at literals, both stable.
 */
struct stat_names {
	const char **str;	/* by id; [0] unused */
	uint32_t *hash;		/* by id */
	bool *md_stat;		/* by id: a metadata_stat_names entry */
	size_t n, cap;		/* ids 1 .. n-1 */
	uint32_t *slots;	/* 0: empty */
	size_t slots_cap;
	struct u64_map by_sid;	/* capture string id -> stat id */
	bool oom;		/* an allocation failed: the plane is incomplete */
};

static uint32_t str_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

static void stat_names_reset(struct stat_names *t)
{
	t->n = 1;
	t->oom = false;
	if (t->slots_cap)
		memset(t->slots, 0, t->slots_cap * sizeof(*t->slots));
	u64_map__clear(&t->by_sid);
}

static void stat_names_free(struct stat_names *t)
{
	free(t->str);
	free(t->hash);
	free(t->md_stat);
	free(t->slots);
	u64_map__free(&t->by_sid);
}

static int stat_names_rehash(struct stat_names *t, size_t cap)
{
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (uint32_t id = 1; id < t->n; id++) {
		size_t i = t->hash[id] & (cap - 1);

		while (slots[i])
			i = (i + 1) & (cap - 1);
		slots[i] = id;
	}
	free(t->slots);
	t->slots = slots;
	t->slots_cap = cap;
	return 0;
}

static uint32_t stat_id_add(struct stat_names *t, const char *name);

/* The id of a name, added when new; 0 (and t->oom) on allocation failure. */
static uint32_t stat_id(struct stat_names *t, const char *name)
{
	uint32_t id = stat_id_add(t, name);

	if (!id)
		t->oom = true;
	return id;
}

static uint32_t stat_id_add(struct stat_names *t, const char *name)
{
	uint32_t h = str_hash(name), id;
	size_t i;

	if (t->slots_cap) {
		for (i = h & (t->slots_cap - 1); (id = t->slots[i]);
		     i = (i + 1) & (t->slots_cap - 1)) {
			if (t->hash[id] == h && !strcmp(t->str[id], name))
				return id;
		}
	}
	if ((t->n + 1) * 2 > t->slots_cap &&
	    stat_names_rehash(t, t->slots_cap ? t->slots_cap * 2 : 64))
		return 0;
	if (t->n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		const char **str = realloc(t->str, cap * sizeof(*str));
		uint32_t *hash;
		bool *md;

		if (!str)
			return 0;
		t->str = str;
		hash = realloc(t->hash, cap * sizeof(*hash));
		if (!hash)
			return 0;
		t->hash = hash;
		md = realloc(t->md_stat, cap * sizeof(*md));
		if (!md)
			return 0;
		t->md_stat = md;
		t->cap = cap;
	}
	id = t->n++;
	t->str[id] = name;
	t->hash[id] = h;
	t->md_stat[id] = false;
	for (size_t k = 0; k < sizeof(metadata_stat_names) / sizeof(metadata_stat_names[0]); k++) {
		if (!strcmp(name, metadata_stat_names[k])) {
			t->md_stat[id] = true;
			break;
		}
	}
	for (i = h & (t->slots_cap - 1); t->slots[i]; i = (i + 1) & (t->slots_cap - 1))
		;
	t->slots[i] = id;
	return id;
}

/* The stat id of a capture string; 0 for "" or unknown, or no memory. */
static uint32_t stat_id_sid(struct stat_names *t, const struct capture *c,
			    uint32_t sid)
{
	const char *s;
	uint32_t id = u64_map__get(&t->by_sid, sid);

	if (id != NO_ID)
		return id;
	s = capture__string(c, sid);
	if (!s || !s[0])
		return 0;
	id = stat_id(t, s);
	if (id && u64_map__put(&t->by_sid, sid, id)) {
		t->oom = true;
		return 0;
	}
	return id;
}

/* ---- output ------------------------------------------------------------ */

struct out {
	FILE *f;
	off_t base;		/* stream offset where the XSpace starts */
	uint64_t pos;		/* bytes written */
	uint64_t max;
	int err;		/* first error, sticky */
};

static void out_bytes(struct out *o, const void *p, size_t n)
{
	if (o->err || !n)
		return;
	if (o->pos + n > o->max) {
		o->err = -EFBIG;
		return;
	}
	errno = 0;
	if (fwrite(p, 1, n, o->f) != n) {
		o->err = errno ? -errno : -EIO;
		return;
	}
	o->pos += n;
}

static size_t varint_encode(uint8_t *buf, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		buf[n++] = (uint8_t)v | 0x80;
		v >>= 7;
	}
	buf[n++] = (uint8_t)v;
	return n;
}

static void out_varint(struct out *o, uint64_t v)
{
	uint8_t buf[10];

	out_bytes(o, buf, varint_encode(buf, v));
}

static void out_tag(struct out *o, uint32_t field, uint32_t wire)
{
	out_varint(o, (uint64_t)field << 3 | wire);
}

static void out_len_field(struct out *o, uint32_t field, const void *p, size_t n)
{
	out_tag(o, field, WIRE_LEN);
	out_varint(o, n);
	out_bytes(o, p, n);
}

static void out_string_field(struct out *o, uint32_t field, const char *s)
{
	out_len_field(o, field, s, strlen(s));
}

/* Opens a length-delimited field whose length is patched by out_end_len. */
static uint64_t out_begin_len(struct out *o, uint32_t field)
{
	static const uint8_t placeholder[PLANE_LEN_BYTES] = { 0x80, 0x80, 0x80, 0x80, 0x00 };
	uint64_t at;

	out_tag(o, field, WIRE_LEN);
	at = o->pos;
	out_bytes(o, placeholder, sizeof(placeholder));
	return at;
}

static void out_end_len(struct out *o, uint64_t at)
{
	uint64_t len = o->pos - at - PLANE_LEN_BYTES;
	uint8_t b[PLANE_LEN_BYTES];

	if (o->err)
		return;
	if (len >> (7 * PLANE_LEN_BYTES)) {
		o->err = -EFBIG;
		return;
	}
	/* A padded varint: continuation bits on all but the last byte. */
	for (int i = 0; i < PLANE_LEN_BYTES; i++)
		b[i] = ((len >> (7 * i)) & 0x7f) | (i < PLANE_LEN_BYTES - 1 ? 0x80 : 0);
	errno = 0;
	if (fseeko(o->f, o->base + (off_t)at, SEEK_SET) ||
	    fwrite(b, 1, sizeof(b), o->f) != sizeof(b) ||
	    fseeko(o->f, o->base + (off_t)o->pos, SEEK_SET))
		o->err = errno ? -errno : -EIO;
}

/* ---- the writer -------------------------------------------------------- */

struct event_md {
	const char *name;
	uint32_t nargs;		/* constant stats (device planes) */
	struct capture_arg args[CAPTURE_MAX_ARGS];
};

struct subline {
	uint64_t *ends;		/* stack of open events' clipped ends */
	size_t depth, cap;
	size_t nevents, first;	/* count; first slot in the pointer array */
};

struct xw {
	const struct capture *c;
	struct out o;
	uint64_t ws, we;	/* the window */

	/* Per plane. */
	bool device_plane;
	struct stat_names stats;
	struct u64_map ev_by_key;	/* name key -> event metadata index */
	struct event_md *ev;
	size_t nev, ev_cap;
	uint32_t st_corr, st_true_start, st_true_end, st_clipped;
	uint32_t st_flags[NUM_FLAG_STATS];

	/* Per track, reused: grown to the largest track. */
	uint32_t *order;	/* spans in line order (indices) */
	size_t order_cap;
	uint32_t *sub;		/* each ordered span's line */
	size_t sub_cap;
	struct subline *sublines;
	size_t nsub, nsub_alloc, sub_lines_cap;
	XEvent *events;
	size_t events_cap;
	XEvent **event_ptrs;
	size_t event_ptrs_cap;
	XStat *stat_buf;
	size_t stat_buf_cap;
	XStat **stat_ptrs;
	size_t stat_ptrs_cap;
	uint8_t *packed;
	size_t packed_cap;

	/* Device index -> its track per kind. */
	uint32_t (*dev_tracks)[TRACK_KIND__COUNT];

	/* Totals. */
	uint64_t outside;	/* spans wholly outside the window */
	uint64_t events_written;
};

static void xw_free(struct xw *w)
{
	stat_names_free(&w->stats);
	u64_map__free(&w->ev_by_key);
	free(w->ev);
	free(w->order);
	free(w->sub);
	for (size_t i = 0; i < w->nsub_alloc; i++)
		free(w->sublines[i].ends);
	free(w->sublines);
	free(w->events);
	free(w->event_ptrs);
	free(w->stat_buf);
	free(w->stat_ptrs);
	free(w->packed);
	free(w->dev_tracks);
}

static void plane_reset(struct xw *w, bool device_plane)
{
	w->device_plane = device_plane;
	stat_names_reset(&w->stats);
	u64_map__clear(&w->ev_by_key);
	w->nev = 0;
	w->st_corr = w->st_true_start = w->st_true_end = w->st_clipped = 0;
	memset(w->st_flags, 0, sizeof(w->st_flags));
}

/* A fixed stat name's id, cached per plane in *slot. */
static uint32_t fixed_stat(struct xw *w, uint32_t *slot, const char *name)
{
	if (!*slot)
		*slot = stat_id(&w->stats, name);
	return *slot;
}

/* The event metadata index for a span's name (its kind's name if none). */
static int event_md_index(struct xw *w, const struct capture_span *s, bool *is_new)
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
	if (i != NO_ID)
		return i;
	if (GROW(w->ev, w->ev_cap, w->nev + 1) || u64_map__put(&w->ev_by_key, key, w->nev))
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
static bool arg_to_stat(struct xw *w, const struct capture_arg *a, XStat *st)
{
	uint32_t key = stat_id_sid(&w->stats, w->c, a->key);

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
		uint32_t ref = stat_id_sid(&w->stats, w->c, a->value.str);

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
	uint32_t id = stat_id_sid(&w->stats, w->c, key_sid);

	return id && w->stats.md_stat[id];
}

static bool has_stat(XStat **sp, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++) {
		if (sp[i]->metadata_id == id)
			return true;
	}
	return false;
}

static void stat_int(XStat *st, uint32_t id, int64_t v)
{
	tensorflow__profiler__xstat__init(st);
	st->metadata_id = id;
	st->value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	st->int64_value = v;
}

/*
 * An event's stats into st[] (pointers into sp[]): args, correlation_id,
 * clipping and flags. Returns the count, or -ENOMEM.
 */
static int event_stats(struct xw *w, const struct capture_span *s,
		       struct event_md *md, bool md_new, XStat *st, XStat **sp)
{
	size_t n = 0;
	uint32_t id;

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
		if (!arg_to_stat(w, a, &st[n]) || has_stat(sp, n, st[n].metadata_id))
			continue;
		sp[n] = &st[n];
		n++;
	}
	if (s->correlation_id) {
		id = fixed_stat(w, &w->st_corr, "correlation_id");
		if (!id)
			return -ENOMEM;
		if (!has_stat(sp, n, id)) {
			tensorflow__profiler__xstat__init(&st[n]);
			st[n].metadata_id = id;
			st[n].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
			st[n].uint64_value = s->correlation_id;
			sp[n] = &st[n];
			n++;
		}
	}
	if (s->start_ns < w->ws || s->end_ns > w->we) {
		bool cs = s->start_ns < w->ws, ce = s->end_ns > w->we;
		uint32_t ids[3] = {
			fixed_stat(w, &w->st_true_start, STAT_TRUE_START),
			fixed_stat(w, &w->st_true_end, STAT_TRUE_END),
			fixed_stat(w, &w->st_clipped, STAT_CLIPPED),
		};

		if (!ids[0] || !ids[1] || !ids[2])
			return -ENOMEM;
		/* True times relative to the window start; negative before it. */
		stat_int(&st[n], ids[0], (int64_t)(s->start_ns - w->ws));
		sp[n] = &st[n];
		n++;
		stat_int(&st[n], ids[1], (int64_t)(s->end_ns - w->ws));
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
		id = fixed_stat(w, &w->st_flags[f], flag_stats[f].stat);
		if (!id)
			return -ENOMEM;
		stat_int(&st[n], id, 1);
		sp[n] = &st[n];
		n++;
	}
	return n;
}

struct line_ident {
	int64_t id;		/* of the first line; extras add k << 32 */
	const char *name;
	const char *display_name;	/* NULL: none */
};

static uint64_t clip_end(const struct xw *w, const struct capture_span *s)
{
	return s->end_ns < w->we ? s->end_ns : w->we;
}

struct prefix_ctx {
	const struct capture_span *spans;
	uint64_t we;
};

/* Spans starting at or before the window: clipped end descending, stable. */
static int prefix_cmp(const void *a, const void *b, void *arg)
{
	const struct prefix_ctx *ctx = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t ex = ctx->spans[x].end_ns, ey = ctx->spans[y].end_ns;

	if (ex > ctx->we)
		ex = ctx->we;
	if (ey > ctx->we)
		ey = ctx->we;
	if (ex != ey)
		return ex > ey ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Places a span (clipped [cs, ce]) on the first line where it nests. */
static int assign_subline(struct xw *w, uint64_t cs, uint64_t ce, uint32_t *out)
{
	size_t j;

	for (j = 0; j < w->nsub; j++) {
		struct subline *l = &w->sublines[j];

		while (l->depth && l->ends[l->depth - 1] <= cs)
			l->depth--;
		if (!l->depth || l->ends[l->depth - 1] >= ce)
			break;
	}
	if (j == w->nsub) {
		if (GROW(w->sublines, w->sub_lines_cap, w->nsub + 1))
			return -ENOMEM;
		/* Stacks of earlier tracks' lines are kept for reuse. */
		if (w->nsub >= w->nsub_alloc) {
			memset(&w->sublines[w->nsub], 0, sizeof(w->sublines[0]));
			w->nsub_alloc = w->nsub + 1;
		}
		w->sublines[w->nsub].depth = 0;
		w->sublines[w->nsub].nevents = 0;
		w->nsub++;
	}
	{
		struct subline *l = &w->sublines[j];

		if (GROW(l->ends, l->cap, l->depth + 1))
			return -ENOMEM;
		l->ends[l->depth++] = ce;
		l->nevents++;
	}
	*out = j;
	return 0;
}

static void pack_field(struct xw *w, uint32_t field, const ProtobufCMessage *msg)
{
	size_t size = protobuf_c_message_get_packed_size(msg);

	if (w->o.err)
		return;
	if (size > w->o.max) {
		w->o.err = -EFBIG;
		return;
	}
	if (GROW(w->packed, w->packed_cap, size ? size : 1)) {
		w->o.err = -ENOMEM;
		return;
	}
	protobuf_c_message_pack(msg, w->packed);
	out_len_field(&w->o, field, w->packed, size);
}

/* First index in sp[0..n) whose start is after t (spans sorted by start). */
static size_t first_start_after(const struct capture_span *sp, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp[mid].start_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t max_stats(const struct xw *w, const struct capture_span *s)
{
	size_t n = s->nargs < CAPTURE_MAX_ARGS ? s->nargs : CAPTURE_MAX_ARGS;

	n += s->correlation_id != 0;
	n += (s->start_ns < w->ws || s->end_ns > w->we) ? 3 : 0;
	for (size_t f = 0; f < NUM_FLAG_STATS; f++)
		n += !!(s->flags & flag_stats[f].flag);
	return n;
}

/*
 * Writes one track as XLines: its spans clipped to the window, in (start
 * asc, duration desc) order, on as many lines as it takes for every line
 * to nest (lines after the first share its display_id, so its row).
 */
static int write_track(struct xw *w, const struct capture_span *sp, size_t n,
		       const struct line_ident *li)
{
	size_t m, last, norder = 0, nstats = 0, used = 0, first = 0;
	int err;

	/* [0, m) start at or before the window start, [last, n) after its stop. */
	m = first_start_after(sp, n, w->ws);
	last = first_start_after(sp, n, w->we);
	if (m > last)
		m = last;
	if (GROW(w->order, w->order_cap, last ? last : 1))
		return -ENOMEM;
	for (size_t i = 0; i < m; i++) {
		if (sp[i].end_ns >= w->ws)
			w->order[norder++] = i;
		else
			w->outside++;
	}
	/* Clipped, they all start at the window start: longest first. */
	qsort_r(w->order, norder, sizeof(w->order[0]), prefix_cmp,
		&(struct prefix_ctx){ .spans = sp, .we = w->we });
	for (size_t i = m; i < last; i++)
		w->order[norder++] = i;
	w->outside += n - last;
	if (!norder)
		return 0;

	if (GROW(w->sub, w->sub_cap, norder))
		return -ENOMEM;
	w->nsub = 0;
	for (size_t k = 0; k < norder; k++) {
		const struct capture_span *s = &sp[w->order[k]];
		uint64_t cs = s->start_ns > w->ws ? s->start_ns : w->ws;

		err = assign_subline(w, cs, clip_end(w, s), &w->sub[k]);
		if (err)
			return err;
		nstats += max_stats(w, s);
	}
	if (GROW(w->events, w->events_cap, norder) ||
	    GROW(w->event_ptrs, w->event_ptrs_cap, norder) ||
	    GROW(w->stat_buf, w->stat_buf_cap, nstats ? nstats : 1) ||
	    GROW(w->stat_ptrs, w->stat_ptrs_cap, nstats ? nstats : 1))
		return -ENOMEM;
	for (size_t j = 0; j < w->nsub; j++) {
		w->sublines[j].first = first;
		first += w->sublines[j].nevents;
		w->sublines[j].nevents = 0;	/* now the fill count */
	}

	for (size_t k = 0; k < norder; k++) {
		const struct capture_span *s = &sp[w->order[k]];
		uint64_t cs = s->start_ns > w->ws ? s->start_ns : w->ws;
		uint64_t ce = clip_end(w, s);
		XEvent *ev = &w->events[k];
		struct subline *l = &w->sublines[w->sub[k]];
		bool md_new;
		int idx, cnt;

		idx = event_md_index(w, s, &md_new);
		if (idx < 0)
			return idx;
		tensorflow__profiler__xevent__init(ev);
		ev->metadata_id = idx + 1;
		ev->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
		ev->offset_ps = (int64_t)(cs - w->ws) * 1000;
		ev->duration_ps = (int64_t)(ce - cs) * 1000;
		cnt = event_stats(w, s, &w->ev[idx], md_new, &w->stat_buf[used],
				  &w->stat_ptrs[used]);
		if (cnt < 0)
			return cnt;
		ev->n_stats = cnt;
		ev->stats = cnt ? &w->stat_ptrs[used] : NULL;
		used += cnt;
		w->event_ptrs[l->first + l->nevents++] = ev;
	}

	for (size_t j = 0; j < w->nsub; j++) {
		XLine line = TENSORFLOW__PROFILER__XLINE__INIT;

		line.id = li->id + ((int64_t)j << EXTRA_LINE_SHIFT);
		line.display_id = li->id;
		line.name = (char *)li->name;
		line.display_name = (char *)(li->display_name ? li->display_name : "");
		line.timestamp_ns = 0;	/* the window start */
		line.duration_ps = (int64_t)(w->we - w->ws) * 1000;
		line.n_events = w->sublines[j].nevents;
		line.events = &w->event_ptrs[w->sublines[j].first];
		pack_field(w, XPLANE_LINES, &line.base);
	}
	w->events_written += norder;
	if (!w->o.err && w->stats.oom)
		w->o.err = -ENOMEM;
	return w->o.err;
}

static void out_int64_field(struct out *o, uint32_t field, int64_t v)
{
	if (!v)
		return;		/* proto3 default */
	out_tag(o, field, WIRE_VARINT);
	out_varint(o, (uint64_t)v);
}

/* A plane stat, packed as XPlane.stats; errors stick in w->o.err. */
static void plane_stat(struct xw *w, const char *name, XStat *st)
{
	uint32_t id = stat_id(&w->stats, name);

	if (!id) {
		w->o.err = w->o.err ? w->o.err : -ENOMEM;
		return;
	}
	st->metadata_id = id;
	pack_field(w, XPLANE_STATS, &st->base);
}

static void plane_stat_str(struct xw *w, const char *name, const char *v)
{
	XStat st = TENSORFLOW__PROFILER__XSTAT__INIT;

	st.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
	st.str_value = (char *)v;
	plane_stat(w, name, &st);
}

static void plane_stat_double(struct xw *w, const char *name, double v)
{
	XStat st = TENSORFLOW__PROFILER__XSTAT__INIT;

	st.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE;
	st.double_value = v;
	plane_stat(w, name, &st);
}

static void plane_stat_u64(struct xw *w, const char *name, uint64_t v)
{
	XStat st = TENSORFLOW__PROFILER__XSTAT__INIT;

	st.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE;
	st.uint64_value = v;
	plane_stat(w, name, &st);
}

static void plane_stat_i64(struct xw *w, const char *name, int64_t v)
{
	XStat st = TENSORFLOW__PROFILER__XSTAT__INIT;

	st.value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
	st.int64_value = v;
	plane_stat(w, name, &st);
}

static uint64_t begin_plane(struct xw *w, int64_t id, const char *name, bool device)
{
	uint64_t at;

	plane_reset(w, device);
	at = out_begin_len(&w->o, XSPACE_PLANES);
	out_int64_field(&w->o, XPLANE_ID, id);
	out_string_field(&w->o, XPLANE_NAME, name);
	return at;
}

/* Event metadata, then stat metadata (event metadata may add names). */
static int end_plane(struct xw *w, uint64_t at)
{
	for (size_t i = 0; i < w->nev && !w->o.err; i++) {
		Tensorflow__Profiler__XPlane__EventMetadataEntry e =
			TENSORFLOW__PROFILER__XPLANE__EVENT_METADATA_ENTRY__INIT;
		XEventMetadata md = TENSORFLOW__PROFILER__XEVENT_METADATA__INIT;
		XStat st[CAPTURE_MAX_ARGS], *sp[CAPTURE_MAX_ARGS];
		size_t n = 0;

		md.id = i + 1;
		md.name = (char *)w->ev[i].name;
		for (uint32_t k = 0; k < w->ev[i].nargs; k++) {
			if (!arg_to_stat(w, &w->ev[i].args[k], &st[n]) ||
			    has_stat(sp, n, st[n].metadata_id))
				continue;
			sp[n] = &st[n];
			n++;
		}
		md.n_stats = n;
		md.stats = n ? sp : NULL;
		e.key = md.id;
		e.value = &md;
		pack_field(w, XPLANE_EVENT_METADATA, &e.base);
	}
	for (size_t id = 1; id < w->stats.n && !w->o.err; id++) {
		Tensorflow__Profiler__XPlane__StatMetadataEntry e =
			TENSORFLOW__PROFILER__XPLANE__STAT_METADATA_ENTRY__INIT;
		XStatMetadata md = TENSORFLOW__PROFILER__XSTAT_METADATA__INIT;

		md.id = id;
		md.name = (char *)w->stats.str[id];
		e.key = id;
		e.value = &md;
		pack_field(w, XPLANE_STAT_METADATA, &e.base);
	}
	if (!w->o.err && w->stats.oom)
		w->o.err = -ENOMEM;
	out_end_len(&w->o, at);
	return w->o.err;
}

static int write_host_plane(struct xw *w, int64_t plane_id)
{
	const struct capture *c = w->c;
	size_t ntracks = capture__num_tracks(c);
	bool multi = false, have_pid = false;
	uint32_t first_pid = 0;
	uint64_t at;
	int err = 0;

	for (size_t t = 0; t < ntracks && !multi; t++) {
		const struct capture_track *tr = capture__track(c, t);

		if (tr->kind != TRACK_HOST_THREAD)
			continue;
		if (have_pid && tr->pid != first_pid)
			multi = true;
		first_pid = tr->pid;
		have_pid = true;
	}

	at = begin_plane(w, plane_id, "/host:CPU", false);
	for (size_t t = 0; t < ntracks && !err; t++) {
		const struct capture_track *tr = capture__track(c, t);
		const struct capture_span *sp;
		char name[64], display[320];
		struct line_ident li = {};
		size_t n;

		if (tr->kind != TRACK_HOST_THREAD)
			continue;
		sp = capture__track_spans(c, t, &n);
		if (!sp)
			return -errno;
		li.id = tr->tid;
		li.name = capture__string(c, tr->name);
		if (!li.name || !li.name[0]) {
			snprintf(name, sizeof(name), "thread %u", tr->tid);
			li.name = name;
		}
		if (multi) {
			snprintf(display, sizeof(display), "%s (pid %u)", li.name, tr->pid);
			li.display_name = display;
		}
		err = write_track(w, sp, n, &li);
	}
	return err ? err : end_plane(w, at);
}

static int write_device_plane(struct xw *w, uint32_t index)
{
	static const struct {
		enum track_kind kind;
		int64_t line_id;
	} lines[] = {
		{ TRACK_DEVICE_STEPS, LINE_ID_STEPS },
		{ TRACK_DEVICE_MODULES, LINE_ID_MODULES },
		{ TRACK_DEVICE_OPS, LINE_ID_OPS },
	};
	const struct capture_device *d = capture__device_info(w->c, index);
	const char *type = capture__string(w->c, d->type);
	char name[64], type_buf[256];
	uint64_t at;
	int err = 0;

	snprintf(name, sizeof(name), "/device:TPU:%u", index);
	at = begin_plane(w, index, name, true);
	/* XProf classifies the hardware by the substring "TPU". */
	if (!type || !strstr(type, "TPU")) {
		snprintf(type_buf, sizeof(type_buf), "TPU%s%s", type && type[0] ? " " : "",
			 type ? type : "");
		type = type_buf;
	}
	plane_stat_str(w, "device_type_string", type);
	if (d->peak_tflops > 0)
		plane_stat_double(w, "peak_teraflops_per_second", d->peak_tflops);
	if (d->peak_hbm_gbps > 0)
		plane_stat_double(w, "peak_hbm_bw_gigabytes_per_second", d->peak_hbm_gbps);
	plane_stat_i64(w, "acceltrace.pid", d->pid);
	plane_stat_i64(w, "acceltrace.core", d->core);

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]) && !err; i++) {
		uint32_t t = w->dev_tracks[index][lines[i].kind];
		struct line_ident li = {
			.id = lines[i].line_id,
			.name = track_kind_line_name(lines[i].kind),
		};
		const struct capture_span *sp;
		size_t n;

		if (t == NO_ID)
			continue;
		sp = capture__track_spans(w->c, t, &n);
		if (!sp)
			return -errno;
		err = write_track(w, sp, n, &li);
	}
	return err ? err : end_plane(w, at);
}

static uint64_t wall_ns(const struct xw *w, uint64_t mono)
{
	int64_t off = capture__realtime_offset(w->c);

	if (off < 0 && (uint64_t)-off > mono)
		return 0;
	return mono + (uint64_t)off;
}

static int write_task_env_plane(struct xw *w, int64_t plane_id)
{
	uint64_t attached = capture__probes_attached(w->c);
	uint64_t at;

	at = begin_plane(w, plane_id, "Task Environment", false);
	plane_stat_u64(w, "profile_start_time", wall_ns(w, w->ws));
	plane_stat_u64(w, "profile_stop_time", wall_ns(w, w->we));
	if (attached)
		plane_stat_i64(w, "acceltrace.probes_attached_ns",
			       (int64_t)(attached - w->ws));
	return end_plane(w, at);
}

static void write_warnings(struct xw *w)
{
	const struct capture *c = w->c;
	char buf[512];

	for (size_t i = 0; i < capture__num_warnings(c); i++)
		out_string_field(&w->o, XSPACE_WARNINGS, capture__warning(c, i));
	for (size_t i = 0; i < capture__num_losses(c); i++) {
		uint64_t n;
		const char *what = capture__loss(c, i, &n);

		if (!n)
			continue;	/* counted, nothing lost */
		snprintf(buf, sizeof(buf), "%s: %" PRIu64, what, n);
		out_string_field(&w->o, XSPACE_WARNINGS, buf);
	}
	if (w->outside) {
		snprintf(buf, sizeof(buf),
			 "%" PRIu64 " spans wholly outside the capture window not written",
			 w->outside);
		out_string_field(&w->o, XSPACE_WARNINGS, buf);
	}
}

int xspace_write_stream(const struct capture *c, FILE *out,
			const struct xspace_write_opts *opts, uint64_t *bytes)
{
	struct xw w = { .c = c };
	uint64_t max_bytes = 0;
	size_t ndev = capture__num_devices(c);
	const char *host = capture__hostname(c);
	char host_buf[256];
	off_t base;
	int err = 0;

	if (bytes)
		*bytes = 0;
	if (opts) {
		if (opts->sz < offsetof(struct xspace_write_opts, max_bytes) + sizeof(uint64_t))
			return -EINVAL;
		max_bytes = opts->max_bytes;
	}
	if (!capture__is_finalized(c))
		return -EAGAIN;
	capture__window(c, &w.ws, &w.we);
	if (w.we - w.ws > (uint64_t)INT64_MAX / 1000)
		return -EOVERFLOW;
	base = ftello(out);
	if (base < 0)
		return -errno;
	w.o.f = out;
	w.o.base = base;
	w.o.max = max_bytes ? max_bytes : XSPACE_MAX_BYTES;

	w.dev_tracks = malloc((ndev ? ndev : 1) * sizeof(*w.dev_tracks));
	if (!w.dev_tracks) {
		err = -ENOMEM;
		goto cleanup;
	}
	memset(w.dev_tracks, 0xff, (ndev ? ndev : 1) * sizeof(*w.dev_tracks));
	for (size_t t = 0; t < capture__num_tracks(c); t++) {
		const struct capture_track *tr = capture__track(c, t);

		if (tr->kind != TRACK_HOST_THREAD && tr->kind < TRACK_KIND__COUNT &&
		    tr->device < ndev)
			w.dev_tracks[tr->device][tr->kind] = t;
	}

	/* Plane ids: devices 0..N-1 (the trace viewer's pid), then host, task. */
	err = write_host_plane(&w, ndev);
	for (size_t d = 0; d < ndev && !err; d++)
		err = write_device_plane(&w, d);
	if (!err)
		err = write_task_env_plane(&w, ndev + 1);
	if (err)
		goto cleanup;
	write_warnings(&w);
	/* The file stem replaces ':' with '_'; hostnames[0] must match it. */
	snprintf(host_buf, sizeof(host_buf), "%s", host);
	for (char *p = host_buf; *p; p++) {
		if (*p == ':' || *p == '/')
			*p = '_';
	}
	out_string_field(&w.o, XSPACE_HOSTNAMES, host_buf);
	err = w.o.err;
	if (!err && fflush(out))
		err = -errno;
	log_debug("%" PRIu64 " events, %" PRIu64 " bytes", w.events_written, w.o.pos);

cleanup:
	if (!err)
		err = w.o.err;
	if (bytes)
		*bytes = w.o.pos;
	xw_free(&w);
	return err;
}

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
	struct atomic_file *af = NULL;
	char name[512], *dir = NULL;
	int dirfd = -1, err;

	err = xprof_profile_file_name(name, sizeof(name), capture__hostname(c));
	if (err) {
		log_err("cannot name the capture file for host \"%s\": %s",
			capture__hostname(c), strerror(-err));
		return err;
	}
	dirfd = xprof_session_dir_open(logdir, capture__session(c));
	if (dirfd < 0)
		return dirfd;
	if (asprintf(&dir, "%s/plugins/profile/%s", logdir, capture__session(c)) < 0) {
		dir = NULL;
		err = -ENOMEM;
		goto cleanup;
	}
	if (path_out && len) {
		int n = snprintf(path_out, len, "%s/%s", dir, name);

		if (n < 0 || (size_t)n >= len) {
			err = -ENAMETOOLONG;
			log_err("capture path %s/%s does not fit the caller's buffer", dir, name);
			goto cleanup;
		}
	}
	af = atomic_file__openat(dirfd, dir, name);
	if (!af) {
		err = -errno;
		goto cleanup;
	}
	err = write_to(c, af, NULL);
cleanup:
	atomic_file__free(af);
	if (dirfd >= 0)
		close(dirfd);
	free(dir);
	return err;
}
