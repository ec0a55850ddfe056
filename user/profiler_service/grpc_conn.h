/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The gRPC server's insides, shared by its parts: grpc_server.c (the
 * socket, the thread), grpc_call.c (calls, the owner's queue) and
 * grpc_conn.c (one connection's HTTP/2 session and gRPC framing). Not for other folders; the fuzz harness
 * feeds bytes to a connection through it.
 *
 * A call is held by two sides and freed when both let go, under the
 * server's lock: the stream (from its first HEADERS until nghttp2 closes
 * it or the connection goes) and the owner's side (from the moment it is
 * queued, through take, until finish has been answered on the wire or
 * found nobody to answer).
 */
#ifndef ACCELTRACE_GRPC_CONN_H
#define ACCELTRACE_GRPC_CONN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "profiler_service/grpc_server.h"

/* Request header bytes a stream may send (names and values). */
#define GRPC_SERVER_MAX_HEADER_BYTES (16u * 1024)
/* The gRPC message prefix: compressed flag, big-endian length. */
#define GRPC_FRAME_PREFIX 5u

enum grpc_call_state {
	GRPC_CALL_RECEIVING,	/* the request is still arriving */
	GRPC_CALL_QUEUED,	/* whole, waiting in s->pending */
	GRPC_CALL_TAKEN,	/* the owner's */
	GRPC_CALL_FINISHING,	/* finished, in s->done for the server's thread */
	GRPC_CALL_ANSWERING,	/* the answer handed to nghttp2 */
};

struct grpc_conn;

struct grpc_call {
	struct grpc_server *s;
	/* The server's thread only. */
	struct grpc_conn *conn;
	struct grpc_call *conn_prev, *conn_next;
	int32_t stream_id;
	uint64_t started_ns;		/* its first HEADERS */
	size_t header_bytes;
	bool content_type_ok, method_ok, headers_done, request_done, answered;
	uint8_t prefix[GRPC_FRAME_PREFIX];
	unsigned int prefix_got;
	size_t msg_want;		/* the message's length, once prefixed */
	bool have_msg;			/* one whole message arrived */
	/* Under s->lock. */
	struct grpc_call *all_prev, *all_next;
	struct grpc_call *q_next;
	enum grpc_call_state state;
	bool stream_ref, owner_ref;
	/* Read by the owner without the lock. */
	atomic_bool cancelled;
	/* The request: written by the server's thread before it is queued. */
	char *method;
	char peer[64];
	char client[48];		/* the connection's: "uid N" on loopback, else its address */
	uint64_t deadline_ns;
	uint8_t *msg;
	size_t msg_len;
	/* The answer: written by finish, read by the server's thread after. */
	enum grpc_status status;
	char *status_msg;
	uint8_t *resp;			/* the prefix and the message */
	size_t resp_len, resp_off;
};

struct grpc_conn {
	struct grpc_server *s;
	struct grpc_conn *prev, *next;
	int fd;
	char peer[64];
	/* Who, for the per-peer limit: on loopback (where every client is
	 * 127.0.0.1) "uid N", the local user owning the client's socket;
	 * elsewhere the address alone. */
	char host[48];
	struct nghttp2_session *ng;
	struct grpc_call *calls;	/* those whose stream is open */
	unsigned int streams;
	uint64_t idle_since_ns;		/* no stream open since; 0: some are */
	bool called;			/* a stream was ever opened on it */
	bool dead;			/* close it at the next turn */
};

/* The server: grpc_server.c's socket and thread, grpc_call.c's queues. */
struct grpc_server {
	struct grpc_server_opts o;
	int listen_fd;
	int wake_fd;			/* the server's thread: calls finished, stop */
	int ready_fd;			/* the owner's: calls to take */
	uint16_t port;
	pthread_t thread;
	bool running;
	atomic_bool stopping;
	char why[256];
	struct grpc_conn *conns;	/* the server's thread only */
	unsigned int nconns;
	pthread_mutex_t lock;		/* what follows */
	struct grpc_call *all;
	struct grpc_call *pending, *pending_tail;
	struct grpc_call *done, *done_tail;
};

void grpc_eventfd_raise(int fd);
void grpc_eventfd_clear(int fd);

/* grpc_call.c: the call's two holders and the owner's queue. */
struct grpc_call *grpc_call__new(struct grpc_conn *conn, int32_t stream_id);
void grpc_call__queue(struct grpc_call *c);
/* The stream is gone (closed, reset, its connection closed). */
void grpc_call__stream_gone(struct grpc_call *c);
/* The server answered it itself (deadline, stop): the owner's finish, if
 * it has the call, only frees; a call still queued leaves the queue. */
void grpc_call__abandon(struct grpc_call *c);
/* Calls finished by the owner, for the server's thread to answer. */
struct grpc_call *grpc_server__finished(struct grpc_server *s);
/* Frees every call left, the server's thread gone (stop). */
void grpc_server__free_calls(struct grpc_server *s);
/* Hands each call the owner finished to its connection's session. */
void grpc_server__answer_finished(struct grpc_server *s);
/* Lets go of the owner's side once its answer is with nghttp2. */
void grpc_call__answered(struct grpc_call *c);
unsigned int grpc_server__request_timeout_s(const struct grpc_server *s);
unsigned int grpc_server__idle_timeout_s(const struct grpc_server *s);

/* grpc_conn.c: one connection's HTTP/2 session. */
struct grpc_conn *grpc_conn__new(struct grpc_server *s, int fd, const char *peer,
				 const char *host);
/* Bytes read from the connection. 0, or -EPROTO: close it. */
int grpc_conn__input(struct grpc_conn *conn, const uint8_t *data, size_t len);
/* Sends what nghttp2 has to send until the socket would block. 0 or -errno. */
int grpc_conn__output(struct grpc_conn *conn);
bool grpc_conn__wants_write(const struct grpc_conn *conn);
bool grpc_conn__wants_read(const struct grpc_conn *conn);
/* Answers @c (finished by the owner, or @status by the server itself). */
void grpc_conn__answer(struct grpc_call *c);
void grpc_conn__answer_status(struct grpc_call *c, enum grpc_status status, const char *why);
/* Deadlines and the request timeout of its streams, at @now. */
void grpc_conn__expire(struct grpc_conn *conn, uint64_t now);
/* How long it may sit with no call open: the idle timeout, or before its
 * first call the request timeout. */
uint64_t grpc_conn__idle_limit_ns(const struct grpc_conn *conn);
/* The earliest time grpc_conn__expire has something to do; UINT64_MAX: none. */
uint64_t grpc_conn__next_expiry(const struct grpc_conn *conn);
/* GOAWAY and, for every call not answered, UNAVAILABLE with @why. */
void grpc_conn__shutdown(struct grpc_conn *conn, const char *why);
/* Closes the socket, lets go of every stream; accepts NULL. */
void grpc_conn__free(struct grpc_conn *conn);

/* The gRPC wire's small parts (grpc_conn.c), exposed for the tests. */
/* A grpc-timeout value ("100m", "5S"): ns, or 0 when it is not one. */
uint64_t grpc_timeout_parse(const char *v, size_t len);
/* grpc-message's percent-encoding of @in into @out (NUL-terminated);
 * the bytes written, or -ENOSPC. */
int grpc_percent_encode(const char *in, char *out, size_t size);

#endif /* ACCELTRACE_GRPC_CONN_H */
