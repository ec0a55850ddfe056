// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the clouds answer, read with bounds: a field of S3's XML, the
 * string and integer fields of a JSON object (GCS, the metadata servers),
 * and an excerpt fit for a log line. A server is not trusted: every copy
 * fits the caller's buffer and every scan stops at the answer's end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json_cursor.h"
#include "store/store.h"
#include "store/store_answers.h"

const char *xml_field(const char *xml, const char *end, const char *tag, char *out,
		      size_t len)
{
	char open[64], close[64];
	const char *a, *b;
	size_t o = 0;

	snprintf(open, sizeof(open), "<%s>", tag);
	snprintf(close, sizeof(close), "</%s>", tag);
	a = memmem(xml, end - xml, open, strlen(open));
	if (!a)
		return NULL;
	a += strlen(open);
	b = memmem(a, end - a, close, strlen(close));
	if (!b)
		return NULL;
	/* The five entities XML predefines; a numeric one kept as written. */
	for (const char *p = a; p < b && o + 1 < len; p++) {
		static const struct { const char *name; char c; } ent[] = {
			{ "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' },
			{ "&quot;", '"' }, { "&apos;", '\'' },
		};
		char c = *p;

		if (c == '&')
			for (size_t i = 0; i < sizeof(ent) / sizeof(ent[0]); i++) {
				size_t n = strlen(ent[i].name);

				if ((size_t)(b - p) >= n && !memcmp(p, ent[i].name, n)) {
					c = ent[i].c;
					p += n - 1;
					break;
				}
			}
		out[o++] = c;
	}
	out[o] = '\0';
	return b + strlen(close);
}

int json_fields(const char *json, size_t n, struct json_field *fields, size_t n_fields,
		char *err, size_t errlen)
{
	struct json_cursor c = { .s = json, .n = n, .err = err, .errlen = errlen };
	char key[128];

	err[0] = '\0';
	if (json_expect(&c, '{'))
		return -EINVAL;
	if (json_eat(&c, '}'))
		return 0;
	do {
		struct json_field *f = NULL;

		if (json_string(&c, key, sizeof(key)) || json_expect(&c, ':'))
			return -EINVAL;
		for (size_t i = 0; i < n_fields; i++)
			if (!strcmp(fields[i].name, key))
				f = &fields[i];
		json_ws(&c);
		if (f && f->str && c.i < c.n && c.s[c.i] == '"') {
			if (json_string(&c, f->str, f->len))
				return -EINVAL;
			f->found = true;
		} else if (f && f->num && c.i < c.n && c.s[c.i] != '"') {
			if (json_int(&c, f->num))
				return -EINVAL;
			f->found = true;
		} else if (f && f->num) {
			/* GCS writes int64s as strings ("size": "123"). */
			char digits[32], *endp;

			if (json_string(&c, digits, sizeof(digits)))
				return -EINVAL;
			*f->num = strtoll(digits, &endp, 10);
			if (*endp || !digits[0])
				return json_fail(&c, -EINVAL, "\"%s\" is no integer", key);
			f->found = true;
		} else if (json_skip(&c, 0)) {
			return -EINVAL;
		}
	} while (json_eat(&c, ','));
	return json_expect(&c, '}');
}

/* One page of a listing: {"items": [{"name": ..., "size": "N"}, ...],
 * "nextPageToken": ...}. */
int gcs_list_page(const char *json, size_t n, store_list_fn fn, void *ctx, char *next,
		  size_t next_len, char *why, size_t why_len)
{
	struct json_cursor c = { .s = json, .n = n, .err = why, .errlen = why_len };
	char key[64];

	why[0] = next[0] = '\0';
	if (json_expect(&c, '{'))
		return -EINVAL;
	if (json_eat(&c, '}'))
		return 0;
	do {
		if (json_string(&c, key, sizeof(key)) || json_expect(&c, ':'))
			return -EINVAL;
		if (!strcmp(key, "nextPageToken")) {
			if (json_string(&c, next, next_len))
				return -EINVAL;
			continue;
		}
		if (strcmp(key, "items")) {
			if (json_skip(&c, 0))
				return -EINVAL;
			continue;
		}
		if (json_expect(&c, '['))
			return -EINVAL;
		if (json_eat(&c, ']'))
			continue;
		do {
			char name[STORE_MAX_KEY + 1] = "", size[32] = "0", field[32];
			int ret;

			if (json_expect(&c, '{'))
				return -EINVAL;
			if (!json_eat(&c, '}')) {
				do {
					if (json_string(&c, field, sizeof(field)) ||
					    json_expect(&c, ':'))
						return -EINVAL;
					if (!strcmp(field, "name")) {
						if (json_string(&c, name, sizeof(name)))
							return -EINVAL;
					} else if (!strcmp(field, "size")) {
						if (json_string(&c, size, sizeof(size)))
							return -EINVAL;
					} else if (json_skip(&c, 1)) {
						return -EINVAL;
					}
				} while (json_eat(&c, ','));
				if (json_expect(&c, '}'))
					return -EINVAL;
			}
			if (name[0] && (ret = fn(name, strtoull(size, NULL, 10), ctx)))
				return ret;
		} while (json_eat(&c, ','));
		if (json_expect(&c, ']'))
			return -EINVAL;
	} while (json_eat(&c, ','));
	return json_expect(&c, '}');
}

int s3_list_page(const char *xml, size_t n, store_list_fn fn, void *ctx, char *next,
		 size_t next_len)
{
	const char *end = xml + n, *p;
	char truncated[8] = "";
	int err;

	for (p = xml; (p = memmem(p, end - p, "<Contents>", 10));) {
		const char *stop = memmem(p, end - p, "</Contents>", 11);
		char key[STORE_MAX_KEY + 1] = "", size[32] = "0";

		if (!stop)
			break;
		xml_field(p, stop, "Key", key, sizeof(key));
		xml_field(p, stop, "Size", size, sizeof(size));
		p = stop + 11;
		if (key[0] && (err = fn(key, strtoull(size, NULL, 10), ctx)))
			return err;
	}
	next[0] = '\0';
	xml_field(xml, end, "IsTruncated", truncated, sizeof(truncated));
	if (!strcmp(truncated, "true"))
		xml_field(xml, end, "NextContinuationToken", next, next_len);
	return 0;
}

void store_answer_excerpt(const char *data, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; data && i < n && o + 1 < len; i++) {
		unsigned char c = data[i];

		out[o++] = c < 0x20 || c >= 0x7f || c == '"' ? ' ' : c;
	}
	out[o] = '\0';
}
