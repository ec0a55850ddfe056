/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Device memory on the XSpace's /host:CPU plane (xspace_memory.c), in the
 * form docs/capture-format.md "Device memory" gives: the writer's host
 * plane calls these between its thread lines and its plane stats.
 */
#ifndef ACCELTRACE_XSPACE_MEMORY_H
#define ACCELTRACE_XSPACE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "output/xspace_writer_internal.h"

/* Groups the capture's memory events by thread. 0 or -ENOMEM. */
int xw_memory_prepare(struct xw *w);
void xw_memory_free(struct xw *w);
/* The memory events of thread (pid, tid) as one more row of its line,
 * after the @rows its spans took (0: the thread's own line id). */
int xw_memory_thread_line(struct xw *w, uint32_t pid, uint32_t tid, size_t rows,
			  const char *name, const char *display_name);
/* Lines for threads with memory events and no spans, labelled as the
 * others are (@multi: more than one process, "(pid N)"). */
int xw_memory_other_threads(struct xw *w, bool multi);
/* A counter line per allocator: "Memory in use" instants in the window. */
int xw_memory_counter_lines(struct xw *w);
/* The acceltrace.memory_timelines JSON (malloc'd; NULL when the capture
 * has no timelines). 0 or -ENOMEM. */
int xw_memory_timelines_json(const struct xw *w, char **json);

#endif /* ACCELTRACE_XSPACE_MEMORY_H */
