// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's loop: poll the flight recorder; answer the control socket;
 * reload, trigger and stop on the caller's signal counts; fire rules; take
 * the pending capture when its window ends; publish the metrics.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "daemon"
#include "lib/log.h"
#include "lib/atomic_file.h"
#include "collect/collector.h"
#include "daemon/control.h"
#include "session/cpu_priority.h"
#include "daemon/daemon.h"
#include "daemon/detail_sampler.h"
#include "daemon/flight_recorder.h"
#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "daemon/privileges.h"
#include "daemon/profile_sessions.h"
#include "daemon/rules.h"
#include "devmem/devmem_book.h"
#include "discover/cgroup_scope.h"
#include "discover/procfs.h"
#include "output/xprof_logdir.h"
#include "output/xspace_writer.h"

/* How far ahead a --at window may be scheduled. */
#define MAX_TRIGGER_AHEAD_NS (24 * 3600 * 1000000000ull)

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
};

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
};

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_SEC + ts.tv_nsec;
}

/* ---------------------------------------------------------------- observer */

static void on_span(void *ctx, const struct capture *cap, const struct capture_span *s)
{
	struct daemon *d = ctx;

	metrics__span(d->metrics, cap, s);
}

static void on_exit_(void *ctx, uint32_t pid, int32_t exit_code, uint64_t ts_ns)
{
	struct daemon *d = ctx;

	metrics__process_exit(d->metrics, pid);
	rules__exit(d->rules, pid, exit_code, ts_ns);
}

static void on_step(void *ctx, uint32_t pid, uint64_t step_ns, uint64_t at_ns)
{
	struct daemon *d = ctx;

	rules__step(d->rules, pid, step_ns, at_ns);
}

/* ---------------------------------------------------------------- triggers */

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
static void control_trigger(struct daemon *d, const struct control_request *rq, int client,
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

static void on_request(void *ctx, int client, const struct control_request *rq)
{
	control_trigger(ctx, rq, client, "acceltrace trigger");
}

/* A ProfilerService Profile (daemon/profile_sessions.h). */
static enum grpc_status on_profile(void *ctx, const struct profiler_profile *pr, int root_fd,
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
	/* Joined: the pending capture holds its own root's fd. */
	if (err == 1)
		close(root_fd);
	return GRPC_STATUS_OK;
}

static void take_capture(struct daemon *d, uint64_t stop);
static void cancel_pending(struct daemon *d, const char *line);

/* A Terminate: @session's pending capture taken now (dropped when its
 * window has not begun). */
static bool on_terminate(void *ctx, const char *session)
{
	struct daemon *d = ctx;
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (!d->pending.active || (session[0] && strcmp(session, d->pending.session)))
		return false;
	log_info("Terminate: capture %s ends now", d->pending.session);
	if (now < d->pending.at_ns)
		cancel_pending(d, "error terminated before its window began");
	else
		take_capture(d, now);
	return true;
}

/* Takes the pending capture, its window ended at @stop. */
static void take_capture(struct daemon *d, uint64_t stop)
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

/* ---------------------------------------------------------------- detail */

/* Turns detail on or off when the sampler's answer changes. */
static void steer_detail(struct daemon *d, uint64_t now)
{
	bool want = detail_sampler__want(&d->sampler, now);
	int n;

	if (want == d->detail_on)
		return;
	n = flight_recorder__set_detail(d->fr, want);
	if (n < 0) {
		log_warn("turning detail %s failed: %s", want ? "on" : "off", strerror(-n));
		return;
	}
	/* The metrics start afresh where completions start or stop being seen. */
	metrics__detail(d->metrics, want, now);
	if (want)
		d->detail_since_ns = now;
	else
		d->detail_total_ns += now - d->detail_since_ns;
	d->detail_on = want;
	log_debug("detail %s (%d probes %s)", want ? "on" : "off", n,
		  want ? "attached" : "detached");
}

static double detail_seconds(const struct daemon *d, uint64_t now)
{
	return (d->detail_total_ns + (d->detail_on ? now - d->detail_since_ns : 0)) / 1e9;
}

/* The kernel's per-process aggregates and reads, into the metrics. */
static void read_aggregates(struct daemon *d)
{
	struct metrics_activity a;
	uint64_t v[AGG_MAX], calls, bytes;

	for (size_t i = 0; metrics__activity(d->metrics, i, &a); i++) {
		if (!flight_recorder__aggregates(d->fr, a.pid, v))
			metrics__set_aggregates(d->metrics, a.pid, v);
		if (!procfs_io_reads(a.pid, &calls, &bytes))
			metrics__set_reads(d->metrics, a.pid, calls, bytes);
	}
	metrics__set_device_memory(d->metrics, flight_recorder__mem_book(d->fr));
}

/* ---------------------------------------------------------------- metrics */

static void render(struct daemon *d, uint64_t now, char **text, size_t *len)
{
	const char *names[MAX_LOSSES];
	uint64_t values[MAX_LOSSES];
	struct metrics_counter losses[MAX_LOSSES];
	struct metrics_globals g = {};
	size_t n = flight_recorder__losses(d->fr, names, values, MAX_LOSSES);
	FILE *f;

	for (size_t i = 0; i < n; i++) {
		losses[i].label = names[i];
		losses[i].value = values[i];
	}
	g.losses = losses;
	g.n_losses = n;
	g.captures_written = d->captures_written;
	g.captures_failed = d->captures_failed;
	g.flight_recorder_spans = flight_recorder__spans(d->fr);
	g.flight_recorder_seconds = (now - flight_recorder__start_ns(d->fr)) / 1e9;
	g.detail_active = d->detail_on;
	g.detail_seconds = detail_seconds(d, now);
	g.cpu_idle = d->cpu.idle;
	g.cpu_starved = d->cpu.starved;
	g.pjrt_tables_refused = flight_recorder__pjrt_refusals(d->fr);
	if (flight_recorder__mem_book(d->fr)) {
		g.memory_timelines = devmem_book__count(flight_recorder__mem_book(d->fr));
		g.memory_timeline_bytes = devmem_book__bytes(flight_recorder__mem_book(d->fr));
	}
	*text = NULL;
	*len = 0;
	f = open_memstream(text, len);
	if (!f)
		return;
	if (metrics__render(d->metrics, &g, now, f) || fclose(f)) {
		free(*text);
		*text = NULL;
		*len = 0;
	}
}

static void write_textfile(struct daemon *d, const char *text, size_t len)
{
	struct atomic_file *af = atomic_file__open(d->cfg.textfile);
	int err;

	if (!af) {
		log_warn("textfile %s: %s", d->cfg.textfile, strerror(errno));
		return;
	}
	err = fwrite(text, 1, len, atomic_file__stream(af)) == len ? 0 : -EIO;
	if (!err)
		err = atomic_file__commit(af, len);
	if (err)
		log_warn("textfile %s: %s", d->cfg.textfile, io_error_reason(err));
	atomic_file__free(af);
}

static void publish(struct daemon *d, uint64_t now)
{
	bool textfile = d->cfg.textfile[0] &&
			now - d->last_textfile_ns >= d->cfg.textfile_interval_ns;
	size_t len;
	char *text;

	if (now - d->last_publish_ns < PUBLISH_NS && !textfile)
		return;
	d->last_publish_ns = now;
	metrics__prune(d->metrics, now);
	read_aggregates(d);
	render(d, now, &text, &len);
	if (!text)
		return;
	if (d->http && metrics_http__publish(d->http, text, len))
		log_debug("metrics: out of memory, the last text stays");
	if (textfile) {
		write_textfile(d, text, len);
		d->last_textfile_ns = now;
	}
	free(text);
}

/* ---------------------------------------------------------------- setup */

static void reload(struct daemon *d)
{
	struct daemon_config c;
	char err[512];

	if (!d->o.config_path) {
		log_info("SIGHUP: no configuration file to reload");
		return;
	}
	if (daemon_config__load(d->o.config_path, &d->o.config, &c, err, sizeof(err))) {
		log_err("reload failed, the settings stay as they were: %s", err);
		return;
	}
	if (strcmp(c.listen, d->cfg.listen) || strcmp(c.socket, d->cfg.socket) ||
	    strcmp(c.cgroup, d->cfg.cgroup) || strcmp(c.profiler_listen, d->cfg.profiler_listen) ||
	    strcmp(c.profiler_roots, d->cfg.profiler_roots) ||
	    memcmp(&c.mem_tiers, &d->cfg.mem_tiers, sizeof(c.mem_tiers)))
		log_warn("reload: listen, socket, cgroup, the profiler's settings and "
			 "memory-timeline-tiers change only at a restart");
	snprintf(c.listen, sizeof(c.listen), "%s", d->cfg.listen);
	snprintf(c.socket, sizeof(c.socket), "%s", d->cfg.socket);
	snprintf(c.cgroup, sizeof(c.cgroup), "%s", d->cfg.cgroup);
	snprintf(c.profiler_listen, sizeof(c.profiler_listen), "%s", d->cfg.profiler_listen);
	snprintf(c.profiler_roots, sizeof(c.profiler_roots), "%s", d->cfg.profiler_roots);
	c.mem_tiers = d->cfg.mem_tiers;
	d->cfg = c;
	flight_recorder__set_keep(d->fr, c.flight_recorder_ns);
	rules__configure(d->rules, &c.rules);
	detail_sampler__configure(&d->sampler, c.detail_full, c.detail_interval_ns,
				  c.detail_slice_ns);
	cpu_priority__configure(&d->cpu, c.cpu_idle, clock_ns(CLOCK_MONOTONIC));
	log_info("configuration reloaded from %s", d->o.config_path);
}

/* Says which capabilities the daemon kept, and that it dropped the rest. */
static void log_privileges(uint64_t kept_mask)
{
	const struct privilege *p;
	char names[256] = "";
	size_t n, used = 0;

	p = privileges_kept(&n);
	for (size_t i = 0; i < n; i++) {
		int w;

		if (!((kept_mask >> p[i].cap) & 1))
			continue;
		w = snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "",
			     p[i].name);
		if (w < 0 || (size_t)w >= sizeof(names) - used)
			break;
		used += w;
	}
	log_info("privileges: kept %s; every other capability dropped, no new privileges",
		 used ? names : "none");
}

/* The ProfilerService's socket, bound while privileged (profile_sessions.h). */
static int bind_profiler(struct daemon *d)
{
	struct profile_sessions_opts po = { .sz = sizeof(po) };
	char addr[64];
	int err;

	if (!strcmp(d->cfg.profiler_listen, "off"))
		return 0;
	if (daemon_config__split_addr(d->cfg.profiler_listen, addr, sizeof(addr), &po.port,
				      true))
		return -EINVAL;
	po.addr = addr;
	po.logdir = d->cfg.logdir;
	po.roots = d->cfg.profiler_roots[0] ? d->cfg.profiler_roots : NULL;
	po.max_duration_ns = d->cfg.max_trigger_ns;
	po.metrics = d->metrics;
	po.ops.profile = on_profile;
	po.ops.terminate = on_terminate;
	po.ops.ctx = d;
	d->psvc = profile_sessions__bind(&po);
	if (!d->psvc) {
		err = -errno;
		log_err("ProfilerService: cannot listen on %s: %s", d->cfg.profiler_listen,
			strerror(-err));
		return err;
	}
	/* The port the kernel chose, for port 0 (tests). */
	snprintf(d->cfg.profiler_listen, sizeof(d->cfg.profiler_listen), "%s%s%s:%u",
		 strchr(addr, ':') && addr[0] != '[' ? "[" : "", addr,
		 strchr(addr, ':') && addr[0] != '[' ? "]" : "",
		 profile_sessions__port(d->psvc));
	return 0;
}

static int start(struct daemon *d)
{
	struct flight_recorder_opts fo = { .sz = sizeof(fo) };
	struct metrics_http_opts ho = { .sz = sizeof(ho) };
	struct metrics_opts mo = { .sz = sizeof(mo) };
	char addr[64], detail[64], err_msg[DAEMON_PATH_MAX + 128];
	uint64_t kept_mask = 0;
	int err;

	/* A logdir it cannot write to is said now, not at the first capture
	 * (perhaps weeks later, after the window it was asked for). */
	err = xprof_logdir_check(d->cfg.logdir);
	if (err) {
		log_err("cannot write captures to %s: %s", d->cfg.logdir, io_error_reason(err));
		return err;
	}
	/* A bad --cgroup is said before anything is bound or loaded. */
	if (d->cfg.cgroup[0]) {
		d->scope = cgroup_scope__open(d->cfg.cgroup, err_msg, sizeof(err_msg));
		if (!d->scope) {
			err = -errno;
			log_err("%s", err_msg);
			return err;
		}
	}
	mo.on_step = on_step;
	mo.ctx = d;
	d->metrics = metrics__new(&mo);
	d->rules = rules__new(&d->cfg.rules);
	if (!d->metrics || !d->rules)
		return -ENOMEM;
	d->ctl = control_server__new(d->cfg.socket);
	if (!d->ctl) {
		err = -errno;
		log_err("control socket %s: %s", d->cfg.socket, strerror(-err));
		return err;
	}
	if (strcmp(d->cfg.listen, "off")) {
		if (daemon_config__split_listen(d->cfg.listen, addr, sizeof(addr), &ho.port))
			return -EINVAL;
		ho.addr = addr;
		d->http = metrics_http__bind(&ho);
		if (!d->http) {
			err = -errno;
			log_err("metrics: cannot listen on %s: %s", d->cfg.listen, strerror(-err));
			return err;
		}
	}
	err = bind_profiler(d);
	if (err)
		return err;
	d->observer.span = on_span;
	d->observer.process_exit = on_exit_;
	d->observer.ctx = d;
	fo.keep_ns = d->cfg.flight_recorder_ns;
	fo.max_events = d->cfg.max_events;
	fo.grace_ns = d->cfg.grace_ns;
	fo.observer = &d->observer;
	fo.scope = d->scope;
	if (d->cfg.mem_tiers.n) {
		fo.mem_tiers = d->cfg.mem_tiers.t;
		fo.n_mem_tiers = d->cfg.mem_tiers.n;
	}
	d->fr = flight_recorder__start(&fo);
	if (!d->fr)
		return -errno;
	/* Probes loaded, sockets bound: from here on only what later work
	 * needs (privileges.h), before any thread of ours starts. */
	err = privileges_drop(&kept_mask);
	if (err) {
		log_err("dropping privileges failed: %s", strerror(-err));
		return err;
	}
	log_privileges(kept_mask);
	if (d->http) {
		err = metrics_http__serve(d->http);
		if (err) {
			log_err("metrics: cannot serve on %s: %s", d->cfg.listen, strerror(-err));
			return err;
		}
	}
	if (d->psvc) {
		err = profile_sessions__serve(d->psvc);
		if (err)
			return err;
	}
	/* The recorder starts with every probe on; the sampler decides. */
	d->detail_on = true;
	d->detail_since_ns = clock_ns(CLOCK_MONOTONIC);
	detail_sampler__init(&d->sampler, d->cfg.detail_full, d->cfg.detail_interval_ns,
			     d->cfg.detail_slice_ns, d->detail_since_ns);
	steer_detail(d, d->detail_since_ns);
	if (d->cfg.detail_full)
		snprintf(detail, sizeof(detail), "full");
	else
		snprintf(detail, sizeof(detail), "sampled, %.3g s every %.3g s",
			 d->cfg.detail_slice_ns / 1e9, d->cfg.detail_interval_ns / 1e9);
	/* Last: the metrics server's thread exists, and the setup ran at
	 * normal priority. */
	cpu_priority__init(&d->cpu, d->cfg.cpu_idle, clock_ns(CLOCK_MONOTONIC));
	log_info("watching every accelerator user %s%s; flight recorder %.0f s; "
		 "detail %s; cpu priority %s; metrics %s%s; control socket %s; "
		 "ProfilerService %s",
		 d->scope ? "of cgroup " : "on this host",
		 d->scope ? cgroup_scope__path(d->scope) : "",
		 d->cfg.flight_recorder_ns / 1e9, detail, d->cpu.idle ? "idle" : "normal",
		 d->http ? "http://" : "", d->http ? d->cfg.listen : "off", d->cfg.socket,
		 d->cfg.profiler_listen);
	return 0;
}

/* ---------------------------------------------------------------- loop */

static void stop_pending(struct daemon *d)
{
	uint64_t now = d->o.stop_at_ns && *d->o.stop_at_ns ? *d->o.stop_at_ns :
			clock_ns(CLOCK_MONOTONIC);

	if (!d->pending.active)
		return;
	/* Its trigger has come: what the recorder has is written. */
	if (now >= d->pending.at_ns) {
		log_info("stopping: finishing capture %s", d->pending.session);
		take_capture(d, now < d->pending.stop_ns ? now : d->pending.stop_ns);
		return;
	}
	cancel_pending(d, "error the daemon stopped before the trigger's time");
}

/* Drops the pending capture whose window has not begun; @line answers
 * the control clients, its Profile calls are ABORTED. */
static void cancel_pending(struct daemon *d, const char *line)
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

static int loop(struct daemon *d)
{
	static const struct control_request now_rq;
	char why[256];
	int err;

	while (!*d->o.stops) {
		uint64_t now;

		err = flight_recorder__poll(d->fr);
		if (err)
			return err;
		control_server__poll(d->ctl, on_request, d);
		if (d->psvc)
			profile_sessions__poll(d->psvc, clock_ns(CLOCK_MONOTONIC));
		if (d->o.reloads && *d->o.reloads != d->seen_reloads) {
			d->seen_reloads = *d->o.reloads;
			reload(d);
		}
		if (d->o.triggers && *d->o.triggers != d->seen_triggers) {
			d->seen_triggers = *d->o.triggers;
			control_trigger(d, &now_rq, -1, "SIGUSR1 to the daemon");
		}
		now = clock_ns(CLOCK_MONOTONIC);
		rules__check_stalls(d->rules, d->metrics, now);
		if (rules__take(d->rules, why + 6, sizeof(why) - 6)) {
			/* About the process it fired for (gone, for a crash). */
			struct control_request rq = { .duration_ns = d->cfg.rule_duration_ns,
						      .pid = rules__taken_pid(d->rules) };

			memcpy(why, "rule: ", 6);
			control_trigger(d, &rq, -1, why);
		}
		if (d->pending.active && now >= d->pending.stop_ns)
			take_capture(d, d->pending.stop_ns);
		steer_detail(d, now);
		/* Behind at SCHED_IDLE: normal at once, not at the next look. */
		if (now - d->lost_checked_ns >= LOST_CHECK_NS) {
			d->lost_checked_ns = now;
			cpu_priority__note_lost(&d->cpu, now, flight_recorder__ring_lost(d->fr));
		}
		cpu_priority__poll(&d->cpu, now);
		publish(d, now);
	}
	stop_pending(d);
	return 0;
}

int daemon_run(const struct daemon_opts *opts)
{
	struct daemon *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return -ENOMEM;
	/*
	 * Blocks of 1 MiB and more are always mapped, and unmapped when freed.
	 * By default glibc raises this threshold each time it frees such a
	 * block, so the span arrays of a window that moves on come from the
	 * heap, whose holes a process running for weeks never gives back
	 * (tests/e2e/test_daemon_memory.py: its RSS grew by 30-60 MiB with
	 * every trainer that came and went; flat with this).
	 */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	memcpy(&d->o, opts, opts->sz < sizeof(d->o) ? opts->sz : sizeof(d->o));
	d->o.sz = sizeof(d->o);
	d->cfg = d->o.config;
	d->seen_reloads = d->o.reloads ? *d->o.reloads : 0;
	d->seen_triggers = d->o.triggers ? *d->o.triggers : 0;
	err = start(d);
	if (!err)
		err = loop(d);
	control_server__free(d->ctl, "error the daemon stopped");
	profile_sessions__free(d->psvc, "the daemon stopped");
	/* Probes first: nothing of acceltrace stays in the kernel. */
	flight_recorder__free(d->fr);
	cgroup_scope__free(d->scope);
	metrics_http__stop(d->http);
	rules__free(d->rules);
	metrics__free(d->metrics);
	free(d);
	if (!err)
		log_info("stopped");
	return err;
}
