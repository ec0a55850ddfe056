// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A recursive-descent parser for the memory timelines JSON, bounded: the
 * nesting of skipped values, the allocators and the points are capped, and
 * every number must fit an int64.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "reader/memory_timelines.h"

#define MAX_SKIP_DEPTH 16
#define MAX_NAME_LEN 256

struct cursor {
	const char *s;
	size_t i, n;
	size_t n_points;	/* over all allocators */
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 3, 4)))
static int fail(struct cursor *c, int ret, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (c->err[0])
		return ret;
	k = snprintf(c->err, c->errlen, "at byte %zu: ", c->i);
	va_start(ap, fmt);
	if (k >= 0 && (size_t)k < c->errlen)
		vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
	va_end(ap);
	return ret;
}

static void ws(struct cursor *c)
{
	while (c->i < c->n && strchr(" \t\r\n", c->s[c->i]) && c->s[c->i])
		c->i++;
}

/* Consumes CH after blanks; false if something else is there. */
static bool eat(struct cursor *c, char ch)
{
	ws(c);
	if (c->i < c->n && c->s[c->i] == ch) {
		c->i++;
		return true;
	}
	return false;
}

static int expect(struct cursor *c, char ch)
{
	return eat(c, ch) ? 0 : fail(c, -EINVAL, "expected '%c'", ch);
}

/* A string into buf (NUL-terminated); \uXXXX beyond ASCII becomes '?'. */
static int string(struct cursor *c, char *buf, size_t size)
{
	size_t k = 0;

	if (expect(c, '"'))
		return -EINVAL;
	while (c->i < c->n && c->s[c->i] != '"') {
		char ch = c->s[c->i++];

		if ((unsigned char)ch < 0x20)
			return fail(c, -EINVAL, "control character in a string");
		if (ch == '\\') {
			if (c->i >= c->n)
				break;
			ch = c->s[c->i++];
			switch (ch) {
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			case 'r': ch = '\r'; break;
			case 'b': ch = '\b'; break;
			case 'f': ch = '\f'; break;
			case '"': case '\\': case '/': break;
			case 'u': {
				unsigned v = 0;

				for (int d = 0; d < 4; d++, c->i++) {
					char h = c->i < c->n ? c->s[c->i] : 0;

					if (h >= '0' && h <= '9')
						v = v * 16 + (unsigned)(h - '0');
					else if ((h | 32) >= 'a' && (h | 32) <= 'f')
						v = v * 16 + (unsigned)((h | 32) - 'a' + 10);
					else
						return fail(c, -EINVAL, "bad \\u escape");
				}
				ch = v && v < 0x80 ? (char)v : '?';
				break;
			}
			default:
				return fail(c, -EINVAL, "bad escape \\%c", ch);
			}
		}
		if (k + 1 >= size)
			return fail(c, -EINVAL, "string longer than %zu bytes", size - 1);
		buf[k++] = ch;
	}
	if (c->i >= c->n)
		return fail(c, -EINVAL, "unterminated string");
	c->i++;
	buf[k] = 0;
	return 0;
}

static int integer(struct cursor *c, int64_t *v)
{
	char buf[32];
	size_t k = 0;
	char *end;

	ws(c);
	while (c->i < c->n && k + 1 < sizeof(buf) && strchr("-0123456789", c->s[c->i]) &&
	       c->s[c->i])
		buf[k++] = c->s[c->i++];
	buf[k] = 0;
	if (c->i < c->n && strchr(".eE", c->s[c->i]) && c->s[c->i])
		return fail(c, -EINVAL, "expected an integer");
	errno = 0;
	*v = strtoll(buf, &end, 10);
	if (!k || *end || errno)
		return fail(c, -EINVAL, "expected an int64");
	return 0;
}

/* Any value, for keys this version does not know. */
static int skip(struct cursor *c, int depth)
{
	char tmp[MAX_NAME_LEN];

	if (depth > MAX_SKIP_DEPTH)
		return fail(c, -EINVAL, "nested deeper than %d", MAX_SKIP_DEPTH);
	ws(c);
	if (c->i >= c->n)
		return fail(c, -EINVAL, "unexpected end");
	switch (c->s[c->i]) {
	case '"':
		/* A long string: step over it without keeping it. */
		for (c->i++; c->i < c->n && c->s[c->i] != '"'; c->i++)
			if (c->s[c->i] == '\\')
				c->i++;
		if (c->i >= c->n)
			return fail(c, -EINVAL, "unterminated string");
		c->i++;
		return 0;
	case '[':
		c->i++;
		if (eat(c, ']'))
			return 0;
		do {
			if (skip(c, depth + 1))
				return -EINVAL;
		} while (eat(c, ','));
		return expect(c, ']');
	case '{':
		c->i++;
		if (eat(c, '}'))
			return 0;
		do {
			if (string(c, tmp, sizeof(tmp)) || expect(c, ':') || skip(c, depth + 1))
				return -EINVAL;
		} while (eat(c, ','));
		return expect(c, '}');
	}
	for (const char *w = "true\0false\0null\0"; *w; w += strlen(w) + 1)
		if (c->n - c->i >= strlen(w) && !memcmp(c->s + c->i, w, strlen(w))) {
			c->i += strlen(w);
			return 0;
		}
	if (c->s[c->i] == '-' || (c->s[c->i] >= '0' && c->s[c->i] <= '9')) {
		/* Numbers of other keys may be doubles. */
		while (c->i < c->n && c->s[c->i] && strchr("+-.eE0123456789", c->s[c->i]))
			c->i++;
		return 0;
	}
	return fail(c, -EINVAL, "unexpected '%c'", c->s[c->i]);
}

static int points(struct cursor *c, struct xs_mem_allocator *a)
{
	size_t cap = 0;

	if (expect(c, '['))
		return -EINVAL;
	if (eat(c, ']'))
		return 0;
	do {
		int64_t f[6];

		if (++c->n_points > XS_MEM_MAX_POINTS)
			return fail(c, -E2BIG, "more than %u points", XS_MEM_MAX_POINTS);
		if (expect(c, '['))
			return -EINVAL;
		for (int k = 0; k < 6; k++)
			if ((k && expect(c, ',')) || integer(c, &f[k]))
				return -EINVAL;
		if (expect(c, ']'))
			return -EINVAL;
		if (f[1] < 0 || f[2] < 0 || f[3] < 0 || f[4] < 0 || f[5] < 0)
			return fail(c, -EINVAL, "a negative span or byte count");
		if (a->n_points && f[0] < a->points[a->n_points - 1].t_ns)
			return fail(c, -EINVAL, "points out of time order");
		if (ARRAY_GROW(a->points, cap, a->n_points + 1))
			return -ENOMEM;
		a->points[a->n_points++] = (struct xs_mem_point){
			.t_ns = f[0], .span_ns = f[1], .in_use = f[2],
			.min = f[3], .max = f[4], .peak = f[5],
		};
	} while (eat(c, ','));
	return expect(c, ']');
}

static int allocator(struct cursor *c, struct xs_mem_allocator *a)
{
	char key[MAX_NAME_LEN], val[MAX_NAME_LEN];
	bool named = false;
	int ret;

	a->pid = a->device_ordinal = -1;
	if (expect(c, '{'))
		return -EINVAL;
	if (eat(c, '}'))
		return fail(c, -EINVAL, "an allocator without allocator_name");
	do {
		if (string(c, key, sizeof(key)) || expect(c, ':'))
			return -EINVAL;
		if (!strcmp(key, "allocator_name") || !strcmp(key, "layer")) {
			char **dst = (char **)(!strcmp(key, "layer") ? &a->layer : &a->name);

			if (string(c, val, sizeof(val)))
				return -EINVAL;
			free(*dst);
			*dst = strdup(val);
			if (!*dst)
				return -ENOMEM;
			named |= dst == (char **)&a->name;
		} else if (!strcmp(key, "pid")) {
			if (integer(c, &a->pid))
				return -EINVAL;
		} else if (!strcmp(key, "device_ordinal")) {
			if (integer(c, &a->device_ordinal))
				return -EINVAL;
		} else if (!strcmp(key, "points")) {
			ret = points(c, a);
			if (ret)
				return ret;
		} else if (skip(c, 0)) {
			return -EINVAL;
		}
	} while (eat(c, ','));
	if (!named)
		return fail(c, -EINVAL, "an allocator without allocator_name");
	return expect(c, '}');
}

static int document(struct cursor *c, struct memory_timelines *out)
{
	char key[MAX_NAME_LEN];
	size_t cap = 0;
	int64_t version = -1;
	int ret;

	if (expect(c, '{'))
		return -EINVAL;
	do {
		if (string(c, key, sizeof(key)) || expect(c, ':'))
			return -EINVAL;
		if (!strcmp(key, "version")) {
			if (integer(c, &version))
				return -EINVAL;
			if (version != 1)
				return fail(c, -EINVAL, "version %lld, not 1", (long long)version);
		} else if (!strcmp(key, "allocators")) {
			if (expect(c, '['))
				return -EINVAL;
			if (eat(c, ']'))
				continue;
			do {
				if (out->n_allocs >= XS_MEM_MAX_ALLOCATORS)
					return fail(c, -E2BIG, "more than %d allocators",
						    XS_MEM_MAX_ALLOCATORS);
				if (ARRAY_GROW(out->allocs, cap, out->n_allocs + 1))
					return -ENOMEM;
				memset(&out->allocs[out->n_allocs], 0, sizeof(*out->allocs));
				ret = allocator(c, &out->allocs[out->n_allocs++]);
				if (ret)
					return ret;
			} while (eat(c, ','));
			if (expect(c, ']'))
				return -EINVAL;
		} else if (skip(c, 0)) {
			return -EINVAL;
		}
	} while (eat(c, ','));
	if (expect(c, '}'))
		return -EINVAL;
	ws(c);
	if (c->i != c->n)
		return fail(c, -EINVAL, "text after the object");
	if (version != 1)
		return fail(c, -EINVAL, "no \"version\": 1");
	return 0;
}

int memory_timelines_parse(const char *json, size_t len, struct memory_timelines *out,
			   char *err, size_t errlen)
{
	struct cursor c = { .s = json, .n = len, .err = err, .errlen = errlen };
	int ret;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = 0;
	ret = document(&c, out);
	if (ret) {
		if (ret == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		memory_timelines_free(out);
	}
	return ret;
}

void memory_timelines_free(struct memory_timelines *t)
{
	for (size_t i = 0; i < t->n_allocs; i++) {
		free((char *)t->allocs[i].name);
		free((char *)t->allocs[i].layer);
		free(t->allocs[i].points);
	}
	free(t->allocs);
	memset(t, 0, sizeof(*t));
}
