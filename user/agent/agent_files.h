/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The files the agent shares with acceltrace: created in one directory
 * ($ACCELTRACE_AGENT_DIR, else /dev/shm, else /tmp), mapped shared, then
 * unlinked, so they go with the process and litter nothing; acceltrace
 * finds them among the process's mappings (/proc/PID/map_files).
 */
#ifndef ACCELTRACE_AGENT_FILES_H
#define ACCELTRACE_AGENT_FILES_H

#include <stddef.h>

/* A new zero-filled shared mapping of @size bytes, its file named after
 * @what and unlinked; NULL with errno set. */
void *agent_map_new_file(const char *what, size_t size);

#endif /* ACCELTRACE_AGENT_FILES_H */
