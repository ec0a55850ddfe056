/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A recursive-descent cursor over the JSON that acceltrace writes into
 * plane stats (memory timelines, processes) and cloud answers, bounded as a file from
 * anywhere needs: strings fit the caller's buffer, numbers fit an int64
 * (no doubles), skipped values nest at most 16 deep. Every failure
 * returns its -errno and leaves the first one's reason in err
 * ("at byte N: expected ':'").
 */
#ifndef ACCELTRACE_JSON_CURSOR_H
#define ACCELTRACE_JSON_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_cursor {
	const char *s;
	size_t i, n;		/* at s[i] of n bytes */
	char *err;		/* the first failure's reason; err[0] set to 0 first */
	size_t errlen;
};

/* Says why (once: the first failure's reason stays) and returns @ret. */
__attribute__((format(printf, 3, 4)))
int json_fail(struct json_cursor *c, int ret, const char *fmt, ...);
/* Steps over blanks. */
void json_ws(struct json_cursor *c);
/* Consumes @ch after blanks; false when something else is there. */
bool json_eat(struct json_cursor *c, char ch);
/* The same, failing with -EINVAL when @ch is not there. */
int json_expect(struct json_cursor *c, char ch);
/* A string into @buf (NUL-terminated, at most @size - 1 bytes); \uXXXX
 * beyond ASCII becomes '?'. */
int json_string(struct json_cursor *c, char *buf, size_t size);
/* An integer that fits an int64. */
int json_int(struct json_cursor *c, int64_t *v);
/* Any value (for keys a reader does not know), @depth 0 at the top. */
int json_skip(struct json_cursor *c, int depth);

#endif /* ACCELTRACE_JSON_CURSOR_H */
