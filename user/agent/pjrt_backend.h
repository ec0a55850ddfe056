/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The PJRT backend: a PJRT plugin's profiler extension (libtpu's, and any
 * plugin that offers PJRT_Extension_Type_Profiler), found in a plugin the
 * process has loaded (it exports GetPjrtApi). While active, one profiler
 * session of the plugin runs with its device tracer only (no host tracer:
 * acceltrace's probes see the host); at a flush and at the end, the
 * session is stopped, its XSpace collected and its device planes written
 * into devtrace buffers (tpu_buffers.h), and while still wanted a new
 * session starts at once. Calls come from the agent's control thread.
 */
#ifndef ACCELTRACE_AGENT_PJRT_BACKEND_H
#define ACCELTRACE_AGENT_PJRT_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

struct tpu_buffers;

/* A loaded plugin with the profiler extension: 0, or -ENOENT (no plugin
 * loaded yet: asked again at the next lease), -ENOTSUP (a plugin without
 * the extension). */
int pjrt_backend_find(void);
/* The plugin's file name, once one was found ("" before). */
const char *pjrt_backend_plugin(void);
/* The process maps a devtrace buffer not in @ours: its runtime traces its
 * device itself (the simulator does), so the plugin's profiler is not
 * asked too. */
bool pjrt_backend_device_traced(const struct tpu_buffers *ours);
/* Starts a session writing into @out: 0 or -errno (said). */
int pjrt_backend_start(struct tpu_buffers *out);
/* Stops the session, writes what it collected; starts a new one when
 * @again. 0 or -errno (said once). */
int pjrt_backend_collect(bool again);
/* In a forked child: the parent's session and buffers are not ours. */
void pjrt_backend_forget(void);
/* Events the decoder refused or the buffers could not take. */
uint64_t pjrt_backend_dropped(void);

#endif /* ACCELTRACE_AGENT_PJRT_BACKEND_H */
