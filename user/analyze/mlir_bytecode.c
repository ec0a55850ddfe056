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
 *
 * The program is hostile input (another process's memory): the string and
 * attribute tables are decoded once each into an index, so every lookup
 * after is O(1) and naming costs time linear in the tables; reads go
 * through a small cache of aligned blocks and are counted against
 * MLIR_NAME_MAX_READ, and tables longer than MLIR_NAME_MAX_ENTRIES are
 * refused before they size an allocation (-E2BIG, with why).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

#define MAX_DIALECTS 64

/*
 * Reads of another process cost a system call: bytes are fetched in
 * aligned blocks, a few kept, so the tables read in order and the small
 * lookups near each other (a dictionary's keys) share their reads.
 */
#define BLOCK 4096
#define BLOCKS 4

struct block {
	uint64_t off;
	uint32_t len;		/* 0: empty */
	uint8_t data[BLOCK];
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
	uint64_t bytes_read;	/* against MLIR_NAME_MAX_READ */
	struct block cache[BLOCKS];
	unsigned int next_victim;
	/* The string table, decoded once: string i's bytes (its NUL
	 * included) are [str_data + str_off[i], str_data + str_off[i + 1]). */
	uint32_t n_strings;
	uint32_t *str_off;
	uint64_t str_data;
	/* The attribute table, decoded once: attribute i's bytes are
	 * [attr_off[i], attr_off[i + 1]) in the data section, in its
	 * dialect's encoding where attr_encoded[i], else its text. */
	uint32_t n_attrs;
	uint32_t *attr_off;
	uint8_t *attr_encoded;
};

struct cursor {
	struct program *p;
	uint64_t off, end;
	const struct block *b;	/* the block off was last found in */
	int err;		/* the first failure; reads give 0 after it */
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

static void cursor_init(struct cursor *c, struct program *p, uint64_t start,
			uint64_t end)
{
	c->p = p;
	c->off = start;
	c->end = end;
	c->b = NULL;
	c->err = 0;
}

/* The block holding @off, read (and counted) if it is not kept. */
static const struct block *block_at(struct program *p, uint64_t off, int *err)
{
	uint64_t start = off - off % BLOCK;
	struct block *b;
	uint64_t len;

	for (int i = 0; i < BLOCKS; i++)
		if (p->cache[i].len && p->cache[i].off == start)
			return &p->cache[i];
	len = p->src->size - start < BLOCK ? p->src->size - start : BLOCK;
	if (p->bytes_read + len > MLIR_NAME_MAX_READ) {
		fail(p->why, p->why_len, "naming reads more than %u bytes of the program",
		     MLIR_NAME_MAX_READ);
		*err = -E2BIG;
		return NULL;
	}
	p->bytes_read += len;
	b = &p->cache[p->next_victim++ % BLOCKS];
	b->len = 0;
	*err = p->src->read(p->src->ctx, start, b->data, len);
	if (*err)
		return NULL;
	b->off = start;
	b->len = len;
	return b;
}

static uint8_t get_byte(struct cursor *c)
{
	if (c->err)
		return 0;
	if (c->off >= c->end) {
		c->err = fail(c->p->why, c->p->why_len, "runs past its end at byte %llu",
			      (unsigned long long)c->off);
		return 0;
	}
	if (!c->b || !c->b->len || c->off < c->b->off || c->off >= c->b->off + c->b->len) {
		c->b = block_at(c->p, c->off, &c->err);
		if (!c->b)
			return 0;
	}
	return c->b->data[c->off++ - c->b->off];
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
		c->err = fail(c->p->why, c->p->why_len, "a length of %llu runs past its end",
			      (unsigned long long)n);
	else
		c->off += n;
}

/* One section header at the cursor: its id and where its data lies. */
static int next_section(struct cursor *c, unsigned int *id, struct section *s)
{
	struct program *p = c->p;
	uint8_t code = get_byte(c);
	uint64_t len = get_varint(c);

	*id = code & 0x7f;
	if (code & 0x80) {		/* aligned: padding up to the alignment */
		uint64_t align = get_varint(c);

		if (!c->err && (!align || (align & (align - 1)) || align > 4096))
			return fail(p->why, p->why_len, "section %u: bad alignment %llu",
				    *id, (unsigned long long)align);
		while (!c->err && c->off % align)
			if (get_byte(c) != 0xcb)
				return fail(p->why, p->why_len,
					    "section %u: padding is not 0xcb", *id);
	}
	if (c->err)
		return c->err;
	if (len > c->end - c->off)
		return fail(p->why, p->why_len, "section %u: %llu bytes past the end",
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

/* A table's entry count, checked before it sizes an index: each entry
 * takes a byte of its section at least, and MLIR_NAME_MAX_ENTRIES at most
 * are indexed. */
static int table_count(struct cursor *c, const struct section *s, const char *what,
		       uint64_t count)
{
	struct program *p = c->p;

	if (c->err)
		return c->err;
	if (count > s->end - s->start)
		return fail(p->why, p->why_len, "%llu %s in %llu bytes",
			    (unsigned long long)count, what,
			    (unsigned long long)(s->end - s->start));
	if (count > MLIR_NAME_MAX_ENTRIES) {
		fail(p->why, p->why_len, "%llu %s (more than %u are not indexed)",
		     (unsigned long long)count, what, MLIR_NAME_MAX_ENTRIES);
		return -E2BIG;
	}
	return 0;
}

/* The string table into p->str_off: one walk of the sizes. */
static int index_strings(struct program *p)
{
	const struct section *s = &p->sec[SEC_STRINGS];
	uint64_t count, total = 0;
	struct cursor c;
	int err;

	cursor_init(&c, p, s->start, s->end);
	count = get_varint(&c);
	err = table_count(&c, s, "strings", count);
	if (err)
		return err;
	p->str_off = calloc(count + 1, sizeof(*p->str_off));
	if (!p->str_off)
		return -ENOMEM;
	/* Sizes are in reverse order: string i's is the (count-1-i)th. */
	for (uint64_t k = 0; k < count && !c.err; k++) {
		uint64_t sz = get_varint(&c);

		if (sz > s->end - s->start)
			return fail(p->why, p->why_len, "string %llu: %llu bytes",
				    (unsigned long long)(count - 1 - k),
				    (unsigned long long)sz);
		p->str_off[count - k] = sz;	/* string count-1-k's end, for now */
	}
	if (c.err)
		return c.err;
	p->str_data = c.off;
	for (uint64_t i = 0; i < count; i++) {
		total += p->str_off[i + 1];
		if (total > s->end - p->str_data)
			return fail(p->why, p->why_len, "string %llu past its section",
				    (unsigned long long)i);
		p->str_off[i + 1] = total;
	}
	p->n_strings = count;
	return 0;
}

/* The attribute table into p->attr_off: one walk of the offsets. */
static int index_attrs(struct program *p)
{
	const struct section *s = &p->sec[SEC_ATTR_OFFSETS];
	uint64_t data_len = p->sec[SEC_ATTR_DATA].end - p->sec[SEC_ATTR_DATA].start;
	uint64_t count, seen = 0, at = 0;
	struct cursor c;
	int err;

	cursor_init(&c, p, s->start, s->end);
	count = get_varint(&c);
	get_varint(&c);			/* types */
	err = table_count(&c, s, "attributes", count);
	if (err)
		return err;
	p->attr_off = calloc(count + 1, sizeof(*p->attr_off));
	p->attr_encoded = calloc(count + 1, 1);
	if (!p->attr_off || !p->attr_encoded)
		return -ENOMEM;
	while (!c.err && seen < count) {
		uint64_t n;

		get_varint(&c);		/* the group's dialect */
		n = get_varint(&c);
		for (uint64_t k = 0; k < n && !c.err && seen < count; k++, seen++) {
			uint64_t v = get_varint(&c);

			p->attr_off[seen] = at;
			p->attr_encoded[seen] = v & 1;
			if ((v >> 1) > data_len - at)
				return fail(p->why, p->why_len,
					    "attribute %llu past its section",
					    (unsigned long long)seen);
			at += v >> 1;
		}
	}
	if (c.err)
		return c.err;
	p->attr_off[count] = at;
	p->n_attrs = count;
	return 0;
}

/* String @index into @out (cut to fit: only what fits is read). */
static int string_at(struct program *p, uint64_t index, char *out, size_t len)
{
	uint64_t size, n;
	struct cursor c;

	if (index >= p->n_strings)
		return fail(p->why, p->why_len, "string %llu of %u",
			    (unsigned long long)index, p->n_strings);
	size = p->str_off[index + 1] - p->str_off[index];
	if (!size)
		return fail(p->why, p->why_len, "string %llu has no size",
			    (unsigned long long)index);
	n = size - 1 < len - 1 ? size - 1 : len - 1;
	cursor_init(&c, p, p->str_data + p->str_off[index],
		    p->str_data + p->str_off[index + 1]);
	for (uint64_t i = 0; i < n && !c.err; i++)
		out[i] = get_byte(&c);
	out[n] = '\0';
	return c.err;
}

/* The dialect name of the root op's dialect and its op name: "builtin"
 * and "module" for the root of a program. */
static int op_name(struct program *p, uint64_t op_index, char *dialect,
		   char *op, size_t len)
{
	const struct section *s = &p->sec[SEC_DIALECTS];
	uint64_t n_dialects, seen = 0, name_of[MAX_DIALECTS];
	struct cursor c;
	int err;

	cursor_init(&c, p, s->start, s->end);
	n_dialects = get_varint(&c);
	if (!c.err && n_dialects > MAX_DIALECTS)
		return fail(p->why, p->why_len, "%llu dialects (%d are read)",
			    (unsigned long long)n_dialects, MAX_DIALECTS);
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
		/* Every op name takes a byte: a longer group is not there. */
		if (!c.err && count > c.end - c.off)
			return fail(p->why, p->why_len, "%llu op names in %llu bytes",
				    (unsigned long long)count,
				    (unsigned long long)(c.end - c.off));
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

/* Where attribute @index's bytes are, and whether they are its dialect's
 * own encoding (else the attribute's text). */
static int attr_at(struct program *p, uint64_t index, struct section *where,
		   bool *encoded)
{
	uint64_t data = p->sec[SEC_ATTR_DATA].start;

	if (index >= p->n_attrs)
		return fail(p->why, p->why_len, "attribute %llu of %u",
			    (unsigned long long)index, p->n_attrs);
	where->start = data + p->attr_off[index];
	where->end = data + p->attr_off[index + 1];
	*encoded = p->attr_encoded[index];
	return 0;
}

/* The text of a StringAttr (builtin's encoding, or its quoted text), cut
 * to fit @len. */
static int string_attr(struct program *p, uint64_t index, char *out, size_t len)
{
	struct section a;
	struct cursor c;
	uint64_t code;
	bool encoded;
	int err = attr_at(p, index, &a, &encoded);

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
		while (n + 1 < len && !c.err && (ch = get_byte(&c)) != '"' && ch)
			out[n++] = ch;
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
static int name_from_properties(struct program *p, uint64_t entry, uint64_t *attr)
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

/* sym_name from the op's attribute dictionary (before version 5): each
 * key an O(1) lookup in the tables' indexes. */
static int name_from_dictionary(struct program *p, uint64_t dict, uint64_t *attr)
{
	struct section a;
	struct cursor c;
	uint64_t n;
	bool encoded;
	char key[16];
	int err = attr_at(p, dict, &a, &encoded);

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

/* The root op's name, and its sym_name attribute's index. */
static int root_module(struct program *p, uint64_t *attr)
{
	char dialect[32], op[32];
	uint64_t op_index, dict = 0, props = 0;
	uint8_t mask;
	struct cursor c;
	int err;

	cursor_init(&c, p, p->sec[SEC_IR].start, p->sec[SEC_IR].end);
	get_varint(&c);			/* the top block: ops << 1 | has args */
	op_index = get_varint(&c);
	mask = get_byte(&c);
	get_varint(&c);			/* its location */
	if (mask & OP_HAS_ATTRS)
		dict = get_varint(&c);
	if (mask & OP_HAS_PROPERTIES)
		props = get_varint(&c);
	if (c.err)
		return c.err;
	err = index_strings(p);
	if (!err)
		err = op_name(p, op_index, dialect, op, sizeof(op));
	if (err)
		return err;
	if (strcmp(dialect, "builtin") || strcmp(op, "module"))
		return fail(p->why, p->why_len, "the root op is %s.%s, not builtin.module",
			    dialect, op);
	err = index_attrs(p);
	if (err)
		return err;
	err = -ENOENT;
	if (mask & OP_HAS_PROPERTIES)
		err = name_from_properties(p, props, attr);
	if (err == -ENOENT && (mask & OP_HAS_ATTRS))
		err = name_from_dictionary(p, dict, attr);
	return err;
}

int mlir_bytecode_module_name(const struct byte_source *src, char *name,
			      size_t name_len, char *why, size_t why_len)
{
	struct program *p;
	uint64_t attr = 0;
	int err;

	if (why && why_len)
		why[0] = '\0';
	if (!name_len)
		return -EINVAL;
	/* The block cache is 16 KiB: on the heap, not the caller's stack. */
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->src = src;
	p->why = why;
	p->why_len = why_len;
	err = open_program(p);
	if (!err)
		err = root_module(p, &attr);
	if (!err)
		err = string_attr(p, attr, name, name_len);
	free(p->str_off);
	free(p->attr_off);
	free(p->attr_encoded);
	free(p);
	return err;
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
