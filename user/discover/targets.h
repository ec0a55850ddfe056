/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a run traces: processes named by PID (with their descendants on
 * request), every process on the host that uses an accelerator runtime, or a
 * command acceltrace launches itself. Keeps the traced set in the kernel in
 * step with /proc, and rescans traced processes for libraries loaded late.
 */
#ifndef ACCELTRACE_TARGETS_H
#define ACCELTRACE_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/runtime_attach.h"

struct cgroup_scope;
struct probe_session;
struct targets;

struct targets_opts {
	size_t sz;
	const pid_t *pids;		/* --pid, repeatable */
	size_t n_pids;
	bool children;			/* --children */
	bool whole_host;		/* -a */
	char *const *command;		/* -- CMD ARGS (NULL-terminated) */
	/* -a: only processes inside this cgroup's subtree (NULL: all). */
	const struct cgroup_scope *scope;
};
#define targets_opts__last_field scope

/*
 * Validates the targets (a PID that does not exist is refused, naming it)
 * and, for a command, forks it held before exec. NULL and errno on failure.
 * @ps and @ra may be NULL to only plan (acceltrace probes).
 */
struct targets *targets__new(const struct targets_opts *opts,
			     struct probe_session *ps, struct runtime_attach *ra);
/* Kills nothing: a launched command runs on until it exits. */
void targets__free(struct targets *t);

/* Puts the targets in the traced set, probes them, releases the command. */
int targets__start(struct targets *t);
/* Periodic: late dlopen, new threads' libraries, new processes (-a, children). */
void targets__rescan(struct targets *t, bool full);

/* True while some explicit target (PID or command) is alive; -a: always. */
bool targets__alive(const struct targets *t);
pid_t targets__command_pid(const struct targets *t);
/* Waits for the launched command; its wait status through *status. */
int targets__wait_command(struct targets *t, int *status);

size_t targets__count(const struct targets *t);
/* The i-th traced process and what was found in it (last examination). */
const struct process_report *targets__report(const struct targets *t, size_t i);
/* Says what was and was not found, for a run that saw no device activity. */
void targets__diagnose(const struct targets *t, char *buf, size_t len);

#endif /* ACCELTRACE_TARGETS_H */
