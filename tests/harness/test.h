/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Assertions for acceltrace's C tests, after the kernel's test_progs.h: each
 * prints what it checked, the actual and the expected value, and returns
 * whether it held, so a test reads `if (!ASSERT_OK(err, "load")) goto out;`.
 *
 * A test program exits with test_exit(): 0 when every assertion held, 1 when
 * one failed, 77 (TEST_SKIP) when the test could not run here.
 */
#ifndef ACCELTRACE_TEST_H
#define ACCELTRACE_TEST_H

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_SKIP 77

static int test_failures;
static int test_checks;

static inline bool test_check(bool ok, const char *file, int line,
			      const char *name, const char *fmt_actual, ...)
	__attribute__((format(printf, 5, 6)));

static inline bool test_check(bool ok, const char *file, int line,
			      const char *name, const char *fmt_actual, ...)
{
	test_checks++;
	if (ok)
		return true;
	test_failures++;
	fprintf(stderr, "FAIL %s:%d: %s: ", file, line, name);
	if (fmt_actual) {
		va_list ap;

		va_start(ap, fmt_actual);
		vfprintf(stderr, fmt_actual, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
	return false;
}

#define ASSERT_TRUE(cond, name) \
	test_check(!!(cond), __FILE__, __LINE__, name, "expected true: %s", #cond)
#define ASSERT_FALSE(cond, name) \
	test_check(!(cond), __FILE__, __LINE__, name, "expected false: %s", #cond)
#define ASSERT_OK(err, name) ({ \
	long long ___e = (long long)(err); \
	test_check(___e == 0, __FILE__, __LINE__, name, \
		   "unexpected error %lld (%s)", ___e, \
		   strerror(___e < 0 ? (int)-___e : (int)___e)); })
#define ASSERT_EQ(actual, expected, name) ({ \
	long long ___a = (long long)(actual), ___x = (long long)(expected); \
	test_check(___a == ___x, __FILE__, __LINE__, name, \
		   "actual %lld != expected %lld", ___a, ___x); })
#define ASSERT_NEQ(actual, expected, name) ({ \
	long long ___a = (long long)(actual), ___x = (long long)(expected); \
	test_check(___a != ___x, __FILE__, __LINE__, name, \
		   "actual %lld == unexpected %lld", ___a, ___x); })
#define ASSERT_GE(actual, expected, name) ({ \
	long long ___a = (long long)(actual), ___x = (long long)(expected); \
	test_check(___a >= ___x, __FILE__, __LINE__, name, \
		   "actual %lld < expected minimum %lld", ___a, ___x); })
#define ASSERT_LE(actual, expected, name) ({ \
	long long ___a = (long long)(actual), ___x = (long long)(expected); \
	test_check(___a <= ___x, __FILE__, __LINE__, name, \
		   "actual %lld > expected maximum %lld", ___a, ___x); })
#define ASSERT_STREQ(actual, expected, name) ({ \
	const char *___a = (actual), *___x = (expected); \
	test_check(___a && ___x && !strcmp(___a, ___x), __FILE__, __LINE__, \
		   name, "actual \"%s\" != expected \"%s\"", \
		   ___a ? ___a : "(null)", ___x ? ___x : "(null)"); })
#define ASSERT_STRCONTAINS(haystack, needle, name) ({ \
	const char *___h = (haystack), *___n = (needle); \
	test_check(___h && ___n && strstr(___h, ___n), __FILE__, __LINE__, \
		   name, "\"%s\" does not contain \"%s\"", \
		   ___h ? ___h : "(null)", ___n ? ___n : "(null)"); })
#define ASSERT_OK_PTR(ptr, name) \
	test_check((ptr) != NULL, __FILE__, __LINE__, name, \
		   "unexpected NULL (errno %d: %s)", errno, strerror(errno))

/* Skips the whole test when not root: BPF needs CAP_BPF and CAP_PERFMON. */
static inline void test_require_root(const char *why)
{
	if (geteuid() != 0) {
		printf("SKIP: needs root (%s)\n", why);
		exit(TEST_SKIP);
	}
}

/* The fds this process has open (-1 when /proc cannot say): a test of
 * code that must close what it let go counts them before and after. */
static inline int test_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static inline int test_exit(void)
{
	if (test_failures) {
		fprintf(stderr, "%d of %d checks failed\n", test_failures,
			test_checks);
		return 1;
	}
	return 0;
}

#endif /* ACCELTRACE_TEST_H */
