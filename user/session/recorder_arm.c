// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Arming (docs/record.md, "When the window opens"): the wait for the first
 * step once the probes settled, a device already busy, a target with no
 * runtime said at once and its wait bounded, what the targets did
 * meanwhile said in one line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define LOG_CONTEXT "record"
#include "lib/log.h"
#include "collect/collector.h"
#include "session/recorder_internal.h"
#include "attach/runtime_attach.h"
#include "discover/targets.h"

/* --now waits this long at most for the probes to be placed. */
#define RECORDER_NOW_SETTLE_NS 2000000000ull

/*
 * What the targets did while the recorder waited to arm, said in one line
 * (start-up: transfers, compiles, file reads): @before is the collector's
 * counters when the wait began.
 */
static void say_wait(struct recorder *r, const struct collector_stats *before,
		     uint64_t waited_ns, bool armed)
{
	const struct collector_stats *now = collector__stats(r->col);
	char seen[512] = "";
	size_t len = 0;
	uint64_t n;

	for (int k = 0; k < RT_EV__COUNT; k++) {
		if (k == RT_EV_EXECUTE || k == RT_EV_CUDA_LAUNCH || k == RT_EV_CUDA_GRAPH_LAUNCH ||
		    k == RT_EV_CUDART_LAUNCH || k == RT_EV_CUDART_GRAPH_LAUNCH)
			continue;
		n = now->rt_calls[k] - before->rt_calls[k];
		if (n && len < sizeof(seen))
			len += snprintf(seen + len, sizeof(seen) - len, "%s%llu %s",
					len ? ", " : "", (unsigned long long)n,
					rt_event_kind_name(k));
	}
	n = now->records[EV_SYSCALL] - before->records[EV_SYSCALL];
	if (n && len < sizeof(seen))
		len += snprintf(seen + len, sizeof(seen) - len, "%s%llu syscalls",
				len ? ", " : "", (unsigned long long)n);
	if (armed)
		log_debug("armed after %.3f s at the first %s; meanwhile: %s", waited_ns / 1e9,
			 r->o.from_start ? "device activity" : "execution",
			 len ? seen : "nothing");
	else
		log_info("in %.3f s the targets did: %s", waited_ns / 1e9,
			 len ? seen : "nothing acceltrace saw");
}

/*
 * Named processes (--pid) that map no accelerator runtime and hold no
 * device node, said at once: `probes` would say the same. The wait goes
 * on, for a runtime loaded late, bounded by --duration when shorter,
 * unless --arm-timeout was given or a library was named to be loaded
 * (--library, the environment).
 */
static uint64_t say_no_runtime(struct recorder *r, uint64_t began, uint64_t deadline)
{
	size_t n = targets__count(r->targets);
	uint64_t bound = r->o.arm_timeout_ns;

	/* A command is held before exec: it loads its runtime later. */
	r->no_runtime = (r->o.n_pids || r->o.whole_host) && !recorder_targets_have_runtime(r);
	r->bounded_by_duration = false;
	if (!r->no_runtime)
		return deadline;
	if (r->o.whole_host) {
		log_info("no process on this host uses an accelerator runtime yet: "
			 "waiting up to %.0f s for one", bound / 1e9);
		return deadline;
	}
	/* --library, or TPU_LIBRARY_PATH in its environment: a load is
	 * expected, and waited for as long as --arm-timeout says. */
	if (runtime_attach__library_count(r->ra)) {
		log_info("no accelerator runtime loaded yet, but one is named to be "
			 "(--library, TPU_LIBRARY_PATH): waiting up to %.0f s for it", bound / 1e9);
		return deadline;
	}
	if (!r->arm_timeout_given && r->o.duration_ns && r->o.duration_ns < bound) {
		bound = r->o.duration_ns;
		r->bounded_by_duration = true;
		deadline = began + bound;
	}
	if (n == 1)
		log_warn("pid %d maps no accelerator runtime library (nothing exports GetPjrtApi, "
			 "the CUDA API or the TPU C API) and holds no device node: waiting up to "
			 "%.1f s%s for one to be loaded", targets__report(r->targets, 0)->pid,
			 bound / 1e9, r->bounded_by_duration ? " (--duration)" : "");
	else
		log_warn("none of the %zu processes maps an accelerator runtime library or holds "
			 "a device node: waiting up to %.1f s%s for one to be loaded", n,
			 bound / 1e9, r->bounded_by_duration ? " (--duration)" : "");
	return deadline;
}

/* Says what was and was not found, for a run that saw no device activity. */
static void diagnose_targets(const struct targets *t, char *buf, size_t len)
{
	size_t used = 0;

#define SAY(...) do { \
	if (used < len) \
		used += snprintf(buf + used, len - used, __VA_ARGS__); \
	} while (0)

	buf[0] = '\0';
	if (!targets__count(t)) {
		SAY("no process on this host maps an accelerator runtime library or holds a device node");
		return;
	}
	for (size_t i = 0; i < targets__count(t); i++) {
		const struct process_report *r = targets__report(t, i);
		bool table = false, refused = false;

		SAY("%sprocess %d%s: ", i ? "; " : "", r->pid, targets__gone(t, i) ? " (exited)" : "");
		if (!r->n_libraries) {
			SAY("no runtime library mapped (nothing that exports GetPjrtApi, "
			    "the CUDA driver or runtime API, the TPU C API or tf.data's GetNext)");
		} else {
			for (unsigned int l = 0; l < r->n_libraries; l++) {
				const struct attached_library *lib = r->libraries[l];

				SAY("%s%s", l ? ", " : "maps ", lib->path);
				if (lib->pack->pjrt) {
					table |= lib->has_table;
					refused |= lib->table_refused;
				}
			}
			if (refused)
				SAY("; its PJRT table was refused");
			else if (!table)
				SAY("; no PJRT table found (GetPjrtApi not called yet?)");
		}
		if (!r->n_device_nodes)
			SAY("; no device node open");
		else
			SAY("; %u device node(s) open (%s)", r->n_device_nodes,
			    r->device_nodes[0].path);
	}
	SAY("; no device activity (execute, transfer, infeed/outfeed or submit) was seen");
#undef SAY
}

/* Waits for the first execution (or, --from-start, any device activity)
 * after the probes settled. */
int recorder__arm(struct recorder *r)
{
	uint64_t began = mono_ns(), deadline = began + r->o.arm_timeout_ns, settled_at = 0;
	struct collector_stats before = *collector__stats(r->col);
	char diag[2048];
	int err;

	recorder_enter(r, RECORDER_ARMING, say_no_runtime(r, began, deadline));
	/* A runtime loaded from now on is probed as it loads: its first
	 * step can open the first window, however late its callback probe. */
	collector__start_at_first_run(r->col, !recorder_targets_have_runtime(r));
	while (!interrupts(r)) {
		uint64_t first;

		err = recorder_poll_once(r);
		if (err)
			return err;
		/* A runtime loaded late: the arm timeout bounds the wait again. */
		if (r->no_runtime && recorder_targets_have_runtime(r)) {
			r->no_runtime = false;
			r->bounded_by_duration = false;
			r->deadline_ns = deadline;
			log_info("a runtime was loaded: waiting up to %.1f s for its first execution",
				 (deadline - mono_ns()) / 1e9);
		}
		/* Probes in place (tables found, callbacks probed): from now on
		 * nothing the window overlaps can be missed. */
		if (!settled_at && runtime_attach__settled(r->ra) &&
		    collector__completions_probed(r->col)) {
			settled_at = mono_ns();
			collector__watch_activity(r->col, settled_at);
			/* A runtime that executes has made its device trace
			 * buffers by now (at client creation): found before
			 * its executions are estimated from the host, not at
			 * the next full rescan. */
			recorder_find_devtrace(r);
			collector__poll_devtrace(r->col);
		}
		/* --now: open once the probes are in place (or when there is
		 * nothing to place, or they take too long), whatever the
		 * targets do: a trainer stuck in a host checkpoint or a wait
		 * executes nothing that would arm the window. */
		if (r->o.now && (settled_at || r->no_runtime ||
				 mono_ns() - began >= RECORDER_NOW_SETTLE_NS)) {
			r->start_ns = mono_ns() + r->o.delay_ns;
			r->arm_wait_ns = mono_ns() - began;
			log_info("--now: the window opens %s",
				 settled_at ? "with the probes in place" :
				 r->no_runtime ? "though no accelerator runtime is loaded" :
				 "before every probe was placed");
			return 0;
		}
		/* A running trainer's device busy with one long execution
		 * arms at once, not at the launch after it. A command
		 * launched here is starting up: its long one-off programs
		 * do not open the window. */
		if (settled_at && !r->o.command)
			collector__note_busy_device(r->col, mono_ns());
		first = settled_at ? collector__first_activity(r->col) : 0;
		if (first) {
			recorder_find_devtrace(r);
			collector__poll_devtrace(r->col);
			first = recorder_agents_on(r, first);
			r->start_ns = first + r->o.delay_ns;
			r->arm_wait_ns = first > began ? first - began : 0;
			say_wait(r, &before, r->arm_wait_ns, true);
			return 0;
		}
		if (!targets__alive(r->targets)) {
			diagnose_targets(r->targets, diag, sizeof(diag));
			log_err("the target exited before any device activity: %s", diag);
			return -ESRCH;
		}
		if (r->bounded_by_duration && mono_ns() >= r->deadline_ns) {
			diagnose_targets(r->targets, diag, sizeof(diag));
			log_err("no accelerator runtime was loaded within --duration %.1f s "
				"(--arm-timeout waits longer): no capture written: %s",
				r->o.duration_ns / 1e9, diag);
			return -ETIMEDOUT;
		}
		if (mono_ns() >= deadline) {
			diagnose_targets(r->targets, diag, sizeof(diag));
			log_err("no %s within %.1f s: %s",
				r->o.from_start ? "device activity" : "execution of a program",
				r->o.arm_timeout_ns / 1e9, diag);
			say_wait(r, &before, mono_ns() - began, false);
			return -ETIMEDOUT;
		}
	}
	log_err("interrupted before the window opened: no capture written");
	return -EINTR;
}

