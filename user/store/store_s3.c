// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * S3 and S3-compatible stores: requests signed with SigV4 by libcurl,
 * every body's SHA-256 sent for the server to check, writes conditional
 * on no object being there (If-None-Match: *), files above a part's size
 * sent as a multipart upload that is completed whole or aborted. The
 * endpoint is AWS's for the region (virtual-hosted), or
 * AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL (path-style) for other stores.
 * Query strings are written in SigV4's canonical order, so that the
 * signature holds whatever libcurl's version does with them.
 */
#include <curl/curl.h>
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/s3_credentials.h"
#include "store/store_answers.h"
#include "store/store_internal.h"

#define LOG_CONTEXT "store"
#include "lib/log.h"

struct s3 {
	struct s3_credentials cred;
	char endpoint[512];	/* scheme://host[:port], no '/' at the end */
	bool path_style;
	char sigv4[128];	/* "aws:amz:REGION:s3" */
	char userpwd[300];
};

static const char EMPTY_SHA256[] =
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/* ---------------------------------------------------------------- hashing */

static void hex(const unsigned char *d, unsigned int n, char *out)
{
	for (unsigned int i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

/* SHA-256 of @size bytes of @fd from @off, in hex (65 bytes). */
static int sha256_of_fd(int fd, uint64_t off, uint64_t size, char out[65])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char buf[1 << 16], md[32];
	unsigned int n = 0;
	int err = 0;

	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		err = -ENOMEM;
		goto out;
	}
	while (size) {
		ssize_t got = pread(fd, buf, size < sizeof(buf) ? size : sizeof(buf), off);

		if (got <= 0) {
			err = got < 0 ? -errno : -EIO;
			goto out;
		}
		EVP_DigestUpdate(ctx, buf, got);
		off += got;
		size -= got;
	}
	EVP_DigestFinal_ex(ctx, md, &n);
	hex(md, n, out);
out:
	EVP_MD_CTX_free(ctx);
	return err;
}

static void sha256_of_mem(const void *p, size_t n, char out[65])
{
	unsigned char md[32];
	unsigned int len = 0;

	EVP_Digest(p, n, md, &len, EVP_sha256(), NULL);
	hex(md, len, out);
}

/* ---------------------------------------------------------------- requests */

/* The object's URL (path-escaped) with an optional canonical @query. */
static int object_url(const struct store *s, const char *object, const char *query,
		      char *out, size_t len)
{
	const struct s3 *b = s->backend;
	char esc[3 * STORE_MAX_KEY + 1];
	int n;

	if (store_http_escape(object, true, esc, sizeof(esc)))
		return -ENAMETOOLONG;
	if (b->path_style)
		n = snprintf(out, len, "%s/%s/%s%s%s", b->endpoint, s->bucket, esc,
			     query ? "?" : "", query ? query : "");
	else
		n = snprintf(out, len, "https://%s.%s/%s%s%s", s->bucket, b->endpoint + 8, esc,
			     query ? "?" : "", query ? query : "");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* One signed request with the body's hash; more headers in @extra. */
static int s3_send(struct store *s, struct http_request *rq, const char *sha256,
		   const char *extra, struct http_response *rs, const char *what)
{
	struct s3 *b = s->backend;
	struct curl_slist *h = NULL;
	char hdr[4200];
	int err;

	err = s3_credentials_fresh(&b->cred, &s->limits);
	if (err)
		return err;
	snprintf(b->userpwd, sizeof(b->userpwd), "%s:%s", b->cred.key_id, b->cred.secret);
	snprintf(hdr, sizeof(hdr), "x-amz-content-sha256: %s", sha256);
	h = curl_slist_append(h, hdr);
	if (b->cred.token[0]) {
		snprintf(hdr, sizeof(hdr), "x-amz-security-token: %s", b->cred.token);
		h = curl_slist_append(h, hdr);
	}
	if (extra)
		h = curl_slist_append(h, extra);
	/* No "Expect: 100-continue" wait on every upload. */
	h = curl_slist_append(h, "Expect:");
	rq->headers = h;
	rq->aws_sigv4 = b->sigv4;
	rq->userpwd = b->userpwd;
	err = store_http_send(&s->limits, rq, rs, what);
	curl_slist_free_all(h);
	rq->headers = NULL;
	return err;
}

/* Says a failed answer (S3's <Code> and <Message>) and maps it to -errno. */
static int s3_failure(const struct store *s, const char *object, const char *what,
		      int err, const struct http_response *rs)
{
	char code[64] = "", msg[256] = "", shown[300];

	if (err) {
		log_err("%s s3://%s/%s: %s", what, s->bucket, object, rs->error);
		return err;
	}
	if (rs->data) {
		const char *end = rs->data + rs->len;

		xml_field(rs->data, end, "Code", code, sizeof(code));
		xml_field(rs->data, end, "Message", msg, sizeof(msg));
	}
	store_answer_excerpt(msg, strlen(msg), shown, sizeof(shown));
	log_err("%s s3://%s/%s: HTTP %ld%s%s%s%s", what, s->bucket, object, rs->status,
		code[0] ? " " : "", code, shown[0] ? ": " : "", shown);
	switch (rs->status) {
	case 403:
		if (!strcmp(code, "ExpiredToken") || !strcmp(code, "TokenRefreshRequired"))
			return -EKEYEXPIRED;
		if (!strcmp(code, "InvalidAccessKeyId") || !strcmp(code, "SignatureDoesNotMatch"))
			return -EKEYREJECTED;
		return -EACCES;
	case 401:
		return -EKEYREJECTED;
	case 404:
		return -ENOENT;
	case 412:
		return -EEXIST;
	default:
		return -EIO;
	}
}

/* A request with no body on @object (@out_fd: where a 2xx body goes,
 * -1: memory); the answer in @rs. */
static int s3_object_request(struct store *s, const char *object, const char *method,
			     int out_fd, struct http_response *rs)
{
	struct http_request rq = HTTP_REQUEST_INIT;
	char url[4 * STORE_MAX_KEY];
	int err = object_url(s, object, NULL, url, sizeof(url));

	if (err) {
		snprintf(rs->error, sizeof(rs->error), "the object's URL is too long");
		return err;
	}
	rq.method = method;
	rq.url = url;
	rq.out_fd = out_fd;
	return s3_send(s, &rq, EMPTY_SHA256, NULL, rs, method);
}

static int s3_exists(struct store *s, const char *object)
{
	struct http_response rs = { 0 };
	int err = s3_object_request(s, object, "HEAD", -1, &rs);

	if (!err && rs.status == 200)
		err = 1;
	else if (!err && rs.status == 404)
		err = 0;
	else
		err = s3_failure(s, object, "cannot look for", err, &rs);
	http_response_clear(&rs);
	return err;
}

/* One PUT of [off, off+size) of @fd to @url with @extra; the ETag out. */
static int put_range(struct store *s, const char *object, const char *url, int fd,
		     uint64_t off, uint64_t size, const char *extra, char *etag,
		     size_t etag_len)
{
	struct http_request rq = HTTP_REQUEST_INIT;
	struct http_response rs = { 0 };
	char sha[65];
	int err = sha256_of_fd(fd, off, size, sha);

	if (err) {
		log_err("cannot read the file for s3://%s/%s: %s", s->bucket, object,
			strerror(-err));
		return err;
	}
	rq.method = "PUT";
	rq.url = url;
	rq.body_fd = fd;
	rq.body_off = off;
	rq.body_size = size;
	err = s3_send(s, &rq, sha, extra, &rs, "PUT");
	if (!err && rs.status == 200) {
		if (etag)
			snprintf(etag, etag_len, "%s", rs.etag);
	} else if (!err && rs.status == 412) {
		err = -EEXIST;
	} else {
		err = s3_failure(s, object, "cannot upload", err, &rs);
	}
	http_response_clear(&rs);
	return err;
}

/* A POST of @body (@query canonical) with @extra; the answer out. */
static int post(struct store *s, const char *object, const char *query, const char *body,
		const char *extra, struct http_response *rs)
{
	struct http_request rq = HTTP_REQUEST_INIT;
	char url[4 * STORE_MAX_KEY], sha[65];
	int err = object_url(s, object, query, url, sizeof(url));

	if (err)
		return err;
	sha256_of_mem(body, strlen(body), sha);
	rq.method = "POST";
	rq.url = url;
	rq.body = body;
	rq.body_len = strlen(body);
	return s3_send(s, &rq, sha, extra, rs, "POST");
}

static void abort_upload(struct store *s, const char *object, const char *upload_id)
{
	struct http_request rq = HTTP_REQUEST_INIT;
	struct http_response rs = { 0 };
	char url[4 * STORE_MAX_KEY], q[1200], esc[1100];

	if (store_http_escape(upload_id, false, esc, sizeof(esc)))
		return;
	snprintf(q, sizeof(q), "uploadId=%s", esc);
	if (object_url(s, object, q, url, sizeof(url)))
		return;
	rq.method = "DELETE";
	rq.url = url;
	if (s3_send(s, &rq, EMPTY_SHA256, NULL, &rs, "abort") || rs.status >= 300)
		log_warn("could not abort the multipart upload of s3://%s/%s (the bucket's "
			 "lifecycle rule removes it): %s", s->bucket, object,
			 rs.error[0] ? rs.error : "refused");
	http_response_clear(&rs);
}

/* Parts of the part size, then one completion, conditional on no object. */
static int put_multipart(struct store *s, const char *object, int fd, uint64_t size)
{
	uint64_t part = store_part_bytes(), n_parts = (size + part - 1) / part;
	struct http_response rs = { 0 };
	char upload_id[1024] = "", esc[1100], q[1300], url[4 * STORE_MAX_KEY];
	char *done = NULL;
	size_t done_len = 0, done_cap = 0;
	int err;

	if (n_parts > 10000) {
		log_err("cannot upload s3://%s/%s: %llu parts of %llu MiB (S3 takes 10000); "
			"raise ACCELTRACE_STORE_PART_MIB", s->bucket, object,
			(unsigned long long)n_parts, (unsigned long long)(part >> 20));
		return -EFBIG;
	}
	err = post(s, object, "uploads=", "", NULL, &rs);
	if (!err && rs.status == 200 && rs.data)
		xml_field(rs.data, rs.data + rs.len, "UploadId", upload_id, sizeof(upload_id));
	if (err || rs.status != 200 || !upload_id[0]) {
		err = s3_failure(s, object, "cannot start uploading", err, &rs);
		http_response_clear(&rs);
		return err ? err : -EIO;
	}
	http_response_clear(&rs);
	if (store_http_escape(upload_id, false, esc, sizeof(esc))) {
		err = -ENAMETOOLONG;
		goto abort;
	}
	for (uint64_t i = 0; i < n_parts; i++) {
		uint64_t off = i * part, len = size - off < part ? size - off : part;
		char etag[256], line[400];
		size_t need;

		snprintf(q, sizeof(q), "partNumber=%llu&uploadId=%s", (unsigned long long)i + 1,
			 esc);
		err = object_url(s, object, q, url, sizeof(url));
		if (!err)
			err = put_range(s, object, url, fd, off, len, NULL, etag, sizeof(etag));
		if (err)
			goto abort;
		snprintf(line, sizeof(line), "<Part><PartNumber>%llu</PartNumber><ETag>%s</ETag></Part>",
			 (unsigned long long)i + 1, etag);
		need = done_len + strlen(line) + 1;
		if (need > done_cap) {
			char *grown = realloc(done, need * 2);

			if (!grown) {
				err = -ENOMEM;
				goto abort;
			}
			done = grown;
			done_cap = need * 2;
		}
		memcpy(done + done_len, line, strlen(line) + 1);
		done_len += strlen(line);
	}
	{
		char *body = NULL;

		if (asprintf(&body, "<CompleteMultipartUpload>%s</CompleteMultipartUpload>",
			     done ? done : "") < 0) {
			err = -ENOMEM;
			goto abort;
		}
		snprintf(q, sizeof(q), "uploadId=%s", esc);
		err = post(s, object, q, body, "If-None-Match: *", &rs);
		free(body);
	}
	/* S3 may answer 200 with an <Error> in the body. */
	if (!err && rs.status == 200 && rs.data && !strstr(rs.data, "<Error>")) {
		http_response_clear(&rs);
		free(done);
		return 0;
	}
	if (!err && rs.status == 412)
		err = -EEXIST;
	else
		err = s3_failure(s, object, "cannot complete the upload of", err, &rs);
	if (!err)
		err = -EIO;
	http_response_clear(&rs);
abort:
	free(done);
	abort_upload(s, object, upload_id);
	return err;
}

static int s3_put(struct store *s, const char *object, int fd, uint64_t size)
{
	char url[4 * STORE_MAX_KEY];
	int err;

	if (size > store_part_bytes())
		return put_multipart(s, object, fd, size);
	err = object_url(s, object, NULL, url, sizeof(url));
	return err ? err : put_range(s, object, url, fd, 0, size, "If-None-Match: *", NULL, 0);
}

static int s3_get(struct store *s, const char *object, int fd)
{
	struct http_response rs = { 0 };
	int err = s3_object_request(s, object, "GET", fd, &rs);

	if (err || rs.status != 200)
		err = s3_failure(s, object, "cannot download", err, &rs);
	http_response_clear(&rs);
	return err;
}

static int s3_del(struct store *s, const char *object)
{
	struct http_response rs = { 0 };
	int err = s3_object_request(s, object, "DELETE", -1, &rs);

	if (err || (rs.status != 204 && rs.status != 200))
		err = s3_failure(s, object, "cannot remove", err, &rs);
	http_response_clear(&rs);
	return err;
}

/* ListObjectsV2, a page at a time. */
static int s3_list(struct store *s, const char *prefix, store_list_fn fn, void *ctx)
{
	char token[1100] = "", prev[1100] = "", esc_token[3300], esc_prefix[3 * STORE_MAX_KEY + 1];
	unsigned int pages = 0;
	char q[3 * STORE_MAX_KEY + 4000], url[8 * STORE_MAX_KEY];
	int err;

	if (store_http_escape(prefix, false, esc_prefix, sizeof(esc_prefix)))
		return -ENAMETOOLONG;
	do {
		struct http_request rq = HTTP_REQUEST_INIT;
		struct http_response rs = { 0 };

		if (token[0] && store_http_escape(token, false, esc_token, sizeof(esc_token)))
			return -ENAMETOOLONG;
		/* Canonical order: continuation-token, list-type, prefix. */
		if (token[0])
			snprintf(q, sizeof(q), "continuation-token=%s&list-type=2&prefix=%s",
				 esc_token, esc_prefix);
		else
			snprintf(q, sizeof(q), "list-type=2&prefix=%s", esc_prefix);
		if (((const struct s3 *)s->backend)->path_style)
			snprintf(url, sizeof(url), "%s/%s?%s",
				 ((const struct s3 *)s->backend)->endpoint, s->bucket, q);
		else
			snprintf(url, sizeof(url), "https://%s.%s/?%s", s->bucket,
				 ((const struct s3 *)s->backend)->endpoint + 8, q);
		rq.method = "GET";
		rq.url = url;
		err = s3_send(s, &rq, EMPTY_SHA256, NULL, &rs, "list");
		if (err || rs.status != 200 || !rs.data) {
			err = s3_failure(s, prefix, "cannot list", err, &rs);
			http_response_clear(&rs);
			return err ? err : -EIO;
		}
		err = s3_list_page(rs.data, rs.len, fn, ctx, token, sizeof(token));
		if (err) {
			http_response_clear(&rs);
			return err;
		}
		http_response_clear(&rs);
		/* A server that answers the same page again would loop us. */
		if (token[0] && (!strcmp(token, prev) || ++pages >= STORE_MAX_LIST_PAGES)) {
			log_err("cannot list %s/%s: the listing does not end (page %u)", s->url,
				prefix, pages + 1);
			return -ELOOP;
		}
		snprintf(prev, sizeof(prev), "%s", token);
	} while (token[0]);
	return 0;
}

static void s3_free(void *backend)
{
	struct s3 *b = backend;

	if (b)
		explicit_bzero(b, sizeof(*b));	/* the secret with it */
	free(b);
}

static const struct store_ops s3_ops = {
	.exists = s3_exists,
	.put = s3_put,
	.get = s3_get,
	.del = s3_del,
	.list = s3_list,
	.free = s3_free,
};

int store_s3_open(struct store *s)
{
	const char *ep = getenv("AWS_ENDPOINT_URL_S3");
	struct s3 *b = calloc(1, sizeof(*b));
	size_t n;
	int err;

	if (!b)
		return -ENOMEM;
	s->ops = &s3_ops;
	s->backend = b;
	if (!ep || !*ep)
		ep = getenv("AWS_ENDPOINT_URL");
	err = s3_credentials_find(&b->cred, &s->limits);
	if (err)
		return err;
	if (ep && *ep) {
		if (strncmp(ep, "http://", 7) && strncmp(ep, "https://", 8)) {
			log_err("the S3 endpoint \"%.200s\" is no http:// or https:// URL", ep);
			return -EINVAL;
		}
		snprintf(b->endpoint, sizeof(b->endpoint), "%s", ep);
		b->path_style = true;
	} else if (strchr(s->bucket, '.')) {
		/* A dotted bucket breaks the wildcard certificate of a
		 * virtual-hosted name. */
		snprintf(b->endpoint, sizeof(b->endpoint), "https://s3.%s.amazonaws.com",
			 b->cred.region);
		b->path_style = true;
	} else {
		snprintf(b->endpoint, sizeof(b->endpoint), "https://s3.%s.amazonaws.com",
			 b->cred.region);
	}
	n = strlen(b->endpoint);
	while (n > 8 && b->endpoint[n - 1] == '/')
		b->endpoint[--n] = '\0';
	snprintf(b->sigv4, sizeof(b->sigv4), "aws:amz:%s:s3", b->cred.region);
	log_debug("%s: S3 at %s, region %s, credentials from %s", s->url, b->endpoint,
		  b->cred.region, b->cred.source);
	return 0;
}
