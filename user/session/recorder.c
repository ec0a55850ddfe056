// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recorder: features -> load probes -> attach -> targets -> arm (the
 * clock starts at the first device activity) -> window -> stop (+ grace) ->
 * drain -> finish -> finalize, once per window -> detach -> cleanup.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOG_CONTEXT "record"
#include "lib/array.h"
#include "lib/log.h"
#include "capture/capture.h"
#include "collect/collector.h"
#include "session/recorder.h"
#include "session/recorder_internal.h"
#include "attach/agent_links.h"
#include "discover/cgroup_scope.h"
#include "attach/attach_control.h"
#include "discover/device_nodes.h"
#include "discover/devtrace_buffers.h"
#include "attach/runtime_attach.h"
#include "discover/targets.h"
#include "probe/kernel_features.h"
#include "probe/probe_session.h"

#define DEFAULT_ARM_TIMEOUT_NS (30 * 1000000000ull)
#define offsetofend(type, field) \
	(offsetof(type, field) + sizeof(((type *)0)->field))


/* ---------------------------------------------------------------- progress */

static bool maps_runtime(const struct process_report *p)
{
	return p && (p->n_libraries || p->n_device_nodes);
}

/* Some target maps an accelerator runtime library or holds a device node. */
bool recorder_targets_have_runtime(const struct recorder *r)
{
	for (size_t i = 0; i < targets__count(r->targets); i++)
		if (maps_runtime(targets__report(r->targets, i)))
			return true;
	return false;
}

bool recorder__traces(const struct recorder *r, pid_t pid)
{
	for (size_t i = 0; i < targets__count(r->targets); i++) {
		const struct process_report *p = targets__report(r->targets, i);

		if (p && p->pid == pid)
			return maps_runtime(p);
	}
	return false;
}

/* A new phase, told at once; @deadline_ns as recorder_progress says. */
void recorder_enter(struct recorder *r, enum recorder_phase phase, uint64_t deadline_ns)
{
	r->phase = phase;
	r->phase_ns = mono_ns();
	r->deadline_ns = deadline_ns;
	r->phase_told = false;
	recorder_tell(r);
}

void recorder_tell(struct recorder *r)
{
	struct recorder_progress p = {};
	uint64_t losses[LOSS_KIND_MAX];

	if (!r->o.progress)
		return;
	p.phase = r->phase;
	p.changed = !r->phase_told;
	r->phase_told = true;
	p.now_ns = mono_ns();
	p.phase_ns = r->phase_ns;
	p.deadline_ns = r->deadline_ns;
	p.bounded_by_duration = r->bounded_by_duration;
	p.window_start_ns = r->start_ns;
	p.arm_wait_ns = r->arm_wait_ns;
	p.window = r->window;
	p.windows = r->o.windows;
	p.steps = r->o.steps;
	p.no_runtime = r->no_runtime;
	p.devtrace_buffers = r->n_devtrace;
	if (r->targets) {
		p.processes = targets__count(r->targets);
		if (p.processes)
			p.first_pid = targets__report(r->targets, 0)->pid;
	}
	if (!p.first_pid && r->o.n_pids)
		p.first_pid = r->o.pids[0];
	if (r->ra) {
		p.libraries = runtime_attach__library_count(r->ra);
		p.probes = runtime_attach__probe_count(r->ra);
	}
	if (r->ps) {
		probe_session__losses(r->ps, losses);
		for (int i = 0; i < LOSS_KIND_MAX; i++)
			p.lost += losses[i];
	}
	if (r->cap && (r->phase == RECORDER_OPEN || r->phase == RECORDER_CLOSING))
		p.spans = capture__spans_kept(r->cap);
	r->o.progress(r->o.progress_ctx, &p);
}

/* The capture window r->window fills: its session named "_wN" when the
 * run takes several. */
static struct capture *new_capture(struct recorder *r, const char *session)
{
	struct capture_opts copts = { .sz = sizeof(copts) };
	struct capture *cap;

	copts.max_spans = r->o.max_spans;
	copts.session = session;
	copts.window = r->o.windows > 1 ? r->window : 0;
	cap = capture__new(&copts);
	if (!cap)
		return NULL;
	capture__set_probes_attached(cap, r->probes_attached_ns);
	return cap;
}

/*
 * The targets found and examined, their probes placed, then the launched
 * command let go: a runtime it loads is probed before its first call. Its
 * runtime probes (all but --library's, attached already) fire for it
 * only, so no other process traps; with --children they stay on every
 * process, its descendants found later.
 */
static int start_targets(struct recorder *r)
{
	pid_t command = targets__command_pid(r->targets);
	int err;

	if (command && !r->o.children) {
		err = attach_control__scope(r->ac, &command, 1);
		if (err)
			log_warn("runtime probes not limited to the command (%s): other processes "
				 "trap too", strerror(-err));
	}
	err = targets__start(r->targets);
	if (err)
		return err;
	attach_control__visit_targets(r->ac, r->targets);
	return targets__release_command(r->targets);
}

/* ---------------------------------------------------------------- setup */

/*
 * The session delivers records to the collector, which reads the session's
 * open-call tables and asks the attach controller what a probe id is:
 * created in this order, then connected once all exist. The control
 * records it queues go the other way, taken by recorder_act_on_control() (recorder_tick.c).
 */
static int connect_collector(struct recorder *r, const struct collector_opts *copts,
			     const struct probe_session_opts *popts,
			     const struct runtime_attach_opts *aopts)
{
	struct control_lookups lookups;
	struct session_reads reads;

	r->col = collector__new(copts);
	if (!r->col)
		return -errno;
	r->ps = probe_session__open(popts, collector__record, r->col);
	if (!r->ps)
		return -errno;
	r->ra = runtime_attach__new(r->ps, aopts);
	if (!r->ra)
		return -errno;
	r->ac = attach_control__new(r->ps, r->ra);
	if (!r->ac)
		return -errno;
	lookups = attach_control__lookups(r->ac);
	reads = attach_control__reads(r->ac);
	collector__connect(r->col, &reads, &lookups);
	return 0;
}

struct recorder *recorder__new(const struct recorder_opts *opts)
{
	struct recorder *r;
	size_t sz;

	if (!opts || opts->sz < offsetofend(struct recorder_opts, sz)) {
		errno = EINVAL;
		return NULL;
	}
	/* A newer caller's extra fields must be zero (unknown here). */
	for (sz = sizeof(*opts); sz < opts->sz; sz++) {
		if (((const char *)opts)[sz]) {
			errno = EINVAL;
			return NULL;
		}
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	memcpy(&r->o, opts, opts->sz < sizeof(r->o) ? opts->sz : sizeof(r->o));
	r->o.sz = sizeof(r->o);
	r->arm_timeout_given = r->o.arm_timeout_ns != 0;
	if (!r->o.arm_timeout_ns)
		r->o.arm_timeout_ns = DEFAULT_ARM_TIMEOUT_NS;
	if (!r->o.windows)
		r->o.windows = 1;
	if (r->o.steps > RECORDER_MAX_STEPS ||
	    (r->o.n_pids > 0) + r->o.whole_host + (r->o.command != NULL) != 1) {
		free(r);
		errno = EINVAL;
		return NULL;
	}
	return r;
}

int recorder__attach(struct recorder *r)
{
	struct probe_session_opts popts = { .sz = sizeof(popts) };
	struct runtime_attach_opts aopts = { .sz = sizeof(aopts) };
	struct targets_opts topts = { .sz = sizeof(topts) };
	struct collector_opts copts = { .sz = sizeof(copts) };
	static const char *prefixes[AT_MAX_DEV_PREFIXES];
	char missing[512];
	int err;

	recorder_enter(r, RECORDER_ATTACHING, 0);
	features__probe(&r->features);
	if (!features__can_run(&r->features, missing, sizeof(missing))) {
		log_err("acceltrace cannot run here: missing %s", missing);
		return -EPERM;
	}
	r->window = 1;
	r->cap = new_capture(r, r->o.session);
	if (!r->cap)
		return -errno;
	popts.features = &r->features;
	popts.whole_host = r->o.whole_host;
	popts.children = r->o.children;
	/* --pid: probes for those processes only. Not with --children: the
	 * descendants found later would not trap (the command's scope is set
	 * by targets, once it is launched). */
	if (!r->o.children) {
		popts.scope_pids = r->o.pids;
		popts.n_scope_pids = r->o.n_pids;
	}
	popts.cgroup_scoped = r->o.scope != NULL;
	popts.cgroup_fd = r->o.scope ? cgroup_scope__fd(r->o.scope) : -1;
	popts.sched_switch = r->o.sched;
	popts.irqs = true;
	popts.io_uring = true;
	popts.ring_bytes = r->o.ring_bytes;
	popts.dev_prefixes = prefixes;
	popts.n_dev_prefixes = device_node_prefixes(prefixes, AT_MAX_DEV_PREFIXES);
	copts.capture = r->cap;
	copts.sched_switch = r->o.sched;
	copts.steps = r->o.steps;
	copts.arm_on_any_activity = r->o.from_start;
	err = recorder_mem_start(r);
	if (err)
		return err;
	copts.observer = &r->mem_observer;
	aopts.libraries = r->o.libraries;
	aopts.n_libraries = r->o.n_libraries;
	err = connect_collector(r, &copts, &popts, &aopts);
	if (err)
		return err;
	recorder_tell(r);
	err = attach_control__attach_kernel(r->ac);
	if (err)
		return err;
	/* Accelerator interrupts present now (the simulator has none). */
	attach_control__trace_device_irqs(r->ac);
	topts.pids = r->o.pids;
	topts.n_pids = r->o.n_pids;
	topts.children = r->o.children;
	topts.whole_host = r->o.whole_host;
	topts.command = r->o.command;
	topts.scope = r->o.scope;
	r->targets = targets__new(&topts, r->ps);
	if (!r->targets)
		return -errno;
	err = start_targets(r);
	if (err) {
		log_err("starting the targets failed: %s", strerror(-err));
		return err;
	}
	r->probes_attached_ns = mono_ns();
	capture__set_probes_attached(r->cap, r->probes_attached_ns);
	/* What the rings hold now is read too: work that began before. */
	r->devtrace_seen = devtrace_seen__new();
	r->agents = r->o.no_agents ? NULL : agent_links__new();
	if (!r->devtrace_seen || (!r->agents && !r->o.no_agents))
		return -ENOMEM;
	err = recorder_open_devtrace_paths(r);
	if (err)
		return err;
	recorder_want_device(r, r->o.device_detail);
	recorder_find_agents(r);
	recorder_find_devtrace(r);
	collector__poll_devtrace(r->col);
	r->last_rescan = r->last_full_rescan = r->probes_attached_ns;
	return 0;
}

/*
 * opts.cpu_priority idle: the CPU yielded while a window is open (@on) only.
 * Arming must not fall behind a busy host (a starved SCHED_IDLE loop runs
 * seconds late before it sees it: a late runtime's table is then found by
 * a scan, not at GetPjrtApi's return); a close and the caller's write are
 * a burst no tick watches. A launched command was forked before.
 */
static void yield_cpu(struct recorder *r, bool on)
{
	if (r->o.cpu_priority != RECORDER_CPU_IDLE || (!r->cpu_inited && !on))
		return;
	if (!r->cpu_inited) {
		cpu_priority__init(&r->cpu, true, mono_ns());
		r->cpu_inited = true;
	} else if (r->cpu.usable) {	/* else said why once, at the first */
		if (on)
			cpu_priority__configure(&r->cpu, true, mono_ns());
		r->cpu.want_idle = on;
		if (!on)
			cpu_priority__normal_now(&r->cpu);
	}
}

/* ---------------------------------------------------------------- windows */

int recorder__next_window(struct recorder *r)
{
	uint64_t resume = mono_ns() + r->o.interval_ns;
	struct capture *cap;
	int err;

	r->window++;
	cap = new_capture(r, r->o.session);
	if (!cap) {
		err = -errno;
		log_err("starting window %u failed: %s", r->window, strerror(-err));
		return err;
	}
	capture__free(r->cap);
	r->cap = cap;
	err = collector__set_capture(r->col, r->cap);
	if (err) {
		log_err("starting window %u failed: %s", r->window, strerror(-err));
		return err;
	}
	recorder_enter(r, RECORDER_BETWEEN, resume);
	while (mono_ns() < resume && !interrupts(r)) {
		err = recorder_poll_once(r);
		if (err)
			return err;
	}
	if (interrupts(r))
		return -EINTR;
	if (!targets__alive(r->targets))
		return -ESRCH;
	return 0;
}

/* Polls until the window ends (an interruption since @interrupts_at_start
 * ends it too); returns where it stops through @stop. */
static int wait_stop(struct recorder *r, int interrupts_at_start, uint64_t *stop)
{
	uint64_t now, start = r->start_ns, end_at = start + r->o.duration_ns;
	bool steps_seen_once = false;
	int err;

	for (;;) {
		err = recorder_poll_once(r);
		if (err)
			return err;
		now = mono_ns();
		if (interrupts(r) > interrupts_at_start) {
			*stop = now;
			log_info("interrupted: finishing the capture (Ctrl-C again aborts)");
			return 0;
		}
		if (r->o.duration_ns && now >= end_at) {
			*stop = end_at;
			return 0;
		}
		if (r->o.steps) {
			uint64_t next = collector__window_steps_end(r->col);

			/* Step N + 1 began: the window holds N whole steps,
			 * each with the host work that led to the next. Records
			 * of earlier executions may still sit in other shards:
			 * one more drain, and the stop is where it says. */
			if (next && steps_seen_once) {
				*stop = next - 1 > start ? next - 1 : start;
				return 0;
			}
			steps_seen_once = next != 0;
		}
		if (!targets__alive(r->targets)) {
			*stop = now;
			log_info("the target exited: finishing the capture");
			return 0;
		}
	}
}

/* The attach actions that failed since the last window, said in this one. */
static void note_attach_failures(struct recorder *r)
{
	uint64_t failed = attach_control__failures(r->ac);

	if (failed > r->attach_failures_said)
		capture__warn(r->cap, "%llu attach actions failed (run with -v for each reason)",
			      (unsigned long long)(failed - r->attach_failures_said));
	r->attach_failures_said = failed;
}

/* Ends the open window at @stop: grace, drain, finish, finalize. */
static int close_window(struct recorder *r, uint64_t stop)
{
	int interrupts_at_stop, err;

	recorder_enter(r, RECORDER_CLOSING, stop);
	yield_cpu(r, false);
	collector__begin_close(r->col, stop);
	/* Grace: records of spans that end soon after the stop keep their
	 * true end; a second Ctrl-C still aborts. */
	interrupts_at_stop = interrupts(r);
	do {
		err = recorder_drain_once(r);
		if (err)
			return err;
		if (interrupts(r) > interrupts_at_stop)
			break;
	} while (r->o.grace_ns && mono_ns() < stop + r->o.grace_ns &&
		 !collector__all_closed(r->col));
	err = recorder_flush_agents(r);
	if (err)
		return err;
	probe_session__drain(r->ps);
	recorder_act_on_control(r);
	if (interrupts(r) >= 2) {
		log_err("aborted: no capture written");
		return -EINTR;
	}
	recorder_note_agents(r);
	recorder_say_no_agent(r);
	err = collector__finish(r->col);
	if (err) {
		log_err("finishing the window failed: %s: no capture written", strerror(-err));
		return err;
	}
	note_attach_failures(r);
	recorder_mem_to_capture(r);
	err = capture__finalize(r->cap);
	if (err) {
		log_err("finalizing the capture failed: %s: no capture written", strerror(-err));
		return err;
	}
	return 0;
}

/* Runs the armed window; returns 0 with its capture finalized. */
int recorder__run_window(struct recorder *r)
{
	int interrupts_at_start = interrupts(r), err;
	uint64_t stop = 0;
	size_t n;

	/* With --delay the window opens later than the activity that armed it. */
	if (mono_ns() < r->start_ns)
		recorder_enter(r, RECORDER_DELAY, r->start_ns);
	while (mono_ns() < r->start_ns && !interrupts(r)) {
		err = recorder_poll_once(r);
		if (err)
			return err;
	}
	err = collector__open_window(r->col, r->start_ns);
	if (err) {
		log_err("opening the window failed: %s: no capture written", strerror(-err));
		return err;
	}
	n = targets__count(r->targets);
	log_debug("window open (pid%s %d%s)", n > 1 ? "s" : "",
		  n ? targets__report(r->targets, 0)->pid : 0, n > 1 ? ", ..." : "");
	recorder_enter(r, RECORDER_OPEN, r->o.duration_ns ? r->start_ns + r->o.duration_ns : 0);
	yield_cpu(r, true);
	err = wait_stop(r, interrupts_at_start, &stop);
	if (err)
		return err;
	return close_window(r, stop);
}

bool recorder__done(const struct recorder *r)
{
	return interrupts(r) || !r->targets || !targets__alive(r->targets);
}

int recorder__run(struct recorder *r, recorder_window_fn on_window, void *ctx)
{
	int err;

	for (uint64_t w = 0; w < r->o.windows; w++) {
		if (w) {
			err = recorder__next_window(r);
			/* Interrupted or the targets gone between windows:
			 * the run is over, the windows taken stand. */
			if (err == -EINTR || err == -ESRCH)
				return 0;
			if (err)
				return err;
		}
		err = recorder__arm(r);
		if (err)
			return err;
		err = recorder__run_window(r);
		if (err)
			return err;
		err = on_window ? on_window(ctx, r, r->window) : 0;
		if (err)
			return err;
		if (recorder__done(r))
			break;
	}
	return 0;
}

/* ---------------------------------------------------------------- kept open */

int recorder__poll(struct recorder *r)
{
	return recorder_poll_once(r);
}

void recorder__stats(const struct recorder *r, struct recorder_stats *st)
{
	*st = r->st;
}

int recorder__open(struct recorder *r, uint64_t start_ns)
{
	int err = collector__open_window(r->col, start_ns);

	if (err)
		log_err("opening the window failed: %s", strerror(-err));
	r->start_ns = start_ns;
	return err;
}

uint64_t recorder__forget_before(struct recorder *r, uint64_t start_ns)
{
	if (start_ns > r->start_ns)
		r->start_ns = start_ns;
	return collector__forget_before(r->col, start_ns);
}

void recorder__plan_stop(struct recorder *r, uint64_t stop_ns)
{
	collector__plan_stop(r->col, stop_ns);
}

int recorder__close(struct recorder *r, uint64_t stop_ns)
{
	return close_window(r, stop_ns);
}

int recorder__renew(struct recorder *r, const char *session)
{
	struct capture *cap = new_capture(r, session), *old;
	int err;

	if (!cap)
		return -errno;
	old = r->cap;
	r->cap = cap;
	r->window++;
	err = collector__set_capture(r->col, cap);
	/* Out of memory the collector may hold either capture: the old one
	 * is then left to the process's exit rather than freed under it. */
	if (!err)
		capture__free(old);
	return err;
}

/* ---------------------------------------------------------------- reading */

struct capture *recorder__capture(const struct recorder *r)
{
	return r->cap;
}

uint32_t recorder__window(const struct recorder *r)
{
	return r->window;
}

uint64_t recorder__probes_attached_ns(const struct recorder *r)
{
	return r->probes_attached_ns;
}

uint64_t recorder__arm_wait_ns(const struct recorder *r)
{
	return r->arm_wait_ns;
}

const struct collector *recorder__collector(const struct recorder *r)
{
	return r->col;
}

int recorder__set_detail(struct recorder *r, bool on)
{
	size_t n;
	int err;

	if (!r->ps)
		return -ENOTCONN;
	recorder_want_device(r, on || r->o.device_detail);
	n = attach_control__set_detail(r->ac, on);
	if (on)
		return (int)n;
	/* Everything recorded with detail is in the rings now: consume it,
	 * then forget the work whose completions will not come. */
	err = probe_session__drain(r->ps);
	recorder_act_on_control(r);
	collector__detail_ended(r->col);
	return err < 0 ? err : (int)n;
}

struct probe_session *recorder__probe_session(const struct recorder *r)
{
	return r->ps;
}

struct runtime_attach *recorder__runtime_attach(const struct recorder *r)
{
	return r->ra;
}

/* ---------------------------------------------------------------- teardown */

void recorder__detach(struct recorder *r)
{
	if (!r)
		return;
	collector__free(r->col);
	r->col = NULL;
	attach_control__free(r->ac);
	r->ac = NULL;
	runtime_attach__free(r->ra);
	r->ra = NULL;
	probe_session__free(r->ps);
	r->ps = NULL;
}

int recorder__wait_command(struct recorder *r, int *status)
{
	if (!r->targets || !targets__command_pid(r->targets))
		return -ENOENT;
	return targets__wait_command(r->targets, status);
}

void recorder__free(struct recorder *r)
{
	if (!r)
		return;
	if (r->agents)
		recorder_want_device(r, false);
	recorder__detach(r);
	recorder_mem_free(r);
	agent_links__free(r->agents);
	free(r->told_no_agent);
	targets__free(r->targets);
	devtrace_seen__free(r->devtrace_seen);
	capture__free(r->cap);
	free(r);
}
