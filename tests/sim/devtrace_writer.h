/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Writes one core's devtrace buffer (include/acceltrace/devtrace.h): a file
 * of fixed size mapped shared, so records are visible to read()ers as soon
 * as they are stored. One thread emits records; names may be added from
 * another (they are locked).
 */
#ifndef ACCELTRACE_SIM_DEVTRACE_WRITER_H
#define ACCELTRACE_SIM_DEVTRACE_WRITER_H

#include <linux/types.h>
#include <stdint.h>

#include <acceltrace/devtrace.h>

struct devtrace_writer;

struct devtrace_writer_opts {
	const char *path;
	__u32 core;
	__u32 num_cores;
	__u32 device_id;
	__u32 owner_pid;
	__u64 record_capacity;		/* slots in the ring, >= 1 */
	__u32 name_capacity;		/* entries; 0 means 256 */
	__u64 clock_rate_hz;
	__u64 sync_host_ns;		/* the clock pair put in the header */
	__u64 sync_device_ts;
	const char *device_kind;
};

/* Creates (truncates) the file. NULL and errno on failure. */
struct devtrace_writer *devtrace_writer__new(const struct devtrace_writer_opts *opts);
/* Marks the buffer closed and unmaps it; accepts NULL. */
void devtrace_writer__free(struct devtrace_writer *w);
/* Id of `name` of `kind`, added if new; DEVTRACE_NO_NAME when the table is full. */
__u32 devtrace_writer__name(struct devtrace_writer *w, int kind, const char *name);
/* Publishes a copy of `rec` with the next sequence number; returns that number. */
__u64 devtrace_writer__emit(struct devtrace_writer *w, const struct devtrace_record *rec);
__u64 devtrace_writer__file_size(const struct devtrace_writer *w);

#endif /* ACCELTRACE_SIM_DEVTRACE_WRITER_H */
