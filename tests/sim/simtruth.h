/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The simulator's ground truth: one JSON object per line, appended to one
 * file by the trainer and the plugin alike (docs/simulator.md has the
 * schema). Both link libsimtruth.so, so a process has one buffer, one order
 * and one flush, even when it crashes on purpose.
 *
 * A record is built on the stack with the inline tl_* helpers (no printf:
 * the trainer writes ~25 records per execution at 10k executions/s) and
 * handed to truth_commit(), which copies it into the process buffer.
 */
#ifndef ACCELTRACE_SIM_TRUTH_H
#define ACCELTRACE_SIM_TRUTH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define TRUTH_LINE_MAX 1024

struct truth_line {
	size_t len;
	char buf[TRUTH_LINE_MAX];
};

/* Opens (appends to) `path` for this process; a second open is a no-op
 * returning 0. Returns 0 or -errno. */
int truth_open(const char *path);
/* True once truth_open() succeeded: callers skip building records otherwise. */
bool truth_enabled(void);
/* Appends one finished line. Never fails visibly: a write error is counted
 * and reported by truth_close(). */
void truth_commit(struct truth_line *l);
/* Writes what is buffered. Returns 0 or -errno of the first failed write. */
int truth_flush(void);
/* Flushes and closes; returns 0 or -errno of any write failure so far. */
int truth_close(void);

static inline uint64_t truth_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Cached, and reset in a forked child. */
int truth_pid(void);
int truth_tid(void);

static inline void tl_raw(struct truth_line *l, const char *s, size_t n)
{
	if (l->len + n > TRUTH_LINE_MAX - 4)
		n = TRUTH_LINE_MAX - 4 - l->len;
	memcpy(l->buf + l->len, s, n);
	l->len += n;
}

static inline void tl_key(struct truth_line *l, const char *key)
{
	char tmp[64];
	size_t n = strlen(key);

	if (n > sizeof(tmp) - 4)
		n = sizeof(tmp) - 4;
	tmp[0] = ',';
	tmp[1] = '"';
	memcpy(tmp + 2, key, n);
	tmp[n + 2] = '"';
	tmp[n + 3] = ':';
	tl_raw(l, tmp, n + 4);
}

static inline void tl_put_u64(struct truth_line *l, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	tl_raw(l, tmp + i, sizeof(tmp) - i);
}

static inline void tl_u64(struct truth_line *l, const char *key, uint64_t v)
{
	tl_key(l, key);
	tl_put_u64(l, v);
}

static inline void tl_i64(struct truth_line *l, const char *key, int64_t v)
{
	tl_key(l, key);
	if (v < 0) {
		tl_raw(l, "-", 1);
		tl_put_u64(l, (uint64_t)0 - (uint64_t)v);
	} else {
		tl_put_u64(l, (uint64_t)v);
	}
}

static inline void tl_bool(struct truth_line *l, const char *key, bool v)
{
	tl_key(l, key);
	tl_raw(l, v ? "true" : "false", v ? 4 : 5);
}

/* A JSON string: quotes, backslashes and control bytes escaped; other bytes
 * pass through (paths and names here are ASCII). */
static inline void tl_str(struct truth_line *l, const char *key, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	tl_key(l, key);
	tl_raw(l, "\"", 1);
	for (; s && *s && l->len < TRUTH_LINE_MAX - 16; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			tl_raw(l, e, 2);
		} else if (c < 0x20) {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
			tl_raw(l, e, 6);
		} else {
			tl_raw(l, (const char *)&c, 1);
		}
	}
	tl_raw(l, "\"", 1);
}

/* Device-side records carry the process id; host-side ones also the thread. */
static inline void tl_begin_dev(struct truth_line *l, const char *type)
{
	l->len = 0;
	tl_raw(l, "{\"type\":\"", 9);
	tl_raw(l, type, strlen(type));
	tl_raw(l, "\"", 1);
	tl_u64(l, "pid", (uint64_t)truth_pid());
}

static inline void tl_begin(struct truth_line *l, const char *type)
{
	tl_begin_dev(l, type);
	tl_u64(l, "tid", (uint64_t)truth_tid());
}

#endif /* ACCELTRACE_SIM_TRUTH_H */
