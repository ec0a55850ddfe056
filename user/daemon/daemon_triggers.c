// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's triggers (daemon_internal.h): a control client's, a rule's,
 * SIGUSR1's or a ProfilerService Profile's ask becomes the one pending
 * capture (or joins it), which is taken when its window ends, said to its
 * waiters, or cancelled.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "daemon"
#include "lib/log.h"
#include "daemon/daemon_internal.h"
#include "daemon/profile_quota.h"
#include "daemon/detail_sampler.h"
#include "daemon/flight_recorder.h"
#include "daemon/profile_sessions.h"
#include "output/xprof_logdir.h"
#include "output/xspace_writer.h"

/* How far ahead a --at window may be scheduled. */
#define MAX_TRIGGER_AHEAD_NS (24 * 3600 * 1000000000ull)

/* What a trigger asks: a control request's, or a Profile's. */
struct ask {
	uint64_t duration_ns;
	uint64_t at_realtime_ns;	/* 0: now */
	const char *session;		/* "": the default */
	bool lookback;			/* from the flight recorder's reach */
	bool detail;			/* full detail after the trigger */
	int root_fd;			/* a Profile's destination; -1: none */
	const char *root, *host;
	uint32_t pid;			/* the process it is about; 0: none */
};

/* The session a trigger at realtime @real_ns gets by default: its local time. */
static void default_session(uint64_t real_ns, char *buf, size_t len)
{
	time_t t = real_ns / NS_PER_SEC;
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y_%m_%d_%H_%M_%S", &tm))
		snprintf(buf, len, "%lld", (long long)t);
}

static void answer_waiters(struct daemon *d, const char *line)
{
	for (size_t i = 0; i < d->pending.n_waiters; i++)
		control_server__reply(d->ctl, d->pending.waiters[i], line);
	d->pending.n_waiters = 0;
}

/* A capture that will not fit is said when it is asked for, not only when
 * its write fails: the events the recorder holds now (the capture holds
 * them and what the window after adds, up to max-events) at
 * XSPACE_BYTES_PER_EVENT_BOUND each, against the space free. */
static void say_space(const struct daemon *d, const struct pending *p)
{
	uint64_t events = flight_recorder__spans(d->fr), bound, free_bytes;
	struct statvfs sv;
	int err;

	if (events > d->cfg.max_events)
		events = d->cfg.max_events;
	bound = events * XSPACE_BYTES_PER_EVENT_BOUND;
	if (p->root_fd >= 0) {
		err = fstatvfs(p->root_fd, &sv) ? -errno : 0;
		free_bytes = err ? 0 : (uint64_t)sv.f_bavail * sv.f_frsize;
	} else {
		err = xprof_logdir_free_bytes(d->cfg.logdir, &free_bytes);
	}
	if (!err && free_bytes < bound)
		log_warn("capture %s: its %" PRIu64 " events so far can take up to %.1f MiB and "
			 "%s has %.1f MiB free: a full disk would lose it", p->session, events,
			 bound / 1048576.0, p->root_fd >= 0 ? p->root : d->cfg.logdir,
			 free_bytes / 1048576.0);
}

/* A trigger joining the pending capture adds its reason to the first
 * (a rule firing during a manual capture is worth reading in its report). */
static void join_reason(struct pending *p, const char *why)
{
	size_t used = strlen(p->why);

	if (strstr(p->why, why) || used + 2 >= sizeof(p->why))
		return;
	snprintf(p->why + used, sizeof(p->why) - used, "; %s", why);
}

/*
 * Asks for a capture of [at - N, at + duration] ([at, at + duration]
 * without lookback). A trigger while one is pending joins it when it names
 * the same session or none (a fleet's fan-out reaching a host twice, a
 * rule during a manual capture) and, for a Profile, the same destination;
 * else it is refused. 0 (started), 1 (joined), or -EBUSY (another is
 * pending) or -EINVAL with @msg saying why.
 */
static int trigger(struct daemon *d, const struct ask *a, const char *why, char *msg,
		   size_t msg_len)
{
	struct pending *p = &d->pending;
	uint64_t mono = clock_ns(CLOCK_MONOTONIC), real = clock_ns(CLOCK_REALTIME);
	uint64_t at = mono, dur = a->duration_ns;

	if (a->at_realtime_ns) {
		/* The wall clock's time on the monotonic clock of the spans. */
		int64_t off = (int64_t)a->at_realtime_ns - (int64_t)real;

		at = off < 0 && (uint64_t)-off > mono ? 0 : mono + off;
	}
	if (dur > d->cfg.max_trigger_ns) {
		snprintf(msg, msg_len, "duration over max-trigger-duration (%.0f s)",
			 d->cfg.max_trigger_ns / 1e9);
		return -EINVAL;
	}
	/* A window a day or more away would hold the one pending capture,
	 * and every trigger that joins it, for as long. */
	if (at > mono + MAX_TRIGGER_AHEAD_NS) {
		snprintf(msg, msg_len, "that time is more than a day ahead");
		return -EINVAL;
	}
	if (at + dur < flight_recorder__start_ns(d->fr)) {
		snprintf(msg, msg_len, "that time is older than the flight recorder reaches");
		return -EINVAL;
	}
	if (p->active) {
		if (a->session[0] && strcmp(a->session, p->session)) {
			snprintf(msg, msg_len, "busy: capture %s is pending", p->session);
			return -EBUSY;
		}
		if (a->root_fd >= 0 && (p->root_fd < 0 || strcmp(a->root, p->root) ||
					strcmp(a->host, p->host))) {
			snprintf(msg, msg_len, "busy: capture %s is pending, written elsewhere",
				 p->session);
			return -EBUSY;
		}
		if (a->detail && p->stop_ns > p->at_ns)
			detail_sampler__hold(&d->sampler, p->at_ns, p->stop_ns);
		log_info("trigger (%s) joins the pending capture %s", why, p->session);
		join_reason(p, why);
		/* Triggers about different processes share it: about none. */
		if (a->pid && p->focus_pid != a->pid)
			p->focus_pid = 0;
		return 1;
	}
	memset(p, 0, sizeof(*p));
	p->active = true;
	p->at_ns = at;
	p->stop_ns = at + dur;
	if (a->session[0])
		snprintf(p->session, sizeof(p->session), "%s", a->session);
	else
		default_session(a->at_realtime_ns ? a->at_realtime_ns : real,
				p->session, sizeof(p->session));
	snprintf(p->why, sizeof(p->why), "%s", why);
	p->focus_pid = a->pid;
	p->root_fd = a->root_fd;
	if (a->root_fd >= 0) {
		snprintf(p->root, sizeof(p->root), "%s", a->root);
		snprintf(p->host, sizeof(p->host), "%s", a->host);
	}
	p->from_ns = !a->lookback ? (at ? at : 1) :
		     at > d->cfg.flight_recorder_ns ? at - d->cfg.flight_recorder_ns : 1;
	flight_recorder__hold(d->fr, p->from_ns, p->stop_ns);
	/* Full detail through the window after the trigger. */
	if (a->detail && p->stop_ns > p->at_ns)
		detail_sampler__hold(&d->sampler, p->at_ns, p->stop_ns);
	log_info("trigger (%s): capture %s of %.1f s before %s and %.1f s after",
		 why, p->session, (p->at_ns - p->from_ns) / 1e9,
		 at > mono ? "a later time" : "now", dur / 1e9);
	say_space(d, p);
	return 0;
}

/* A trigger by a control client (@client; -1: no one to answer). */
void daemon_control_trigger(struct daemon *d, const struct control_request *rq, int client,
			    const char *why)
{
	struct ask a = { .duration_ns = rq->duration_ns, .at_realtime_ns = rq->at_realtime_ns,
			 .session = rq->session, .lookback = true, .detail = true,
			 .root_fd = -1, .pid = rq->pid };
	struct pending *p = &d->pending;
	char msg[256], line[300], about[320];
	int err;

	/* A capture about a process this daemon does not trace would hold
	 * nothing of it: refused now, not after the window. */
	if (rq->pid && client >= 0 && !flight_recorder__traces(d->fr, (pid_t)rq->pid)) {
		snprintf(msg, sizeof(msg), "pid %" PRIu32 " is not traced by this daemon: it "
			 "maps no accelerator runtime and holds no device node it has seen "
			 "(or it does not exist in the daemon's pid namespace)", rq->pid);
		err = -ESRCH;
	} else {
		if (rq->pid && client >= 0) {
			snprintf(about, sizeof(about), "%s --pid %" PRIu32, why, rq->pid);
			why = about;
		}
		err = trigger(d, &a, why, msg, sizeof(msg));
	}
	if (err < 0) {
		snprintf(line, sizeof(line), "error %s", msg);
		control_server__reply(d->ctl, client, line);
	} else if (client >= 0 && p->n_waiters < MAX_WAITERS) {
		p->waiters[p->n_waiters++] = client;
	} else if (client >= 0) {
		control_server__reply(d->ctl, client, "error busy: too many waiting");
	}
}

void daemon_on_request(void *ctx, int client, const struct control_request *rq)
{
	daemon_control_trigger(ctx, rq, client, "acceltrace trigger");
}

/* A ProfilerService Profile's quota (daemon/profile_quota.h), before
 * anything is made for it. */
enum grpc_status daemon_on_admit(void *ctx, const struct profiler_profile *pr, char *why,
				 size_t why_len)
{
	struct daemon *d = ctx;

	if (!profile_quota__check(d->quota, pr->base, pr->client, clock_ns(CLOCK_MONOTONIC),
				  pr->full_detail ? pr->duration_ns : 0, why, why_len))
		return GRPC_STATUS_OK;
	d->profiles_over_quota++;
	return GRPC_STATUS_RESOURCE_EXHAUSTED;
}

/* A ProfilerService Profile (daemon/profile_sessions.h). */
enum grpc_status daemon_on_profile(void *ctx, const struct profiler_profile *pr, int root_fd,
				   char *why, size_t why_len)
{
	struct ask a = { .duration_ns = pr->duration_ns,
			 .at_realtime_ns = pr->start_realtime_ns, .session = pr->session,
			 .detail = pr->full_detail, .root_fd = root_fd, .root = pr->root,
			 .host = pr->host };
	struct daemon *d = ctx;
	char msg[256];
	int err = trigger(d, &a, "ProfilerService Profile", msg, sizeof(msg));

	if (err == -EBUSY) {
		/* Upstream's ProfilerLock's code: the clients retry on it. */
		snprintf(why, why_len, "another profiling session is active (%s)", msg);
		return GRPC_STATUS_ALREADY_EXISTS;
	}
	if (err < 0) {
		snprintf(why, why_len, "%s", msg);
		return GRPC_STATUS_INVALID_ARGUMENT;
	}
	/* Joined: the pending capture holds its own root's fd, and its charge. */
	if (err == 1)
		close(root_fd);
	else
		d->pending.quota_id = profile_quota__charge(d->quota, pr->base, pr->client,
							    clock_ns(CLOCK_MONOTONIC),
							    pr->full_detail ? pr->duration_ns : 0);
	return GRPC_STATUS_OK;
}


/* A Terminate: @session's pending capture taken now (dropped when its
 * window has not begun). */
bool daemon_on_terminate(void *ctx, const char *session)
{
	struct daemon *d = ctx;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (!d->pending.active || (session[0] && strcmp(session, d->pending.session)))
		return false;
	log_info("Terminate: capture %s ends now", d->pending.session);
	if (now < d->pending.at_ns)
		daemon_cancel_pending(d, "error terminated before its window began");
	else
		daemon_take_capture(d, now);
	return true;
}

/* Takes the pending capture, its window ended at @stop. */
void daemon_take_capture(struct daemon *d, uint64_t stop)
{
	struct pending *p = &d->pending;
	struct flight_recorder_dest dest = { .logdir = d->cfg.logdir, .root_fd = p->root_fd,
					     .root = p->root, .host = p->host, .reason = p->why,
					     .focus_pid = p->focus_pid };
	uint64_t from = p->from_ns;
	struct xspace_written wr = {};
	char line[4200];
	int err;

	if (from < flight_recorder__start_ns(d->fr))
		from = flight_recorder__start_ns(d->fr);
	if (from > stop)
		from = stop;
	err = flight_recorder__capture(d->fr, from, stop, &dest, p->session, &wr);
	if (err) {
		d->captures_failed++;
		snprintf(line, sizeof(line), "error the capture failed: %s", strerror(-err));
	} else {
		d->captures_written++;
		if (p->quota_id)
			profile_quota__add_bytes(d->quota, p->quota_id, wr.bytes);
		log_info("capture written: %s (window_start_ns=%" PRIu64 " window_stop_ns=%" PRIu64
			 ", %.1f s; %s)", wr.path, from, stop, (stop - from) / 1e9, p->why);
		snprintf(line, sizeof(line), "ok %s window_start_ns=%" PRIu64
			 " window_stop_ns=%" PRIu64, wr.path, from, stop);
	}
	answer_waiters(d, line);
	p->active = false;
	if (p->root_fd >= 0)
		close(p->root_fd);
	p->root_fd = -1;
	detail_sampler__release(&d->sampler);
	profile_sessions__captured(d->psvc, p->session, err, &wr);
}

void daemon_stop_pending(struct daemon *d)
{
	uint64_t now = d->o.stop_at_ns && *d->o.stop_at_ns ? *d->o.stop_at_ns :
			clock_ns(CLOCK_MONOTONIC);

	if (!d->pending.active)
		return;
	/* Its trigger has come: what the recorder has is written. */
	if (now >= d->pending.at_ns) {
		log_info("stopping: finishing capture %s", d->pending.session);
		daemon_take_capture(d, now < d->pending.stop_ns ? now : d->pending.stop_ns);
		return;
	}
	daemon_cancel_pending(d, "error the daemon stopped before the trigger's time");
}

/* Drops the pending capture whose window has not begun; @line answers
 * the control clients, its Profile calls are ABORTED. */
void daemon_cancel_pending(struct daemon *d, const char *line)
{
	answer_waiters(d, line);
	d->pending.active = false;
	if (d->pending.root_fd >= 0)
		close(d->pending.root_fd);
	d->pending.root_fd = -1;
	flight_recorder__hold(d->fr, 0, 0);
	detail_sampler__release(&d->sampler);
	profile_sessions__captured(d->psvc, d->pending.session, -ECANCELED, NULL);
}
