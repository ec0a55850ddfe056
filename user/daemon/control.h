/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's control socket: a Unix stream socket, mode 0600, whose
 * server also checks each client's credentials (SO_PEERCRED: root or the
 * daemon's own user). One request a connection, one line each way, the
 * request's whole line (at most CONTROL_MAX_LINE bytes) within
 * CONTROL_REQUEST_TIMEOUT_MS of connecting:
 *
 *   trigger duration_ns=D at_ns=T session=NAME     (T: realtime ns; 0 now;
 *                                                   NAME "-": the default)
 *   ok PATH window_start_ns=S window_stop_ns=E
 *                      the capture it caused, written, and its window
 *                      (CLOCK_MONOTONIC); PATH has no spaces (the daemon's
 *                      logdir must not)
 *   error MESSAGE      why not
 *
 * The reply comes once the capture is written (after its window), so a
 * fleet's `acceltrace trigger --at` calls all return the path they caused.
 */
#ifndef ACCELTRACE_CONTROL_H
#define ACCELTRACE_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#define CONTROL_MAX_LINE 1024
#define CONTROL_MAX_SESSION 200
/* A client's whole request line is due this long after it connects. */
#define CONTROL_REQUEST_TIMEOUT_MS 5000

struct control_request {
	uint64_t duration_ns;		/* the window after the trigger */
	uint64_t at_realtime_ns;	/* 0: now */
	char session[CONTROL_MAX_SESSION];	/* "": the default (local time) */
	uint32_t pid;			/* the process it is about; 0: none */
};

/* A session name: letters, digits, '.', '_', '-', not "." or "..". */
int control_valid_session(const char *s);
int control_format_request(const struct control_request *rq, char *buf, size_t len);
/* 0, or -EINVAL with @err saying what was wrong. */
int control_parse_request(const char *line, struct control_request *rq,
			  char *err, size_t err_len);

/* ---- server (the daemon) ---- */
struct control_server;
typedef void (*control_request_fn)(void *ctx, int client, const struct control_request *rq);

/* Creates the socket at @path (its directory too, 0700, when missing); a
 * stale socket there is replaced, a live one is -EADDRINUSE. NULL, errno. */
struct control_server *control_server__new(const char *path);
/* The request line's deadline after a client connects (tests shorten it). */
void control_server__set_request_timeout(struct control_server *s, uint64_t timeout_ns);
/* Accepts clients and reads what they sent, without blocking; each whole
 * request goes to @fn, bad ones are answered with an error here, and so
 * is a client whose line is not whole by its deadline (it is let go). */
void control_server__poll(struct control_server *s, control_request_fn fn, void *ctx);
/* Answers @client (as @fn was given it) with one line (without its
 * newline) and closes it; a client that left meanwhile is skipped. */
void control_server__reply(struct control_server *s, int client, const char *line);
/* Answers every client still waiting, closes and removes the socket. */
void control_server__free(struct control_server *s, const char *last_words);

/* ---- client (acceltrace trigger) ---- */
/* Sends @rq and waits up to @timeout_ms for the reply line (newline cut).
 * -errno when the daemon could not be reached or did not answer. */
int control_request(const char *path, const struct control_request *rq,
		    char *reply, size_t len, int timeout_ms);

#endif /* ACCELTRACE_CONTROL_H */
