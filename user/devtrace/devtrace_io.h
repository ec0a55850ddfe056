/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Batched positional reads for the devtrace reader: one io_uring for every
 * buffer, reading into one registered staging area (READ_FIXED), with plain
 * pread() as the fallback (no io_uring, or registration refused) and as the
 * floor `make bench` compares it with.
 *
 * devtrace_io__run() takes a batch of reads, each into the staging area,
 * submits them together (side by side: nothing is linked) and returns when
 * every one has finished, or at the run's timeout: short reads are
 * resubmitted for the rest, -EAGAIN and -EINTR retried, and each read's own
 * outcome is left in its `err` (end of file before `len` is -ENODATA; still
 * pending at the timeout, -ETIMEDOUT; not started when the timeout came,
 * -EAGAIN). The kernel may take fewer reads than
 * were submitted: the rest are submitted again, and only what it took is
 * waited for. A read the file system never answers is cancelled; one that
 * cannot be cancelled takes its ring and staging area with it (left to the
 * kernel, never reused: devtrace_io__staging() moves), so the caller takes
 * staging addresses afresh after a run that timed out.
 *
 * The timeout covers waits, not the submission: a FUSE file without
 * background reads makes io_uring_enter itself wait on its server. Files
 * on such file systems are never handed to the reader (safe_open.h in
 * discover/). The pread engine has no timeout: it is the fallback where
 * io_uring (with timed waits, 5.11) is missing, and the benchmark's floor.
 */
#ifndef ACCELTRACE_DEVTRACE_IO_H
#define ACCELTRACE_DEVTRACE_IO_H

#include <stddef.h>
#include <stdint.h>

enum devtrace_io_engine {
	DEVTRACE_IO_URING_FIXED,	/* io_uring, registered staging buffer */
	DEVTRACE_IO_URING,		/* io_uring, plain reads (memlock refused) */
	DEVTRACE_IO_PREAD,		/* one pread() after another */
};

struct devtrace_io_opts {
	size_t sz;
	size_t staging_bytes;		/* 0: 8 MiB */
	unsigned int queue_depth;	/* 0: 256 */
	int force_pread;		/* skip io_uring (benchmark floor) */
	unsigned int timeout_ms;	/* a run's limit; 0: 2000 */
	/* Tests: the kernel is made to take at most this many SQEs per
	 * submission (0: all it is given), as one short of memory does. */
	unsigned int test_submit_max;
};

struct devtrace_read {
	int fd;
	uint32_t len;
	uint64_t off;
	void *dst;		/* inside the staging area */
	uint32_t done;		/* bytes read so far */
	int err;		/* 0, or -errno of this read */
};

struct devtrace_io;

/* NULL and errno on failure. Falls back along the engines above. */
struct devtrace_io *devtrace_io__new(const struct devtrace_io_opts *opts);
void devtrace_io__free(struct devtrace_io *io);
void *devtrace_io__staging(const struct devtrace_io *io);
size_t devtrace_io__staging_bytes(const struct devtrace_io *io);
enum devtrace_io_engine devtrace_io__engine(const struct devtrace_io *io);
const char *devtrace_io__engine_name(enum devtrace_io_engine e);
/* Runs @n reads to completion (reads start with done = err = 0). 0, or
 * -errno when the ring itself failed (each read's err then says whether it
 * finished). */
int devtrace_io__run(struct devtrace_io *io, struct devtrace_read *reads, size_t n);
/* Runs @reads, then @then, which start only once every one of @reads has
 * finished, the rest of a short read included: @reads side by side, then
 * @then submitted as the last of them completes (one timeout for both). */
int devtrace_io__run_then(struct devtrace_io *io, struct devtrace_read *reads, size_t n,
			  struct devtrace_read *then, size_t m);
/* io_uring submissions (calls that enter the kernel) so far, for tests. */
uint64_t devtrace_io__submits(const struct devtrace_io *io);
/* Rings given up with reads that neither finished nor cancelled. */
uint64_t devtrace_io__abandoned_rings(const struct devtrace_io *io);

#endif /* ACCELTRACE_DEVTRACE_IO_H */
