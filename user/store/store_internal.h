/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What store.c shares with its two backends, store_s3.c and store_gcs.c. */
#ifndef ACCELTRACE_STORE_INTERNAL_H
#define ACCELTRACE_STORE_INTERNAL_H

#include "store/store.h"
#include "store/store_http.h"

/* Pages of one listing at most (a thousand keys a page). */
#define STORE_MAX_LIST_PAGES 100000

/* Each takes an object's whole name in the bucket (prefix and key). */
struct store_ops {
	int (*exists)(struct store *s, const char *object);
	int (*put)(struct store *s, const char *object, int fd, uint64_t size);
	int (*get)(struct store *s, const char *object, int fd);
	int (*del)(struct store *s, const char *object);
	int (*list)(struct store *s, const char *prefix, store_list_fn fn, void *ctx);
	void (*free)(void *backend);
};

struct store {
	const struct store_ops *ops;
	void *backend;
	struct store_http_limits limits;
	char url[STORE_MAX_URL];	/* normalised */
	char bucket[256];
	char prefix[STORE_MAX_URL];	/* "" or "a/b", no '/' at either end */
};

/*
 * A credentials or config file read whole, NUL-ended: a regular file of
 * at most @max bytes, opened once. NULL with *err: -ENOENT, -EFBIG (too
 * big, or not a regular file), or the open's or read's -errno.
 */
char *store_read_small_file(const char *path, size_t max, int *err);

/* Each backend's open: fills s->ops and s->backend; -errno, logged. */
int store_s3_open(struct store *s);
int store_gcs_open(struct store *s);

/*
 * An upload's part size: ACCELTRACE_STORE_PART_MIB MiB (1..4096), else
 * 64 MiB. A file at most this size goes in one request.
 */
uint64_t store_part_bytes(void);

#endif /* ACCELTRACE_STORE_INTERNAL_H */
