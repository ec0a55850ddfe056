// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * MLIR bytecode, read as far as the root module's name (mlir_bytecode.h).
 *
 * The layout, as MLIR's bytecode writer emits it (versions 1 to 6):
 *
 *   "ML\xefR", varint version, NUL-terminated producer, then sections:
 *   an id byte (0x80: aligned), varint length, [varint alignment, 0xcb
 *   padding to it], the data. Sections used here:
 *     0 strings     count; each string's size (with its NUL) in reverse
 *                   order; the strings
 *     1 dialects    count; per dialect varint (name << 1 | has version)
 *                   [+ a nested version section]; (v4+) the op name count;
 *                   groups of (dialect, count, per op name string [<< 1 |
 *                   registered, v5+])
 *     3 attr/type   attr count, type count; groups of (dialect, count, per
 *       offsets     entry varint (size << 1 | dialect-encoded))
 *     2 attr/type   the entries' bytes, back to back
 *     4 IR          block header, then the root op: name, mask byte,
 *                   location, [attr dict if mask 0x01], [properties if
 *                   mask 0x40], ...
 *     8 properties  (v5+) count; per entry varint size, bytes. ModuleOp's
 *                   are its optional sym_name, then sym_visibility: varint
 *                   (attr << 1 | 1), or 0 when absent.
 *
 *   Varints are prefix-encoded: the trailing zero bits of the first byte
 *   say how many bytes follow (a first byte of 0: eight); the value is the
 *   little-endian whole shifted right past that prefix.
 *
 *   The builtin dialect encodes DictionaryAttr as code 1, count, (name
 *   attr, value attr) pairs, and StringAttr as code 2 (or 3, with a type),
 *   string index. An attribute without a dialect encoding is its text.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analyze/mlir_bytecode.h"

#define MAGIC "ML\xefR"

enum {
	SEC_STRINGS = 0,
	SEC_DIALECTS = 1,
	SEC_ATTR_DATA = 2,
	SEC_ATTR_OFFSETS = 3,
	SEC_IR = 4,
	SEC_PROPERTIES = 8,
	SEC__MAX = 16,
};

#define OP_HAS_ATTRS 0x01
#define OP_HAS_PROPERTIES 0x40

#define CODE_DICTIONARY 1
#define CODE_STRING 2
#define CODE_STRING_WITH_TYPE 3

/* Reads of another process cost a system call: fetch a window at a time. */
#define WINDOW 512

struct cursor {
	const struct byte_source *src;
	uint64_t off, end;
	uint8_t win[WINDOW];
	uint64_t win_off;
	size_t win_len;
	int err;		/* the first failure; reads give 0 after it */
	char *why;
	size_t why_len;
};

struct section {
	uint64_t start, end;
	bool present;
};

struct program {
	const struct byte_source *src;
	uint64_t version;
	struct section sec[SEC__MAX];
	char *why;
	size_t why_len;
};

static int fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void cursor_init(struct cursor *c, const struct program *p, uint64_t start,
			uint64_t end)
{
	c->src = p->src;
	c->off = start;
	c->end = end;
	c->win_len = 0;
	c->win_off = 0;
	c->err = 0;
	c->why = p->why;
	c->why_len = p->why_len;
}

static uint8_t get_byte(struct cursor *c)
{
	if (c->err)
		return 0;
	if (c->off >= c->end) {
		c->err = fail(c->why, c->why_len, "runs past its end at byte %llu",
			      (unsigned long long)c->off);
		return 0;
	}
	if (c->off < c->win_off || c->off >= c->win_off + c->win_len) {
		uint64_t n = c->src->size - c->off;
		int err;

		if (n > WINDOW)
			n = WINDOW;
		err = c->src->read(c->src->ctx, c->off, c->win, n);
		if (err) {
			c->err = err;
			return 0;
		}
		c->win_off = c->off;
		c->win_len = n;
	}
	return c->win[c->off++ - c->win_off];
}

static uint64_t get_varint(struct cursor *c)
{
	uint8_t first = get_byte(c);
	uint64_t v = 0;
	int n;

	if (first & 1)
		return first >> 1;
	if (!first) {			/* eight raw bytes follow */
		for (int i = 0; i < 8; i++)
			v |= (uint64_t)get_byte(c) << (8 * i);
		return v;
	}
	n = __builtin_ctz(first) + 1;	/* bytes in all, first included */
	v = first;
	for (int i = 1; i < n; i++)
		v |= (uint64_t)get_byte(c) << (8 * i);
	return v >> n;
}

static void skip(struct cursor *c, uint64_t n)
{
	if (c->err)
		return;
	if (n > c->end - c->off)
		c->err = fail(c->why, c->why_len, "a length of %llu runs past its end",
			      (unsigned long long)n);
	else
		c->off += n;
}

/* One section header at the cursor: its id and where its data lies. */
static int next_section(struct cursor *c, unsigned int *id, struct section *s)
{
	uint8_t code = get_byte(c);
	uint64_t len = get_varint(c);

	*id = code & 0x7f;
	if (code & 0x80) {		/* aligned: padding up to the alignment */
		uint64_t align = get_varint(c);

		if (!c->err && (!align || (align & (align - 1)) || align > 4096))
			return fail(c->why, c->why_len, "section %u: bad alignment %llu",
				    *id, (unsigned long long)align);
		while (!c->err && c->off % align)
			if (get_byte(c) != 0xcb)
				return fail(c->why, c->why_len,
					    "section %u: padding is not 0xcb", *id);
	}
	if (c->err)
		return c->err;
	if (len > c->end - c->off)
		return fail(c->why, c->why_len, "section %u: %llu bytes past the end",
			    *id, (unsigned long long)len);
	s->start = c->off;
	s->end = c->off + len;
	s->present = true;
	c->off += len;
	return 0;
}

static int open_program(struct program *p)
{
	struct cursor c;
	uint8_t b;
	int err;

	cursor_init(&c, p, 0, p->src->size);
	for (int i = 0; i < 4; i++)
		if (get_byte(&c) != (uint8_t)MAGIC[i])
			return c.err ? c.err : fail(p->why, p->why_len, "no bytecode magic");
	p->version = get_varint(&c);
	if (!c.err && (p->version < 1 || p->version > 6))
		return fail(p->why, p->why_len, "bytecode version %llu (1 to 6 are known)",
			    (unsigned long long)p->version);
	do		/* the producer, NUL-terminated */
		b = get_byte(&c);
	while (!c.err && b);
	while (!c.err && c.off < c.end) {
		struct section s;
		unsigned int id;

		err = next_section(&c, &id, &s);
		if (err)
			return err;
		if (id < SEC__MAX)
			p->sec[id] = s;
	}
	if (c.err)
		return c.err;
	for (int id = SEC_STRINGS; id <= SEC_IR; id++)
		if (!p->sec[id].present)
			return fail(p->why, p->why_len, "no section %d", id);
	return 0;
}

/* String @index into @out (cut to fit). */
static int string_at(const struct program *p, uint64_t index, char *out, size_t len)
{
	const struct section *s = &p->sec[SEC_STRINGS];
	uint64_t count, before = 0, size = 0, data;
	struct cursor c;

	cursor_init(&c, p, s->start, s->end);
	count = get_varint(&c);
	if (c.err || index >= count || count > s->end - s->start)
		return c.err ? c.err : fail(p->why, p->why_len, "string %llu of %llu",
					    (unsigned long long)index,
					    (unsigned long long)count);
	/* Sizes are in reverse order: string i's is the (count-1-i)th. */
	for (uint64_t k = 0; k < count && !c.err; k++) {
		uint64_t sz = get_varint(&c);
		uint64_t i = count - 1 - k;

		if (i < index)
			before += sz;
		else if (i == index)
			size = sz;
	}
	data = c.off;
	if (c.err)
		return c.err;
	if (!size)
		return fail(p->why, p->why_len, "string %llu has no size",
			    (unsigned long long)index);
	cursor_init(&c, p, data + before, s->end);
	for (uint64_t i = 0; i + 1 < size && !c.err; i++) {
		char ch = get_byte(&c);

		if (i + 1 < len)
			out[i] = ch;
	}
	if (len)
		out[size - 1 < len ? size - 1 : len - 1] = '\0';
	return c.err;
}

/* The dialect name of dialect @number, and the name of op name @op_index:
 * "builtin" and "module" for the root of a program. */
static int op_name(const struct program *p, uint64_t op_index, char *dialect,
		   char *op, size_t len)
{
	const struct section *s = &p->sec[SEC_DIALECTS];
	uint64_t n_dialects, seen = 0, name_of[64];
	struct cursor c;
	int err;

	cursor_init(&c, p, s->start, s->end);
	n_dialects = get_varint(&c);
	if (!c.err && n_dialects > 64)
		return fail(p->why, p->why_len, "%llu dialects (64 are read)",
			    (unsigned long long)n_dialects);
	for (uint64_t d = 0; d < n_dialects && !c.err; d++) {
		uint64_t v = get_varint(&c);

		name_of[d] = v >> 1;
		if (v & 1) {		/* a nested version section: skip it */
			struct section vs;
			unsigned int id;

			err = next_section(&c, &id, &vs);
			if (err)
				return err;
		}
	}
	if (p->version >= 4)
		get_varint(&c);		/* op names in all */
	while (!c.err && c.off < c.end) {
		uint64_t d = get_varint(&c), count = get_varint(&c);

		if (!c.err && d >= n_dialects)
			return fail(p->why, p->why_len, "op names of dialect %llu of %llu",
				    (unsigned long long)d, (unsigned long long)n_dialects);
		for (uint64_t k = 0; k < count && !c.err; k++, seen++) {
			uint64_t v = get_varint(&c);
			uint64_t str = p->version >= 5 ? v >> 1 : v;

			if (seen != op_index)
				continue;
			err = string_at(p, name_of[d], dialect, len);
			return err ? err : string_at(p, str, op, len);
		}
	}
	return c.err ? c.err : fail(p->why, p->why_len, "no op name %llu",
				    (unsigned long long)op_index);
}

/* Where attribute @index's bytes are, its dialect's number, and whether
 * they are the dialect's own encoding (else the attribute's text). */
static int attr_at(const struct program *p, uint64_t index, struct section *where,
		   uint64_t *dialect, bool *encoded)
{
	const struct section *s = &p->sec[SEC_ATTR_OFFSETS];
	uint64_t n_attrs, seen = 0, at = p->sec[SEC_ATTR_DATA].start;
	struct cursor c;

	cursor_init(&c, p, s->start, s->end);
	n_attrs = get_varint(&c);
	get_varint(&c);			/* types */
	if (!c.err && index >= n_attrs)
		return fail(p->why, p->why_len, "attribute %llu of %llu",
			    (unsigned long long)index, (unsigned long long)n_attrs);
	while (!c.err && seen < n_attrs) {
		uint64_t d = get_varint(&c), count = get_varint(&c);

		for (uint64_t k = 0; k < count && !c.err && seen < n_attrs; k++, seen++) {
			uint64_t v = get_varint(&c);

			if (seen == index) {
				where->start = at;
				where->end = at + (v >> 1);
				*dialect = d;
				*encoded = v & 1;
				if (where->end > p->sec[SEC_ATTR_DATA].end)
					return fail(p->why, p->why_len,
						    "attribute %llu past its section",
						    (unsigned long long)index);
				return 0;
			}
			at += v >> 1;
		}
	}
	return c.err ? c.err : fail(p->why, p->why_len, "attribute %llu not found",
				    (unsigned long long)index);
}

/* The text of a StringAttr (builtin's encoding, or its quoted text). */
static int string_attr(const struct program *p, uint64_t index, char *out, size_t len)
{
	struct section a;
	struct cursor c;
	uint64_t dialect, code;
	bool encoded;
	int err = attr_at(p, index, &a, &dialect, &encoded);

	if (err)
		return err;
	cursor_init(&c, p, a.start, a.end);
	if (!encoded) {			/* text: "jit_step", quoted */
		size_t n = 0;
		char ch;

		if (get_byte(&c) != '"')
			return c.err ? c.err : fail(p->why, p->why_len,
						    "attribute %llu is not a string",
						    (unsigned long long)index);
		while (!c.err && (ch = get_byte(&c)) != '"' && ch)
			if (n + 1 < len)
				out[n++] = ch;
		if (len)
			out[n] = '\0';
		return c.err;
	}
	code = get_varint(&c);
	if (!c.err && code != CODE_STRING && code != CODE_STRING_WITH_TYPE)
		return fail(p->why, p->why_len, "attribute %llu: code %llu, not a string",
			    (unsigned long long)index, (unsigned long long)code);
	index = get_varint(&c);
	return c.err ? c.err : string_at(p, index, out, len);
}

/* sym_name from the op's properties (version 5 on): ModuleOp writes its
 * optional sym_name first. 0 and *attr, -ENOENT when absent. */
static int name_from_properties(const struct program *p, uint64_t entry, uint64_t *attr)
{
	const struct section *s = &p->sec[SEC_PROPERTIES];
	uint64_t count, v;
	struct cursor c;

	if (!s->present)
		return fail(p->why, p->why_len, "properties, and no properties section");
	cursor_init(&c, p, s->start, s->end);
	count = get_varint(&c);
	if (!c.err && entry >= count)
		return fail(p->why, p->why_len, "properties %llu of %llu",
			    (unsigned long long)entry, (unsigned long long)count);
	for (uint64_t i = 0; i < entry && !c.err; i++)
		skip(&c, get_varint(&c));
	get_varint(&c);			/* this entry's size */
	v = get_varint(&c);
	if (c.err)
		return c.err;
	if (!(v & 1))
		return -ENOENT;
	*attr = v >> 1;
	return 0;
}

/* sym_name from the op's attribute dictionary (before version 5). */
static int name_from_dictionary(const struct program *p, uint64_t dict, uint64_t *attr)
{
	struct section a;
	struct cursor c;
	uint64_t dialect, n;
	bool encoded;
	char key[16];
	int err = attr_at(p, dict, &a, &dialect, &encoded);

	if (err)
		return err;
	cursor_init(&c, p, a.start, a.end);
	if (!encoded || get_varint(&c) != CODE_DICTIONARY)
		return c.err ? c.err : fail(p->why, p->why_len,
					    "the module's attributes are not a dictionary");
	n = get_varint(&c);
	for (uint64_t i = 0; i < n && !c.err; i++) {
		uint64_t k = get_varint(&c), v = get_varint(&c);

		if (c.err)
			break;
		err = string_attr(p, k, key, sizeof(key));
		if (err)
			return err;
		if (!strcmp(key, "sym_name")) {
			*attr = v;
			return 0;
		}
	}
	return c.err ? c.err : -ENOENT;
}

bool mlir_bytecode_is(const void *head, size_t len)
{
	return len >= 4 && !memcmp(head, MAGIC, 4);
}

int mlir_bytecode_module_name(const struct byte_source *src, char *name,
			      size_t name_len, char *why, size_t why_len)
{
	struct program p = { .src = src, .why = why, .why_len = why_len };
	char dialect[32], op[32];
	uint64_t op_index, loc, dict = 0, props = 0, attr = 0;
	uint8_t mask;
	struct cursor c;
	int err;

	if (why && why_len)
		why[0] = '\0';
	if (!name_len)
		return -EINVAL;
	err = open_program(&p);
	if (err)
		return err;
	cursor_init(&c, &p, p.sec[SEC_IR].start, p.sec[SEC_IR].end);
	get_varint(&c);			/* the top block: ops << 1 | has args */
	op_index = get_varint(&c);
	mask = get_byte(&c);
	loc = get_varint(&c);
	(void)loc;
	if (mask & OP_HAS_ATTRS)
		dict = get_varint(&c);
	if (mask & OP_HAS_PROPERTIES)
		props = get_varint(&c);
	if (c.err)
		return c.err;
	err = op_name(&p, op_index, dialect, op, sizeof(op));
	if (err)
		return err;
	if (strcmp(dialect, "builtin") || strcmp(op, "module"))
		return fail(why, why_len, "the root op is %s.%s, not builtin.module",
			    dialect, op);
	err = -ENOENT;
	if (mask & OP_HAS_PROPERTIES)
		err = name_from_properties(&p, props, &attr);
	if (err == -ENOENT && (mask & OP_HAS_ATTRS))
		err = name_from_dictionary(&p, dict, &attr);
	if (err)
		return err;
	return string_attr(&p, attr, name, name_len);
}

static int read_buffer(void *ctx, uint64_t off, void *buf, size_t len)
{
	memcpy(buf, (const char *)ctx + off, len);
	return 0;
}

struct byte_source byte_source_of_buffer(const void *buf, size_t len)
{
	return (struct byte_source){ .ctx = (void *)buf, .size = len, .read = read_buffer };
}
