/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The record loop's CPU priority, the daemon's and `record`'s. With
 * cpu-priority = idle (the default of both) the process's threads run
 * under SCHED_IDLE while it keeps up: a trainer's thread waking on the CPU
 * the loop reads on preempts it at once, so the reading takes only time
 * the host would have left idle. On the simulated
 * trainer at 10k steps/s this halved what the daemon costs the trainer,
 * where nice 19 and SCHED_BATCH changed nothing measurable: a fair-class
 * task runs out its slice before a waking one gets the CPU
 * (docs/performance.md).
 *
 * SCHED_IDLE gets almost nothing on a host whose CPUs are all busy, and a
 * daemon that cannot read loses records. So once a second it reads its run
 * delay (/proc/self/schedstat: time spent runnable and not running); when
 * that was half the second or more, it is starved and takes normal priority
 * back for STARVED_HOLD, then yields again. Leaving SCHED_IDLE needs
 * CAP_SYS_NICE (the kernel treats SCHED_IDLE as nice 20, and RLIMIT_NICE
 * guards the way back): without it, or without schedstat, the daemon stays
 * at normal priority and says why.
 *
 * The decision (cpu_priority__decide) is pure arithmetic; applying it sets
 * every thread of the process (the metrics server's included).
 */
#ifndef ACCELTRACE_SESSION_CPU_PRIORITY_H
#define ACCELTRACE_SESSION_CPU_PRIORITY_H

#include <stdbool.h>
#include <stdint.h>

/* Run delay read this often: a quarter second, since a second at SCHED_IDLE
 * on a busy host fills the ring buffers (records then lost). */
#define CPU_PRIORITY_CHECK_NS 250000000ull
/* A host whose CPU pressure (PSI "some" over 10 s) is this high gets no
 * yield: SCHED_IDLE would starve there. */
#define CPU_PRIORITY_BUSY_PRESSURE_PCT 25.0
#define CPU_PRIORITY_STARVED_HOLD_NS 30000000000ull	/* normal, once starved */

struct cpu_priority {
	bool want_idle;			/* the setting */
	bool usable;			/* schedstat readable and a way back allowed */
	bool idle;			/* what the threads run under now */
	uint64_t check_ns;		/* the current check's start, */
	uint64_t check_delay_ns;	/* and the run delay then */
	uint64_t normal_until_ns;	/* starved: normal until then */
	uint64_t starved;		/* times it took normal priority back */
	uint64_t lost_seen;		/* ring-buffer losses at the last look */
	/* The host's CPU pressure (procfs_cpu_pressure unless a test sets
	 * another before configure). */
	int (*cpu_pressure)(double *some_avg10);
};

/*
 * The pure part: given the process's total run delay at @now_ns, whether its
 * threads should run under SCHED_IDLE. Updates the check window and counts
 * starvation.
 */
bool cpu_priority__decide(struct cpu_priority *cp, uint64_t now_ns, uint64_t run_delay_ns);

/* Reads whether idle can be used here (saying why not once) and applies it. */
void cpu_priority__init(struct cpu_priority *cp, bool want_idle, uint64_t now_ns);
/* A reload's setting. */
void cpu_priority__configure(struct cpu_priority *cp, bool want_idle, uint64_t now_ns);
/* Once a loop turn: reads the run delay once a second and applies a change. */
void cpu_priority__poll(struct cpu_priority *cp, uint64_t now_ns);
/*
 * Normal priority now, for a burst no poll watches (a window's finish and
 * the capture's write: at SCHED_IDLE on a busy host they could take
 * minutes); the next poll decides again.
 */
void cpu_priority__normal_now(struct cpu_priority *cp);
/*
 * The loop fell behind: its ring buffers turned records away (@lost, their
 * count so far). Idle, it takes normal priority at once, for the starved
 * hold, instead of at the next once-a-second look at its run delay: on a
 * busy host a second at SCHED_IDLE fills the rings many times over.
 */
void cpu_priority__note_lost(struct cpu_priority *cp, uint64_t now_ns, uint64_t lost);
/* Sets every thread of this process to SCHED_IDLE or SCHED_OTHER. */
int cpu_priority__apply(bool idle);

#endif /* ACCELTRACE_SESSION_CPU_PRIORITY_H */
