// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A bucket prefix as a logdir (store.h): the URL, the calls every backend
 * shares (keys joined to the prefix, files opened once), and the spool.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store_internal.h"

#define LOG_CONTEXT "store"
#include "lib/log.h"

static const char *scheme_of(const char *s)
{
	if (!s)
		return NULL;
	if (!strncmp(s, "s3://", 5))
		return "s3://";
	if (!strncmp(s, "gs://", 5))
		return "gs://";
	return NULL;
}

bool store_is_url(const char *s)
{
	return scheme_of(s) != NULL;
}

/* The names both clouds take: 3 to 222 of [a-z0-9._-], a letter or digit
 * at each end. */
static bool bucket_ok(const char *b, size_t n)
{
	if (n < 3 || n > 222)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = b[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '-' || c == '_'))
			return false;
	}
	return b[0] != '.' && b[0] != '-' && b[n - 1] != '.' && b[n - 1] != '-';
}

int store_url_normalise(const char *in, char *out, size_t len)
{
	const char *scheme = scheme_of(in), *p;
	size_t o;
	bool first = true;

	if (!scheme)
		return -EINVAL;
	if (len < 6)
		return -ENAMETOOLONG;
	memcpy(out, scheme, 5);
	o = 5;
	for (p = in + 5; *p;) {
		const char *c;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		c = p;
		while (*p && *p != '/')
			p++;
		n = p - c;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)c[i] < 0x20 || c[i] == 0x7f)
				return -EINVAL;
		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return -EINVAL;
		if (first && !bucket_ok(c, n))
			return -EINVAL;
		if (o + !first + n + 1 > len)
			return -ENAMETOOLONG;
		if (!first)
			out[o++] = '/';
		memcpy(out + o, c, n);
		o += n;
		first = false;
	}
	if (first)
		return -EINVAL;	/* no bucket */
	out[o] = '\0';
	return 0;
}

struct store *store__open(const char *url)
{
	struct store *s = calloc(1, sizeof(*s));
	const char *slash;
	int err;

	if (!s)
		return NULL;
	err = store_url_normalise(url, s->url, sizeof(s->url));
	if (err) {
		log_err("%.256s: %s", url, err == -ENAMETOOLONG ? "the URL is too long" :
			"no bucket URL (s3://BUCKET/PREFIX or gs://BUCKET/PREFIX: a bucket of "
			"3 to 222 lowercase letters, digits, '.', '-', '_', and no \".\" or "
			"\"..\" in the prefix)");
		goto fail;
	}
	slash = strchr(s->url + 5, '/');
	snprintf(s->bucket, sizeof(s->bucket), "%.*s",
		 (int)(slash ? (size_t)(slash - s->url - 5) : strlen(s->url + 5)), s->url + 5);
	snprintf(s->prefix, sizeof(s->prefix), "%s", slash ? slash + 1 : "");
	store_http_limits_default(&s->limits);
	err = !strncmp(s->url, "s3://", 5) ? store_s3_open(s) : store_gcs_open(s);
	if (err)
		goto fail;
	return s;
fail:
	free(s);
	errno = -err;
	return NULL;
}

void store__free(struct store *s)
{
	if (!s)
		return;
	if (s->ops && s->ops->free)
		s->ops->free(s->backend);
	free(s);
}

const char *store__url(const struct store *s)
{
	return s->url;
}

/* The object's whole name: the prefix, then @key; -ENAMETOOLONG. */
static int object_name(const struct store *s, const char *key, char *out, size_t len)
{
	int n;

	while (*key == '/')
		key++;
	n = s->prefix[0] ? snprintf(out, len, "%s/%s", s->prefix, key) :
			   snprintf(out, len, "%s", key);
	if (n < 0 || (size_t)n >= len || n > STORE_MAX_KEY) {
		log_err("%s/%s: the object name is too long", s->url, key);
		return -ENAMETOOLONG;
	}
	return 0;
}

int store__exists(struct store *s, const char *key)
{
	char obj[STORE_MAX_KEY + 1];
	int err = object_name(s, key, obj, sizeof(obj));

	return err ? err : s->ops->exists(s, obj);
}

/* @path to @key; with @look, not when an object is there (-EEXIST). */
static int put_file(struct store *s, const char *key, const char *path, bool look)
{
	char obj[STORE_MAX_KEY + 1];
	struct stat st;
	int fd, err = object_name(s, key, obj, sizeof(obj));

	if (err)
		return err;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		log_err("cannot read %s to upload it: %s", path, strerror(-err));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		log_err("cannot upload %s: not a regular file", path);
		goto out;
	}
	/* An object in place already is left as it is: the caller picks
	 * another name. The condition on the write covers a race; this look
	 * covers stores that ignore the condition. */
	err = look ? s->ops->exists(s, obj) : 0;
	/* A role allowed to write but not to read (S3 without ListBucket
	 * answers 403 for a missing key; GCS's objectCreator) cannot look:
	 * the conditional write decides alone. */
	if (err == -EACCES) {
		log_debug("%s/%s: cannot look before writing; the write's condition decides",
			  s->url, key);
		err = 0;
	}
	if (err > 0)
		err = -EEXIST;
	else if (!err)
		err = s->ops->put(s, obj, fd, st.st_size);
out:
	if (fd >= 0)
		close(fd);
	return err;
}

/* The deadline of one call, over all its requests (store_http.h). */
static void call_starts(struct store *s)
{
	s->limits.until = store_http_now() + s->limits.deadline_s;
}

int store__put_file(struct store *s, const char *key, const char *path)
{
	call_starts(s);
	return put_file(s, key, path, true);
}

int store__get_file(struct store *s, const char *key, const char *path)
{
	char obj[STORE_MAX_KEY + 1];
	int fd, err = object_name(s, key, obj, sizeof(obj));

	if (err)
		return err;
	call_starts(s);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0) {
		err = -errno;
		log_err("cannot create %s: %s", path, strerror(-err));
		return err;
	}
	err = s->ops->get(s, obj, fd);
	if (!err && fsync(fd)) {
		err = -errno;
		log_err("cannot write %s: %s", path, strerror(-err));
	}
	close(fd);
	if (err)
		unlink(path);
	return err;
}

int store__delete(struct store *s, const char *key)
{
	char obj[STORE_MAX_KEY + 1];
	int err = object_name(s, key, obj, sizeof(obj));

	return err ? err : s->ops->del(s, obj);
}

struct list_relay {
	const char *prefix;
	size_t strip;		/* the prefix and its '/' */
	store_list_fn fn;
	void *ctx;
};

static int relay_key(const char *object, uint64_t size, void *ctx)
{
	struct list_relay *r = ctx;

	/* A server's name outside the prefix asked for is not ours to read. */
	if (r->strip && (strncmp(object, r->prefix, r->strip - 1) || object[r->strip - 1] != '/'))
		return 0;
	return r->fn(object + r->strip, size, r->ctx);
}

int store__list(struct store *s, const char *key_prefix, store_list_fn fn, void *ctx)
{
	struct list_relay r = { .strip = s->prefix[0] ? strlen(s->prefix) + 1 : 0,
				.fn = fn, .ctx = ctx };
	char obj[STORE_MAX_KEY + 1];
	int err = object_name(s, key_prefix, obj, sizeof(obj));

	call_starts(s);
	r.prefix = s->prefix;
	return err ? err : s->ops->list(s, obj, relay_key, &r);
}

int store__check(struct store *s, const char *key_prefix)
{
	char key[STORE_MAX_KEY], body[] = "acceltrace checks it can write captures here\n";
	char tmp[] = "/tmp/acceltrace-store-check-XXXXXX";
	struct timespec ts;
	int fd, err;

	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(key, sizeof(key), "%s%s.acceltrace-write-check-%d-%ld%09ld", key_prefix,
		 key_prefix[0] ? "/" : "", (int)getpid(), (long)ts.tv_sec, ts.tv_nsec);
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	err = write(fd, body, sizeof(body) - 1) == (ssize_t)(sizeof(body) - 1) ? 0 : -EIO;
	close(fd);
	/* Written without a look first: a HEAD's refusal has no body to
	 * say why, a PUT's does (InvalidAccessKeyId, ExpiredToken, ...). */
	call_starts(s);
	if (!err)
		err = put_file(s, key, tmp, false);
	unlink(tmp);
	if (err == -EEXIST)
		return 0;	/* another checker's: the write was allowed */
	if (err)
		return err;
	/* A role that may write but not delete can still take captures. */
	if (store__delete(s, key) == -EACCES)
		log_warn("%s: the check object %s stays: this credential may write but not "
			 "delete (captures need only the write)", s->url, key);
	return 0;
}

const char *store_spool_dir(void)
{
	const char *d = getenv("ACCELTRACE_SPOOL_DIR");

	return d && d[0] == '/' ? d : "/var/tmp/acceltrace-spool";
}

uint64_t store_part_bytes(void)
{
	const char *v = getenv("ACCELTRACE_STORE_PART_MIB");
	unsigned long mib = v ? strtoul(v, NULL, 10) : 0;

	return (mib >= 1 && mib <= 4096 ? mib : 64) << 20;
}

char *store_read_small_file(const char *path, size_t max, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	char *buf = NULL;
	struct stat st;
	ssize_t n;

	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		*err = -EFBIG;
		goto out;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		*err = -ENOMEM;
		goto out;
	}
	n = read(fd, buf, st.st_size);
	if (n < 0) {
		*err = -errno;
		free(buf);
		buf = NULL;
		goto out;
	}
	buf[n] = '\0';
out:
	close(fd);
	return buf;
}
