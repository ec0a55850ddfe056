/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The attach controller, the one actuator: every probe placed or removed
 * after the kernel's own programs are attached, and every write to the
 * kernel's tables (traced pids, fds, open calls, interrupts, the command's
 * scope), goes through here. What must be probed changes as traced
 * processes run (a GetPjrtApi call returns a table, OnReady registers a callback, a
 * device node is opened, an eventfd is registered with a driver, a process
 * execs, forks or exits). The collector sees those moments in the records
 * and queues each as a control record (collect/control.h); after each poll
 * the record loop takes the queue and the controller acts on it:
 * attaching runtime probes, updating the kernel's fd and open-call tables.
 * The collector itself attaches nothing and writes no BPF map, and nothing
 * here runs inside a ring callback, as retsnoop keeps its mass attacher
 * apart from event handling. The targets (discover/targets.h) are found
 * the same way: a rescan queues visits, the controller acts on them.
 */
#ifndef ACCELTRACE_ATTACH_CONTROL_H
#define ACCELTRACE_ATTACH_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/control.h"

struct attach_control;
struct probe_session;
struct process_report;
struct runtime_attach;
struct target_visit;
struct targets;

/*
 * The probe session (for its fd and open-call tables) and the runtime
 * attach manager (for probes); either may be NULL, and what needs it is
 * then skipped. NULL and errno on failure.
 */
struct attach_control *attach_control__new(struct probe_session *ps,
					   struct runtime_attach *ra);
void attach_control__free(struct attach_control *ac);

/* Acts on one control record; 0 or -errno (failures are logged with -v
 * and counted). */
int attach_control__handle(struct attach_control *ac,
			   const struct control_record *rec);
/* Acts on @n records in order (collector__take_control's). */
void attach_control__act(struct attach_control *ac,
			 const struct control_record *recs, size_t n);
/*
 * One target: put in the kernel's traced set and examined (its runtimes
 * probed, its device nodes and eventfds marked; what was found in
 * @report, which may be NULL), or forgotten (@v->gone). -ESRCH when the
 * process is gone; 0 or -errno otherwise.
 */
int attach_control__visit(struct attach_control *ac, const struct target_visit *v,
			  struct process_report *report);
/* Every visit @t queued (targets__take_visits), in order; a process found
 * gone is told to @t. */
void attach_control__visit_targets(struct attach_control *ac, struct targets *t);
/* The runtime probes fire for these processes only (a launched command
 * without --children); 0 or -errno. */
int attach_control__scope(struct attach_control *ac, const pid_t *pids, size_t n);
/* The accelerator interrupts in /proc/interrupts traced; how many, or
 * -errno. */
int attach_control__trace_device_irqs(struct attach_control *ac);
/* The kernel's own programs (tracepoints, raw tracepoints) attached; 0 or
 * -errno. */
int attach_control__attach_kernel(struct attach_control *ac);
/*
 * Detail on or off (the daemon's sampled mode; probe_session__set_detail
 * and runtime_attach__set_detail say what each means): how many probes
 * were attached or detached.
 */
size_t attach_control__set_detail(struct attach_control *ac, bool on);
/* Records @ac failed to act on, since it was made. */
uint64_t attach_control__failures(const struct attach_control *ac);
/* The questions the collector may ask of @ac: answers, no actions. */
struct control_lookups attach_control__lookups(struct attach_control *ac);
/* What the collector reads of @ac's probe session (nothing without one). */
struct session_reads attach_control__reads(struct attach_control *ac);

#endif /* ACCELTRACE_ATTACH_CONTROL_H */
