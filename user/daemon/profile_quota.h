/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What ProfilerService clients may take of a logdir: per logdir (the
 * daemon's, each profiler-root) and per client (a local user on loopback,
 * "uid N"; an address elsewhere), over the last hour: captures, bytes
 * written, and minutes of full detail. A Profile past any of them is
 * refused RESOURCE_EXHAUSTED before anything is created; the control
 * socket (root) and the rules are the operator's and not counted.
 */
#ifndef ACCELTRACE_PROFILE_QUOTA_H
#define ACCELTRACE_PROFILE_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_QUOTA_WINDOW_NS (3600ull * 1000000000ull)
/* Captures remembered at most: past it the oldest is forgotten (it
 * counts no more), so a flood cannot grow the ledger. */
#define PROFILE_QUOTA_MAX_ENTRIES 4096
#define PROFILE_QUOTA_MAX_CLIENT 48

struct profile_quota_limits {
	uint64_t captures;	/* an hour, per logdir and client; 0: no limit */
	uint64_t bytes;
	uint64_t detail_ns;
};

struct profile_quota;

struct profile_quota *profile_quota__new(const struct profile_quota_limits *l);
void profile_quota__free(struct profile_quota *q);

/*
 * Whether @client may take a capture into logdir @logdir (an index the
 * caller keeps stable) at @now_ns with @detail_ns of full detail: 0, or
 * -EDQUOT with the limit passed and when it frees in @why. Asked before
 * anything is created for the request.
 */
int profile_quota__check(struct profile_quota *q, size_t logdir, const char *client,
			 uint64_t now_ns, uint64_t detail_ns, char *why, size_t why_len);
/* The capture charged once it is taken on; its id, for the bytes later. */
uint64_t profile_quota__charge(struct profile_quota *q, size_t logdir, const char *client,
			       uint64_t now_ns, uint64_t detail_ns);
/* The bytes capture @id wrote, charged to its logdir and client. */
void profile_quota__add_bytes(struct profile_quota *q, uint64_t id, uint64_t bytes);

#endif /* ACCELTRACE_PROFILE_QUOTA_H */
