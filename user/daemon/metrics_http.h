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

/* Listens on @addr (IPv4 or IPv6 literal) and @port. NULL and errno. */
struct metrics_http *metrics_http__start(const char *addr, uint16_t port);
/* Replaces the text served (copied); -ENOMEM keeps the old one. */
int metrics_http__publish(struct metrics_http *h, const char *text, size_t len);
void metrics_http__stop(struct metrics_http *h);

#endif /* ACCELTRACE_METRICS_HTTP_H */
