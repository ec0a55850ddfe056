/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One devtrace buffer per GPU of the process (docs/devtrace.md, "GPU
 * streams"), made when device detail is first wanted and kept for the
 * process's life: kernels and copies as KERNEL and TRANSFER records with
 * their stream, the host calls that queued them as LAUNCH records (in
 * device 0's buffer: correlation ids are unique per process), clock pairs
 * that map the runtime's timestamps to CLOCK_MONOTONIC. Names are
 * published once each, found again through a hash of the runtime's name.
 * Safe to call from any thread.
 */
#ifndef ACCELTRACE_AGENT_GPU_BUFFERS_H
#define ACCELTRACE_AGENT_GPU_BUFFERS_H

#include <stdbool.h>
#include <stdint.h>

struct gpu_buffers;

struct gpu_device_info {
	char name[32];		/* e.g. "NVIDIA H100 80GB HBM3", cut */
};

/* @n devices, @info[i] for device i; NULL with errno set. */
struct gpu_buffers *gpu_buffers__new(unsigned int n, const struct gpu_device_info *info,
				     uint64_t sync_device_ts, uint64_t sync_host_ns);
void gpu_buffers__free(struct gpu_buffers *b);
/* In a forked child: lets go of the parent's buffers without closing them
 * (they are the parent's, and still written by it). */
void gpu_buffers__drop(struct gpu_buffers *b);

/* Device work on @stream, from @start to @end (runtime ns); @name as the
 * runtime gave it (a kernel's is demangled here). false: @device unknown. */
bool gpu_buffers__kernel(struct gpu_buffers *b, unsigned int device, uint32_t stream,
			 uint64_t corr, uint64_t start, uint64_t end, const char *name);
bool gpu_buffers__transfer(struct gpu_buffers *b, unsigned int device, uint32_t stream,
			   uint64_t corr, uint64_t start, uint64_t end, uint64_t bytes,
			   const char *name);
/* A host thread @tid's call @api that queued work @corr. */
bool gpu_buffers__launch(struct gpu_buffers *b, uint32_t tid, uint64_t corr, uint64_t start,
			 uint64_t end, const char *api);
/* A clock pair into every buffer. */
void gpu_buffers__clock_sync(struct gpu_buffers *b, uint64_t device_ts, uint64_t host_ns);
/* Records written, all buffers. */
uint64_t gpu_buffers__records(const struct gpu_buffers *b);

#endif /* ACCELTRACE_AGENT_GPU_BUFFERS_H */
