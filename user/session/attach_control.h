/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The attach controller: what must be probed changes as traced processes
 * run (a GetPjrtApi call returns a table, OnReady registers a callback, a
 * device node is opened, an eventfd is registered with a driver, a process
 * execs, forks or exits). The collector sees those moments in the records
 * and queues each as a control record (collect/control.h); after each poll
 * the record loop takes the queue and the controller acts on it:
 * attaching runtime probes, updating the kernel's fd and open-call tables.
 * The collector itself attaches nothing and writes no BPF map, and nothing
 * here runs inside a ring callback, as retsnoop keeps its mass attacher
 * apart from event handling.
 */
#ifndef ACCELTRACE_ATTACH_CONTROL_H
#define ACCELTRACE_ATTACH_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "collect/control.h"

struct attach_control;
struct probe_session;
struct runtime_attach;

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
/* Records @ac failed to act on, since it was made. */
uint64_t attach_control__failures(const struct attach_control *ac);
/* The questions the collector may ask of @ac: answers, no actions. */
struct control_lookups attach_control__lookups(struct attach_control *ac);
/* What the collector reads of @ac's probe session (nothing without one). */
struct session_reads attach_control__reads(struct attach_control *ac);

#endif /* ACCELTRACE_ATTACH_CONTROL_H */
