/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the daemon's loop (daemon.c) and its triggers (daemon_triggers.c)
 * share: the daemon's state and the one pending capture.
 */
#ifndef ACCELTRACE_DAEMON_INTERNAL_H
#define ACCELTRACE_DAEMON_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "lib/clock.h"
#include "collect/collector.h"
#include "daemon/control.h"
#include "daemon/daemon.h"
#include "daemon/daemon_config.h"
#include "daemon/detail_sampler.h"
#include "profiler_service/profiler_service.h"
#include "session/cpu_priority.h"

#define NS_PER_SEC 1000000000ull
#define PUBLISH_NS (NS_PER_SEC / 2)
#define MAX_WAITERS 64
#define MAX_LOSSES 16

/* The capture asked for and not yet taken: [from, stop] of the recorder. */
struct pending {
	bool active;
	uint64_t at_ns;			/* the trigger (CLOCK_MONOTONIC) */
	uint64_t from_ns;		/* at - N */
	uint64_t stop_ns;		/* at + duration */
	char session[CONTROL_MAX_SESSION];
	char why[512];			/* its reasons, "; "-joined */
	uint32_t focus_pid;		/* the process asked about; 0: none or several */
	int waiters[MAX_WAITERS];	/* control clients to answer */
	size_t n_waiters;
	/* A Profile's destination: <root>/<session>/<host>.xplane.pb in
	 * root_fd; -1: the logdir's, this host's name. */
	int root_fd;
	char root[PROFILER_MAX_PATH];
	char host[PROFILER_MAX_HOST];
	uint64_t quota_id;		/* the Profile's charge (profile_quota.h); 0: none */
};


/* How often the ring's losses are read, to leave SCHED_IDLE when behind. */
#define LOST_CHECK_NS 50000000ull

struct daemon {
	struct daemon_opts o;
	struct daemon_config cfg;
	struct flight_recorder *fr;
	struct cgroup_scope *scope;	/* --cgroup, or NULL: the whole host */
	struct control_server *ctl;
	struct metrics *metrics;
	struct metrics_http *http;
	struct profile_sessions *psvc;		/* the ProfilerService; NULL: off */
	struct profile_quota *quota;		/* what its clients may take */
	struct rules *rules;
	struct collector_observer observer;
	struct pending pending;
	struct detail_sampler sampler;
	uint64_t lost_checked_ns;	/* ring losses last read (cpu priority) */
	struct cpu_priority cpu;
	bool detail_on;
	uint64_t detail_since_ns;	/* when it last came on */
	uint64_t detail_total_ns;	/* on, before that */
	sig_atomic_t seen_reloads, seen_triggers;
	uint64_t last_publish_ns, last_textfile_ns;
	uint64_t captures_written, captures_failed;
	uint64_t profiles_over_quota;	/* Profiles refused RESOURCE_EXHAUSTED */
};


/* A trigger by a control client (@client; -1: no one to answer: a rule,
 * SIGUSR1), about rq->pid when set. */
void daemon_control_trigger(struct daemon *d, const struct control_request *rq, int client,
			    const char *why);
/* The control server's and the ProfilerService's callbacks. */
void daemon_on_request(void *ctx, int client, const struct control_request *rq);
enum grpc_status daemon_on_admit(void *ctx, const struct profiler_profile *pr, char *why,
				 size_t why_len);
enum grpc_status daemon_on_profile(void *ctx, const struct profiler_profile *pr, int root_fd,
				   char *why, size_t why_len);
bool daemon_on_terminate(void *ctx, const char *session);
/* Takes the pending capture, its window ended at @stop. */
void daemon_take_capture(struct daemon *d, uint64_t stop);
/* Drops the pending capture whose window has not begun; @line answers
 * its control clients, its Profile calls are ABORTED. */
void daemon_cancel_pending(struct daemon *d, const char *line);
/* At stop: the pending capture taken up to now, or cancelled if its
 * window has not begun. */
void daemon_stop_pending(struct daemon *d);

#endif /* ACCELTRACE_DAEMON_INTERNAL_H */
