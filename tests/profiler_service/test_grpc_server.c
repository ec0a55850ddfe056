// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The unary gRPC transport (profiler_service/grpc_server.h), driven by a
 * real client: Python's grpcio (grpc_client.py, started from here) calls
 * the test methods this test's main thread answers as the owner would, and
 * checks bytes, status codes and messages, deadlines, cancellation, the
 * message limit, many calls on one channel and UNAVAILABLE at stop.
 * Hostile clients are raw sockets: garbage for the preface, a preface and
 * nothing more (let go at the request timeout, not the idle one),
 * connections past the per-peer limit (on loopback per local user: refused
 * from another address too, while nobody is served), a truncated gRPC
 * frame, a request that never ends. grpc-timeout and grpc-message's
 * encoding are checked against the gRPC HTTP/2 spec's own examples.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "loopback.h"
#include "profiler_service/grpc_conn.h"

#define PER_IP 3
#define HELD_MAX 64

extern char **environ;

static void test_wire_parts(void)
{
	char out[64];

	ASSERT_EQ(grpc_timeout_parse("1S", 2), 1000000000ull, "1S");
	ASSERT_EQ(grpc_timeout_parse("100m", 4), 100000000ull, "100m");
	ASSERT_EQ(grpc_timeout_parse("5H", 2), 5 * 3600 * 1000000000ull, "5H");
	ASSERT_EQ(grpc_timeout_parse("2M", 2), 120000000000ull, "2M");
	ASSERT_EQ(grpc_timeout_parse("7u", 2), 7000ull, "7u");
	ASSERT_EQ(grpc_timeout_parse("99999999n", 9), 99999999ull, "8 digits");
	ASSERT_EQ(grpc_timeout_parse("123456789S", 10), 0, "9 digits refused");
	ASSERT_EQ(grpc_timeout_parse("1x", 2), 0, "unknown unit");
	ASSERT_EQ(grpc_timeout_parse("S", 1), 0, "no digits");
	ASSERT_EQ(grpc_timeout_parse("-1S", 3), 0, "a sign");
	ASSERT_EQ(grpc_percent_encode("plain text", out, sizeof(out)), 10, "ASCII kept");
	ASSERT_STREQ(out, "plain text", "ASCII kept");
	grpc_percent_encode("100% caf\xc3\xa9\n", out, sizeof(out));
	ASSERT_STREQ(out, "100%25 caf%C3%A9%0A", "%, UTF-8 and control bytes encoded");
	ASSERT_EQ(grpc_percent_encode("\xe2\x98\x95", out, 9), -ENOSPC, "too small refused");
}

/* ---- a raw HTTP/2 client, to be hostile with ---- */

static size_t frame(uint8_t *out, uint8_t type, uint8_t flags, uint32_t stream,
		    const void *payload, size_t len)
{
	out[0] = len >> 16;
	out[1] = len >> 8;
	out[2] = len;
	out[3] = type;
	out[4] = flags;
	out[5] = stream >> 24;
	out[6] = stream >> 16;
	out[7] = stream >> 8;
	out[8] = stream;
	if (len)
		memcpy(out + 9, payload, len);
	return 9 + len;
}

#define RAW_NV(n, v) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, sizeof(v) - 1, 0 }

/* The preface, SETTINGS, a gRPC request's HEADERS on stream 1 and a DATA
 * frame of @body (END_STREAM when @end). */
static size_t request_bytes(uint8_t *out, const void *body, size_t len, bool end)
{
	nghttp2_nv nva[] = {
		RAW_NV(":method", "POST"), RAW_NV(":scheme", "http"),
		RAW_NV(":path", "/test.Echo/Echo"), RAW_NV(":authority", "localhost"),
		RAW_NV("content-type", "application/grpc"), RAW_NV("te", "trailers"),
	};
	nghttp2_hd_deflater *def;
	uint8_t block[512];
	ssize_t blen;
	size_t n = 0;

	memcpy(out, NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN);
	n += NGHTTP2_CLIENT_MAGIC_LEN;
	n += frame(out + n, NGHTTP2_SETTINGS, 0, 0, NULL, 0);
	if (nghttp2_hd_deflate_new(&def, 4096))
		return 0;
	blen = nghttp2_hd_deflate_hd(def, block, sizeof(block), nva, sizeof(nva) / sizeof(nva[0]));
	nghttp2_hd_deflate_del(def);
	if (blen < 0)
		return 0;
	n += frame(out + n, NGHTTP2_HEADERS, NGHTTP2_FLAG_END_HEADERS, 1, block, blen);
	n += frame(out + n, NGHTTP2_DATA, end ? NGHTTP2_FLAG_END_STREAM : 0, 1, body, len);
	return n;
}

/* Reads frames until stream 1's HEADERS with END_STREAM, and gives its
 * grpc-status (-1: none came) and grpc-message. */
static int read_status(int fd, char *msg, size_t msg_len, int ms)
{
	static uint8_t buf[1 << 16];
	long long deadline = test_now_ms() + ms;
	nghttp2_hd_inflater *inf;
	size_t have = 0;
	int status = -1;

	msg[0] = '\0';
	if (nghttp2_hd_inflate_new(&inf))
		return -1;
	while (test_now_ms() < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, (int)(deadline - test_now_ms())) != 1)
			break;
		n = recv(fd, buf + have, sizeof(buf) - have, 0);
		if (n <= 0)
			break;
		have += n;
		while (have >= 9) {
			size_t len = (size_t)buf[0] << 16 | buf[1] << 8 | buf[2];
			uint8_t type = buf[3], flags = buf[4];
			uint8_t *p = buf + 9;

			if (have < 9 + len)
				break;
			if (type == NGHTTP2_HEADERS) {
				size_t left = len;

				for (;;) {
					nghttp2_nv nv;
					int iflags = 0;
					ssize_t used = nghttp2_hd_inflate_hd2(inf, &nv, &iflags, p,
									      left, 1);

					if (used < 0)
						goto out;
					p += used;
					left -= used;
					if (iflags & NGHTTP2_HD_INFLATE_EMIT) {
						if (nv.namelen == 11 && !memcmp(nv.name, "grpc-status", 11))
							status = atoi((const char *)nv.value);
						if (nv.namelen == 12 && !memcmp(nv.name, "grpc-message", 12))
							snprintf(msg, msg_len, "%.*s", (int)nv.valuelen,
								 nv.value);
					}
					if (iflags & NGHTTP2_HD_INFLATE_FINAL) {
						nghttp2_hd_inflate_end_headers(inf);
						break;
					}
					if (!used && !(iflags & NGHTTP2_HD_INFLATE_EMIT))
						break;
				}
				if (flags & NGHTTP2_FLAG_END_STREAM)
					goto out;
			}
			memmove(buf, buf + 9 + len, have - 9 - len);
			have -= 9 + len;
		}
	}
out:
	nghttp2_hd_inflate_del(inf);
	return status;
}

/* The gRPC status a client that became @uid (its socket made after) gets
 * for @req, or -1. */
static int status_as(uid_t uid, uint16_t port, const uint8_t *req, size_t len)
{
	int status = 0;
	pid_t child = fork();

	if (child == 0) {
		char msg[256];
		int fd;

		if (setresuid(uid, uid, uid))
			_exit(255);
		fd = connect_from("127.0.0.3", port);
		if (fd < 0 || write(fd, req, len) != (ssize_t)len)
			_exit(254);
		_exit(read_status(fd, msg, sizeof(msg), 5000) & 0xff);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status) >= 254 ? -1 : WEXITSTATUS(status);
}

static void test_hostile(void)
{
	struct grpc_server_opts o = { .sz = sizeof(o), .addr = "127.0.0.1", .per_ip_limit = PER_IP,
				      .request_timeout_s = 1, .idle_timeout_s = 60 };
	struct grpc_server *s = grpc_server__bind(&o);
	static const uint8_t truncated[] = { 0, 0, 0, 0, 10, 'a', 'b' };
	static const uint8_t compressed[] = { 1, 0, 0, 0, 1, 'a' };
	uint8_t req[1024];
	int fds[PER_IP], n = 0, fd = -1, fd2;
	char msg[256];
	uint16_t port;
	size_t len;

	if (!ASSERT_OK_PTR(s, "bind") || !ASSERT_OK(grpc_server__serve(s), "serve"))
		goto out;
	port = grpc_server__port(s);

	fd = connect_from("127.0.0.1", port);
	ASSERT_TRUE(fd >= 0 && write(fd, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27) == 27,
		    "garbage sent");
	ASSERT_TRUE(closed_within(fd, 5000), "garbage for a preface: closed");
	close(fd);

	fd = connect_from("127.0.0.1", port);
	ASSERT_TRUE(fd >= 0 && write(fd, NGHTTP2_CLIENT_MAGIC, NGHTTP2_CLIENT_MAGIC_LEN) ==
		    NGHTTP2_CLIENT_MAGIC_LEN, "preface sent");
	/* No call ever made: let go at the request timeout (1 s), not at the
	 * idle one (60 s), so idle connections held from the start go fast. */
	ASSERT_TRUE(closed_within(fd, 5000), "a preface and nothing more: closed in seconds");
	close(fd);

	len = request_bytes(req, truncated, sizeof(truncated), true);
	fd = connect_from("127.0.0.1", port);
	ASSERT_TRUE(fd >= 0 && write(fd, req, len) == (ssize_t)len, "truncated frame sent");
	ASSERT_EQ(read_status(fd, msg, sizeof(msg), 5000), GRPC_STATUS_INTERNAL,
		  "a truncated gRPC frame: INTERNAL");
	ASSERT_STREQ(msg, "truncated request message", "what was wrong");
	close(fd);

	len = request_bytes(req, compressed, sizeof(compressed), true);
	fd = connect_from("127.0.0.1", port);
	ASSERT_TRUE(fd >= 0 && write(fd, req, len) == (ssize_t)len, "compressed sent");
	ASSERT_EQ(read_status(fd, msg, sizeof(msg), 5000), GRPC_STATUS_UNIMPLEMENTED,
		  "a compressed message: UNIMPLEMENTED");
	ASSERT_STREQ(msg, "compressed requests are not supported", "what was wrong");
	close(fd);

	/* The message's prefix and part of it, never the rest. */
	len = request_bytes(req, truncated, sizeof(truncated), false);
	fd = connect_from("127.0.0.1", port);
	ASSERT_TRUE(fd >= 0 && write(fd, req, len) == (ssize_t)len, "half a request sent");
	ASSERT_EQ(read_status(fd, msg, sizeof(msg), 5000), GRPC_STATUS_DEADLINE_EXCEEDED,
		  "a request never whole: DEADLINE_EXCEEDED at the request timeout");
	ASSERT_STRCONTAINS(msg, "not whole within 1s", "what was wrong");
	close(fd);
	ASSERT_EQ(grpc_server__take(s), NULL, "nothing reached the owner");

	for (n = 0; n < PER_IP; n++) {
		fds[n] = connect_from("127.0.0.2", port);
		if (!ASSERT_TRUE(fds[n] >= 0, "connection within the limit"))
			goto out;
		/* Kept busy past the idle timeout: a request half sent. */
		len = request_bytes(req, truncated, sizeof(truncated), false);
		ASSERT_TRUE(write(fds[n], req, len) == (ssize_t)len, "busy");
	}
	fd = connect_from("127.0.0.2", port);
	/* On loopback the peer is the local user, whatever its address. */
	fd2 = connect_from("127.0.0.3", port);
	/* At once: those within the limit are busy until their request
	 * timeout (1 s) at least. */
	ASSERT_TRUE(fd >= 0 && closed_within(fd, 500), "one past the per-peer limit: closed");
	ASSERT_TRUE(fd2 >= 0 && closed_within(fd2, 500),
		    "the same user from another address: closed");
	close(fd);
	if (fd2 >= 0)
		close(fd2);
	fd = -1;
	len = request_bytes(req, truncated, sizeof(truncated), true);
	if (getuid() == 0)
		ASSERT_EQ(status_as(65534, port, req, len), GRPC_STATUS_INTERNAL,
			  "another local user (nobody) served meanwhile");
	else
		printf("SKIP-PART: not root: no client of another uid\n");
out:
	while (n > 0)
		close(fds[--n]);
	grpc_server__stop(s, NULL);
}

/* ---- grpcio against the owner's side ---- */

struct owner {
	struct grpc_server *s;
	struct grpc_call *held[HELD_MAX];
	unsigned int nheld, cancelled_seen;
	bool stop;
};

/* "CODE:message" → that status. */
static void answer_fail(struct grpc_call *c, const uint8_t *m, size_t len)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%.*s", (int)len, (const char *)m);
	grpc_call__finish(c, atoi(buf), strchr(buf, ':') ? strchr(buf, ':') + 1 : "", NULL, 0);
}

static void serve_one(struct owner *w, struct grpc_call *c)
{
	const char *method = grpc_call__method(c);
	size_t len;
	const uint8_t *m = grpc_call__message(c, &len);
	char num[32];

	if (!strcmp(method, "/test.Echo/Echo")) {
		grpc_call__finish(c, GRPC_STATUS_OK, NULL, m, len);
	} else if (!strcmp(method, "/test.Echo/Note")) {
		/* OK, the message echoed, and the request's text as the status's. */
		char note[256];

		snprintf(note, sizeof(note), "%.*s", (int)len, (const char *)m);
		grpc_call__finish(c, GRPC_STATUS_OK, note, m, len);
	} else if (!strcmp(method, "/test.Echo/Fail")) {
		answer_fail(c, m, len);
	} else if (!strcmp(method, "/test.Echo/Never") && w->nheld < HELD_MAX) {
		w->held[w->nheld++] = c;
	} else if (!strcmp(method, "/test.Echo/Deadline")) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)grpc_call__deadline_ns(c));
		grpc_call__finish(c, GRPC_STATUS_OK, NULL, (uint8_t *)num, strlen(num));
	} else if (!strcmp(method, "/test.Echo/Cancelled")) {
		snprintf(num, sizeof(num), "%u %u", w->cancelled_seen, w->nheld);
		grpc_call__finish(c, GRPC_STATUS_OK, NULL, (uint8_t *)num, strlen(num));
	} else if (!strcmp(method, "/test.Echo/Stop")) {
		grpc_call__finish(c, GRPC_STATUS_OK, NULL, NULL, 0);
		w->stop = true;
	} else {
		grpc_call__finish(c, GRPC_STATUS_UNIMPLEMENTED, method, NULL, 0);
	}
}

static void test_grpcio(void)
{
	struct grpc_server_opts o = { .sz = sizeof(o), .addr = "[::1]" };
	struct owner w = {};
	char port[16], *argv[] = { "/usr/bin/python3", "tests/profiler_service/grpc_client.py",
				   port, NULL };
	long long deadline;
	int status = -1;
	pid_t pid = -1;

	w.s = grpc_server__bind(&o);
	if (!w.s) {
		o.addr = "127.0.0.1";	/* no IPv6 here */
		w.s = grpc_server__bind(&o);
	}
	if (!ASSERT_OK_PTR(w.s, "bind") || !ASSERT_OK(grpc_server__serve(w.s), "serve"))
		goto out;
	snprintf(port, sizeof(port), "%s:%u", o.addr, grpc_server__port(w.s));
	if (access(argv[0], X_OK)) {
		test_skip_part("grpcio: no /usr/bin/python3");
		goto out;
	}
	if (!ASSERT_OK(posix_spawn(&pid, argv[0], NULL, NULL, argv, environ), "spawn the client"))
		goto out;
	deadline = test_now_ms() + 60000;
	while (test_now_ms() < deadline) {
		struct pollfd pfd = { .fd = w.s ? grpc_server__fd(w.s) : -1, .events = POLLIN };
		struct grpc_call *c;

		poll(&pfd, 1, 20);
		while (w.s && (c = grpc_server__take(w.s)))
			serve_one(&w, c);
		for (unsigned int i = 0; i < w.nheld; i++) {
			if (!grpc_call__cancelled(w.held[i]))
				continue;
			grpc_call__finish(w.held[i], GRPC_STATUS_OK, NULL, NULL, 0);
			w.held[i--] = w.held[--w.nheld];
			w.cancelled_seen++;
		}
		if (w.stop) {
			/* Held calls still open are answered UNAVAILABLE. */
			grpc_server__stop(w.s, "the test stops the server");
			w.s = NULL;
			w.stop = false;
			w.nheld = 0;
		}
		if (waitpid(pid, &status, WNOHANG) == pid) {
			pid = -1;
			break;
		}
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		ASSERT_TRUE(false, "the client finished within 60 s");
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP) {
		test_skip_part("grpcio: python3-grpcio is not installed");
	} else {
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			    "grpc_client.py's checks held");
	}
	ASSERT_GE(w.cancelled_seen, 2, "the deadline's and the client's cancel seen by the owner");
out:
	grpc_server__stop(w.s, NULL);
}

int main(void)
{
	test_wire_parts();
	test_hostile();
	test_grpcio();
	return test_exit();
}
