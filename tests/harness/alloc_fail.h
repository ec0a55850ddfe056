/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Allocation-failure injection for C tests, after sqlite's test_malloc.c:
 * the test executable defines malloc, calloc and realloc, which glibc lets
 * a program replace (its own internal calls, strdup's included, go through
 * them too), and forwards to glibc's allocator until told to fail.
 *
 *   alloc_fail_at(n, persistent): the n-th allocation from now fails (0 is
 *   the next one); with persistent, every one after it fails too.
 *   alloc_fail_off(): allocations succeed again; returns how many failed.
 *   alloc_fail_live(): blocks allocated and not yet freed (compare it
 *   before and after an operation that should free what it made).
 *
 * The usual loop runs an operation with the n-th allocation failing, for n
 * from 0 until an attempt sees no failure, and checks that each attempt
 * returns an error (or degrades as documented) and never crashes.
 *
 * Include this header in exactly one file of a test executable.
 */
#ifndef ACCELTRACE_ALLOC_FAIL_H
#define ACCELTRACE_ALLOC_FAIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include <string.h>

#include "libc_alloc.h"

/* -1: never fail; otherwise allocations left before the one that fails. */
static long alloc_fail_countdown = -1;
static bool alloc_fail_persistent;
static bool alloc_fail_failing;
static unsigned long alloc_fail_failures;
static long alloc_fail_blocks;

static inline void alloc_fail_at(long n, bool persistent)
{
	alloc_fail_countdown = n;
	alloc_fail_persistent = persistent;
	alloc_fail_failing = false;
	alloc_fail_failures = 0;
}

static inline unsigned long alloc_fail_off(void)
{
	alloc_fail_countdown = -1;
	alloc_fail_failing = false;
	return alloc_fail_failures;
}

static inline long alloc_fail_live(void)
{
	return alloc_fail_blocks;
}

static bool alloc_fail_now(void)
{
	if (alloc_fail_failing)
		goto fail;
	if (alloc_fail_countdown < 0)
		return false;
	if (alloc_fail_countdown-- > 0)
		return false;
	alloc_fail_countdown = -1;
	alloc_fail_failing = alloc_fail_persistent;
fail:
	alloc_fail_failures++;
	errno = ENOMEM;
	return true;
}

void *malloc(size_t size)
{
	void *p = alloc_fail_now() ? NULL : LIBC_ALLOC(malloc)(size);

	alloc_fail_blocks += p != NULL;
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p = alloc_fail_now() ? NULL : LIBC_ALLOC(calloc)(n, size);

	alloc_fail_blocks += p != NULL;
	return p;
}

void *realloc(void *p, size_t size)
{
	void *q;

	if (!p)
		return malloc(size);
	if (alloc_fail_now())
		return NULL;	/* p is untouched */
	q = LIBC_ALLOC(realloc)(p, size);
	/* realloc(p, 0) may free p and return NULL. */
	if (!q && !size)
		alloc_fail_blocks--;
	return q;
}

void free(void *p)
{
	alloc_fail_blocks -= p != NULL;
	LIBC_ALLOC(free)(p);
}

#ifdef LIBC_ALLOC_ASAN
/* ASan's own strdup and strndup allocate without calling malloc: through
 * malloc here, as glibc's do, so they fail and are counted like it. */
char *strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	return p ? memcpy(p, s, n) : NULL;
}

char *strndup(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}
#endif

#endif /* ACCELTRACE_ALLOC_FAIL_H */
