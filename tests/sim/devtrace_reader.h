/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reads a devtrace buffer the way docs/devtrace.md tells a consumer to:
 * plain pread()s of a file another process is writing, records delivered in
 * sequence order, overwritten ones counted as lost. The simulator's tests use
 * it; it is also the reference for the collector's io_uring reader.
 */
#ifndef ACCELTRACE_SIM_DEVTRACE_READER_H
#define ACCELTRACE_SIM_DEVTRACE_READER_H

#include <linux/types.h>

#include <acceltrace/devtrace.h>

struct devtrace_reader;

typedef int (*devtrace_record_fn)(void *ctx, const struct devtrace_record *rec);

/* Opens and validates the header. NULL and errno (EINVAL: not a devtrace
 * buffer or an unsupported version, EAGAIN: not yet initialised). */
struct devtrace_reader *devtrace_reader__open(const char *path);
void devtrace_reader__free(struct devtrace_reader *r);
/* The header as of the last open or poll. */
const struct devtrace_header *devtrace_reader__header(const struct devtrace_reader *r);
/*
 * Delivers every record published since the previous call, oldest first,
 * and adds to *lost those that were overwritten before they could be read.
 * Returns the number delivered, a negative error, or fn's non-zero return.
 */
long devtrace_reader__poll(struct devtrace_reader *r, devtrace_record_fn fn,
			   void *ctx, __u64 *lost);
/* The name with `id`, or NULL; reads names published since the last call. */
const char *devtrace_reader__name(struct devtrace_reader *r, __u32 id);

#endif /* ACCELTRACE_SIM_DEVTRACE_READER_H */
