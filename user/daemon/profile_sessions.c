// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ProfilerService's calls in the daemon's loop (profile_sessions.h):
 * taken from the gRPC server, checked by profiler_service/, started
 * through the daemon's ops, and answered once their capture is written or
 * their Monitor's time is up.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "profiler"
#include "lib/clock.h"
#include "lib/log.h"
#include "daemon/metrics.h"
#include "daemon/profile_sessions.h"
#include "output/xspace_writer.h"

#define NS_PER_SEC 1000000000ull
#define MONITOR_MAX_PROCS 32

struct waiting {
	struct grpc_call *call;
	enum profiler_method method;
	char session[XPROF_MAX_SESSION];	/* a Profile's */
	char said[PROFILER_MAX_STATUS];		/* a Profile's OK message */
	uint64_t due_ns;			/* a Monitor's */
	int level;
	bool timestamp;
	struct metrics_monitor *before;		/* a Monitor's first look */
	size_t n_before;
	uint64_t since_ns;
};

struct profile_sessions {
	struct profile_sessions_opts o;
	struct grpc_server *srv;
	struct profiler_service *svc;
	struct waiting wait[PROFILE_SESSIONS_MAX_WAITING];
	size_t n;
};


struct profile_sessions *profile_sessions__bind(const struct profile_sessions_opts *opts)
{
	struct profiler_service_config cfg = { .sz = sizeof(cfg) };
	struct grpc_server_opts go = { .sz = sizeof(go) };
	struct profile_sessions *ps = calloc(1, sizeof(*ps));
	int err;

	if (!ps)
		return NULL;
	memcpy(&ps->o, opts, opts->sz < sizeof(ps->o) ? opts->sz : sizeof(ps->o));
	cfg.logdir = opts->logdir;
	cfg.roots = opts->roots;
	cfg.max_duration_ns = opts->max_duration_ns;
	ps->svc = profiler_service__new(&cfg);
	if (!ps->svc) {
		err = -errno;
		goto fail;
	}
	go.addr = opts->addr;
	go.port = opts->port;
	ps->srv = grpc_server__bind(&go);
	if (!ps->srv) {
		err = -errno;
		log_err("cannot listen on %s:%u: %s", opts->addr, opts->port, strerror(-err));
		goto fail;
	}
	return ps;
fail:
	profiler_service__free(ps->svc);
	free(ps);
	errno = -err;
	return NULL;
}

int profile_sessions__serve(struct profile_sessions *ps)
{
	int err = grpc_server__serve(ps->srv);

	if (err)
		log_err("cannot serve on port %u: %s", grpc_server__port(ps->srv), strerror(-err));
	return err;
}

uint16_t profile_sessions__port(const struct profile_sessions *ps)
{
	return grpc_server__port(ps->srv);
}

static void finish(struct grpc_call *c, enum grpc_status st, const char *msg,
		   const uint8_t *resp, size_t len)
{
	if (st != GRPC_STATUS_OK)
		log_info("%s from %s: %s", grpc_call__method(c), grpc_call__peer(c),
			 msg ? msg : "");
	grpc_call__finish(c, st, msg, resp, len);
}

static void drop(struct profile_sessions *ps, size_t i)
{
	free(ps->wait[i].before);
	ps->wait[i] = ps->wait[--ps->n];
}

/* ---------------------------------------------------------------- Monitor */

static size_t monitor_look(const struct metrics *m, struct metrics_monitor *out, size_t max)
{
	size_t n = 0;

	while (n < max && metrics__monitor(m, n, &out[n]))
		n++;
	return n;
}

static const struct metrics_monitor *find_before(const struct waiting *w, uint32_t pid)
{
	for (size_t i = 0; i < w->n_before; i++)
		if (w->before[i].pid == pid)
			return &w->before[i];
	return NULL;
}

static void line_prefix(FILE *f, bool timestamp)
{
	char buf[32];
	time_t t;
	struct tm tm;

	if (!timestamp)
		return;
	t = time(NULL);
	if (localtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm))
		fprintf(f, "%s ", buf);
}

/* The text capture_tpu_profile --monitoring_level prints, from what the
 * metrics counted between the Monitor's first look and now. */
static void monitor_text(const struct waiting *w, const struct metrics_monitor *now,
			 size_t n_now, double secs, FILE *f)
{
	bool any = false;

	for (size_t i = 0; i < n_now; i++) {
		const struct metrics_monitor *a = &now[i], *b = find_before(w, a->pid);
		uint64_t steps = a->steps - (b ? b->steps : 0);
		uint64_t sum = a->step_sum_ns - (b ? b->step_sum_ns : 0);
		uint64_t busy = 0, idle = 0;

		for (size_t c = 0; c < a->n_cores; c++) {
			uint64_t bb = 0, bi = 0;

			for (size_t k = 0; b && k < b->n_cores; k++)
				if (b->core[k].core == a->core[c].core) {
					bb = b->core[k].busy_ns;
					bi = b->core[k].idle_ns;
				}
			busy += a->core[c].busy_ns - bb;
			idle += a->core[c].idle_ns - bi;
		}
		if (!steps && !busy && !idle)
			continue;
		any = true;
		line_prefix(f, w->timestamp);
		fprintf(f, "pid %" PRIu32 " (%s): ", a->pid, a->command);
		if (steps)
			fprintf(f, "step time %.2f ms (avg of %" PRIu64 " steps)", sum / 1e6 / steps,
				steps);
		else
			fprintf(f, "no step seen");
		if (busy + idle)
			fprintf(f, ", device idle %.1f%%, input-bound %.1f%%\n",
				100.0 * idle / (busy + idle), 100.0 * idle / (busy + idle));
		else
			fprintf(f, ", no device time seen\n");
		for (size_t c = 0; w->level >= 2 && c < a->n_cores; c++) {
			uint64_t bb = 0, bi = 0, be = 0, cb, ci;

			for (size_t k = 0; b && k < b->n_cores; k++)
				if (b->core[k].core == a->core[c].core) {
					bb = b->core[k].busy_ns;
					bi = b->core[k].idle_ns;
					be = b->core[k].executions;
				}
			cb = a->core[c].busy_ns - bb;
			ci = a->core[c].idle_ns - bi;
			line_prefix(f, w->timestamp);
			fprintf(f, "  core %u: busy %.1f%%, idle %.1f%%, %" PRIu64 " executions\n",
				a->core[c].core, cb + ci ? 100.0 * cb / (cb + ci) : 0.0,
				cb + ci ? 100.0 * ci / (cb + ci) : 0.0, a->core[c].executions - be);
		}
	}
	if (!any) {
		line_prefix(f, w->timestamp);
		fprintf(f, "no steps seen in the last %.0f s\n", secs);
	}
	if (w->level >= 2) {
		line_prefix(f, w->timestamp);
		fprintf(f, "(device idle: the cores' gaps between executions, which acceltrace "
			"counts as waiting for the host's input)\n");
	}
}

static void answer_monitor(struct profile_sessions *ps, struct waiting *w, uint64_t now)
{
	struct metrics_monitor *look = calloc(MONITOR_MAX_PROCS, sizeof(*look));
	char *text = NULL;
	size_t len = 0, n, rlen;
	uint8_t *resp = NULL;
	FILE *f;

	if (!look) {
		finish(w->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory", NULL, 0);
		return;
	}
	n = monitor_look(ps->o.metrics, look, MONITOR_MAX_PROCS);
	f = open_memstream(&text, &len);
	if (f) {
		monitor_text(w, look, n, (now - w->since_ns) / 1e9, f);
		if (fclose(f)) {
			free(text);
			text = NULL;
		}
	}
	if (text && !profiler_service__monitor_response(text, &resp, &rlen))
		finish(w->call, GRPC_STATUS_OK, NULL, resp, rlen);
	else
		finish(w->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory", NULL, 0);
	free(resp);
	free(text);
	free(look);
}

/* ---------------------------------------------------------------- calls */

static void start_profile(struct profile_sessions *ps, struct grpc_call *c,
			  const struct profiler_request *rq, struct waiting *w)
{
	struct profiler_profile asked = rq->profile;
	const struct profiler_profile *p = &asked;
	uint64_t deadline = grpc_call__deadline_ns(c), now = clock_ns(CLOCK_MONOTONIC);
	uint64_t real = clock_ns(CLOCK_REALTIME), ends;
	char why[PROFILER_MAX_STATUS] = "";
	enum grpc_status st;
	int fd;

	snprintf(asked.client, sizeof(asked.client), "%s", grpc_call__client(c));
	/* A quota refuses before a directory is made for the request. */
	if (ps->o.ops.admit) {
		st = ps->o.ops.admit(ps->o.ops.ctx, p, why, sizeof(why));
		if (st != GRPC_STATUS_OK) {
			finish(c, st, why, NULL, 0);
			return;
		}
	}
	fd = profiler_service__open_root(ps->svc, p, &st, why, sizeof(why));
	if (fd < 0) {
		finish(c, st, why, NULL, 0);
		return;
	}
	st = ps->o.ops.profile(ps->o.ops.ctx, p, fd, why, sizeof(why));
	if (st != GRPC_STATUS_OK) {
		close(fd);
		finish(c, st, why, NULL, 0);
		return;
	}
	w->call = c;
	w->method = PROFILER_PROFILE;
	snprintf(w->session, sizeof(w->session), "%.*s", (int)sizeof(w->session) - 1,
		 p->session);
	if (p->not_honoured[0]) {
		snprintf(w->said, sizeof(w->said), "not honoured: %s", p->not_honoured);
		log_info("Profile %s from %s: not honoured: %s", p->session, grpc_call__peer(c),
			 p->not_honoured);
	}
	if (p->late)
		log_info("Profile %s: its start time had passed; it starts now (late)",
			 p->session);
	ends = now + p->duration_ns +
	       (p->start_realtime_ns > real ? p->start_realtime_ns - real : 0);
	if (deadline && deadline < ends)
		log_warn("Profile %s from %s: the client's deadline comes %.1f s before the "
			 "capture ends; it will see DEADLINE_EXCEEDED (the capture is written)",
			 p->session, grpc_call__peer(c), (ends - deadline) / 1e9);
	ps->n++;
}

static void take_call(struct profile_sessions *ps, struct grpc_call *c, uint64_t now)
{
	struct profiler_request rq;
	char why[PROFILER_MAX_STATUS];
	struct waiting *w = &ps->wait[ps->n];
	enum grpc_status st;
	const uint8_t *msg;
	uint8_t *resp;
	size_t len;

	msg = grpc_call__message(c, &len);
	st = profiler_service__parse(ps->svc, grpc_call__method(c), msg, len,
				     clock_ns(CLOCK_REALTIME), &rq, why, sizeof(why));
	if (st != GRPC_STATUS_OK) {
		finish(c, st, why, NULL, 0);
		return;
	}
	if (rq.method == PROFILER_TERMINATE) {
		bool ended = ps->o.ops.terminate(ps->o.ops.ctx, rq.session);

		snprintf(why, sizeof(why), ended ? "ended profiling session %s" :
			 "no profiling session %s was running", rq.session[0] ? rq.session : "");
		if (profiler_service__terminate_response(&resp, &len)) {
			finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory", NULL, 0);
			return;
		}
		finish(c, GRPC_STATUS_OK, why, resp, len);
		free(resp);
		return;
	}
	if (ps->n >= PROFILE_SESSIONS_MAX_WAITING) {
		snprintf(why, sizeof(why), "%u calls wait already", PROFILE_SESSIONS_MAX_WAITING);
		finish(c, GRPC_STATUS_RESOURCE_EXHAUSTED, why, NULL, 0);
		return;
	}
	memset(w, 0, sizeof(*w));
	if (rq.method == PROFILER_PROFILE) {
		start_profile(ps, c, &rq, w);
		return;
	}
	w->call = c;
	w->method = PROFILER_MONITOR;
	w->due_ns = now + rq.monitor_ns;
	w->since_ns = now;
	w->level = rq.monitor_level;
	w->timestamp = rq.monitor_timestamp;
	w->before = calloc(MONITOR_MAX_PROCS, sizeof(*w->before));
	if (w->before)
		w->n_before = monitor_look(ps->o.metrics, w->before, MONITOR_MAX_PROCS);
	ps->n++;
}

void profile_sessions__poll(struct profile_sessions *ps, uint64_t now_ns)
{
	struct grpc_call *c;

	/* A few a turn: a flood waits in the server's queue, bounded there. */
	for (int i = 0; i < 32 && (c = grpc_server__take(ps->srv)); i++)
		take_call(ps, c, now_ns);
	for (size_t i = 0; i < ps->n;) {
		struct waiting *w = &ps->wait[i];

		if (w->method != PROFILER_MONITOR) {
			i++;
			continue;
		}
		if (grpc_call__cancelled(w->call)) {
			grpc_call__finish(w->call, GRPC_STATUS_CANCELLED, NULL, NULL, 0);
		} else if (now_ns >= w->due_ns) {
			answer_monitor(ps, w, now_ns);
		} else {
			i++;
			continue;
		}
		drop(ps, i);
	}
}

void profile_sessions__captured(struct profile_sessions *ps, const char *session, int err,
				const struct xspace_written *wr)
{
	char why[PROFILER_MAX_STATUS + 64];
	uint8_t *resp = NULL;
	size_t len;

	if (!ps)
		return;
	for (size_t i = 0; i < ps->n;) {
		struct waiting *w = &ps->wait[i];

		if (w->method != PROFILER_PROFILE || strcmp(w->session, session)) {
			i++;
			continue;
		}
		if (grpc_call__cancelled(w->call))
			log_info("Profile %s: its client left before the capture was written; "
				 "it is written all the same", session);
		if (err == -ECANCELED) {
			finish(w->call, profiler_service__write_status(err), "the session ended "
			       "before its window began (Terminate, or the daemon stopped)", NULL, 0);
		} else if (err) {
			snprintf(why, sizeof(why), "writing the capture failed: %s", strerror(-err));
			finish(w->call, profiler_service__write_status(err), why, NULL, 0);
		} else if (profiler_service__profile_response(!wr->spans, &resp, &len)) {
			finish(w->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory", NULL, 0);
		} else {
			log_info("Profile %s answered: %s (%" PRIu64 " spans%s)", session, wr->path,
				 wr->spans, wr->spans ? "" : ", empty_trace");
			finish(w->call, GRPC_STATUS_OK, w->said[0] ? w->said : NULL, resp, len);
			free(resp);
			resp = NULL;
		}
		drop(ps, i);
	}
}

void profile_sessions__free(struct profile_sessions *ps, const char *why)
{
	if (!ps)
		return;
	while (ps->n) {
		finish(ps->wait[ps->n - 1].call, GRPC_STATUS_UNAVAILABLE, why, NULL, 0);
		drop(ps, ps->n - 1);
	}
	grpc_server__stop(ps->srv, why);
	profiler_service__free(ps->svc);
	free(ps);
}
