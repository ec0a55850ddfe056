/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Assertions for acceltrace's C tests, after the kernel's test_progs.h: each
 * prints what it checked, the actual and the expected value, and returns
 * whether it held, so a test reads `if (!ASSERT_OK(err, "load")) goto out;`.
 *
 * A test program exits with test_exit(): 0 when every assertion held, 1 when
 * one failed, 77 (TEST_SKIP) when the test could not run here. A part that
 * cannot run here while the rest does says so with test_skip_part().
 *
 * A test that needs something to have happened (a thread blocked, a record
 * drained) waits for it with WAIT_UNTIL, never with a sleep that guesses
 * how long it takes: a guess fails on a loaded machine and wastes time on
 * an idle one.
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
#include <time.h>
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

/*
 * A part of the test that cannot run here (a tool, a feature, a privilege
 * missing) while the rest runs and passes: one line "SKIP-PART: reason",
 * which tests/run-tests.sh counts and lists, so that a pass that checked
 * less than it could is seen as such.
 */
static inline void test_skip_part(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static inline void test_skip_part(const char *fmt, ...)
{
	va_list ap;

	fputs("SKIP-PART: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static inline long long test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Waits for @cond instead of sleeping: runs @step (what makes progress
 * visible, e.g. draining a ring buffer; may be empty), then tests @cond,
 * every millisecond until @cond holds or @timeout_ms passes. At the
 * deadline it fails a check named @what, the thing that did not happen.
 * Evaluates to whether @cond held.
 */
#define WAIT_UNTIL(step, cond, timeout_ms, what) ({ \
	long long ___deadline = test_now_ms() + (timeout_ms); \
	bool ___held; \
	for (;;) { \
		step; \
		___held = !!(cond); \
		if (___held || test_now_ms() >= ___deadline) \
			break; \
		usleep(1000); \
	} \
	test_check(___held, __FILE__, __LINE__, what, "not within %lld ms: %s", \
		   (long long)(timeout_ms), #cond); })

/*
 * Whether thread @tid of this process sleeps in system call @nr. The
 * kernel names the call in /proc/self/task/TID/syscall only while the
 * thread is blocked in it ("running" otherwise), so the call's entry, and
 * every probe on the way to it, has run.
 */
static inline bool test_thread_blocked_in(long tid, long nr)
{
	char path[64], line[128];
	bool blocked = false;
	long got;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(line, sizeof(line), f) && sscanf(line, "%ld", &got) == 1)
		blocked = got == nr;
	fclose(f);
	return blocked;
}

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
