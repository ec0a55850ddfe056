// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A store's HTTP requests through libcurl (see store_http.h): one easy
 * handle a request, bounded in time, retried with backoff.
 */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "store/store_http.h"

#define LOG_CONTEXT "store"
#include "lib/log.h"

#define MAX_BODY_IN_MEMORY (8u << 20)

static unsigned int env_uint(const char *name, unsigned int def, unsigned int max)
{
	const char *v = getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return def;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || !n || n > max) {
		log_warn("%s=\"%.32s\" is no number from 1 to %u: %u is used", name, v, max, def);
		return def;
	}
	return n;
}

void store_http_limits_default(struct store_http_limits *l)
{
	l->connect_s = 10;
	l->stall_s = env_uint("ACCELTRACE_STORE_STALL_S", 30, 3600);
	l->deadline_s = env_uint("ACCELTRACE_STORE_DEADLINE_S", 600, 86400);
	l->attempts = env_uint("ACCELTRACE_STORE_ATTEMPTS", 5, 100);
}

void http_response_clear(struct http_response *rs)
{
	free(rs->data);
	memset(rs, 0, sizeof(*rs));
}

bool store_http_retryable(long status)
{
	return status == 408 || status == 429 || status == 500 || status == 502 ||
	       status == 503 || status == 504;
}

int store_http_escape(const char *s, bool keep_slash, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char c = *s;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
			     c == '~' || (keep_slash && c == '/');

		if (o + (plain ? 1 : 3) >= len)
			return -ENAMETOOLONG;
		if (plain) {
			out[o++] = c;
		} else {
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (o >= len)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return 0;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;

static void curl_init(void)
{
	curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---------------------------------------------------------------- one attempt */

struct transfer {
	const struct http_request *rq;
	struct http_response *rs;
	uint64_t sent;			/* of the body */
	bool too_big;			/* an in-memory body over the bound */
	int write_err;			/* writing out_fd */
};

static size_t on_read(char *buf, size_t size, size_t nitems, void *ctx)
{
	struct transfer *t = ctx;
	const struct http_request *rq = t->rq;
	size_t want = size * nitems;
	uint64_t total = rq->body_fd >= 0 ? rq->body_size : rq->body_len;
	ssize_t got;

	if (t->sent >= total)
		return 0;
	if (want > total - t->sent)
		want = total - t->sent;
	if (rq->body_fd < 0) {
		memcpy(buf, (const char *)rq->body + t->sent, want);
		got = want;
	} else {
		got = pread(rq->body_fd, buf, want, rq->body_off + t->sent);
		if (got <= 0)
			return CURL_READFUNC_ABORT;	/* the file shrank or failed */
	}
	t->sent += got;
	return got;
}

/* While a response arrives, rs->status says where its body goes. */
#define BODY_TO_FILE (-2)
#define BODY_TO_MEMORY (-3)

static size_t on_write(char *buf, size_t size, size_t nmemb, void *ctx)
{
	struct transfer *t = ctx;
	struct http_response *rs = t->rs;
	size_t n = size * nmemb;
	char *grown;

	/* Only a success goes to the caller's file; an error's body is a
	 * message, kept in memory. */
	if (rs->status == BODY_TO_FILE) {
		for (size_t done = 0; done < n;) {
			ssize_t w = write(t->rq->out_fd, buf + done, n - done);

			if (w < 0) {
				if (errno == EINTR)
					continue;
				t->write_err = -errno;
				return 0;
			}
			done += w;
		}
		return n;
	}
	if (rs->len + n > MAX_BODY_IN_MEMORY) {
		t->too_big = true;
		return 0;
	}
	grown = realloc(rs->data, rs->len + n + 1);
	if (!grown)
		return 0;
	rs->data = grown;
	memcpy(rs->data + rs->len, buf, n);
	rs->len += n;
	rs->data[rs->len] = '\0';
	return n;
}

/* Copies a header's value (trimmed) into @out when the line is @name. */
static void header_value(const char *line, size_t n, const char *name, char *out,
			 size_t len)
{
	size_t k = strlen(name);

	if (n <= k || strncasecmp(line, name, k) || line[k] != ':')
		return;
	line += k + 1;
	n -= k + 1;
	while (n && (*line == ' ' || *line == '\t')) {
		line++;
		n--;
	}
	while (n && (line[n - 1] == '\r' || line[n - 1] == '\n' || line[n - 1] == ' '))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(out, line, n);
	out[n] = '\0';
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ctx)
{
	struct transfer *t = ctx;
	struct http_response *rs = t->rs;
	size_t n = size * nitems;

	/* A status line starts each response (a 100 Continue first, maybe):
	 * where its body goes is decided by the last one. */
	if (n > 9 && !strncmp(buf, "HTTP/", 5)) {
		const char *sp = memchr(buf, ' ', n);
		long code = sp ? strtol(sp + 1, NULL, 10) : 0;

		if (t->rq->out_fd >= 0)
			rs->status = code >= 200 && code < 300 ? BODY_TO_FILE : BODY_TO_MEMORY;
		rs->location[0] = rs->range[0] = rs->etag[0] = '\0';
		return n;
	}
	header_value(buf, n, "Location", rs->location, sizeof(rs->location));
	header_value(buf, n, "Range", rs->range, sizeof(rs->range));
	header_value(buf, n, "ETag", rs->etag, sizeof(rs->etag));
	return n;
}

static int curl_errno(CURLcode rc)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return -ECONNREFUSED;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
		return -EHOSTUNREACH;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	default:
		return -EIO;
	}
}

/* One attempt; 0 with a response, or -errno. */
static int send_once(const struct store_http_limits *l, const struct http_request *rq,
		     struct http_response *rs, long time_left_s, bool *final)
{
	struct transfer t = { .rq = rq, .rs = rs };
	char errbuf[CURL_ERROR_SIZE] = "";
	uint64_t body = rq->body_fd >= 0 ? rq->body_size : rq->body_len;
	bool upload = !strcmp(rq->method, "PUT") || !strcmp(rq->method, "POST");
	CURL *h;
	CURLcode rc;
	int err = 0;

	free(rs->data);
	memset(rs, 0, sizeof(*rs));
	if (rq->out_fd >= 0 && (ftruncate(rq->out_fd, 0) || lseek(rq->out_fd, 0, SEEK_SET))) {
		*final = true;
		return -errno;
	}
	h = curl_easy_init();
	if (!h) {
		*final = true;
		return -ENOMEM;
	}
	curl_easy_setopt(h, CURLOPT_URL, rq->url);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)l->connect_s);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)l->stall_s);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, time_left_s > 0 ? time_left_s : 1L);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &t);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &t);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "acceltrace");
	if (rq->headers)
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, rq->headers);
	if (rq->aws_sigv4) {
		curl_easy_setopt(h, CURLOPT_AWS_SIGV4, rq->aws_sigv4);
		curl_easy_setopt(h, CURLOPT_USERPWD, rq->userpwd);
	}
	if (!strcmp(rq->method, "HEAD")) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (upload) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(h, CURLOPT_READDATA, &t);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)body);
		if (strcmp(rq->method, "PUT"))
			curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	} else if (strcmp(rq->method, "GET")) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	}
	rc = curl_easy_perform(h);
	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &rs->status);
	} else if (t.write_err) {
		err = t.write_err;
		snprintf(rs->error, sizeof(rs->error), "cannot write the download: %s",
			 strerror(-err));
	} else if (t.too_big) {
		err = -EFBIG;
		snprintf(rs->error, sizeof(rs->error), "the answer is over %u bytes",
			 MAX_BODY_IN_MEMORY);
	} else {
		err = curl_errno(rc);
		if (rc == CURLE_OPERATION_TIMEDOUT)
			snprintf(rs->error, sizeof(rs->error),
				 "no progress for %u s or out of time (%.160s)", l->stall_s,
				 errbuf[0] ? errbuf : curl_easy_strerror(rc));
		else
			snprintf(rs->error, sizeof(rs->error), "%.200s",
				 errbuf[0] ? errbuf : curl_easy_strerror(rc));
		rs->status = 0;
	}
	curl_easy_cleanup(h);
	/* A failure here, not on the way, is not helped by another try. */
	*final = t.write_err || t.too_big || err == -ENOMEM;
	return err;
}

double store_http_now(void)
{
	return mono_ns() / 1e9;
}

int store_http_send(const struct store_http_limits *l, const struct http_request *rq,
		    struct http_response *rs, const char *what)
{
	double deadline = store_http_now() + l->deadline_s, backoff = 0.5;
	int err = 0;

	pthread_once(&curl_once, curl_init);
	if (curl_init_result != CURLE_OK) {
		snprintf(rs->error, sizeof(rs->error), "libcurl did not start: %s",
			 curl_easy_strerror(curl_init_result));
		return -EIO;
	}
	if (l->until && l->until < deadline)
		deadline = l->until;
	for (unsigned int attempt = 1;; attempt++) {
		double left = deadline - store_http_now();
		bool final = false;

		if (left <= 0) {
			snprintf(rs->error, sizeof(rs->error), "out of time: the call's %u s are "
				 "spent", l->deadline_s);
			rs->status = 0;
			return -ETIMEDOUT;
		}
		err = send_once(l, rq, rs, (long)(left + 0.999), &final);
		if (!err && !store_http_retryable(rs->status))
			return 0;
		if (final)
			return err;
		left = deadline - store_http_now();
		if (attempt >= l->attempts || left <= backoff) {
			if (!err && store_http_retryable(rs->status))
				return 0;	/* the caller says the status */
			if (left <= backoff && err != -ETIMEDOUT)
				snprintf(rs->error + strlen(rs->error),
					 sizeof(rs->error) - strlen(rs->error),
					 " (gave up after %u attempts)", attempt);
			return err;
		}
		log_debug("%s: attempt %u: %s; again in %.1f s", what, attempt,
			  err ? rs->error : "a retryable status", backoff);
		usleep((useconds_t)(backoff * 1e6));
		backoff = backoff * 2 > 30 ? 30 : backoff * 2;
	}
}
