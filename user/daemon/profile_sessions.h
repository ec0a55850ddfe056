/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's side of the ProfilerService (profiler_service/): the gRPC
 * server bound and served, each call taken in the daemon's loop and turned
 * into what the daemon does. A Profile becomes a trigger (ops.profile) and
 * waits for its capture (profile_sessions__captured); a Terminate ends
 * one early (ops.terminate); a Monitor waits its duration and is answered
 * from the metrics. At most PROFILE_SESSIONS_MAX_WAITING calls wait.
 * Polled every loop turn, which the recorder's poll ends within 5 ms: the
 * server's fd needs no place in a wait of its own.
 */
#ifndef ACCELTRACE_PROFILE_SESSIONS_H
#define ACCELTRACE_PROFILE_SESSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler_service/profiler_service.h"

#define PROFILE_SESSIONS_MAX_WAITING 16
#define PROFILE_SESSIONS_DEFAULT_LISTEN "127.0.0.1:8466"

struct metrics;
struct profile_sessions;
struct xspace_written;

struct profile_sessions_ops {
	/*
	 * Whether a Profile may be taken on at all (quotas): GRPC_STATUS_OK,
	 * or the status and @why. Asked before anything is created for it;
	 * NULL: every one may.
	 */
	enum grpc_status (*admit)(void *ctx, const struct profiler_profile *p, char *why,
				  size_t why_len);
	/*
	 * A Profile to start or to join (same session): GRPC_STATUS_OK with
	 * @root_fd now the daemon's (it closes it), or the status to answer
	 * with and @why (ALREADY_EXISTS: another session is pending).
	 */
	enum grpc_status (*profile)(void *ctx, const struct profiler_profile *p, int root_fd,
				    char *why, size_t why_len);
	/* Ends @session's pending capture now ("": whichever is pending):
	 * true when one was. */
	bool (*terminate)(void *ctx, const char *session);
	void *ctx;
};

struct profile_sessions_opts {
	size_t sz;
	const char *addr;		/* an IP literal */
	uint16_t port;			/* 0: any free one, logged */
	const char *logdir;
	const char *roots;		/* profiler-roots; NULL: none */
	uint64_t max_duration_ns;	/* max-trigger-duration */
	const struct metrics *metrics;	/* Monitor's source */
	struct profile_sessions_ops ops;
};

/* Binds (while privileged); serves nothing yet. NULL and errno, logged. */
struct profile_sessions *profile_sessions__bind(const struct profile_sessions_opts *opts);
/* Starts serving (after the privileges are dropped). 0 or -errno. */
int profile_sessions__serve(struct profile_sessions *ps);
/* The port it listens on. */
uint16_t profile_sessions__port(const struct profile_sessions *ps);
/* Takes the calls that came and answers the Monitors that are due. */
void profile_sessions__poll(struct profile_sessions *ps, uint64_t now_ns);
/* @session's capture was written (@err 0, @wr) or failed (-errno): its
 * Profile calls are answered. */
void profile_sessions__captured(struct profile_sessions *ps, const char *session, int err,
				const struct xspace_written *wr);
/* Answers every waiting call with UNAVAILABLE and @why, stops; NULL ok. */
void profile_sessions__free(struct profile_sessions *ps, const char *why);

#endif /* ACCELTRACE_PROFILE_SESSIONS_H */
