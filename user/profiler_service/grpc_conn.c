// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One connection of the gRPC server: its nghttp2 server session fed from
 * the socket, requests checked and their one message de-framed as it
 * arrives (never more than the limit buffered), answers as HEADERS, one
 * DATA and trailers, or a trailers-only HEADERS for an error. The server's
 * thread only (grpc_server.c).
 */
#include <errno.h>
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define LOG_CONTEXT "grpc"
#include "lib/clock.h"
#include "lib/log.h"
#include "profiler_service/grpc_conn.h"

/* A request's whole message and its prefix fit the stream's window, so it
 * arrives without waiting for a WINDOW_UPDATE. */
#define INITIAL_WINDOW (128u * 1024)
/* grpc-message's bytes before encoding; longer ones are cut. */
#define STATUS_MESSAGE_MAX 1024u

#define NV(n, v) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), \
		   NGHTTP2_NV_FLAG_NONE }

uint64_t grpc_timeout_parse(const char *v, size_t len)
{
	uint64_t n = 0, unit;
	size_t i;

	/* TimeoutValue: 1 to 8 digits; TimeoutUnit: one letter. */
	if (len < 2 || len > 9)
		return 0;
	for (i = 0; i < len - 1; i++) {
		if (v[i] < '0' || v[i] > '9')
			return 0;
		n = n * 10 + (v[i] - '0');
	}
	switch (v[len - 1]) {
	case 'H': unit = 3600ull * 1000000000; break;
	case 'M': unit = 60ull * 1000000000; break;
	case 'S': unit = 1000000000; break;
	case 'm': unit = 1000000; break;
	case 'u': unit = 1000; break;
	case 'n': unit = 1; break;
	default: return 0;
	}
	if (n > UINT64_MAX / unit)
		return UINT64_MAX;
	return n ? n * unit : 1;	/* "0S": already past */
}

int grpc_percent_encode(const char *in, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *in; in++) {
		unsigned char ch = *in;

		/* The gRPC HTTP/2 spec: printable ASCII but '%' as it is. */
		if (ch >= 0x20 && ch <= 0x7e && ch != '%') {
			if (o + 1 >= size)
				return -ENOSPC;
			out[o++] = ch;
		} else {
			if (o + 3 >= size)
				return -ENOSPC;
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	if (o >= size)
		return -ENOSPC;
	out[o] = '\0';
	return o;
}

/* @why, cut at a UTF-8 character's start, percent-encoded into @out. */
static void status_message(const char *why, char *out, size_t size)
{
	char cut[STATUS_MESSAGE_MAX + 1];
	size_t n = strlen(why);

	if (n > STATUS_MESSAGE_MAX) {
		n = STATUS_MESSAGE_MAX;
		while (n && ((unsigned char)why[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(cut, why, n);
	cut[n] = '\0';
	if (grpc_percent_encode(cut, out, size) < 0)
		out[0] = '\0';
}

static void call_abandon_if_queued(struct grpc_call *c)
{
	if (c->request_done)
		grpc_call__abandon(c);
}

void grpc_conn__answer_status(struct grpc_call *c, enum grpc_status status, const char *why)
{
	char code[16], msg[3 * STATUS_MESSAGE_MAX + 1];
	struct grpc_conn *conn = c->conn;

	if (c->answered || !conn)
		return;
	c->answered = true;
	call_abandon_if_queued(c);
	snprintf(code, sizeof(code), "%d", status);
	status_message(why ? why : "", msg, sizeof(msg));
	{
		/* Trailers-only: one HEADERS with END_STREAM. */
		nghttp2_nv nva[] = {
			NV(":status", "200"),
			NV("content-type", "application/grpc"),
			NV("grpc-status", code),
			NV("grpc-message", msg),
		};

		nghttp2_submit_response(conn->ng, c->stream_id, nva, msg[0] ? 4 : 3, NULL);
	}
}

/* An answer to what is not a gRPC request at all. */
static void answer_http(struct grpc_call *c, const char *http_status)
{
	nghttp2_nv nva[] = { NV(":status", http_status) };

	c->answered = true;
	nghttp2_submit_response(c->conn->ng, c->stream_id, nva, 1, NULL);
}

/* The response message's bytes, then the trailers (grpc-status 0, and
 * grpc-message when the owner gave one). */
static ssize_t read_response(nghttp2_session *ng, int32_t stream_id, uint8_t *buf,
			     size_t length, uint32_t *flags, nghttp2_data_source *source,
			     void *user_data)
{
	struct grpc_call *c = source->ptr;
	size_t n = c->resp_len - c->resp_off;

	(void)user_data;
	if (n > length)
		n = length;
	memcpy(buf, c->resp + c->resp_off, n);
	c->resp_off += n;
	if (c->resp_off == c->resp_len) {
		/* An OK answer may say something too (what was not honoured). */
		char msg[3 * STATUS_MESSAGE_MAX + 1];

		status_message(c->status_msg ? c->status_msg : "", msg, sizeof(msg));
		*flags |= NGHTTP2_DATA_FLAG_EOF;
		{
			/* Made after msg: NV takes its length now. */
			nghttp2_nv trailers[] = {
				NV("grpc-status", "0"),
				NV("grpc-message", msg),
			};

			if (!nghttp2_submit_trailer(ng, stream_id, trailers, msg[0] ? 2 : 1))
				*flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
		}
	}
	return n;
}

void grpc_conn__answer(struct grpc_call *c)
{
	nghttp2_nv nva[] = {
		NV(":status", "200"),
		NV("content-type", "application/grpc"),
	};
	nghttp2_data_provider prd = { .source.ptr = c, .read_callback = read_response };

	if (c->status != GRPC_STATUS_OK || !c->resp) {
		grpc_conn__answer_status(c, c->status, c->status_msg);
		return;
	}
	c->answered = true;
	if (nghttp2_submit_response(c->conn->ng, c->stream_id, nva, 2, &prd))
		nghttp2_submit_rst_stream(c->conn->ng, NGHTTP2_FLAG_NONE, c->stream_id,
					  NGHTTP2_INTERNAL_ERROR);
}

/* ---- nghttp2's callbacks ---- */

static ssize_t on_send(nghttp2_session *ng, const uint8_t *data, size_t len, int flags,
		       void *user_data)
{
	struct grpc_conn *conn = user_data;
	ssize_t n;

	(void)ng;
	(void)flags;
	do
		n = send(conn->fd, data, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? NGHTTP2_ERR_WOULDBLOCK : NGHTTP2_ERR_CALLBACK_FAILURE;
	return n;
}

/*
 * Our END_STREAM went out while the client is still sending (an answer
 * before the request's end): RST_STREAM NO_ERROR tells it to stop, as
 * gRPC's servers do. Submitted with the answer, the reset could leave
 * before it.
 */
static int on_frame_send(nghttp2_session *ng, const nghttp2_frame *frame, void *user_data)
{
	(void)user_data;
	if ((frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
	    (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) &&
	    nghttp2_session_get_stream_remote_close(ng, frame->hd.stream_id) == 0)
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
					  NGHTTP2_NO_ERROR);
	return 0;
}

static int on_begin_headers(nghttp2_session *ng, const nghttp2_frame *frame, void *user_data)
{
	struct grpc_conn *conn = user_data;
	struct grpc_call *c;

	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;
	/* nghttp2 refuses streams past our SETTINGS once the client has
	 * them; before, this does. */
	if (conn->streams >= GRPC_SERVER_MAX_STREAMS) {
		nghttp2_submit_rst_stream(ng, NGHTTP2_FLAG_NONE, frame->hd.stream_id,
					  NGHTTP2_REFUSED_STREAM);
		return 0;
	}
	c = grpc_call__new(conn, frame->hd.stream_id);
	if (!c)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	nghttp2_session_set_stream_user_data(ng, frame->hd.stream_id, c);
	conn->streams++;
	conn->idle_since_ns = 0;
	conn->called = true;
	return 0;
}

static bool content_type_grpc(const uint8_t *v, size_t len)
{
	static const char grpc[] = "application/grpc";
	size_t n = sizeof(grpc) - 1;

	/* "application/grpc", "application/grpc+proto", "...; charset". */
	return len >= n && !strncasecmp((const char *)v, grpc, n) &&
	       (len == n || v[n] == '+' || v[n] == ';');
}

static int on_header(nghttp2_session *ng, const nghttp2_frame *frame, const uint8_t *name,
		     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
		     void *user_data)
{
	struct grpc_call *c;

	(void)flags;
	(void)user_data;
	if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
		return 0;	/* the client's trailers: nothing we read */
	c = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
	if (!c)
		return 0;
	/* Counted as HPACK counts an entry (RFC 7541 §4.1). */
	c->header_bytes += namelen + valuelen + 32;
	if (c->header_bytes > GRPC_SERVER_MAX_HEADER_BYTES)
		return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	if (namelen == 7 && !memcmp(name, ":method", 7)) {
		c->method_ok = valuelen == 4 && !memcmp(value, "POST", 4);
	} else if (namelen == 5 && !memcmp(name, ":path", 5)) {
		free(c->method);
		c->method = strndup((const char *)value, valuelen);
		if (!c->method)
			return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
	} else if (namelen == 12 && !memcmp(name, "content-type", 12)) {
		c->content_type_ok = content_type_grpc(value, valuelen);
	} else if (namelen == 12 && !memcmp(name, "grpc-timeout", 12)) {
		uint64_t t = grpc_timeout_parse((const char *)value, valuelen);

		if (t)
			c->deadline_ns = t > UINT64_MAX - c->started_ns ? UINT64_MAX :
					 c->started_ns + t;
	}
	/* te: trailers is what clients send; like gRPC's servers, we do not
	 * insist on it. */
	return 0;
}

/* The request ended (END_STREAM): a whole call, or an answer why not. */
static void request_end(struct grpc_call *c)
{
	c->request_done = true;
	if (c->answered)
		return;
	if (!c->have_msg) {
		grpc_conn__answer_status(c, GRPC_STATUS_INTERNAL,
					 c->prefix_got ? "truncated request message" :
					 "no request message");
		return;
	}
	grpc_call__queue(c);
}

static void headers_end(struct grpc_call *c)
{
	c->headers_done = true;
	if (!c->method_ok)
		answer_http(c, "405");
	else if (!c->content_type_ok)
		answer_http(c, "415");
	else if (!c->method)
		grpc_conn__answer_status(c, GRPC_STATUS_INTERNAL, "no :path");
}

static int on_frame_recv(nghttp2_session *ng, const nghttp2_frame *frame, void *user_data)
{
	struct grpc_call *c;
	bool end;

	(void)user_data;
	if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
		return 0;
	c = nghttp2_session_get_stream_user_data(ng, frame->hd.stream_id);
	if (!c)
		return 0;
	end = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
	if (frame->hd.type == NGHTTP2_HEADERS && !c->headers_done) {
		c->request_done = end;	/* nothing to reset after an answer */
		headers_end(c);
	}
	if (end)
		request_end(c);
	return 0;
}

/* Takes @len bytes of @c's request body: the one message's prefix, then
 * the message, bounded by GRPC_SERVER_MAX_MESSAGE before it is stored. */
static void take_body(struct grpc_call *c, const uint8_t *data, size_t len)
{
	char why[96];

	while (len && !c->answered) {
		size_t n;

		if (c->have_msg) {
			grpc_conn__answer_status(c, GRPC_STATUS_INTERNAL,
						 "more than one request message for a unary call");
			return;
		}
		if (c->prefix_got < GRPC_FRAME_PREFIX) {
			n = GRPC_FRAME_PREFIX - c->prefix_got;
			n = n < len ? n : len;
			memcpy(c->prefix + c->prefix_got, data, n);
			c->prefix_got += n;
			data += n;
			len -= n;
			if (c->prefix_got < GRPC_FRAME_PREFIX)
				return;
			if (c->prefix[0]) {
				grpc_conn__answer_status(c, GRPC_STATUS_UNIMPLEMENTED,
							 "compressed requests are not supported");
				return;
			}
			c->msg_want = (size_t)c->prefix[1] << 24 | (size_t)c->prefix[2] << 16 |
				      (size_t)c->prefix[3] << 8 | c->prefix[4];
			if (c->msg_want > GRPC_SERVER_MAX_MESSAGE) {
				snprintf(why, sizeof(why),
					 "request message of %zu bytes, more than the %u allowed",
					 c->msg_want, GRPC_SERVER_MAX_MESSAGE);
				grpc_conn__answer_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED, why);
				return;
			}
			c->msg = malloc(c->msg_want ? c->msg_want : 1);
			if (!c->msg) {
				grpc_conn__answer_status(c, GRPC_STATUS_RESOURCE_EXHAUSTED,
							 "out of memory");
				return;
			}
			c->msg_len = 0;
		}
		n = c->msg_want - c->msg_len;
		n = n < len ? n : len;
		memcpy(c->msg + c->msg_len, data, n);
		c->msg_len += n;
		data += n;
		len -= n;
		if (c->msg_len == c->msg_want) {
			c->have_msg = true;
			c->prefix_got = 0;
		}
	}
}

static int on_data_chunk(nghttp2_session *ng, uint8_t flags, int32_t stream_id,
			 const uint8_t *data, size_t len, void *user_data)
{
	struct grpc_call *c = nghttp2_session_get_stream_user_data(ng, stream_id);

	(void)flags;
	(void)user_data;
	if (c && c->headers_done && !c->request_done)
		take_body(c, data, len);
	return 0;
}

static int on_stream_close(nghttp2_session *ng, int32_t stream_id, uint32_t error_code,
			   void *user_data)
{
	struct grpc_conn *conn = user_data;
	struct grpc_call *c = nghttp2_session_get_stream_user_data(ng, stream_id);

	(void)error_code;
	if (!c)
		return 0;
	nghttp2_session_set_stream_user_data(ng, stream_id, NULL);
	if (--conn->streams == 0)
		conn->idle_since_ns = mono_ns();
	grpc_call__stream_gone(c);
	return 0;
}

/* ---- the connection ---- */

struct grpc_conn *grpc_conn__new(struct grpc_server *s, int fd, const char *peer,
				 const char *host)
{
	struct grpc_conn *conn = calloc(1, sizeof(*conn));
	nghttp2_session_callbacks *cbs = NULL;
	nghttp2_option *opt = NULL;
	nghttp2_settings_entry settings[] = {
		{ NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, GRPC_SERVER_MAX_STREAMS },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, INITIAL_WINDOW },
		{ NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, GRPC_SERVER_MAX_HEADER_BYTES },
	};
	int err = -ENOMEM;

	if (!conn)
		return NULL;
	conn->s = s;
	conn->fd = fd;
	conn->idle_since_ns = mono_ns();
	snprintf(conn->peer, sizeof(conn->peer), "%s", peer);
	snprintf(conn->host, sizeof(conn->host), "%s", host);
	if (nghttp2_session_callbacks_new(&cbs) || nghttp2_option_new(&opt))
		goto fail;
	nghttp2_session_callbacks_set_send_callback(cbs, on_send);
	nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
	nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
	nghttp2_session_callbacks_set_on_frame_send_callback(cbs, on_frame_send);
	/*
	 * Bounds beyond the streams: nghttp2's own against floods (SETTINGS
	 * entries, queued PING/SETTINGS acks, RST_STREAM rate, CONTINUATIONs)
	 * set here so they do not move with its version; no closed streams
	 * kept for priority, our header budget also in SETTINGS.
	 */
	nghttp2_option_set_max_settings(opt, 32);
	nghttp2_option_set_max_outbound_ack(opt, 1000);
	nghttp2_option_set_stream_reset_rate_limit(opt, 1000, 33);
	nghttp2_option_set_max_continuations(opt, 8);
	nghttp2_option_set_no_closed_streams(opt, 1);
	nghttp2_option_set_max_send_header_block_length(opt, 16384);
	if (nghttp2_session_server_new2(&conn->ng, cbs, conn, opt)) {
		conn->ng = NULL;
		goto fail;
	}
	if (nghttp2_submit_settings(conn->ng, NGHTTP2_FLAG_NONE, settings,
				    sizeof(settings) / sizeof(settings[0]))) {
		err = -EIO;
		goto fail;
	}
	nghttp2_session_callbacks_del(cbs);
	nghttp2_option_del(opt);
	return conn;
fail:
	nghttp2_session_callbacks_del(cbs);
	nghttp2_option_del(opt);
	if (conn->ng)
		nghttp2_session_del(conn->ng);
	free(conn);
	errno = -err;
	return NULL;
}

int grpc_conn__input(struct grpc_conn *conn, const uint8_t *data, size_t len)
{
	ssize_t n = nghttp2_session_mem_recv(conn->ng, data, len);

	if (n < 0) {
		/* A bad preface, a flood nghttp2 refused: nothing to say. */
		log_debug("%s: %s, closed", conn->peer, nghttp2_strerror((int)n));
		return -EPROTO;
	}
	return 0;
}

int grpc_conn__output(struct grpc_conn *conn)
{
	int rv = nghttp2_session_send(conn->ng);

	if (rv) {
		log_debug("%s: %s, closed", conn->peer, nghttp2_strerror(rv));
		return -EIO;
	}
	return 0;
}

bool grpc_conn__wants_write(const struct grpc_conn *conn)
{
	return nghttp2_session_want_write(conn->ng);
}

bool grpc_conn__wants_read(const struct grpc_conn *conn)
{
	return nghttp2_session_want_read(conn->ng);
}

void grpc_conn__expire(struct grpc_conn *conn, uint64_t now)
{
	uint64_t timeout = grpc_server__request_timeout_s(conn->s) * 1000000000ull;
	struct grpc_call *c;
	char why[64];

	for (c = conn->calls; c; c = c->conn_next) {
		if (c->answered)
			continue;
		if (c->deadline_ns && now >= c->deadline_ns) {
			grpc_conn__answer_status(c, GRPC_STATUS_DEADLINE_EXCEEDED,
						 "Deadline Exceeded");
		} else if (!c->request_done && now - c->started_ns >= timeout) {
			snprintf(why, sizeof(why), "the request was not whole within %us",
				 grpc_server__request_timeout_s(conn->s));
			grpc_conn__answer_status(c, GRPC_STATUS_DEADLINE_EXCEEDED, why);
		}
	}
}

uint64_t grpc_conn__idle_limit_ns(const struct grpc_conn *conn)
{
	/* Before its first call, a connection has a request's time to make
	 * one: idle connections held from the start (a local user's) let go
	 * in seconds, not minutes. */
	unsigned int s = conn->called ? grpc_server__idle_timeout_s(conn->s) :
					grpc_server__request_timeout_s(conn->s);

	return (uint64_t)s * 1000000000ull;
}

uint64_t grpc_conn__next_expiry(const struct grpc_conn *conn)
{
	uint64_t timeout = grpc_server__request_timeout_s(conn->s) * 1000000000ull;
	uint64_t next = UINT64_MAX;
	const struct grpc_call *c;

	if (conn->idle_since_ns)
		next = conn->idle_since_ns + grpc_conn__idle_limit_ns(conn);
	for (c = conn->calls; c; c = c->conn_next) {
		if (c->answered)
			continue;
		if (c->deadline_ns && c->deadline_ns < next)
			next = c->deadline_ns;
		if (!c->request_done && c->started_ns + timeout < next)
			next = c->started_ns + timeout;
	}
	return next;
}

void grpc_conn__shutdown(struct grpc_conn *conn, const char *why)
{
	struct grpc_call *c;

	for (c = conn->calls; c; c = c->conn_next)
		grpc_conn__answer_status(c, GRPC_STATUS_UNAVAILABLE, why);
	nghttp2_submit_goaway(conn->ng, NGHTTP2_FLAG_NONE,
			      nghttp2_session_get_last_proc_stream_id(conn->ng),
			      NGHTTP2_NO_ERROR, NULL, 0);
}

void grpc_conn__free(struct grpc_conn *conn)
{
	if (!conn)
		return;
	/* nghttp2_session_del calls no callback: let go of each stream here. */
	while (conn->calls) {
		struct grpc_call *c = conn->calls;

		nghttp2_session_set_stream_user_data(conn->ng, c->stream_id, NULL);
		grpc_call__stream_gone(c);	/* takes it off conn->calls */
	}
	nghttp2_session_del(conn->ng);
	if (conn->fd >= 0)
		close(conn->fd);
	free(conn);
}
