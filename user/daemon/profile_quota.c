// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A ledger of the last hour's ProfilerService captures (profile_quota.h):
 * a ring of entries, oldest first, summed per logdir and client when one
 * more is asked for.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/profile_quota.h"

struct entry {
	uint64_t id;
	uint64_t t_ns;
	uint64_t bytes;
	uint64_t detail_ns;
	size_t logdir;
	char client[PROFILE_QUOTA_MAX_CLIENT];
};

struct profile_quota {
	struct profile_quota_limits limits;
	struct entry e[PROFILE_QUOTA_MAX_ENTRIES];
	size_t first, n;	/* a ring: e[first], ... n of them */
	uint64_t next_id;
};

struct profile_quota *profile_quota__new(const struct profile_quota_limits *l)
{
	struct profile_quota *q = calloc(1, sizeof(*q));

	if (q) {
		q->limits = *l;
		q->next_id = 1;
	}
	return q;
}

void profile_quota__free(struct profile_quota *q)
{
	free(q);
}

static struct entry *at(struct profile_quota *q, size_t i)
{
	return &q->e[(q->first + i) % PROFILE_QUOTA_MAX_ENTRIES];
}

/* Entries older than the hour forgotten. */
static void expire(struct profile_quota *q, uint64_t now_ns)
{
	while (q->n && now_ns - at(q, 0)->t_ns >= PROFILE_QUOTA_WINDOW_NS) {
		q->first = (q->first + 1) % PROFILE_QUOTA_MAX_ENTRIES;
		q->n--;
	}
}

/* When the hour's share frees again: the @need-th oldest matching entry
 * leaves the window. */
static double frees_in_s(struct profile_quota *q, size_t logdir, const char *client,
			 uint64_t now_ns)
{
	for (size_t i = 0; i < q->n; i++) {
		struct entry *e = at(q, i);

		if (e->logdir == logdir && !strcmp(e->client, client))
			return (e->t_ns + PROFILE_QUOTA_WINDOW_NS - now_ns) / 1e9;
	}
	return 0;
}

int profile_quota__check(struct profile_quota *q, size_t logdir, const char *client,
			 uint64_t now_ns, uint64_t detail_ns, char *why, size_t why_len)
{
	uint64_t captures = 0, bytes = 0, detail = 0;
	const struct profile_quota_limits *l = &q->limits;
	const struct entry *e;

	expire(q, now_ns);
	for (size_t i = 0; i < q->n; i++) {
		e = at(q, i);
		if (e->logdir != logdir || strcmp(e->client, client))
			continue;
		captures++;
		bytes += e->bytes;
		detail += e->detail_ns;
	}
	if (l->captures && captures >= l->captures) {
		snprintf(why, why_len, "quota: %" PRIu64 " captures an hour into this logdir from "
			 "%s (profile-quota-captures); the oldest leaves the hour in %.0f s",
			 l->captures, client, frees_in_s(q, logdir, client, now_ns));
		return -EDQUOT;
	}
	if (l->bytes && bytes >= l->bytes) {
		snprintf(why, why_len, "quota: %.1f MiB an hour into this logdir from %s "
			 "(profile-quota-bytes: %.1f MiB); the oldest leaves the hour in %.0f s",
			 bytes / 1048576.0, client, l->bytes / 1048576.0,
			 frees_in_s(q, logdir, client, now_ns));
		return -EDQUOT;
	}
	if (l->detail_ns && detail_ns && detail + detail_ns > l->detail_ns) {
		snprintf(why, why_len, "quota: %.1f of %.1f minutes of full detail an hour "
			 "taken by %s (profile-quota-detail); ask for less, or without full "
			 "detail", detail / 60e9, l->detail_ns / 60e9, client);
		return -EDQUOT;
	}
	return 0;
}

uint64_t profile_quota__charge(struct profile_quota *q, size_t logdir, const char *client,
			       uint64_t now_ns, uint64_t detail_ns)
{
	struct entry *e;

	expire(q, now_ns);
	if (q->n == PROFILE_QUOTA_MAX_ENTRIES) {
		q->first = (q->first + 1) % PROFILE_QUOTA_MAX_ENTRIES;
		q->n--;
	}
	e = at(q, q->n++);
	memset(e, 0, sizeof(*e));
	e->id = q->next_id++;
	e->t_ns = now_ns;
	e->detail_ns = detail_ns;
	e->logdir = logdir;
	snprintf(e->client, sizeof(e->client), "%s", client);
	return e->id;
}

void profile_quota__add_bytes(struct profile_quota *q, uint64_t id, uint64_t bytes)
{
	for (size_t i = 0; i < q->n; i++)
		if (at(q, i)->id == id) {
			at(q, i)->bytes += bytes;
			return;
		}
}
