// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The trigger rules: each fed what the metrics see, each firing once per
 * cooldown. */
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "rules"
#include "lib/log.h"
#include "lib/hashmap.h"
#include "daemon/metrics.h"
#include "daemon/rules.h"

/* A process's recent steps, and the median of the last full look at them. */
struct recent_steps {
	uint64_t ns[RULES_MEDIAN_STEPS];
	size_t n, head;
	uint64_t median_ns;	/* 0: not enough steps yet */
	uint64_t since_median;	/* steps added since it was taken */
	uint64_t stall_reported_at;	/* the completion a stall was reported after */
};

struct rules {
	struct rules_config cfg;
	struct hashmap *procs;		/* pid -> struct recent_steps */
	uint64_t last_fired_ns;
	bool fired;
	char why[256];
	uint32_t pid;		/* the process the last rule fired for */
};

struct rules *rules__new(const struct rules_config *cfg)
{
	struct rules *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->procs = hashmap__new();
	if (!r->procs) {
		free(r);
		return NULL;
	}
	rules__configure(r, cfg);
	return r;
}

void rules__configure(struct rules *r, const struct rules_config *cfg)
{
	r->cfg = *cfg;
}

void rules__free(struct rules *r)
{
	if (!r)
		return;
	hashmap__free(r->procs, free);
	free(r);
}

__attribute__((format(printf, 4, 5)))
static void fire(struct rules *r, uint64_t at_ns, uint32_t pid, const char *fmt, ...)
{
	va_list ap;

	if (r->fired || (r->last_fired_ns && at_ns < r->last_fired_ns + r->cfg.cooldown_ns))
		return;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->fired = true;
	r->pid = pid;
	r->last_fired_ns = at_ns;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Taken again every quarter of the history: a sort per step would cost
 * more than the step at 10k steps/s. */
static void update_median(struct recent_steps *rs)
{
	uint64_t sorted[RULES_MEDIAN_STEPS];

	if (rs->n < RULES_MEDIAN_MIN_STEPS ||
	    (rs->median_ns && rs->since_median < RULES_MEDIAN_STEPS / 4))
		return;
	memcpy(sorted, rs->ns, rs->n * sizeof(sorted[0]));
	qsort(sorted, rs->n, sizeof(sorted[0]), cmp_u64);
	rs->median_ns = sorted[rs->n / 2];
	rs->since_median = 0;
}

static struct recent_steps *recent(struct rules *r, uint32_t pid)
{
	struct recent_steps *rs = hashmap__get(r->procs, pid, 0);

	if (rs)
		return rs;
	rs = calloc(1, sizeof(*rs));
	if (!rs || hashmap__put(r->procs, pid, 0, rs, NULL)) {
		free(rs);
		return NULL;
	}
	return rs;
}

void rules__step(struct rules *r, uint32_t pid, uint64_t step_ns, uint64_t at_ns)
{
	struct recent_steps *rs;

	if (r->cfg.step_time_over_ns && step_ns > r->cfg.step_time_over_ns)
		fire(r, at_ns, pid, "step time %.3f ms of pid %u over the threshold %.3f ms",
		     step_ns / 1e6, pid, r->cfg.step_time_over_ns / 1e6);
	if (r->cfg.step_time_factor <= 0)
		return;
	rs = recent(r, pid);
	if (!rs)
		return;
	/* Judged against the median before it, so a slow step cannot raise
	 * the bar it is held to. */
	if (rs->median_ns && step_ns > r->cfg.step_time_factor * rs->median_ns)
		fire(r, at_ns, pid, "step time %.3f ms of pid %u over %g x its recent median %.3f ms",
		     step_ns / 1e6, pid, r->cfg.step_time_factor, rs->median_ns / 1e6);
	rs->ns[rs->head] = step_ns;
	rs->head = (rs->head + 1) % RULES_MEDIAN_STEPS;
	if (rs->n < RULES_MEDIAN_STEPS)
		rs->n++;
	rs->since_median++;
	update_median(rs);
}

void rules__exit(struct rules *r, uint32_t pid, int32_t exit_code, uint64_t at_ns)
{
	int sig = exit_code & 0x7f;

	free(hashmap__remove(r->procs, pid, 0));
	/* Killed by a signal other than the two that ask it to stop (SIGKILL
	 * counts: the OOM killer sends it). */
	if (r->cfg.on_crash && sig && sig != SIGTERM && sig != SIGINT)
		fire(r, at_ns, pid, "pid %u crashed (signal %d)", pid, sig);
}

void rules__check_stalls(struct rules *r, const struct metrics *m, uint64_t now_ns)
{
	struct metrics_activity a;

	if (!r->cfg.device_stall_ns)
		return;
	for (size_t i = 0; metrics__activity(m, i, &a); i++) {
		uint64_t since = a.last_completion_ns ? a.last_completion_ns : a.first_seen_ns;
		struct recent_steps *rs;

		/* Completions go unseen now (sampled mode, between slices):
		 * no stall can be told; and none before they were watched. */
		if (!a.completions_watched_ns)
			continue;
		if (since < a.completions_watched_ns)
			since = a.completions_watched_ns;
		/* Work enqueued after the last completion, none since. */
		if (a.last_enqueue_ns <= a.last_completion_ns || now_ns < since ||
		    now_ns - since < r->cfg.device_stall_ns)
			continue;
		rs = recent(r, a.pid);
		if (rs && rs->stall_reported_at == since)
			continue;
		if (rs)
			rs->stall_reported_at = since;
		fire(r, now_ns, a.pid, "device stall: pid %u enqueued work and saw no completion "
		     "for %.1f s", a.pid, (now_ns - since) / 1e9);
	}
}

bool rules__take(struct rules *r, char *why, size_t len)
{
	if (!r->fired)
		return false;
	snprintf(why, len, "%s", r->why);
	r->fired = false;
	return true;
}

uint32_t rules__taken_pid(const struct rules *r)
{
	return r->pid;
}
