// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The record loop's CPU priority: SCHED_IDLE while it keeps up (cpu_priority.h). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <unistd.h>

#define LOG_CONTEXT "cpu"
#include "lib/log.h"
#include "session/cpu_priority.h"
#include "discover/procfs.h"

bool cpu_priority__decide(struct cpu_priority *cp, uint64_t now_ns, uint64_t run_delay_ns)
{
	uint64_t span, waited;

	if (!cp->want_idle || !cp->usable)
		return false;
	if (!cp->check_ns || run_delay_ns < cp->check_delay_ns || now_ns < cp->check_ns) {
		/* The first look, or counters that went back: start afresh. */
		cp->check_ns = now_ns;
		cp->check_delay_ns = run_delay_ns;
		return now_ns >= cp->normal_until_ns;
	}
	span = now_ns - cp->check_ns;
	if (span < CPU_PRIORITY_CHECK_NS)
		return now_ns >= cp->normal_until_ns;
	waited = run_delay_ns - cp->check_delay_ns;
	cp->check_ns = now_ns;
	cp->check_delay_ns = run_delay_ns;
	/* Runnable and not running for half the time: every CPU is busy with
	 * work SCHED_IDLE yields to. Only a daemon running idle can be starved
	 * that way; at normal priority it takes its share. */
	if (now_ns >= cp->normal_until_ns && waited * 2 >= span) {
		cp->normal_until_ns = now_ns + CPU_PRIORITY_STARVED_HOLD_NS;
		cp->starved++;
	}
	return now_ns >= cp->normal_until_ns;
}

/* Whether this process may leave SCHED_IDLE again: CAP_SYS_NICE in its
 * effective set (capget, as kernel_features reads the others), or an
 * RLIMIT_NICE that allows nice 0. */
static bool can_leave_idle(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	struct rlimit rl;

	if (!syscall(SYS_capget, &hdr, data) &&
	    (data[CAP_SYS_NICE / 32].effective & (1u << (CAP_SYS_NICE % 32))))
		return true;
	return !getrlimit(RLIMIT_NICE, &rl) && rl.rlim_cur >= 20;
}

struct apply_ctx {
	int policy;
	int err;
};

static int apply_to_thread(void *ctx, pid_t tid)
{
	struct sched_param sp = { .sched_priority = 0 };
	struct apply_ctx *a = ctx;

	/* A thread that ended meanwhile is no error. */
	if (sched_setscheduler(tid, a->policy, &sp) && errno != ESRCH)
		a->err = -errno;
	return 0;
}

int cpu_priority__apply(bool idle)
{
	struct apply_ctx a = { .policy = idle ? SCHED_IDLE : SCHED_OTHER };
	struct sched_param sp = { .sched_priority = 0 };

	/* The calling thread first: the one whose failure matters. */
	if (sched_setscheduler(0, a.policy, &sp))
		return -errno;
	procfs_for_each_tid(getpid(), apply_to_thread, &a);
	return a.err;
}

static void set_idle(struct cpu_priority *cp, bool idle)
{
	int err;

	if (idle == cp->idle)
		return;
	err = cpu_priority__apply(idle);
	if (err && !idle) {
		/* Stuck at SCHED_IDLE would starve the loop: say so. */
		log_err("cannot take normal CPU priority back: %s", strerror(-err));
		return;
	}
	if (err) {
		/* Some thread refused: none stays idle, so all can be helped. */
		cpu_priority__apply(false);
		log_warn("cpu-priority idle: %s; running at normal priority", strerror(-err));
		cp->usable = false;
		return;
	}
	cp->idle = idle;
}

/* Held at normal priority from @now_ns, counted as starved. */
static void hold_normal(struct cpu_priority *cp, uint64_t now_ns)
{
	cp->normal_until_ns = now_ns + CPU_PRIORITY_STARVED_HOLD_NS;
	cp->starved++;
}

/*
 * About to yield: not where the host's CPUs are all busy (tasks waited for
 * a CPU much of the last 10 s), where SCHED_IDLE would get almost nothing
 * and the rings would fill before the loop ran to see it. True when it
 * held normal priority instead.
 */
static bool stay_normal_on_busy_host(struct cpu_priority *cp, uint64_t now_ns)
{
	double some;

	if (!cp->cpu_pressure || cp->cpu_pressure(&some) || some < CPU_PRIORITY_BUSY_PRESSURE_PCT)
		return false;
	hold_normal(cp, now_ns);
	log_info("starved of CPU if it yielded: the host's CPUs are busy (some task waited "
		 "for one %.0f%% of the last 10 s): normal priority for %.0f s", some,
		 CPU_PRIORITY_STARVED_HOLD_NS / 1e9);
	return true;
}

void cpu_priority__configure(struct cpu_priority *cp, bool want_idle, uint64_t now_ns)
{
	uint64_t delay = 0;
	bool readable = !procfs_self_run_delay(&delay), idle;

	if (!cp->cpu_pressure)
		cp->cpu_pressure = procfs_cpu_pressure;
	cp->want_idle = want_idle;
	if (want_idle && !cp->usable) {
		if (!readable)
			log_warn("cpu-priority idle: /proc/self/schedstat is unreadable, so "
				 "starvation could not be seen; running at normal priority");
		else if (!can_leave_idle())
			log_warn("cpu-priority idle needs CAP_SYS_NICE to take normal priority "
				 "back when starved; running at normal priority");
		else
			cp->usable = true;
	}
	/* The check window starts now, from the delay so far. */
	cp->check_ns = 0;
	idle = readable && cpu_priority__decide(cp, now_ns, delay);
	if (idle && !cp->idle && stay_normal_on_busy_host(cp, now_ns))
		idle = false;
	set_idle(cp, idle);
}

void cpu_priority__init(struct cpu_priority *cp, bool want_idle, uint64_t now_ns)
{
	memset(cp, 0, sizeof(*cp));
	cpu_priority__configure(cp, want_idle, now_ns);
}

void cpu_priority__poll(struct cpu_priority *cp, uint64_t now_ns)
{
	uint64_t delay, starved = cp->starved;
	bool due, idle;

	if (!cp->want_idle || !cp->usable)
		return;
	/* A check due, or a hold at normal priority that ran out. */
	due = !cp->check_ns || now_ns - cp->check_ns >= CPU_PRIORITY_CHECK_NS ||
	      (!cp->idle && now_ns >= cp->normal_until_ns);
	if (!due || procfs_self_run_delay(&delay))
		return;
	idle = cpu_priority__decide(cp, now_ns, delay);
	if (idle && !cp->idle && stay_normal_on_busy_host(cp, now_ns))
		return;
	set_idle(cp, idle);
	if (cp->starved != starved)
		log_info("starved of CPU (runnable, not running, half of the last %.2f s): "
			 "normal priority for %.0f s", CPU_PRIORITY_CHECK_NS / 1e9,
			 CPU_PRIORITY_STARVED_HOLD_NS / 1e9);
}

void cpu_priority__normal_now(struct cpu_priority *cp)
{
	set_idle(cp, false);
}

void cpu_priority__note_lost(struct cpu_priority *cp, uint64_t now_ns, uint64_t lost)
{
	bool grew = lost > cp->lost_seen;

	cp->lost_seen = lost;
	if (!grew || !cp->want_idle || !cp->usable || !cp->idle)
		return;
	hold_normal(cp, now_ns);
	set_idle(cp, false);
	log_info("starved of CPU: it fell behind (the ring buffers turned records away): "
		 "normal priority for %.0f s", CPU_PRIORITY_STARVED_HOLD_NS / 1e9);
}
