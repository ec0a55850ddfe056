/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One HTTP request of a store, through libcurl, and the retry loop around
 * it: a transfer that stalls (under 1 KiB/s for the stall time) is
 * dropped, a transport failure or a 408/429/5xx is retried with
 * exponential backoff, and nothing is retried past the deadline.
 */
#ifndef ACCELTRACE_STORE_HTTP_H
#define ACCELTRACE_STORE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct curl_slist;

/* The bounds of a store's requests; store_http_limits_default() reads
 * ACCELTRACE_STORE_STALL_S, _DEADLINE_S and _ATTEMPTS over the defaults. */
struct store_http_limits {
	unsigned int connect_s;		/* to connect: 10 */
	unsigned int stall_s;		/* under 1 KiB/s this long: 30 */
	unsigned int deadline_s;	/* one call, all its attempts: 600 */
	unsigned int attempts;		/* tries of one request: 5 */
	/* The end of the call under way (a whole upload: every part, every
	 * retry), on store_http_now()'s clock; 0: each request's own. */
	double until;
};
/* Seconds on CLOCK_MONOTONIC. */
double store_http_now(void);
void store_http_limits_default(struct store_http_limits *l);

struct http_request {
	const char *method;		/* "GET", "PUT", "POST", "HEAD", "DELETE" */
	const char *url;
	struct curl_slist *headers;
	const char *aws_sigv4;		/* libcurl's provider string, or NULL */
	const char *userpwd;		/* "KEY:SECRET" with aws_sigv4 */
	/* The body: @body_len bytes at @body, or @body_size bytes of @body_fd
	 * from @body_off (body_fd >= 0), read again for each attempt. */
	const void *body;
	size_t body_len;
	int body_fd;
	uint64_t body_off, body_size;
	/* A 2xx response's body into @out_fd (truncated for each attempt)
	 * instead of memory; -1: memory. */
	int out_fd;
};

#define HTTP_REQUEST_INIT { .body_fd = -1, .out_fd = -1 }

struct http_response {
	long status;			/* 0: no response */
	char *data;			/* the body when in memory (at most 8 MiB), NUL-ended */
	size_t len;
	char location[2048];		/* the Location header */
	char range[128];		/* the Range header */
	char etag[256];			/* the ETag header */
	char error[256];		/* the transport's failure, in words */
};

void http_response_clear(struct http_response *rs);

/*
 * The request, retried while it fails in a way worth retrying, within
 * @limits. 0 when a response came (whatever its status: the caller reads
 * rs->status), or -errno when none came (rs->error says why: -ETIMEDOUT
 * for a stall or the deadline, -ECONNREFUSED, -EHOSTUNREACH, -EIO).
 * @what names the request in debug messages.
 */
int store_http_send(const struct store_http_limits *limits, const struct http_request *rq,
		    struct http_response *rs, const char *what);

/* True for the statuses worth another try: 408, 429, 500, 502, 503, 504. */
bool store_http_retryable(long status);

/* @s percent-encoded (RFC 3986's unreserved characters kept, and '/'
 * when @keep_slash) into @out; -ENAMETOOLONG when it does not fit. */
int store_http_escape(const char *s, bool keep_slash, char *out, size_t len);

#endif /* ACCELTRACE_STORE_HTTP_H */
