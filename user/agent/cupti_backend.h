/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The CUPTI backend: CUDA's Activity API, from the libcupti the process
 * has or can load (PyTorch's and JAX's wheels ship one), opened with
 * dlopen when device detail is first wanted. While active it records
 * kernels, copies, memsets and the runtime and driver calls that launched
 * them into the GPU buffers; turned off, every activity kind is disabled
 * and what CUPTI still holds is flushed.
 */
#ifndef ACCELTRACE_AGENT_CUPTI_BACKEND_H
#define ACCELTRACE_AGENT_CUPTI_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

struct gpu_buffers;

/* Loads libcupti and its entry points (once). 0, or -errno with the
 * problem said (agent_log.h). */
int cupti_backend_load(void);
/* Starts recording into @out: 0, or -errno (said). */
int cupti_backend_start(struct gpu_buffers *out);
/* Hands over what CUPTI has finished (call periodically while on). */
void cupti_backend_flush(bool forced);
/* Stops recording; records already made are flushed into the buffers. */
void cupti_backend_stop(void);
/* In a forked child: records go nowhere any more (the buffers are the
 * parent's), whatever CUPTI still calls back. */
void cupti_backend_forget(void);
/* A clock pair: CUPTI's timestamp and CLOCK_MONOTONIC at one instant,
 * the tightest of a few tries. -EAGAIN: even that one was bracketed too
 * widely to trust (the thread was descheduled); the pair is still set. */
int cupti_backend_clock_pair(uint64_t *cupti_ts, uint64_t *host_ns);
/* Records CUPTI said it dropped (no buffer), and records without an end. */
uint64_t cupti_backend_dropped(void);
uint64_t cupti_backend_incomplete(void);

#endif /* ACCELTRACE_AGENT_CUPTI_BACKEND_H */
