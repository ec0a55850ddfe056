/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The metrics endpoint: libmicrohttpd serving GET /metrics from its own
 * thread, the text the daemon's loop last published (rendered there, so
 * the metrics themselves are only ever touched by that loop). Nothing but
 * the exposition text is served.
 */
#ifndef ACCELTRACE_METRICS_HTTP_H
#define ACCELTRACE_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>

struct metrics_http;

#define METRICS_HTTP_CONNECTION_LIMIT 64u	/* open at once, from anywhere */
/* Open at once from one peer: one local user on loopback (where every
 * client is 127.0.0.1), one address elsewhere. */
#define METRICS_HTTP_PER_IP_LIMIT 8u
/* A connection idle this long is closed, and one whose request has been
 * coming this long however slowly (from its connect or its last request). */
#define METRICS_HTTP_TIMEOUT_S 10u

struct metrics_http_opts {
	size_t sz;
	const char *addr;		/* an IPv4 or IPv6 literal ("[::1]" too) */
	uint16_t port;			/* 0: any free one (metrics_http__port) */
	unsigned int per_ip_limit;	/* per peer; 0: METRICS_HTTP_PER_IP_LIMIT */
	unsigned int timeout_s;		/* 0: METRICS_HTTP_TIMEOUT_S */
};

/*
 * Two steps, so that the server's thread starts after the daemon dropped
 * its privileges (a thread keeps the capabilities it was created with):
 * bind while privileged, serve after.
 */
/* Binds and listens (nothing is served yet). NULL and errno. */
struct metrics_http *metrics_http__bind(const struct metrics_http_opts *opts);
/* The port bound (the one the kernel chose for port 0). */
uint16_t metrics_http__port(const struct metrics_http *h);
/* The connections open now. */
unsigned int metrics_http__connections(const struct metrics_http *h);
/* Serves GET /metrics from a thread of its own. 0 or -errno. */
int metrics_http__serve(struct metrics_http *h);
/* Replaces the text served (copied); -ENOMEM keeps the old one. */
int metrics_http__publish(struct metrics_http *h, const char *text, size_t len);
/* Stops serving and closes the socket; accepts NULL. */
void metrics_http__stop(struct metrics_http *h);

#endif /* ACCELTRACE_METRICS_HTTP_H */
