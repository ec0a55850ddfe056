/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The attach controller: what must be probed changes as traced processes
 * run (a GetPjrtApi call returns a table, OnReady registers a callback, a
 * device node is opened, an eventfd is registered with a driver, a process
 * execs, forks or exits). The collector sees those moments in the records;
 * it hands each over as a control record (collect/control.h) and the
 * controller acts on it:
 * attaching runtime probes, updating the kernel's fd and open-call tables.
 * The collector itself attaches nothing and writes no BPF map, as retsnoop
 * keeps its mass attacher apart from event handling.
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

/* Acts on one control record; 0 or -errno (failures are logged). */
int attach_control__handle(struct attach_control *ac,
			   const struct control_record *rec);
/* The ops that hand control records to @ac. */
struct control_ops attach_control__ops(struct attach_control *ac);
/* What the collector reads of @ac's probe session (nothing without one). */
struct session_reads attach_control__reads(struct attach_control *ac);

#endif /* ACCELTRACE_ATTACH_CONTROL_H */
