/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a run traces: processes named by PID (with their descendants on
 * request), every process on the host that uses an accelerator runtime, or a
 * command acceltrace launches itself. Finds them in /proc, at the start and
 * at each rescan (libraries loaded late, new processes, processes gone),
 * and says what to do as visits: the attach controller
 * (attach/attach_control.h) puts a process in the kernel's traced set and
 * examines it, or forgets it. Nothing here writes the kernel's tables.
 */
#ifndef ACCELTRACE_TARGETS_H
#define ACCELTRACE_TARGETS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>


struct attached_library;
struct cgroup_scope;
struct probe_session;
struct targets;

/* What acceltrace found in one process: filled by the attach controller's
 * examination (attach/runtime_attach.h), kept here with its target. */
struct process_report {
	pid_t pid;
	unsigned int n_libraries;
	const struct attached_library *libraries[16];
	unsigned int n_device_nodes;
	struct {
		int fd;
		char path[128];
		const char *family;
	} device_nodes[16];
	unsigned int n_eventfds;
	bool in_container;		/* its root differs: paths via /proc/PID/root */
};

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
 * @ps: whom the probes adopted (a runtime call, a device open) is read
 * from it, never written; NULL to only plan (acceltrace probes).
 */
struct targets *targets__new(const struct targets_opts *opts,
			     const struct probe_session *ps);
/* Kills nothing: a launched command runs on until it exits. */
void targets__free(struct targets *t);

/* Finds the targets: each a visit to examine. The command stays held
 * until targets__release_command. */
int targets__start(struct targets *t);
/* Lets the launched command exec, once examined (its environment names
 * the libraries it will load); 0 without one. */
int targets__release_command(struct targets *t);
/* Periodic: late dlopen, new threads' libraries, new processes (-a,
 * children), processes gone: each a visit. */
void targets__rescan(struct targets *t, bool full);

/* What the attach controller is to do for one process. */
struct target_visit {
	pid_t pid;
	uint32_t flags;		/* enum traced_flags: how it became a target */
	bool gone;		/* forget it; else trace and examine it */
};
/*
 * The visits targets__start and __rescan queued since the last take, in
 * order, in *@n; valid until the next call on @t. Out of memory, every
 * live process is visited again.
 */
const struct target_visit *targets__take_visits(struct targets *t, size_t *n);
/* The report an examination of @pid fills; NULL if not a target. */
struct process_report *targets__report_of(struct targets *t, pid_t pid);
/* The examination found @pid gone: no more visits for it. */
void targets__note_gone(struct targets *t, pid_t pid);

/* True while some explicit target (PID or command) is alive; -a: always. */
bool targets__alive(const struct targets *t);
pid_t targets__command_pid(const struct targets *t);
/* Waits for the launched command; its wait status through *status. */
int targets__wait_command(struct targets *t, int *status);

size_t targets__count(const struct targets *t);
/* The i-th traced process and what was found in it (last examination). */
const struct process_report *targets__report(const struct targets *t, size_t i);
/* Whether target @i (targets__report's) was found gone. */
bool targets__gone(const struct targets *t, size_t i);

#endif /* ACCELTRACE_TARGETS_H */
