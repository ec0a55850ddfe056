/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A bucket prefix as a logdir: s3://BUCKET/PREFIX (S3 and S3-compatible
 * stores) and gs://BUCKET/PREFIX (Google Cloud Storage's JSON API), through
 * libcurl. Keys are relative to the prefix ("plugins/profile/S/H.xplane.pb").
 *
 * Every call is bounded in time (a stalled transfer is dropped, retried
 * with backoff, and given up at a deadline), says its failure in words,
 * and never writes a credential into a message. Uploads are whole or not
 * at all (S3 multipart, GCS resumable above a part's size) and never
 * replace an object: S3's If-None-Match: * and GCS's ifGenerationMatch=0,
 * with a look first for stores that ignore the condition.
 */
#ifndef ACCELTRACE_STORE_H
#define ACCELTRACE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_MAX_URL 1024
#define STORE_MAX_KEY 1024

/* True when @s names a bucket: it starts with "s3://" or "gs://". */
bool store_is_url(const char *s);

/*
 * Normalises a bucket URL into @out: the scheme, the bucket, and the
 * prefix's components joined by single '/', no trailing '/'. -EINVAL for
 * no bucket, a bucket name the clouds refuse, a "." or ".." component or
 * a control byte; -ENAMETOOLONG when it does not fit.
 */
int store_url_normalise(const char *in, char *out, size_t len);

struct store;

/*
 * The store for @url, its credentials found (S3: AWS_* variables, the
 * shared credentials file, instance credentials; GCS: a service account's
 * key file in GOOGLE_APPLICATION_CREDENTIALS, else the metadata server).
 * NULL and errno, the reason logged. Nothing is sent yet but what finding
 * instance credentials needs.
 */
struct store *store__open(const char *url);
void store__free(struct store *s);
/* The URL, normalised. */
const char *store__url(const struct store *s);

/*
 * Checks before any capture is taken that captures can land: writes and
 * removes a small object under @key_prefix. 0, or -errno with the reason
 * logged (a refused or expired credential, no such bucket, no permission).
 */
int store__check(struct store *s, const char *key_prefix);
/* 1 when @key exists, 0 when not, -errno (logged) when it cannot be told. */
int store__exists(struct store *s, const char *key);
/*
 * The file @path uploaded whole to @key. -EEXIST (not logged) when an
 * object is there already: it is never replaced. Other failures -errno,
 * logged.
 */
int store__put_file(struct store *s, const char *key, const char *path);
/* @key downloaded into @path (created or truncated); 0 or -errno, logged. */
int store__get_file(struct store *s, const char *key, const char *path);
/* Removes @key; 0 or -errno, logged. */
int store__delete(struct store *s, const char *key);

/* Calls @fn for every key under @key_prefix (relative to the URL's
 * prefix), in the store's order (lexicographic). Stops at @fn's first
 * nonzero return, which it returns; -errno, logged. */
typedef int (*store_list_fn)(const char *key, uint64_t size, void *ctx);
int store__list(struct store *s, const char *key_prefix, store_list_fn fn, void *ctx);

/*
 * Where a capture for a bucket is written first, and kept when it cannot
 * be uploaded: ACCELTRACE_SPOOL_DIR, else /var/tmp/acceltrace-spool.
 */
const char *store_spool_dir(void);

#endif /* ACCELTRACE_STORE_H */
