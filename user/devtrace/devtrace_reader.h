/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The devtrace reader: follows any number of devtrace buffers
 * (include/acceltrace/devtrace.h, docs/devtrace.md) through one io_uring
 * (devtrace_io.h) and delivers their records in seq order per buffer.
 *
 * Producer-neutral: it knows the file format only. Whoever found a buffer
 * (the simulator's trace directory, a driver's debugfs file, a GPU agent)
 * opens it and hands the fd over; buffers may be added at any time.
 *
 * Every seq is either delivered or counted lost: overwritten before it was
 * read (the ring wrapped past the reader, or while it copied, told by
 * begin_seq), or its slot did not hold it (torn or corrupted). Records with
 * the right seq but impossible contents are skipped and counted as bad.
 */
#ifndef ACCELTRACE_DEVTRACE_READER_H
#define ACCELTRACE_DEVTRACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "acceltrace/devtrace.h"
#include "devtrace/devtrace_io.h"

struct devtrace_reader;

enum devtrace_buffer_state {
	DEVTRACE_BUF_WAITING,	/* no magic yet: the writer is creating it */
	DEVTRACE_BUF_ACTIVE,
	DEVTRACE_BUF_FAILED,	/* header invalid, a read timed out, or reads
				 * kept failing: put aside; see error */
	DEVTRACE_BUF_REMOVED,	/* closed (devtrace_reader__remove) */
};

struct devtrace_buffer_stats {
	enum devtrace_buffer_state state;
	char error[96];		/* why FAILED, or the last read error */
	struct devtrace_header header;	/* the last valid header read */
	__u64 delivered;	/* records handed to on_record */
	__u64 before;		/* overwritten before the reader first read the
				 * buffer (history it never had, not a loss) */
	__u64 lost;		/* seqs never delivered: overwritten or torn */
	__u64 torn;		/* of lost: the slot held another seq */
	__u64 bad;		/* right seq, impossible contents: skipped */
	__u64 unknown;		/* kinds this reader does not know: skipped */
	__u64 empty;		/* kind 0, ignored as the format says */
	__u64 runs;		/* run_ids seen (a new one restarts reading) */
	__u64 read_errors;	/* failed reads (retried next poll, a buffer put
				 * aside after a timeout or 16 in a row) */
	__u64 names;		/* name entries read */
	bool closed;		/* the writer set DEVTRACE_F_CLOSED */
};

struct devtrace_reader_ops {
	/* A buffer's run began (first valid header, or a new run_id): its
	 * header holds the creation clock pair and the identity. */
	void (*on_run)(void *ctx, int buf, const struct devtrace_header *h);
	/* One record, in seq order per buffer. Nonzero stops the poll. */
	int (*on_record)(void *ctx, int buf, const struct devtrace_record *r);
	void *ctx;
};

struct devtrace_reader_opts {
	size_t sz;
	struct devtrace_io_opts io;
	/* Records copied per buffer in one batch at most; 0: share the
	 * staging area evenly. */
	size_t max_batch_records;
};

/* NULL and errno on failure. */
struct devtrace_reader *devtrace_reader__new(const struct devtrace_reader_opts *opts,
					     const struct devtrace_reader_ops *ops);
/* Closes every buffer's fd; accepts NULL. */
void devtrace_reader__free(struct devtrace_reader *r);
/* Adds an open buffer (the reader owns @fd from now on, also on failure);
 * @label names it in messages (its path). The buffer's index, or -errno. */
int devtrace_reader__add(struct devtrace_reader *r, int fd, const char *label);
/* Stops reading @buf and closes it. Its counts stay in the totals; its
 * index may be given to a buffer added later. */
void devtrace_reader__remove(struct devtrace_reader *r, int buf);
/* Whether @buf holds nothing published (as of its last header read) that
 * was not delivered or counted lost; true when it cannot be read on. */
bool devtrace_reader__caught_up(const struct devtrace_reader *r, int buf);
/* Buffer indexes in use are below this (removed ones among them). */
int devtrace_reader__count(const struct devtrace_reader *r);
const char *devtrace_reader__label(const struct devtrace_reader *r, int buf);
/* Reads what every buffer has that is new, batch after batch until caught
 * up (or @max_batches). The number of records delivered, or -errno when the
 * I/O itself failed. */
long devtrace_reader__poll(struct devtrace_reader *r, int max_batches);
void devtrace_reader__stats(const struct devtrace_reader *r, int buf,
			    struct devtrace_buffer_stats *out);
/* Sums over every buffer, removed ones too (state and header from none). */
void devtrace_reader__totals(const struct devtrace_reader *r, struct devtrace_buffer_stats *out);
/* Name @id of buffer @buf's current run, NUL-terminated, or NULL. */
const char *devtrace_reader__name(const struct devtrace_reader *r, int buf, __u32 id,
				  int *kind);
/*
 * Name @id of buffer @buf whole, with the MORE entries that continue it
 * (names longer than one entry, up to DEVTRACE_LONG_NAME_MAX), into @out
 * (NUL-terminated, cut to @cap - 1); its length, 0 when @id names nothing.
 */
size_t devtrace_reader__long_name(const struct devtrace_reader *r, int buf, __u32 id,
				  char *out, size_t cap);
enum devtrace_io_engine devtrace_reader__engine(const struct devtrace_reader *r);
uint64_t devtrace_reader__submits(const struct devtrace_reader *r);

#endif /* ACCELTRACE_DEVTRACE_READER_H */
