// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A pread()-based devtrace consumer; the algorithm of docs/devtrace.md. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devtrace_reader.h"

#define BATCH 1024

struct devtrace_reader {
	int fd;
	struct devtrace_header hdr;
	__u64 next;			/* next sequence number to deliver */
	__u64 run_id;
	char (*names)[DEVTRACE_NAME_MAX + 1];
	__u64 names_read;
	struct devtrace_record *buf;
};

static int read_exact(int fd, void *p, size_t n, off_t off)
{
	while (n) {
		ssize_t r = pread(fd, p, n, off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p = (char *)p + r;
		n -= (size_t)r;
		off += r;
	}
	return 0;
}

static int read_header(struct devtrace_reader *r)
{
	int err = read_exact(r->fd, &r->hdr, sizeof(r->hdr), 0);

	if (err)
		return err;
	if (r->hdr.magic != DEVTRACE_MAGIC)
		return r->hdr.magic ? -EINVAL : -EAGAIN;
	if (r->hdr.version != DEVTRACE_VERSION ||
	    r->hdr.record_size != DEVTRACE_RECORD_SIZE ||
	    r->hdr.name_size != DEVTRACE_NAME_SIZE || !r->hdr.record_capacity)
		return -EINVAL;
	return 0;
}

struct devtrace_reader *devtrace_reader__open(const char *path)
{
	struct devtrace_reader *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = -errno;
		goto fail;
	}
	err = read_header(r);
	if (err)
		goto fail;
	r->buf = malloc(BATCH * sizeof(*r->buf));
	r->names = calloc(r->hdr.name_capacity + 1, sizeof(*r->names));
	if (!r->buf || !r->names) {
		err = -ENOMEM;
		goto fail;
	}
	r->run_id = r->hdr.run_id;
	r->next = 1;
	return r;
fail:
	devtrace_reader__free(r);
	errno = -err;
	return NULL;
}

void devtrace_reader__free(struct devtrace_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->buf);
	free(r->names);
	free(r);
}

const struct devtrace_header *devtrace_reader__header(const struct devtrace_reader *r)
{
	return &r->hdr;
}

static __u64 load_begin_seq(struct devtrace_reader *r, int *err)
{
	__u64 v = 0;

	*err = read_exact(r->fd, &v, sizeof(v),
			  __builtin_offsetof(struct devtrace_header, begin_seq));
	return v;
}

long devtrace_reader__poll(struct devtrace_reader *r, devtrace_record_fn fn,
			   void *ctx, __u64 *lost)
{
	__u64 cap, w1, b2, oldest, safe_min, s, n, i;
	long delivered = 0;
	int err;

	err = read_header(r);
	if (err)
		return err;
	if (r->hdr.run_id != r->run_id) {
		/* The writer re-created the buffer: start over. */
		r->run_id = r->hdr.run_id;
		r->next = 1;
		r->names_read = 0;
	}
	cap = r->hdr.record_capacity;
	w1 = r->hdr.write_seq;
	while (r->next <= w1) {
		oldest = w1 > cap ? w1 - cap + 1 : 1;
		if (r->next < oldest) {
			*lost += oldest - r->next;
			r->next = oldest;
		}
		n = w1 - r->next + 1;
		if (n > BATCH)
			n = BATCH;
		/* At most two reads: up to the end of the ring, then from slot 0. */
		for (i = 0; i < n;) {
			__u64 slot = (r->next + i - 1) % cap;
			__u64 k = cap - slot < n - i ? cap - slot : n - i;

			err = read_exact(r->fd, &r->buf[i], k * DEVTRACE_RECORD_SIZE,
					 (off_t)(r->hdr.records_offset +
						 slot * DEVTRACE_RECORD_SIZE));
			if (err)
				return err;
			i += k;
		}
		/* Slots the writer began to reuse while we copied may be torn:
		 * writing record b overwrites record b - capacity. */
		b2 = load_begin_seq(r, &err);
		if (err)
			return err;
		safe_min = b2 > cap ? b2 - cap + 1 : 1;
		for (i = 0; i < n; i++) {
			s = r->next + i;
			if (s < safe_min || r->buf[i].seq != s) {
				(*lost)++;
				continue;
			}
			err = fn(ctx, &r->buf[i]);
			if (err)
				return err;
			delivered++;
		}
		r->next += n;
	}
	return delivered;
}

const char *devtrace_reader__name(struct devtrace_reader *r, __u32 id)
{
	__u64 count = 0;
	struct devtrace_name e;

	if (id >= r->hdr.name_capacity)
		return NULL;
	if (id >= r->names_read) {
		if (read_exact(r->fd, &count, sizeof(count),
			       __builtin_offsetof(struct devtrace_header, name_count)))
			return NULL;
		if (count > r->hdr.name_capacity)
			count = r->hdr.name_capacity;
		for (; r->names_read < count; r->names_read++) {
			if (read_exact(r->fd, &e, sizeof(e),
				       (off_t)(r->hdr.names_offset +
					       r->names_read * DEVTRACE_NAME_SIZE)))
				return NULL;
			size_t len = e.len <= DEVTRACE_NAME_MAX ? e.len : DEVTRACE_NAME_MAX;

			memcpy(r->names[r->names_read], e.name, len);
			r->names[r->names_read][len] = 0;
		}
	}
	return id < r->names_read ? r->names[id] : NULL;
}
