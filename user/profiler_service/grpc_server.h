/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A unary gRPC server over cleartext HTTP/2 (prior knowledge, as gRPC's
 * clients speak it without TLS), on nghttp2, serving from a thread of its
 * own. It knows nothing of the methods it serves: each whole request
 * (path and message bytes) is queued for the owner's loop, which takes it
 * with grpc_server__take() when grpc_server__fd() is readable and answers
 * it, then or later (a Profile answers when its capture is written), with
 * grpc_call__finish(). Only the server's thread touches nghttp2; only the
 * owner's thread touches a call it took, until it finishes it.
 *
 * Bounded against what the network sends: connections in all and per
 * address, streams per connection, a request message's size, the time a
 * request has to arrive whole, idle connections.
 */
#ifndef ACCELTRACE_GRPC_SERVER_H
#define ACCELTRACE_GRPC_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* gRPC's status codes (grpc/status.h), as sent in grpc-status. */
enum grpc_status {
	GRPC_STATUS_OK = 0,
	GRPC_STATUS_CANCELLED = 1,
	GRPC_STATUS_UNKNOWN = 2,
	GRPC_STATUS_INVALID_ARGUMENT = 3,
	GRPC_STATUS_DEADLINE_EXCEEDED = 4,
	GRPC_STATUS_NOT_FOUND = 5,
	GRPC_STATUS_ALREADY_EXISTS = 6,
	GRPC_STATUS_PERMISSION_DENIED = 7,
	GRPC_STATUS_RESOURCE_EXHAUSTED = 8,
	GRPC_STATUS_FAILED_PRECONDITION = 9,
	GRPC_STATUS_ABORTED = 10,
	GRPC_STATUS_OUT_OF_RANGE = 11,
	GRPC_STATUS_UNIMPLEMENTED = 12,
	GRPC_STATUS_INTERNAL = 13,
	GRPC_STATUS_UNAVAILABLE = 14,
	GRPC_STATUS_DATA_LOSS = 15,
	GRPC_STATUS_UNAUTHENTICATED = 16,
};

#define GRPC_SERVER_CONNECTION_LIMIT 64u	/* open at once, from anywhere */
/* Open at once from one peer: a local user on loopback, else an address. */
#define GRPC_SERVER_PER_IP_LIMIT 8u
#define GRPC_SERVER_MAX_STREAMS 16u		/* concurrent calls a connection */
#define GRPC_SERVER_MAX_MESSAGE (64u * 1024)	/* a request message's bytes */
#define GRPC_SERVER_REQUEST_TIMEOUT_S 10u	/* a request's bytes, all of them */
/* No call open, nothing sent (before its first call: the request timeout). */
#define GRPC_SERVER_IDLE_TIMEOUT_S 300u

struct grpc_server_opts {
	size_t sz;
	const char *addr;		/* an IPv4 or IPv6 literal ("[::1]" too) */
	uint16_t port;			/* 0: any free one (grpc_server__port) */
	unsigned int per_ip_limit;	/* 0: GRPC_SERVER_PER_IP_LIMIT */
	unsigned int request_timeout_s;	/* 0: GRPC_SERVER_REQUEST_TIMEOUT_S */
	unsigned int idle_timeout_s;	/* 0: GRPC_SERVER_IDLE_TIMEOUT_S */
};

struct grpc_server;
/* One unary call: taken by the owner, finished exactly once. */
struct grpc_call;

/*
 * Two steps, as metrics_http: bind while privileged, serve (start the
 * thread) after the privileges are dropped.
 */
/* Binds and listens; nothing is served yet. NULL and errno. */
struct grpc_server *grpc_server__bind(const struct grpc_server_opts *opts);
/* The port bound (the one the kernel chose for port 0). */
uint16_t grpc_server__port(const struct grpc_server *s);
/* Serves from a thread of its own. 0 or -errno. */
int grpc_server__serve(struct grpc_server *s);
/* Readable while calls wait to be taken (an eventfd; poll it, never read). */
int grpc_server__fd(const struct grpc_server *s);
/* The next whole request, or NULL when none waits. */
struct grpc_call *grpc_server__take(struct grpc_server *s);
/* Finishes every call not yet finished with UNAVAILABLE and @why, stops
 * serving, closes every connection and the socket; accepts NULL. From the
 * owner's thread: calls it took and did not finish are freed too, so it
 * forgets them (never finishes them after). */
void grpc_server__stop(struct grpc_server *s, const char *why);

/* "/tensorflow.ProfilerService/Profile": the request's :path. */
const char *grpc_call__method(const struct grpc_call *c);
/* The request message's bytes (the gRPC frame's prefix removed). */
const uint8_t *grpc_call__message(const struct grpc_call *c, size_t *len);
/* The peer, "ADDR:PORT", for logs. */
const char *grpc_call__peer(const struct grpc_call *c);
/* Who the call is from, as the limits count clients: "uid N" (the local
 * user owning the socket) on loopback, else the peer's address. */
const char *grpc_call__client(const struct grpc_call *c);
/* The client's deadline (grpc-timeout) as CLOCK_MONOTONIC ns; 0: none. */
uint64_t grpc_call__deadline_ns(const struct grpc_call *c);
/* True once the client went away or cancelled the stream (RST_STREAM). */
bool grpc_call__cancelled(const struct grpc_call *c);
/*
 * Answers and frees @c: @status with @message (UTF-8, sent percent-encoded
 * in grpc-message; NULL: none) and, for OK, the response message's bytes
 * (copied). A call whose client left is only freed.
 */
void grpc_call__finish(struct grpc_call *c, enum grpc_status status, const char *message,
		       const uint8_t *response, size_t len);

#endif /* ACCELTRACE_GRPC_SERVER_H */
