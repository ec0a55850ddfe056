// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_writer.h"
#include "lib/utf8.h"

#define JW_MAX_DEPTH 64

struct json_writer {
	FILE *out;
	bool pretty;
	int depth;
	/* Per nesting level: has the container got an element yet? */
	bool has_elem[JW_MAX_DEPTH];
	/* A name was just written: the next value needs no comma. */
	bool after_name;
};

struct json_writer *jw_new(FILE *out, bool pretty)
{
	struct json_writer *jw = calloc(1, sizeof(*jw));

	if (!jw)
		return NULL;
	jw->out = out;
	jw->pretty = pretty;
	return jw;
}

void jw_free(struct json_writer *jw)
{
	free(jw);
}

int jw_memory_open(struct jw_memory *m)
{
	*m = (struct jw_memory){ 0 };
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f)
		return -ENOMEM;
	m->jw = jw_new(m->f, false);
	if (!m->jw) {
		fclose(m->f);
		free(m->buf);
		return -ENOMEM;
	}
	return 0;
}

int jw_memory_close(struct jw_memory *m, char **out)
{
	int bad;

	jw_free(m->jw);
	bad = ferror(m->f) | fclose(m->f);
	*out = bad ? NULL : m->buf;
	if (bad)
		free(m->buf);
	return bad ? -ENOMEM : 0;
}

static void newline_indent(struct json_writer *jw)
{
	if (!jw->pretty)
		return;
	fputc('\n', jw->out);
	for (int i = 0; i < jw->depth; i++)
		fputs("  ", jw->out);
}

/* Separator before a value or a name at the current level. */
static void begin_elem(struct json_writer *jw)
{
	if (jw->after_name) {
		jw->after_name = false;
		return;
	}
	if (jw->depth > 0) {
		if (jw->has_elem[jw->depth])
			fputc(',', jw->out);
		jw->has_elem[jw->depth] = true;
		newline_indent(jw);
	}
}

static void open_container(struct json_writer *jw, char c)
{
	begin_elem(jw);
	fputc(c, jw->out);
	if (jw->depth < JW_MAX_DEPTH - 1)
		jw->depth++;
	jw->has_elem[jw->depth] = false;
}

static void close_container(struct json_writer *jw, char c)
{
	bool had = jw->has_elem[jw->depth];

	if (jw->depth > 0)
		jw->depth--;
	if (had)
		newline_indent(jw);
	fputc(c, jw->out);
}

void jw_start_object(struct json_writer *jw) { open_container(jw, '{'); }
void jw_end_object(struct json_writer *jw) { close_container(jw, '}'); }
void jw_start_array(struct json_writer *jw) { open_container(jw, '['); }
void jw_end_array(struct json_writer *jw) { close_container(jw, ']'); }

/* A JSON string: valid UTF-8 whatever @s holds (a name from outside may
 * not be: each byte that begins no character is written as U+FFFD), with
 * quotes, backslashes and control characters escaped. */
static void put_escaped(FILE *out, const char *s)
{
	size_t len = strlen(s);

	fputc('"', out);
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t n = utf8_char_len(s + i, len - i);

		if (!n) {
			fputs(UTF8_REPLACEMENT, out);
			i++;
			continue;
		}
		switch (c) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (c < 0x20)
				fprintf(out, "\\u%04x", c);
			else
				fwrite(s + i, 1, n, out);
		}
		i += n;
	}
	fputc('"', out);
}

void jw_name(struct json_writer *jw, const char *name)
{
	begin_elem(jw);
	put_escaped(jw->out, name);
	fputs(jw->pretty ? ": " : ":", jw->out);
	jw->after_name = true;
}

void jw_string(struct json_writer *jw, const char *s)
{
	begin_elem(jw);
	if (s)
		put_escaped(jw->out, s);
	else
		fputs("null", jw->out);
}

void jw_uint(struct json_writer *jw, uint64_t v)
{
	begin_elem(jw);
	fprintf(jw->out, "%" PRIu64, v);
}

void jw_int(struct json_writer *jw, int64_t v)
{
	begin_elem(jw);
	fprintf(jw->out, "%" PRId64, v);
}

void jw_double(struct json_writer *jw, double v)
{
	begin_elem(jw);
	/* JSON has no NaN or infinity. */
	if (isfinite(v))
		fprintf(jw->out, "%.17g", v);
	else
		fputs("null", jw->out);
}

void jw_decimal(struct json_writer *jw, uint64_t v, unsigned int decimals)
{
	uint64_t scale = 1;

	for (unsigned int i = 0; i < decimals && i < 19; i++)
		scale *= 10;
	begin_elem(jw);
	if (scale == 1)
		fprintf(jw->out, "%" PRIu64, v);
	else
		fprintf(jw->out, "%" PRIu64 ".%0*" PRIu64, v / scale, (int)decimals, v % scale);
}

void jw_bool(struct json_writer *jw, bool v)
{
	begin_elem(jw);
	fputs(v ? "true" : "false", jw->out);
}

void jw_null(struct json_writer *jw)
{
	begin_elem(jw);
	fputs("null", jw->out);
}

void jw_string_field(struct json_writer *jw, const char *name, const char *s)
{
	jw_name(jw, name);
	jw_string(jw, s);
}

void jw_uint_field(struct json_writer *jw, const char *name, uint64_t v)
{
	jw_name(jw, name);
	jw_uint(jw, v);
}

void jw_int_field(struct json_writer *jw, const char *name, int64_t v)
{
	jw_name(jw, name);
	jw_int(jw, v);
}

void jw_double_field(struct json_writer *jw, const char *name, double v)
{
	jw_name(jw, name);
	jw_double(jw, v);
}

void jw_bool_field(struct json_writer *jw, const char *name, bool v)
{
	jw_name(jw, name);
	jw_bool(jw, v);
}
