/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Devtrace buffers of a PJRT plugin's devices (docs/devtrace.md, one core
 * a buffer): what the plugin's profiler collected, program executions and
 * their ops, written as MODULE / STEP / OP records in time order. Times are
 * CLOCK_MONOTONIC ns, so the device clock is the host's (1 GHz, clock pairs
 * equal). A device's buffer is made when its first event comes, and kept
 * for the process's life. Called from the agent's control thread only.
 */
#ifndef ACCELTRACE_AGENT_TPU_BUFFERS_H
#define ACCELTRACE_AGENT_TPU_BUFFERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Devices a process's buffers cover at most (ordinals 0 .. N - 1). */
#define TPU_MAX_DEVICES 256

struct tpu_buffers;

/* One event of a collection, its text valid until tpu_buffers__write returns. */
struct tpu_span {
	uint32_t device;
	bool module;			/* a program execution; else an op */
	const char *name;
	size_t name_len;
	uint64_t start, end;		/* CLOCK_MONOTONIC ns */
	uint64_t run_id;		/* modules: the launch id, when has_run_id */
	bool has_run_id;
	uint8_t category;		/* enum devtrace_category */
	uint64_t flops, bytes;
};

struct tpu_write_counts {
	uint64_t records;		/* written */
	uint64_t orphan_ops;		/* ops outside any execution: not written */
	uint64_t devices_refused;	/* events of a device past TPU_MAX_DEVICES or without a buffer */
};

/* @platform: the header's platform ("TPU"). NULL with errno set. */
struct tpu_buffers *tpu_buffers__new(const char *platform);
void tpu_buffers__free(struct tpu_buffers *b);
/* In a forked child: the parent's buffers, let go without closing them. */
void tpu_buffers__drop(struct tpu_buffers *b);
/*
 * Writes one collection: @spans (sorted here) into their devices' buffers,
 * with a clock pair before and after. Returns 0, or -errno when a buffer
 * could not be made (the other devices are still written).
 */
int tpu_buffers__write(struct tpu_buffers *b, struct tpu_span *spans, size_t n,
		       struct tpu_write_counts *counts);
/* Makes @device's buffer now (a device the plugin reported, with no event
 * yet), so acceltrace finds it before the first collection. 0 or -errno. */
int tpu_buffers__ensure(struct tpu_buffers *b, uint32_t device);
/* The category of an op from its category text ("convolution fusion", ...). */
uint8_t tpu_category(const char *text, size_t len);
/* @addr is the start of one of these buffers' mappings. */
bool tpu_buffers__owns(const struct tpu_buffers *b, const void *addr);
/* Buffers made, and records written in all. */
unsigned int tpu_buffers__count(const struct tpu_buffers *b);
uint64_t tpu_buffers__records(const struct tpu_buffers *b);

#endif /* ACCELTRACE_AGENT_TPU_BUFFERS_H */
