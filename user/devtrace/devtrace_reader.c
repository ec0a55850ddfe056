// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The devtrace reading algorithm (docs/devtrace.md, "Reading") over many
 * buffers at once. One poll:
 *
 *   1. read every buffer's header (one batch);
 *   2. plan: count what the ring overwrote before we came (lost), and copy
 *      seqs next..write_seq, at most a share of the staging area each;
 *   3. read the copies (one batch across all buffers), and
 *   4. the headers again, chained behind the copies (IOSQE_IO_LINK): their
 *      begin_seq tells which copies the writer may have been overwriting,
 *      and their name_count which names the copies may use (names are
 *      published before the records that use them);
 *   5. read new names, check and deliver the copies; the fresh headers
 *      plan the next batch (back to 3) until every buffer is caught up.
 *
 * A buffer is hostile input: its name table is at most
 * DEVTRACE_NAME_CAPACITY_MAX entries (devtrace_format.c), and a poll reads
 * at most NAMES_PER_POLL new entries of each buffer. A record whose name
 * is published but not read yet waits, with the rest of its buffer, for a
 * later poll: neither delivered nameless nor counted bad.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_CONTEXT "devtrace"
#include "devtrace/devtrace_format.h"
#include "devtrace/devtrace_reader.h"
#include "lib/array.h"
#include "lib/log.h"

#define HDR_SLOT 320		/* DEVTRACE_HEADER_READ, rounded to 64 */
#define NAMES_RESERVE (256u << 10)
#define BACKWARDS_LIMIT 4	/* ts going back this often: the earlier one lied */
#define NAMES_PER_POLL 4096	/* name entries read per buffer per poll (256 KiB) */
/* Reads failing this many times in a row put a buffer aside: a file that
 * fails each poll costs each poll, and says nothing new. */
#define READ_ERRORS_PUT_ASIDE 16

struct dt_name {
	__u16 kind;
	char text[DEVTRACE_NAME_MAX + 1];
};

struct dt_buffer {
	int fd;
	char *label;
	uint64_t file_size;
	struct devtrace_buffer_stats st;
	struct devtrace_header hdr;	/* valid when st.state == ACTIVE */
	uint64_t next;			/* next seq wanted */
	uint64_t last_ts;		/* ts of the last record delivered */
	unsigned int backwards;		/* records in a row with ts < last_ts */
	bool planned;			/* a copy was planned since it was added */
	struct dt_name *names;
	size_t names_cap;
	uint64_t names_have;
	uint64_t names_this_poll;	/* entries read in this poll */
	bool names_wait;		/* a record waits for a name not read yet */
	/* the batch in flight */
	uint64_t copy_lo, copy_n;	/* seqs copy_lo .. copy_lo + copy_n - 1 */
	struct devtrace_record *copy;	/* in staging */
	uint64_t copy_run;		/* st.runs when the copy was planned */
	bool copy_failed;
	unsigned int failing;		/* read errors since a header was read */
	struct devtrace_header *raw;	/* this buffer's header slot in staging */
};

struct devtrace_reader {
	struct devtrace_io *io;
	struct devtrace_reader_ops ops;
	size_t max_batch;
	struct dt_buffer *bufs;
	size_t nbufs, bufs_cap;
	struct devtrace_read *reads;
	size_t reads_cap;
	int *read_buf;			/* buffer index of each read */
	size_t read_buf_cap;
	long delivered;
	bool stop;
	struct devtrace_buffer_stats removed;	/* removed buffers' counts */
};

struct devtrace_reader *devtrace_reader__new(const struct devtrace_reader_opts *opts,
					     const struct devtrace_reader_ops *ops)
{
	struct devtrace_reader *r = calloc(1, sizeof(*r));
	struct devtrace_io_opts io_opts = {};

	if (!r)
		return NULL;
	if (opts)
		io_opts = opts->io;
	io_opts.sz = sizeof(io_opts);
	r->io = devtrace_io__new(&io_opts);
	if (!r->io) {
		int err = errno;

		free(r);
		errno = err;
		return NULL;
	}
	if (ops)
		r->ops = *ops;
	r->max_batch = opts ? opts->max_batch_records : 0;
	return r;
}

void devtrace_reader__free(struct devtrace_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nbufs; i++) {
		if (r->bufs[i].fd >= 0)
			close(r->bufs[i].fd);
		free(r->bufs[i].label);
		free(r->bufs[i].names);
	}
	free(r->bufs);
	free(r->reads);
	free(r->read_buf);
	devtrace_io__free(r->io);
	free(r);
}

/* A removed buffer's index, or a new one: -errno when none can be had. */
static int free_index(struct devtrace_reader *r)
{
	size_t hdr_bytes = (r->nbufs + 1) * HDR_SLOT;

	for (size_t i = 0; i < r->nbufs; i++)
		if (r->bufs[i].st.state == DEVTRACE_BUF_REMOVED)
			return (int)i;
	/* Every buffer needs its header slot, at least one record's room in
	 * the copy area and one name entry in the names reserve: past that,
	 * the shares planned per poll would overrun the staging area. */
	if (hdr_bytes + NAMES_RESERVE + (r->nbufs + 1) * DEVTRACE_RECORD_SIZE >
	    devtrace_io__staging_bytes(r->io) ||
	    r->nbufs + 1 > NAMES_RESERVE / DEVTRACE_NAME_SIZE)
		return -ENOSPC;	/* the staging area holds no more buffers */
	if (ARRAY_GROW(r->bufs, r->bufs_cap, r->nbufs + 1))
		return -ENOMEM;
	return (int)r->nbufs++;
}

int devtrace_reader__add(struct devtrace_reader *r, int fd, const char *label)
{
	char *copy = strdup(label ? label : "?");
	int i = copy ? free_index(r) : -ENOMEM;
	struct dt_buffer *b;

	if (i < 0) {
		free(copy);
		close(fd);
		return i;
	}
	b = &r->bufs[i];
	memset(b, 0, sizeof(*b));
	b->fd = fd;
	b->label = copy;
	b->st.state = DEVTRACE_BUF_WAITING;
	return i;
}

static void add_counts(struct devtrace_buffer_stats *to, const struct devtrace_buffer_stats *s)
{
	to->delivered += s->delivered;
	to->lost += s->lost;
	to->before += s->before;
	to->torn += s->torn;
	to->bad += s->bad;
	to->unknown += s->unknown;
	to->empty += s->empty;
	to->runs += s->runs;
	to->read_errors += s->read_errors;
	to->names += s->names;
}

void devtrace_reader__remove(struct devtrace_reader *r, int buf)
{
	struct dt_buffer *b;

	if (buf < 0 || (size_t)buf >= r->nbufs || r->bufs[buf].st.state == DEVTRACE_BUF_REMOVED)
		return;
	b = &r->bufs[buf];
	add_counts(&r->removed, &b->st);
	close(b->fd);
	free(b->label);
	free(b->names);
	memset(b, 0, sizeof(*b));
	b->fd = -1;
	b->st.state = DEVTRACE_BUF_REMOVED;
}

bool devtrace_reader__caught_up(const struct devtrace_reader *r, int buf)
{
	const struct dt_buffer *b;

	if (buf < 0 || (size_t)buf >= r->nbufs)
		return true;
	b = &r->bufs[buf];
	return b->st.state != DEVTRACE_BUF_ACTIVE || b->next > b->hdr.write_seq;
}

int devtrace_reader__count(const struct devtrace_reader *r)
{
	return (int)r->nbufs;
}

const char *devtrace_reader__label(const struct devtrace_reader *r, int buf)
{
	return buf >= 0 && (size_t)buf < r->nbufs ? r->bufs[buf].label : NULL;
}

enum devtrace_io_engine devtrace_reader__engine(const struct devtrace_reader *r)
{
	return devtrace_io__engine(r->io);
}

uint64_t devtrace_reader__submits(const struct devtrace_reader *r)
{
	return devtrace_io__submits(r->io);
}

static struct devtrace_read *add_read(struct devtrace_reader *r, size_t *n, int buf,
				      uint64_t off, void *dst, uint32_t len)
{
	if (ARRAY_GROW(r->reads, r->reads_cap, *n + 1) ||
	    ARRAY_GROW(r->read_buf, r->read_buf_cap, *n + 1))
		return NULL;
	r->reads[*n] = (struct devtrace_read){ .fd = r->bufs[buf].fd, .off = off,
					       .dst = dst, .len = len };
	r->read_buf[*n] = buf;
	return &r->reads[(*n)++];
}

static void fail_buffer(struct dt_buffer *b, const char *why)
{
	if (b->st.state != DEVTRACE_BUF_FAILED)
		log_warn("%s: %s; not read further", b->label, why);
	b->st.state = DEVTRACE_BUF_FAILED;
	snprintf(b->st.error, sizeof(b->st.error), "%s", why);
}

static void read_error(struct dt_buffer *b, int err)
{
	char why[96];

	b->st.read_errors++;
	snprintf(b->st.error, sizeof(b->st.error), "read: %s",
		 err == -ENODATA ? "file shorter than its header says" : strerror(-err));
	/* A read its file system never answered (devtrace_io's timeout), or
	 * reads failing poll after poll: put aside, the others read on. */
	if (err == -ETIMEDOUT) {
		fail_buffer(b, "a read timed out (a file system that does not answer?): put aside");
	} else if (++b->failing >= READ_ERRORS_PUT_ASIDE) {
		snprintf(why, sizeof(why), "%u failed reads in a row (%.40s): put aside",
			 b->failing, err == -ENODATA ? "file shorter than its header says" :
			 strerror(-err));
		fail_buffer(b, why);
	}
}

static void start_run(struct devtrace_reader *r, int i, const struct devtrace_header *h)
{
	struct dt_buffer *b = &r->bufs[i];

	b->hdr = *h;
	b->next = 1;
	b->last_ts = 0;
	b->backwards = 0;
	b->names_have = 0;
	b->st.runs++;
	b->st.state = DEVTRACE_BUF_ACTIVE;
	b->st.error[0] = '\0';
	if (r->ops.on_run)
		r->ops.on_run(r->ops.ctx, i, h);
}

/* A run ends: its records published and not read yet are gone with it,
 * and counted (what it wrote after our last look is unknowable). */
static void lose_unread(struct dt_buffer *b)
{
	if (b->hdr.write_seq >= b->next)
		b->st.lost += b->hdr.write_seq - b->next + 1;
	b->next = b->hdr.write_seq + 1;
}

/* Takes a freshly read header. False when the buffer cannot be read on. */
static bool take_header(struct devtrace_reader *r, int i)
{
	struct dt_buffer *b = &r->bufs[i];
	struct devtrace_header h;
	const char *why;
	struct stat s;

	memcpy(&h, b->raw, DEVTRACE_HEADER_READ);
	if (!h.magic) {
		/* Being (re)created: the next valid header starts a run. */
		if (b->st.state == DEVTRACE_BUF_ACTIVE) {
			lose_unread(b);
			b->st.state = DEVTRACE_BUF_WAITING;
		}
		return false;
	}
	if (b->st.state != DEVTRACE_BUF_ACTIVE || h.run_id != b->hdr.run_id) {
		if (b->st.state == DEVTRACE_BUF_ACTIVE)
			lose_unread(b);
		/* A new run may have a new size: fstat only then. */
		if (fstat(b->fd, &s)) {
			read_error(b, -errno);
			return false;
		}
		b->file_size = s.st_size;
		why = devtrace_header_problem(&h, b->file_size);
		if (why) {
			fail_buffer(b, why);
			return false;
		}
		start_run(r, i, &h);
	}
	/* Only the moving fields change within a run. */
	b->hdr.write_seq = h.write_seq;
	b->hdr.begin_seq = h.begin_seq;
	b->hdr.flags = h.flags;
	b->hdr.names_dropped = h.names_dropped;
	b->hdr.name_count = h.name_count < b->hdr.name_capacity ? h.name_count
								  : b->hdr.name_capacity;
	b->st.closed = h.flags & DEVTRACE_F_CLOSED;
	return true;
}

/* Queues header reads of the @want[] buffers after reads[*n]. */
static int queue_headers(struct devtrace_reader *r, const bool *want, size_t *n)
{
	char *staging = devtrace_io__staging(r->io);

	for (size_t i = 0; i < r->nbufs; i++) {
		struct dt_buffer *b = &r->bufs[i];

		if (!want[i] || b->st.state == DEVTRACE_BUF_FAILED ||
		    b->st.state == DEVTRACE_BUF_REMOVED)
			continue;
		b->raw = (struct devtrace_header *)(staging + i * HDR_SLOT);
		if (!add_read(r, n, i, 0, b->raw, DEVTRACE_HEADER_READ))
			return -ENOMEM;
	}
	return 0;
}

/* Takes the header reads reads[from..to); each buffer's verdict in ok[]. */
static void take_headers(struct devtrace_reader *r, size_t from, size_t to, bool *ok)
{
	for (size_t i = 0; i < r->nbufs; i++)
		ok[i] = false;
	for (size_t k = from; k < to; k++) {
		int i = r->read_buf[k];

		if (r->reads[k].err) {
			read_error(&r->bufs[i], r->reads[k].err);
		} else {
			r->bufs[i].failing = 0;
			ok[i] = take_header(r, i);
		}
	}
}

/* Plans this batch's copies; the number of reads, or -errno. */
static long plan(struct devtrace_reader *r, const bool *ok, size_t *nreads)
{
	char *staging = devtrace_io__staging(r->io);
	size_t area = devtrace_io__staging_bytes(r->io) - NAMES_RESERVE - r->nbufs * HDR_SLOT;
	char *base = staging + r->nbufs * HDR_SLOT;
	size_t active = 0, share, used = 0;

	*nreads = 0;
	for (size_t i = 0; i < r->nbufs; i++)
		active += ok[i];
	if (!active)
		return 0;
	share = area / active / DEVTRACE_RECORD_SIZE;
	if (r->max_batch && share > r->max_batch)
		share = r->max_batch;
	if (!share)
		share = 1;
	for (size_t i = 0; i < r->nbufs; i++) {
		struct dt_buffer *b = &r->bufs[i];
		uint64_t w = b->hdr.write_seq, cap = b->hdr.record_capacity, oldest, n, slot, first;

		b->copy_n = 0;
		b->copy_failed = false;
		if (!ok[i] || w < b->next)
			continue;
		oldest = w > cap ? w - cap + 1 : 1;
		if (b->next < oldest) {
			/* What the ring had dropped when first read is history
			 * this reader never had; later gaps are losses. */
			if (!b->planned && b->st.runs == 1)
				b->st.before += oldest - b->next;
			else
				b->st.lost += oldest - b->next;
			b->next = oldest;
		}
		b->planned = true;
		n = w - b->next + 1;
		if (n > share)
			n = share;
		b->copy_lo = b->next;
		b->copy_n = n;
		b->copy = (struct devtrace_record *)(base + used);
		used += n * DEVTRACE_RECORD_SIZE;
		/* At most two contiguous reads: to the ring's end, then from 0. */
		slot = (b->copy_lo - 1) % cap;
		first = cap - slot < n ? cap - slot : n;
		if (!add_read(r, nreads, i, b->hdr.records_offset + slot * DEVTRACE_RECORD_SIZE,
			      b->copy, first * DEVTRACE_RECORD_SIZE))
			return -ENOMEM;
		b->copy_run = b->st.runs;
		if (first < n && !add_read(r, nreads, i, b->hdr.records_offset, b->copy + first,
					   (n - first) * DEVTRACE_RECORD_SIZE))
			return -ENOMEM;
	}
	return (long)*nreads;
}

/* Room for @need names: doubling, but never past the table's capacity
 * (itself capped), so a buffer's names cost at most that. */
static int grow_names(struct dt_buffer *b, uint64_t need)
{
	uint64_t cap = b->names_cap * 2;
	struct dt_name *n;

	if (need <= b->names_cap)
		return 0;
	if (cap > b->hdr.name_capacity)
		cap = b->hdr.name_capacity;
	if (cap < need)
		cap = need;
	n = realloc(b->names, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	b->names = n;
	b->names_cap = cap;
	return 0;
}

/* Reads the names published since the last batch, in chunks that fit,
 * NAMES_PER_POLL of a buffer at most in one poll. */
static int read_names(struct devtrace_reader *r)
{
	char *area = (char *)devtrace_io__staging(r->io) +
		     devtrace_io__staging_bytes(r->io) - NAMES_RESERVE;
	size_t per_buf = NAMES_RESERVE / (r->nbufs ? r->nbufs : 1) / DEVTRACE_NAME_SIZE;
	bool more = true;
	int err = 0;

	if (!per_buf)
		per_buf = 1;
	while (more && !err) {
		size_t n = 0;

		more = false;
		for (size_t i = 0; i < r->nbufs; i++) {
			struct dt_buffer *b = &r->bufs[i];
			uint64_t want;

			if (b->st.state != DEVTRACE_BUF_ACTIVE || b->hdr.name_count <= b->names_have ||
			    b->names_this_poll >= NAMES_PER_POLL)
				continue;
			want = b->hdr.name_count - b->names_have;
			if (want > per_buf)
				want = per_buf;
			if (want > NAMES_PER_POLL - b->names_this_poll)
				want = NAMES_PER_POLL - b->names_this_poll;
			if (grow_names(b, b->names_have + want))
				return -ENOMEM;
			if (!add_read(r, &n, i, b->hdr.names_offset +
					b->names_have * DEVTRACE_NAME_SIZE,
				      area + i * per_buf * DEVTRACE_NAME_SIZE,
				      want * DEVTRACE_NAME_SIZE))
				return -ENOMEM;
		}
		if (!n)
			break;
		err = devtrace_io__run(r->io, r->reads, n);
		for (size_t k = 0; k < n; k++) {
			struct dt_buffer *b = &r->bufs[r->read_buf[k]];
			const struct devtrace_name *e = r->reads[k].dst;
			uint64_t got = r->reads[k].len / DEVTRACE_NAME_SIZE;

			if (r->reads[k].err) {
				read_error(b, r->reads[k].err);
				continue;
			}
			for (uint64_t j = 0; j < got; j++, e++) {
				struct dt_name *nm = &b->names[b->names_have + j];
				unsigned int len = e->len < DEVTRACE_NAME_MAX ? e->len
									 : DEVTRACE_NAME_MAX;

				nm->kind = e->kind;
				memcpy(nm->text, e->name, len);
				nm->text[len] = '\0';
			}
			b->names_have += got;
			b->names_this_poll += got;
			b->st.names = b->names_have;
			more |= b->names_have < b->hdr.name_count &&
				b->names_this_poll < NAMES_PER_POLL;
		}
	}
	return err;
}

static void deliver(struct devtrace_reader *r, int i)
{
	struct dt_buffer *b = &r->bufs[i];
	uint64_t cap = b->hdr.record_capacity, begin = b->hdr.begin_seq;
	/* Seqs at or below this may have been overwritten during the copy. */
	uint64_t unsafe = begin > cap ? begin - cap : 0;

	for (uint64_t k = 0; k < b->copy_n; k++) {
		const struct devtrace_record *rec = &b->copy[k];
		uint64_t seq = b->copy_lo + k;

		if (r->stop) {
			b->next = seq;	/* the rest next poll */
			return;
		}
		b->next = seq + 1;
		if (seq <= unsafe) {
			b->st.lost++;
			continue;
		}
		if (rec->seq != seq) {
			b->st.lost++;
			b->st.torn++;
			continue;
		}
		if (devtrace_kind_has_name(rec->kind) && rec->name_id != DEVTRACE_NO_NAME &&
		    rec->name_id >= b->names_have && rec->name_id < b->hdr.name_count) {
			/* Published, not read yet (the poll's name budget is
			 * spent): it and the rest wait for the next poll. */
			b->next = seq;
			b->names_wait = true;
			return;
		}
		switch (devtrace_record_check(rec, b->names_have)) {
		case DEVTRACE_REC_EMPTY:
			b->st.empty++;
			continue;
		case DEVTRACE_REC_UNKNOWN:
			b->st.unknown++;
			continue;
		case DEVTRACE_REC_BAD:
			b->st.bad++;
			continue;
		case DEVTRACE_REC_OK:
			break;
		}
		/* Span kinds are written as they complete, outside the ts
		 * order the rest keeps: delivered as they come. */
		if (DEVTRACE_KIND_IS_SPAN(rec->kind))
			goto deliver;
		if (k + 1 < b->copy_n && b->copy[k + 1].seq == seq + 1 &&
		    !DEVTRACE_KIND_IS_SPAN(b->copy[k + 1].kind) &&
		    b->copy[k + 1].ts < rec->ts && b->copy[k + 1].ts >= b->last_ts) {
			/* Its successor fits between it and its predecessor:
			 * this record's ts is the one that lies. */
			b->st.bad++;
			continue;
		}
		if (rec->ts < b->last_ts && ++b->backwards < BACKWARDS_LIMIT) {
			/* Time never goes back within a file: one of the two is
			 * corrupt. A run of later records agreeing says the
			 * earlier was; until then this one is skipped. */
			b->st.bad++;
			continue;
		}
		b->backwards = 0;
		b->last_ts = rec->ts;
deliver:
		b->st.delivered++;
		r->delivered++;
		if (r->ops.on_record && r->ops.on_record(r->ops.ctx, i, rec))
			r->stop = true;
	}
}

long devtrace_reader__poll(struct devtrace_reader *r, int max_batches)
{
	bool *want = NULL, *ok = NULL;
	size_t nreads, total;
	long planned;
	int err = 0;

	if (!r->nbufs)
		return 0;
	want = calloc(r->nbufs, sizeof(*want));
	ok = calloc(r->nbufs, sizeof(*ok));
	if (!want || !ok) {
		err = -ENOMEM;
		goto out;
	}
	r->delivered = 0;
	r->stop = false;
	for (size_t i = 0; i < r->nbufs; i++) {
		want[i] = true;
		r->bufs[i].names_this_poll = 0;
		r->bufs[i].names_wait = false;
	}
	nreads = 0;
	err = queue_headers(r, want, &nreads);
	if (!err)
		err = devtrace_io__run(r->io, r->reads, nreads);
	if (err)
		goto out;
	take_headers(r, 0, nreads, ok);
	err = read_names(r);
	for (int batch = 0; !err && !r->stop && (max_batches <= 0 || batch < max_batches);
	     batch++) {
		planned = plan(r, ok, &nreads);
		if (planned <= 0) {
			err = planned;
			break;
		}
		/* The second header read: begin_seq only counts after the
		 * copy, so it is chained behind the record reads. */
		for (size_t i = 0; i < r->nbufs; i++)
			want[i] = r->bufs[i].copy_n;
		total = nreads;
		err = queue_headers(r, want, &total);
		if (!err)
			err = devtrace_io__run_then(r->io, r->reads, nreads, r->reads + nreads,
						    total - nreads);
		for (size_t k = 0; k < nreads; k++) {
			struct dt_buffer *b = &r->bufs[r->read_buf[k]];

			if (r->reads[k].err) {
				read_error(b, r->reads[k].err);
				b->copy_failed = true;
			}
		}
		if (err)
			break;
		take_headers(r, nreads, total, ok);
		err = read_names(r);
		for (size_t i = 0; i < r->nbufs; i++) {
			struct dt_buffer *b = &r->bufs[i];

			if (!want[i])
				continue;
			/* Header unreadable or being recreated: the copy is
			 * retried next poll. A new run since the copy: it
			 * belonged to the old one and cannot be trusted. */
			if (b->copy_failed || !ok[i] || b->st.runs != b->copy_run)
				continue;
			deliver(r, i);
		}
		/* Buffers not in this batch were caught up: not planned again. */
		for (size_t i = 0; i < r->nbufs; i++)
			if (!want[i])
				ok[i] = false;
		/* Failed reads wait for the next poll. */
		for (size_t i = 0; i < r->nbufs; i++)
			if (r->bufs[i].st.state == DEVTRACE_BUF_ACTIVE && want[i] && ok[i])
				ok[i] = !r->bufs[i].copy_failed && !r->bufs[i].names_wait &&
					r->bufs[i].next <= r->bufs[i].hdr.write_seq;
	}
out:
	free(want);
	free(ok);
	return err < 0 ? err : r->delivered;
}

void devtrace_reader__stats(const struct devtrace_reader *r, int buf,
			    struct devtrace_buffer_stats *out)
{
	const struct dt_buffer *b = &r->bufs[buf];

	*out = b->st;
	out->header = b->hdr;
}

void devtrace_reader__totals(const struct devtrace_reader *r, struct devtrace_buffer_stats *out)
{
	memset(out, 0, sizeof(*out));
	add_counts(out, &r->removed);
	for (size_t i = 0; i < r->nbufs; i++)
		add_counts(out, &r->bufs[i].st);
}

const char *devtrace_reader__name(const struct devtrace_reader *r, int buf, __u32 id,
				  int *kind)
{
	const struct dt_buffer *b;

	if (buf < 0 || (size_t)buf >= r->nbufs)
		return NULL;
	b = &r->bufs[buf];
	if (id == DEVTRACE_NO_NAME || id >= b->names_have)
		return NULL;
	if (kind)
		*kind = b->names[id].kind;
	return b->names[id].text;
}

size_t devtrace_reader__long_name(const struct devtrace_reader *r, int buf, __u32 id,
				  char *out, size_t cap)
{
	const struct dt_buffer *b;
	size_t n = 0;

	if (!cap)
		return 0;
	out[0] = '\0';
	if (!devtrace_reader__name(r, buf, id, NULL))
		return 0;
	b = &r->bufs[buf];
	/*
	 * The entry, then the MORE entries after it (docs/devtrace.md): a
	 * writer fills every piece but the last, so a short piece ends the
	 * name, and no name has more pieces than the longest allowed needs
	 * (a hostile buffer's empty MORE entries cost no more than that).
	 */
	for (uint64_t i = id; i < b->names_have && i - id <= DEVTRACE_LONG_NAME_MAX /
		     DEVTRACE_NAME_MAX && n + 1 < cap; i++) {
		const struct dt_name *nm = &b->names[i];
		size_t len;

		if (i > id && nm->kind != DEVTRACE_NAME_MORE)
			break;
		if (i == id && nm->kind == DEVTRACE_NAME_MORE)
			break;	/* an id in the middle of a name: not a name */
		len = strlen(nm->text);
		if (len > cap - 1 - n)
			len = cap - 1 - n;
		memcpy(out + n, nm->text, len);
		n += len;
		if (strlen(nm->text) < DEVTRACE_NAME_MAX)
			break;
	}
	out[n] = '\0';
	return n;
}
