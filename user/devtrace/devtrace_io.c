// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The devtrace reader's I/O: see devtrace_io.h. The staging area is one
 * anonymous mapping registered as a single fixed buffer, so every read of
 * every buffer is a READ_FIXED into it and new buffers need no new
 * registration.
 */
#include <errno.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define LOG_CONTEXT "devtrace"
#include "devtrace/devtrace_io.h"
#include "lib/log.h"

#define DEFAULT_STAGING (8u << 20)
#define DEFAULT_DEPTH 256

struct devtrace_io {
	enum devtrace_io_engine engine;
	struct io_uring ring;
	bool ring_ready;
	void *staging;
	size_t staging_bytes;
	uint64_t submits;
};

const char *devtrace_io__engine_name(enum devtrace_io_engine e)
{
	switch (e) {
	case DEVTRACE_IO_URING_FIXED: return "io_uring (registered buffers)";
	case DEVTRACE_IO_URING: return "io_uring";
	case DEVTRACE_IO_PREAD: return "pread";
	}
	return "?";
}

static int ring_setup(struct devtrace_io *io, unsigned int depth)
{
	struct iovec iov = { .iov_base = io->staging, .iov_len = io->staging_bytes };
	int err;

	/* Completions need not interrupt the reader (5.19); else plain.
	 * SINGLE_ISSUER | DEFER_TASKRUN measured no faster here and would
	 * tie a reader to one thread. */
	static const unsigned int flags[] = { IORING_SETUP_COOP_TASKRUN, 0 };

	err = -EINVAL;
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]) && err == -EINVAL; i++)
		err = io_uring_queue_init(depth, &io->ring, flags[i]);
	if (err < 0)
		return err;
	io->ring_ready = true;
	err = io_uring_register_buffers(&io->ring, &iov, 1);
	if (err < 0) {
		/* Older kernels charge registered memory to RLIMIT_MEMLOCK. */
		log_debug("registering %zu bytes of staging refused (%s): plain reads",
			  io->staging_bytes, strerror(-err));
		io->engine = DEVTRACE_IO_URING;
		return 0;
	}
	io->engine = DEVTRACE_IO_URING_FIXED;
	return 0;
}

struct devtrace_io *devtrace_io__new(const struct devtrace_io_opts *opts)
{
	size_t bytes = opts && opts->staging_bytes ? opts->staging_bytes : DEFAULT_STAGING;
	unsigned int depth = opts && opts->queue_depth ? opts->queue_depth : DEFAULT_DEPTH;
	long page = sysconf(_SC_PAGESIZE);
	struct devtrace_io *io;
	int err;

	io = calloc(1, sizeof(*io));
	if (!io)
		return NULL;
	io->staging_bytes = (bytes + page - 1) / page * page;
	io->staging = mmap(NULL, io->staging_bytes, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (io->staging == MAP_FAILED) {
		err = -errno;
		free(io);
		errno = -err;
		return NULL;
	}
	io->engine = DEVTRACE_IO_PREAD;
	if (!(opts && opts->force_pread)) {
		err = ring_setup(io, depth);
		if (err < 0) {
			log_debug("no io_uring (%s): reading with pread", strerror(-err));
			if (io->ring_ready)
				io_uring_queue_exit(&io->ring);
			io->ring_ready = false;
			io->engine = DEVTRACE_IO_PREAD;
		}
	}
	return io;
}

void devtrace_io__free(struct devtrace_io *io)
{
	if (!io)
		return;
	if (io->ring_ready)
		io_uring_queue_exit(&io->ring);
	if (io->staging && io->staging != MAP_FAILED)
		munmap(io->staging, io->staging_bytes);
	free(io);
}

void *devtrace_io__staging(const struct devtrace_io *io)
{
	return io->staging;
}

size_t devtrace_io__staging_bytes(const struct devtrace_io *io)
{
	return io->staging_bytes;
}

enum devtrace_io_engine devtrace_io__engine(const struct devtrace_io *io)
{
	return io->engine;
}

uint64_t devtrace_io__submits(const struct devtrace_io *io)
{
	return io->submits;
}

static bool unfinished(const struct devtrace_read *r)
{
	return !r->err && r->done < r->len;
}

static int run_pread(struct devtrace_read *reads, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct devtrace_read *r = &reads[i];

		if (r->err)
			continue;
		while (r->done < r->len) {
			ssize_t got = pread(r->fd, (char *)r->dst + r->done,
					    r->len - r->done, r->off + r->done);

			if (got < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (got < 0) {
				r->err = -errno;
				break;
			}
			if (got == 0) {
				r->err = -ENODATA;
				break;
			}
			r->done += got;
		}
	}
	return 0;
}

/* Queues the rest of @r; submits what is queued when the SQ is full. */
static int queue_read_flags(struct devtrace_io *io, struct devtrace_read *r, unsigned int flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);
	char *dst = (char *)r->dst + r->done;
	unsigned int len = r->len - r->done;
	uint64_t off = r->off + r->done;
	int ret;

	if (!sqe) {
		ret = io_uring_submit(&io->ring);
		io->submits++;
		if (ret < 0)
			return ret;
		sqe = io_uring_get_sqe(&io->ring);
		if (!sqe)
			return -EBUSY;
	}
	if (io->engine == DEVTRACE_IO_URING_FIXED)
		io_uring_prep_read_fixed(sqe, r->fd, dst, len, off, 0);
	else
		io_uring_prep_read(sqe, r->fd, dst, len, off);
	io_uring_sqe_set_data(sqe, r);
	io_uring_sqe_set_flags(sqe, flags);
	return 0;
}

static int queue_read(struct devtrace_io *io, struct devtrace_read *r)
{
	return queue_read_flags(io, r, 0);
}

/* Takes one completion; returns whether @r is finished (else requeued). */
static int complete(struct devtrace_io *io, struct devtrace_read *r, int res, bool *finished)
{
	*finished = true;
	if (res == -EAGAIN || res == -EINTR) {
		*finished = false;
	} else if (res < 0) {
		r->err = res;
	} else if (res == 0) {
		r->err = -ENODATA;	/* end of file: the buffer shrank */
	} else {
		r->done += res;
		*finished = r->done >= r->len;	/* short read: ask for the rest */
	}
	return *finished ? 0 : queue_read(io, r);
}

int devtrace_io__run(struct devtrace_io *io, struct devtrace_read *reads, size_t n)
{
	size_t next = 0, inflight = 0;
	int err = 0, ret;

	if (io->engine == DEVTRACE_IO_PREAD)
		return run_pread(reads, n);

	while (next < n || inflight) {
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;

		while (!err && next < n && io_uring_sq_space_left(&io->ring)) {
			if (!unfinished(&reads[next])) {
				next++;
				continue;
			}
			ret = queue_read(io, &reads[next]);
			if (ret < 0) {
				err = ret;
				break;
			}
			next++;
			inflight++;
		}
		if (!inflight)
			break;
		ret = io_uring_submit_and_wait(&io->ring, 1);
		io->submits++;
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
			/* The kernel may still own queued reads: wait for them. */
			if (!err)
				err = ret;
			ret = io_uring_wait_cqe(&io->ring, &cqe);
			if (ret < 0 && ret != -EINTR)
				return err;	/* ring unusable; nothing more to reap */
		}
		io_uring_for_each_cqe(&io->ring, head, cqe) {
			struct devtrace_read *r = io_uring_cqe_get_data(cqe);
			bool finished;

			seen++;
			ret = complete(io, r, cqe->res, &finished);
			if (ret < 0) {
				r->err = ret;
				finished = true;
				if (!err)
					err = ret;
			}
			if (finished)
				inflight--;
		}
		io_uring_cq_advance(&io->ring, seen);
		if (err)
			next = n;	/* stop queueing new reads; reap what runs */
	}
	for (size_t i = 0; err && i < n; i++)
		if (unfinished(&reads[i]))
			reads[i].err = err;
	return err;
}

int devtrace_io__run_then(struct devtrace_io *io, struct devtrace_read *reads, size_t n,
			  struct devtrace_read *then, size_t m)
{
	struct io_uring_cqe *cqe;
	size_t left = n + m;
	bool redo = false;
	int err = 0, ret;

	if (io->engine == DEVTRACE_IO_PREAD || !n || !m ||
	    io_uring_sq_space_left(&io->ring) < n + m)
		goto two_batches;
	/* One chain: every read starts after the one before completed. */
	for (size_t i = 0; i < n + m; i++) {
		struct devtrace_read *r = i < n ? &reads[i] : &then[i - n];

		ret = queue_read_flags(io, r, i + 1 < n + m ? IOSQE_IO_LINK : 0);
		if (ret < 0)
			return ret;	/* cannot happen: space checked above */
	}
	ret = io_uring_submit(&io->ring);
	io->submits++;
	if (ret < 0)
		return ret;	/* nothing was submitted */
	while (left) {
		struct devtrace_read *r;

		ret = io_uring_wait_cqe(&io->ring, &cqe);
		if (ret == -EINTR || ret == -EAGAIN)
			continue;
		if (ret < 0)
			return ret;
		r = io_uring_cqe_get_data(cqe);
		/* A short read ends the chain: what follows is cancelled and
		 * redone below, in order, without the link. */
		if (cqe->res == -ECANCELED || cqe->res == -EAGAIN || cqe->res == -EINTR)
			redo = true;
		else if (cqe->res < 0)
			r->err = cqe->res;
		else if (cqe->res == 0)
			r->err = -ENODATA;
		else
			r->done += cqe->res;
		if (unfinished(r))
			redo = true;
		io_uring_cqe_seen(&io->ring, cqe);
		left--;
	}
	if (!redo)
		return 0;
	for (size_t i = 0; i < m; i++)
		then[i].done = then[i].err = 0;	/* must follow the redone reads */
two_batches:
	err = devtrace_io__run(io, reads, n);
	if (err)
		return err;
	return devtrace_io__run(io, then, m);
}
