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
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "devtrace"
#include "lib/clock.h"
#include "devtrace/devtrace_io.h"
#include "lib/log.h"

#define DEFAULT_STAGING (8u << 20)
#define DEFAULT_DEPTH 256
/* Reads of local files finish in microseconds, milliseconds when the
 * machine is loaded: a run still waiting after this is waiting on a file
 * system that does not answer. */
#define DEFAULT_TIMEOUT_MS 2000
/* How long cancelled reads are given to say so. */
#define CANCEL_GRACE_NS (50 * 1000000ull)

struct devtrace_io {
	enum devtrace_io_engine engine;
	struct io_uring ring;
	bool ring_ready;
	unsigned int depth;
	uint64_t timeout_ns;
	void *staging;
	size_t staging_bytes;
	uint64_t submits;
	uint64_t abandoned_rings;
	unsigned int submit_max;	/* tests: see submit_some() */
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
	/* Waits with a timeout need it (5.11): else a wait could last
	 * forever, and pread is as good. */
	if (!(io->ring.features & IORING_FEAT_EXT_ARG))
		return -EOPNOTSUPP;
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
	io->depth = depth;
	io->submit_max = opts ? opts->test_submit_max : 0;
	io->timeout_ns = (opts && opts->timeout_ms ? opts->timeout_ms : DEFAULT_TIMEOUT_MS) *
			 1000000ull;
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

uint64_t devtrace_io__abandoned_rings(const struct devtrace_io *io)
{
	return io->abandoned_rings;
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

/* ---------------------------------------------------------------- io_uring */

/* The cancel request's user_data: no read's. */
#define CANCEL_TAG ((void *)1)

/*
 * One run through the ring: @groups[0] first, @groups[1] only once every
 * read of the first has finished (its SQEs are prepared then, so nothing
 * is linked and the first group's reads run side by side). SQEs prepared,
 * submitted (the kernel took them: io_uring_submit may take fewer) and
 * completed are counted apart, so the run waits only for what the kernel
 * holds and submits again what it did not take.
 */
struct pass {
	struct devtrace_io *io;
	struct devtrace_read *group[2];
	size_t count[2];
	int stage;			/* the group being run */
	size_t next;			/* its next read never prepared */
	struct devtrace_read **resume;	/* reads to prepare again: short, retried */
	size_t nresume, cap_resume;
	size_t prepared, submitted, completed;
	uint64_t deadline_ns;
};


static bool prep_read(struct pass *p, struct devtrace_read *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&p->io->ring);
	char *dst = (char *)r->dst + r->done;
	unsigned int len = r->len - r->done;
	uint64_t off = r->off + r->done;

	if (!sqe)
		return false;
	if (p->io->engine == DEVTRACE_IO_URING_FIXED)
		io_uring_prep_read_fixed(sqe, r->fd, dst, len, off, 0);
	else
		io_uring_prep_read(sqe, r->fd, dst, len, off);
	io_uring_sqe_set_data(sqe, r);
	p->prepared++;
	return true;
}

/* Prepares what waits, as far as the SQ has room. */
static void fill(struct pass *p)
{
	while (p->nresume && prep_read(p, p->resume[p->nresume - 1]))
		p->nresume--;
	for (;;) {
		struct devtrace_read *g = p->group[p->stage];

		while (p->next < p->count[p->stage]) {
			if (!unfinished(&g[p->next])) {
				p->next++;
				continue;
			}
			if (!prep_read(p, &g[p->next]))
				return;
			p->next++;
		}
		/* The second group starts when the first is all done. */
		if (p->stage || !p->count[1] || p->nresume || p->completed < p->prepared)
			return;
		p->stage = 1;
		p->next = 0;
	}
}

static int want_again(struct pass *p, struct devtrace_read *r)
{
	if (p->nresume == p->cap_resume) {
		size_t cap = p->cap_resume ? 2 * p->cap_resume : 16;
		struct devtrace_read **v = realloc(p->resume, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->resume = v;
		p->cap_resume = cap;
	}
	p->resume[p->nresume++] = r;
	return 0;
}

/* One completion of @r: its bytes, or its outcome. */
static void complete(struct pass *p, struct devtrace_read *r, int res)
{
	if (res == -EAGAIN || res == -EINTR) {
		if (want_again(p, r))
			r->err = -ENOMEM;
	} else if (res < 0) {
		r->err = res;
	} else if (res == 0) {
		r->err = -ENODATA;	/* end of file: the buffer shrank */
	} else {
		r->done += res;
		/* A short read: the rest is asked for on its own. */
		if (r->done < r->len && want_again(p, r))
			r->err = -ENOMEM;
	}
}

static void reap(struct pass *p)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;

	io_uring_for_each_cqe(&p->io->ring, head, cqe) {
		void *data = io_uring_cqe_get_data(cqe);

		seen++;
		if (data != CANCEL_TAG)
			complete(p, data, cqe->res);
	}
	io_uring_cq_advance(&p->io->ring, seen);
	p->completed += seen;
}

/* Waits for a completion until the deadline: 0, -ETIME, or -errno. */
static int wait_one(struct pass *p, uint64_t deadline_ns)
{
	uint64_t now = mono_ns();
	struct __kernel_timespec ts = { 0 };
	struct io_uring_cqe *cqe;
	int ret;

	if (now >= deadline_ns)
		return -ETIME;
	ts.tv_sec = (deadline_ns - now) / 1000000000ull;
	ts.tv_nsec = (deadline_ns - now) % 1000000000ull;
	ret = io_uring_wait_cqe_timeout(&p->io->ring, &cqe, &ts);
	return ret == -EINTR ? 0 : ret;
}

/*
 * Tests: the kernel takes at most submit_max of the SQEs ready, as it does
 * when short of memory or refusing one while taking a batch; the rest stay
 * in the SQ for the next call.
 */
static int submit_some(struct devtrace_io *io)
{
	struct io_uring_sq *sq = &io->ring.sq;
	unsigned int ready;

	sq->sqe_head = sq->sqe_tail;
	io_uring_smp_store_release(sq->ktail, sq->sqe_tail);
	ready = sq->sqe_tail - io_uring_smp_load_acquire(sq->khead);
	return io_uring_enter(io->ring.ring_fd, ready < io->submit_max ? ready : io->submit_max,
			      0, 0, NULL);
}

/* Hands what is prepared to the kernel: 0, or -errno when it cannot. */
static int submit(struct pass *p)
{
	int ret;

	if (p->submitted == p->prepared)
		return 0;
	ret = p->io->submit_max ? submit_some(p->io) : io_uring_submit(&p->io->ring);
	p->io->submits++;
	if (ret > 0)
		p->submitted += ret;
	/* Busy (completions to reap first), interrupted, out of memory
	 * for a moment: what was not taken is taken at the next call. */
	if (ret >= 0 || ret == -EAGAIN || ret == -EBUSY || ret == -EINTR)
		return 0;
	return ret;
}

static int ring_setup(struct devtrace_io *io, unsigned int depth);

/*
 * The ring holds requests that neither finished nor were cancelled (a read
 * a file system never answers): they may still write into the staging
 * area and complete into this ring. Both are let go of: the ring is
 * closed (the kernel ends its requests as it can) and the staging area is
 * left mapped for them, never reused; a new ring and area replace them.
 */
static void replace_ring(struct devtrace_io *io)
{
	void *staging;

	io->abandoned_rings++;
	log_warn("devtrace reads neither finished nor cancelled: their ring and %zu bytes of "
		 "staging are let go of (%llu times so far)", io->staging_bytes,
		 (unsigned long long)io->abandoned_rings);
	io_uring_queue_exit(&io->ring);
	io->ring_ready = false;
	io->engine = DEVTRACE_IO_PREAD;
	staging = mmap(NULL, io->staging_bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (staging == MAP_FAILED)
		return;		/* pread, into the old area */
	io->staging = staging;
	if (ring_setup(io, io->depth) < 0) {
		if (io->ring_ready)
			io_uring_queue_exit(&io->ring);
		io->ring_ready = false;
		io->engine = DEVTRACE_IO_PREAD;
	}
}

/* @r was not handed to the kernel in this run: it did not time out, it
 * did not run (-EAGAIN: the caller tries again). */
static void not_run(struct devtrace_read *r)
{
	if (unfinished(r))
		r->err = -EAGAIN;
}

/*
 * The deadline passed with reads in flight: they are cancelled and given a
 * moment to say so; a read still held after that makes the ring unusable
 * (replace_ring). Every read left unfinished of those handed to the kernel
 * is -ETIMEDOUT (local reads take microseconds: those are the file's
 * fault); those never handed over are -EAGAIN.
 */
static void give_up(struct pass *p)
{
	struct io_uring_sqe *sqe;
	uint64_t grace = mono_ns() + CANCEL_GRACE_NS;

	for (size_t i = 0; i < p->nresume; i++)
		not_run(p->resume[i]);
	for (size_t i = p->next; i < p->count[p->stage]; i++)
		not_run(&p->group[p->stage][i]);
	for (size_t i = 0; !p->stage && i < p->count[1]; i++)
		not_run(&p->group[1][i]);
	p->nresume = 0;			/* nothing more is asked for */
	p->next = p->count[p->stage];
	/* One cancel per read handed over (a read and the rest of it share
	 * their user_data), as every kernel with io_uring can do. */
	for (size_t i = 0; i < p->next; i++) {
		struct devtrace_read *r = &p->group[p->stage][i];

		if (!unfinished(r))
			continue;
		sqe = io_uring_get_sqe(&p->io->ring);
		if (!sqe && submit(p) == 0)
			sqe = io_uring_get_sqe(&p->io->ring);
		if (!sqe)
			break;	/* what was not cancelled waits out the grace */
		io_uring_prep_cancel(sqe, r, 0);
		io_uring_sqe_set_data(sqe, CANCEL_TAG);
		p->prepared++;
	}
	while (p->completed < p->submitted || p->submitted < p->prepared) {
		if (submit(p) || (p->completed == p->submitted && p->submitted < p->prepared))
			break;		/* cannot even submit the cancel */
		if (wait_one(p, grace) == -ETIME)
			break;
		reap(p);
		p->nresume = 0;
	}
	if (p->completed < p->prepared)
		replace_ring(p->io);
	for (int g = 0; g < 2; g++) {
		for (size_t i = 0; i < p->count[g]; i++) {
			struct devtrace_read *r = &p->group[g][i];

			if (unfinished(r) || r->err == -ECANCELED)
				r->err = -ETIMEDOUT;
		}
	}
}

static int run_ring(struct devtrace_io *io, struct devtrace_read *first, size_t n,
		    struct devtrace_read *second, size_t m)
{
	struct pass p = {
		.io = io,
		.group = { first, second },
		.count = { n, m },
		.deadline_ns = mono_ns() + io->timeout_ns,
	};
	int err = 0, ret;

	for (;;) {
		fill(&p);
		if (p.prepared == p.completed && !p.nresume && p.stage == (m ? 1 : 0) &&
		    p.next >= p.count[p.stage])
			break;		/* every read finished */
		ret = submit(&p);
		if (ret) {
			err = ret;
			give_up(&p);	/* the ring refuses work: end what it holds */
			break;
		}
		if (p.submitted == p.completed) {
			/* Nothing in the kernel's hands: it took nothing. */
			if (mono_ns() >= p.deadline_ns) {
				give_up(&p);
				break;
			}
			usleep(1000);
			continue;
		}
		ret = wait_one(&p, p.deadline_ns);
		if (ret == -ETIME) {
			log_debug("devtrace reads still pending after %llu ms: given up",
				  (unsigned long long)(io->timeout_ns / 1000000));
			give_up(&p);
			break;
		}
		if (ret < 0) {
			err = ret;
			give_up(&p);
			break;
		}
		reap(&p);
	}
	free(p.resume);
	return err;
}

int devtrace_io__run(struct devtrace_io *io, struct devtrace_read *reads, size_t n)
{
	if (io->engine == DEVTRACE_IO_PREAD)
		return run_pread(reads, n);
	return run_ring(io, reads, n, NULL, 0);
}

int devtrace_io__run_then(struct devtrace_io *io, struct devtrace_read *reads, size_t n,
			  struct devtrace_read *then, size_t m)
{
	if (io->engine == DEVTRACE_IO_PREAD) {
		run_pread(reads, n);
		return run_pread(then, m);
	}
	return run_ring(io, reads, n, then, m);
}
