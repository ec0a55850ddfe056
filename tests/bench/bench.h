/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the benchmark programs share: clocks, CPU pinning, memory readings,
 * and the one output format tests/bench/report.py reads:
 *
 *   BENCH <metric> <unit> <sample> <sample> ...
 *
 * one line per metric, one sample per repetition, repetitions in the same
 * order for every metric of a program, so report.py can pair them and take
 * differences and ratios inside one repetition. Anything else a program
 * prints is commentary (to stderr).
 */
#ifndef ACCELTRACE_BENCH_H
#define ACCELTRACE_BENCH_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BENCH_MAX_REPS 64

struct bench_metric {
	const char *name;
	const char *unit;
	int n;
	double v[BENCH_MAX_REPS];
};

static inline uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline void bench_add(struct bench_metric *m, double v)
{
	if (m->n < BENCH_MAX_REPS)
		m->v[m->n++] = v;
}

static inline void bench_print(const struct bench_metric *m)
{
	printf("BENCH %s %s", m->name, m->unit);
	for (int i = 0; i < m->n; i++)
		printf(" %.3f", m->v[i]);
	printf("\n");
	fflush(stdout);
}

/* Pins the calling thread to @cpu; 0 or -errno. */
static inline int bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static inline int bench_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (int)n : 1;
}

/* A positive integer from the environment, or @def. */
static inline long bench_env(const char *name, long def)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	v = strtol(s, &end, 10);
	return (*end || v <= 0) ? def : v;
}

/* A field of /proc/self/status in KiB ("VmRSS", "VmHWM"); 0 when absent. */
static inline uint64_t bench_status_kib(const char *field)
{
	char line[256];
	size_t len = strlen(field);
	uint64_t v = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, len) && line[len] == ':') {
			v = strtoull(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* Resets VmHWM (peak RSS) to the current RSS; 0 or -errno. */
static inline int bench_reset_peak_rss(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs("5", f) < 0)
		err = -EIO;
	if (fclose(f))
		err = -errno;
	return err;
}

/* File offset of the code at @addr in the file mapped there (maps). */
static inline int bench_file_offset(const void *addr, char *path, size_t len,
				    uint64_t *off)
{
	uint64_t a = (uint64_t)(uintptr_t)addr, start, end, pgoff;
	char line[4096], perms[8], file[3072];
	FILE *f = fopen("/proc/self/maps", "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %3071[^\n]", &start, &end,
			   perms, &pgoff, file) < 4)
			continue;
		if (a < start || a >= end)
			continue;
		*off = a - start + pgoff;
		snprintf(path, len, "%s", file);
		err = file[0] == '/' ? 0 : -ENOENT;
		break;
	}
	fclose(f);
	return err;
}

#endif /* ACCELTRACE_BENCH_H */
