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
#include "daemon/daemon_internal.h"
#include "daemon/detail_sampler.h"
#include "daemon/flight_recorder.h"
#include "daemon/metrics.h"
#include "daemon/metrics_http.h"
#include "daemon/privileges.h"
#include "daemon/profile_quota.h"
#include "daemon/profile_sessions.h"
#include "daemon/rules.h"
#include "devmem/devmem_book.h"
#include "discover/cgroup_scope.h"
#include "discover/procfs.h"
#include "output/xprof_logdir.h"
#include "output/xspace_writer.h"

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
	g.captures_over_quota = d->profiles_over_quota;
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
	po.ops.admit = daemon_on_admit;
	po.ops.profile = daemon_on_profile;
	po.ops.terminate = daemon_on_terminate;
	po.ops.ctx = d;
	{
		struct profile_quota_limits ql = {
			.captures = d->cfg.profile_quota_captures,
			.bytes = d->cfg.profile_quota_bytes,
			.detail_ns = d->cfg.profile_quota_detail_ns,
		};

		d->quota = profile_quota__new(&ql);
		if (!d->quota)
			return -ENOMEM;
	}
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
		control_server__poll(d->ctl, daemon_on_request, d);
		if (d->psvc)
			profile_sessions__poll(d->psvc, clock_ns(CLOCK_MONOTONIC));
		if (d->o.reloads && *d->o.reloads != d->seen_reloads) {
			d->seen_reloads = *d->o.reloads;
			reload(d);
		}
		if (d->o.triggers && *d->o.triggers != d->seen_triggers) {
			d->seen_triggers = *d->o.triggers;
			daemon_control_trigger(d, &now_rq, -1, "SIGUSR1 to the daemon");
		}
		now = clock_ns(CLOCK_MONOTONIC);
		rules__check_stalls(d->rules, d->metrics, now);
		if (rules__take(d->rules, why + 6, sizeof(why) - 6)) {
			/* About the process it fired for (gone, for a crash). */
			struct control_request rq = { .duration_ns = d->cfg.rule_duration_ns,
						      .pid = rules__taken_pid(d->rules) };

			memcpy(why, "rule: ", 6);
			daemon_control_trigger(d, &rq, -1, why);
		}
		if (d->pending.active && now >= d->pending.stop_ns)
			daemon_take_capture(d, d->pending.stop_ns);
		steer_detail(d, now);
		/* Behind at SCHED_IDLE: normal at once, not at the next look. */
		if (now - d->lost_checked_ns >= LOST_CHECK_NS) {
			d->lost_checked_ns = now;
			cpu_priority__note_lost(&d->cpu, now, flight_recorder__ring_lost(d->fr));
		}
		cpu_priority__poll(&d->cpu, now);
		publish(d, now);
	}
	daemon_stop_pending(d);
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
	profile_quota__free(d->quota);
	metrics__free(d->metrics);
	free(d);
	if (!err)
		log_info("stopped");
	return err;
}
