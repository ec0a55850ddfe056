/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The processes an XSpace holds, and a view of it restricted to one, so
 * that a whole-host capture is analysed job by job (docs/report.md,
 * "Several processes"). A line's process is what acceltrace wrote: a
 * device plane's acceltrace.pid, the /host:CPU plane's
 * acceltrace.thread_pids (tid, pid) pairs, else, for captures older than
 * that stat, the "(pid N" that follows the name in a thread line's
 * display name. Other producers mark no process: they hold none here.
 * A process's parent, container and pod are the /host:CPU plane's
 * acceltrace.processes (output/process_origins.h): the threads of a child
 * with no device of its own (a DataLoader worker) belong to the view of
 * the nearest ancestor that has one.
 */
#ifndef ACCELTRACE_XSPACE_PROCESSES_H
#define ACCELTRACE_XSPACE_PROCESSES_H

#include <stddef.h>
#include <stdint.h>

#include "reader/xspace_reader.h"

/* At most this many processes are told apart (a hostile file may claim more). */
#define XS_MAX_PROCESSES 4096

struct xs_process {
	int64_t pid;
	const char *name;	/* its main thread's line name (tid == pid), or "" */
	size_t n_devices;	/* device planes it drives */
	size_t n_lines;		/* host-plane lines of its threads */
	/* From acceltrace.processes (absent in older captures and other
	 * producers': 0 and ""). */
	int64_t ppid;
	char container[72], pod[72];
	/* Whose report holds its threads: itself, or for a process with no
	 * device, the nearest ancestor that has one (a DataLoader worker's
	 * trainer); 0 when none does. */
	int64_t reported_in;
};

/*
 * The processes of @xs, by pid, into a new array (*out, free() it; NULL
 * when there are none). 0, or -ENOMEM.
 */
int xs_processes(const struct xs_space *xs, struct xs_process **out, size_t *n);

/*
 * A view of @xs holding only process @pid: its device planes, its thread
 * lines on /host:CPU and those of its device-less descendants (see
 * reported_in), and every plane that belongs to no process (Task
 * Environment, metadata). It shares @xs's events, names and stats, so it
 * must be freed (xs_scope_free) before @xs. NULL with errno ENOMEM.
 */
struct xs_space *xs_scope_process(const struct xs_space *xs, int64_t pid);
void xs_scope_free(struct xs_space *view);

#endif /* ACCELTRACE_XSPACE_PROCESSES_H */
