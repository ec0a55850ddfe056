// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A bounded JSON cursor for the stats acceltrace writes as JSON (see
 * json_cursor.h): every string bounded by its buffer, every number an
 * int64, skipped values nested at most MAX_SKIP_DEPTH deep.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_cursor.h"

#define MAX_SKIP_DEPTH 16
#define MAX_KEY_LEN 256

int json_fail(struct json_cursor *c, int ret, const char *fmt, ...)
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

void json_ws(struct json_cursor *c)
{
	while (c->i < c->n && strchr(" \t\r\n", c->s[c->i]) && c->s[c->i])
		c->i++;
}

/* Consumes CH after blanks; false if something else is there. */
bool json_eat(struct json_cursor *c, char ch)
{
	json_ws(c);
	if (c->i < c->n && c->s[c->i] == ch) {
		c->i++;
		return true;
	}
	return false;
}

int json_expect(struct json_cursor *c, char ch)
{
	return json_eat(c, ch) ? 0 : json_fail(c, -EINVAL, "expected '%c'", ch);
}

/* A string into buf (NUL-terminated); \uXXXX beyond ASCII becomes '?'. */
int json_string(struct json_cursor *c, char *buf, size_t size)
{
	size_t k = 0;

	if (json_expect(c, '"'))
		return -EINVAL;
	while (c->i < c->n && c->s[c->i] != '"') {
		char ch = c->s[c->i++];

		if ((unsigned char)ch < 0x20)
			return json_fail(c, -EINVAL, "control character in a string");
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
						return json_fail(c, -EINVAL, "bad \\u escape");
				}
				ch = v && v < 0x80 ? (char)v : '?';
				break;
			}
			default:
				return json_fail(c, -EINVAL, "bad escape \\%c", ch);
			}
		}
		if (k + 1 >= size)
			return json_fail(c, -EINVAL, "string longer than %zu bytes", size - 1);
		buf[k++] = ch;
	}
	if (c->i >= c->n)
		return json_fail(c, -EINVAL, "unterminated string");
	c->i++;
	buf[k] = 0;
	return 0;
}

int json_int(struct json_cursor *c, int64_t *v)
{
	char buf[32];
	size_t k = 0;
	char *end;

	json_ws(c);
	while (c->i < c->n && k + 1 < sizeof(buf) && strchr("-0123456789", c->s[c->i]) &&
	       c->s[c->i])
		buf[k++] = c->s[c->i++];
	buf[k] = 0;
	if (c->i < c->n && strchr(".eE", c->s[c->i]) && c->s[c->i])
		return json_fail(c, -EINVAL, "expected an integer");
	errno = 0;
	*v = strtoll(buf, &end, 10);
	if (!k || *end || errno)
		return json_fail(c, -EINVAL, "expected an int64");
	return 0;
}

/* Any value, for keys this version does not know. */
int json_skip(struct json_cursor *c, int depth)
{
	char tmp[MAX_KEY_LEN];

	if (depth > MAX_SKIP_DEPTH)
		return json_fail(c, -EINVAL, "nested deeper than %d", MAX_SKIP_DEPTH);
	json_ws(c);
	if (c->i >= c->n)
		return json_fail(c, -EINVAL, "unexpected end");
	switch (c->s[c->i]) {
	case '"':
		/* A long string: step over it without keeping it. */
		for (c->i++; c->i < c->n && c->s[c->i] != '"'; c->i++)
			if (c->s[c->i] == '\\')
				c->i++;
		if (c->i >= c->n)
			return json_fail(c, -EINVAL, "unterminated string");
		c->i++;
		return 0;
	case '[':
		c->i++;
		if (json_eat(c, ']'))
			return 0;
		do {
			if (json_skip(c, depth + 1))
				return -EINVAL;
		} while (json_eat(c, ','));
		return json_expect(c, ']');
	case '{':
		c->i++;
		if (json_eat(c, '}'))
			return 0;
		do {
			if (json_string(c, tmp, sizeof(tmp)) || json_expect(c, ':') || json_skip(c, depth + 1))
				return -EINVAL;
		} while (json_eat(c, ','));
		return json_expect(c, '}');
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
	return json_fail(c, -EINVAL, "unexpected '%c'", c->s[c->i]);
}
