/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where the capture's processes came from, for readers: the /host:CPU
 * plane stat acceltrace.processes (docs/capture-format.md).
 */
#ifndef ACCELTRACE_PROCESS_ORIGINS_H
#define ACCELTRACE_PROCESS_ORIGINS_H

struct capture;

/* JSON {"version": 1, "processes": [{"pid", "ppid" (0: unknown), "name",
 * "container", "pod" ("": none)}]}. */
#define STAT_PROCESSES "acceltrace.processes"

/* The stat's JSON into *json (NULL: the capture has no process); free()
 * it. 0 or -ENOMEM. */
int process_origins_json(const struct capture *c, char **json);

#endif /* ACCELTRACE_PROCESS_ORIGINS_H */
