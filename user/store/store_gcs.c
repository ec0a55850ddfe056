// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Google Cloud Storage through its JSON API: a bearer token from
 * gcs_token.c, uploads conditional on no object (ifGenerationMatch=0),
 * files above a part's size sent as a resumable upload: each chunk is sent
 * once, and the next starts where the server's answer (the Range of a
 * 308, or of a status query after a failure) says it stopped. STORAGE_EMULATOR_HOST points
 * it at another endpoint, as it does Google's client libraries.
 */
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/json_cursor.h"
#include "store/gcs_token.h"
#include "store/store_answers.h"
#include "store/store_internal.h"

#define LOG_CONTEXT "store"
#include "lib/log.h"

struct gcs {
	struct gcs_token token;
	char endpoint[512];
};

/* A request with the bearer token and @extra headers (NULL-ended). */
static int gcs_send(struct store *s, struct http_request *rq, const char *const *extra,
		    struct http_response *rs, const char *what)
{
	struct gcs *g = s->backend;
	struct curl_slist *h = NULL;
	char auth[4200];
	int err = gcs_token_fresh(&g->token, &s->limits);

	if (err)
		return err;
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", g->token.access);
	h = curl_slist_append(h, auth);
	explicit_bzero(auth, sizeof(auth));
	h = curl_slist_append(h, "Expect:");
	for (; extra && *extra; extra++)
		h = curl_slist_append(h, *extra);
	rq->headers = h;
	err = store_http_send(&s->limits, rq, rs, what);
	curl_slist_free_all(h);
	rq->headers = NULL;
	return err;
}

/* Says a failed answer (the JSON API's error.message) and maps it. */
static int gcs_failure(const struct store *s, const char *object, const char *what, int err,
		       const struct http_response *rs)
{
	char msg[256] = "", shown[300] = "";

	if (err) {
		log_err("%s gs://%s/%s: %s", what, s->bucket, object, rs->error);
		return err;
	}
	if (rs->data) {
		const char *m = strstr(rs->data, "\"message\"");

		if (m) {
			char errbuf[64];
			struct json_cursor c = { .s = m, .n = strlen(m), .err = errbuf,
						 .errlen = sizeof(errbuf) };

			errbuf[0] = '\0';
			if (json_string(&c, msg, sizeof(msg)) || json_expect(&c, ':') ||
			    json_string(&c, msg, sizeof(msg)))
				msg[0] = '\0';
		}
	}
	store_answer_excerpt(msg, strlen(msg), shown, sizeof(shown));
	log_err("%s gs://%s/%s: HTTP %ld%s%s", what, s->bucket, object, rs->status,
		shown[0] ? ": " : "", shown);
	switch (rs->status) {
	case 401:
		return -EKEYREJECTED;
	case 403:
		return -EACCES;
	case 404:
		return -ENOENT;
	case 412:
		return -EEXIST;
	default:
		return -EIO;
	}
}

/* {endpoint}/{api}/b/{bucket}/o[/{object}][?query] */
static int api_url(const struct store *s, const char *api, const char *object,
		   const char *query, char *out, size_t len)
{
	const struct gcs *g = s->backend;
	char esc[3 * STORE_MAX_KEY + 1] = "";
	int n;

	if (object && store_http_escape(object, false, esc, sizeof(esc)))
		return -ENAMETOOLONG;
	n = snprintf(out, len, "%s/%s/b/%s/o%s%s%s%s", g->endpoint, api, s->bucket,
		     object ? "/" : "", esc, query ? "?" : "", query ? query : "");
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A request with no body on @object's metadata or media (@query), its
 * 2xx body into @out_fd (-1: memory); the answer in @rs. */
static int gcs_object_request(struct store *s, const char *object, const char *method,
			      const char *query, int out_fd, struct http_response *rs)
{
	struct http_request rq = HTTP_REQUEST_INIT;
	char url[4 * STORE_MAX_KEY];
	int err = api_url(s, "storage/v1", object, query, url, sizeof(url));

	if (err) {
		snprintf(rs->error, sizeof(rs->error), "the object's URL is too long");
		return err;
	}
	rq.method = method;
	rq.url = url;
	rq.out_fd = out_fd;
	return gcs_send(s, &rq, NULL, rs, method);
}

static int gcs_exists(struct store *s, const char *object)
{
	struct http_response rs = { 0 };
	int err = gcs_object_request(s, object, "GET", "fields=name", -1, &rs);

	if (!err && rs.status == 200)
		err = 1;
	else if (!err && rs.status == 404)
		err = 0;
	else
		err = gcs_failure(s, object, "cannot look for", err, &rs);
	http_response_clear(&rs);
	return err;
}

/* The upload URL for @type ("media", "resumable"), conditional on no object. */
static int upload_url(const struct store *s, const char *object, const char *type, char *out,
		      size_t len)
{
	char esc[3 * STORE_MAX_KEY + 1], q[3 * STORE_MAX_KEY + 100];

	if (store_http_escape(object, false, esc, sizeof(esc)))
		return -ENAMETOOLONG;
	snprintf(q, sizeof(q), "uploadType=%s&ifGenerationMatch=0&name=%s", type, esc);
	return api_url(s, "upload/storage/v1", NULL, q, out, len);
}

static int put_media(struct store *s, const char *object, int fd, uint64_t size)
{
	static const char *const extra[] = { "Content-Type: application/octet-stream", NULL };
	struct http_request rq = HTTP_REQUEST_INIT;
	struct http_response rs = { 0 };
	char url[4 * STORE_MAX_KEY];
	int err = upload_url(s, object, "media", url, sizeof(url));

	if (err)
		return err;
	rq.method = "POST";
	rq.url = url;
	rq.body_fd = fd;
	rq.body_size = size;
	err = gcs_send(s, &rq, extra, &rs, "upload");
	if (!err && rs.status == 200)
		err = 0;
	else if (!err && rs.status == 412)
		err = -EEXIST;
	else
		err = gcs_failure(s, object, "cannot upload", err, &rs);
	http_response_clear(&rs);
	return err;
}

/* The next byte a resumable session wants after a 308's "Range: bytes=0-N". */
static uint64_t next_byte(const struct http_response *rs)
{
	const char *dash = strchr(rs->range, '-');

	return rs->range[0] && dash ? strtoull(dash + 1, NULL, 10) + 1 : 0;
}

static int put_resumable(struct store *s, const char *object, int fd, uint64_t size)
{
	char url[4 * STORE_MAX_KEY], session[2048], hdr[128], range[128];
	const char *extra[3] = { hdr, NULL, NULL };
	struct http_request rq = HTTP_REQUEST_INIT;
	struct http_response rs = { 0 };
	uint64_t part = store_part_bytes(), at = 0;
	bool done = false;
	unsigned int stuck = 0, attempts, failures = 0;
	int err = upload_url(s, object, "resumable", url, sizeof(url));

	if (err)
		return err;
	snprintf(hdr, sizeof(hdr), "X-Upload-Content-Length: %" PRIu64, size);
	rq.method = "POST";
	rq.url = url;
	rq.body = "";
	err = gcs_send(s, &rq, extra, &rs, "start upload");
	if (err || rs.status != 200 || !rs.location[0]) {
		err = gcs_failure(s, object, "cannot start uploading", err, &rs);
		http_response_clear(&rs);
		return err ? err : -EIO;
	}
	snprintf(session, sizeof(session), "%s", rs.location);
	/* The session URI gets the bearer token: only on the endpoint's own origin. */
	{
		const struct gcs *g = s->backend;
		size_t n = strlen(g->endpoint);

		if (strncmp(session, g->endpoint, n) || (session[n] != '/' && session[n])) {
			log_err("cannot upload gs://%s/%s: the upload session is on another host "
				"than %s", s->bucket, object, g->endpoint);
			http_response_clear(&rs);
			return -EPROTO;
		}
	}
	while (at < size) {
		uint64_t len = size - at < part ? size - at : part;

		snprintf(range, sizeof(range), "Content-Range: bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64,
			 at, at + len - 1, size);
		extra[0] = range;
		rq = (struct http_request)HTTP_REQUEST_INIT;
		rq.method = "PUT";
		rq.url = session;
		rq.body_fd = fd;
		rq.body_off = at;
		rq.body_size = len;
		/* One try a chunk: after a failure the server says where it
		 * stopped, and the next chunk starts there. */
		attempts = s->limits.attempts;
		s->limits.attempts = 1;
		err = gcs_send(s, &rq, extra, &rs, "upload chunk");
		s->limits.attempts = attempts;
		if (!err && store_http_retryable(rs.status)) {
			snprintf(rs.error, sizeof(rs.error), "HTTP %ld", rs.status);
			err = -EAGAIN;
		}
		if (err && ++failures > attempts) {
			err = gcs_failure(s, object, "cannot upload", err, &rs);
			break;
		}
		if (err) {
			/* Where did the server stop? Ask, then go on from there. */
			usleep(500000u << (failures < 6 ? failures - 1 : 5));
			snprintf(range, sizeof(range), "Content-Range: bytes */%" PRIu64, size);
			rq = (struct http_request)HTTP_REQUEST_INIT;
			rq.method = "PUT";
			rq.url = session;
			rq.body = "";
			err = gcs_send(s, &rq, extra, &rs, "upload status");
			if (err) {
				err = gcs_failure(s, object, "cannot upload", err, &rs);
				break;
			}
		}
		if (rs.status == 200 || rs.status == 201) {
			at = size;
			err = 0;
			done = true;
			break;
		}
		if (rs.status != 308) {
			err = rs.status == 412 ? -EEXIST : gcs_failure(s, object, "cannot upload", 0, &rs);
			break;
		}
		{
			uint64_t next = next_byte(&rs);

			if (next >= size) {
				/* All kept, yet no object: ask again (the answer is 200). */
				next = at;
			}
			/* No progress three times running: give up rather than loop. */
			stuck = next <= at ? stuck + 1 : 0;
			if (stuck >= 3) {
				err = -EIO;
				log_err("cannot upload gs://%s/%s: the server keeps %" PRIu64
					" bytes of %" PRIu64, s->bucket, object, next, size);
				break;
			}
			at = next;
			err = 0;
		}
	}
	if (!err && !done) {
		log_err("cannot upload gs://%s/%s: the server never said the object was made",
			s->bucket, object);
		err = -EIO;
	}
	http_response_clear(&rs);
	return err;
}

static int gcs_put(struct store *s, const char *object, int fd, uint64_t size)
{
	return size > store_part_bytes() ? put_resumable(s, object, fd, size) :
					   put_media(s, object, fd, size);
}

static int gcs_get(struct store *s, const char *object, int fd)
{
	struct http_response rs = { 0 };
	int err = gcs_object_request(s, object, "GET", "alt=media", fd, &rs);

	if (err || rs.status != 200)
		err = gcs_failure(s, object, "cannot download", err, &rs);
	http_response_clear(&rs);
	return err;
}

static int gcs_del(struct store *s, const char *object)
{
	struct http_response rs = { 0 };
	int err = gcs_object_request(s, object, "DELETE", NULL, -1, &rs);

	if (err || (rs.status != 204 && rs.status != 200))
		err = gcs_failure(s, object, "cannot remove", err, &rs);
	http_response_clear(&rs);
	return err;
}

static int gcs_list(struct store *s, const char *prefix, store_list_fn fn, void *ctx)
{
	char esc[3 * STORE_MAX_KEY + 1], token[1024] = "", prev[1024] = "", esc_token[3100];
	unsigned int pages = 0;
	char q[3 * STORE_MAX_KEY + 3300], url[8 * STORE_MAX_KEY];
	int err;

	if (store_http_escape(prefix, false, esc, sizeof(esc)))
		return -ENAMETOOLONG;
	do {
		struct http_request rq = HTTP_REQUEST_INIT;
		struct http_response rs = { 0 };
		char why[160];

		if (token[0] && store_http_escape(token, false, esc_token, sizeof(esc_token)))
			return -ENAMETOOLONG;
		snprintf(q, sizeof(q), "prefix=%s&fields=items(name,size),nextPageToken%s%s", esc,
			 token[0] ? "&pageToken=" : "", token[0] ? esc_token : "");
		err = api_url(s, "storage/v1", NULL, q, url, sizeof(url));
		if (err)
			return err;
		rq.method = "GET";
		rq.url = url;
		err = gcs_send(s, &rq, NULL, &rs, "list");
		if (err || rs.status != 200 || !rs.data) {
			err = gcs_failure(s, prefix, "cannot list", err, &rs);
			http_response_clear(&rs);
			return err ? err : -EIO;
		}
		err = gcs_list_page(rs.data, rs.len, fn, ctx, token, sizeof(token), why, sizeof(why));
		http_response_clear(&rs);
		if (err == -EINVAL && why[0]) {
			log_err("cannot list gs://%s/%s: the answer is unreadable: %s", s->bucket,
				prefix, why);
			return err;
		}
		if (err)
			return err;
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

static void gcs_free(void *backend)
{
	struct gcs *g = backend;

	if (g)
		explicit_bzero(g, sizeof(*g));
	free(g);
}

static const struct store_ops gcs_ops = {
	.exists = gcs_exists,
	.put = gcs_put,
	.get = gcs_get,
	.del = gcs_del,
	.list = gcs_list,
	.free = gcs_free,
};

int store_gcs_open(struct store *s)
{
	const char *emu = getenv("STORAGE_EMULATOR_HOST");
	struct gcs *g = calloc(1, sizeof(*g));
	size_t n;

	if (!g)
		return -ENOMEM;
	s->ops = &gcs_ops;
	s->backend = g;
	if (emu && *emu)
		snprintf(g->endpoint, sizeof(g->endpoint), "%s%.400s",
			 strstr(emu, "://") ? "" : "http://", emu);
	else
		snprintf(g->endpoint, sizeof(g->endpoint), "https://storage.googleapis.com");
	n = strlen(g->endpoint);
	while (n > 8 && g->endpoint[n - 1] == '/')
		g->endpoint[--n] = '\0';
	/* The token now: a missing or refused credential is said at start. */
	return gcs_token_fresh(&g->token, &s->limits);
}
