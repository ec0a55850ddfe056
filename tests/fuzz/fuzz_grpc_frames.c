// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The gRPC server's connection input (profiler_service/grpc_conn.c): what
 * any client that reaches the ProfilerService port sends, fed to one
 * connection's nghttp2 session as it would arrive from the socket (byte 0
 * picks the chunk size), with a socketpair for its output. Every call it
 * queues is taken and finished as the owner would (echoed, or an error
 * when the message's first byte is odd), the answers sent, its timeouts
 * run, the connection shut down and freed: LeakSanitizer sees every call
 * let go by both its holders.
 */
#include <sys/socket.h>

#include "fuzz_input.h"
#include "profiler_service/grpc_conn.h"

static struct grpc_server *server;

static void drain(int fd)
{
	char buf[65536];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct grpc_server_opts o = { .sz = sizeof(o), .addr = "127.0.0.1" };
	struct grpc_conn *conn;
	struct grpc_call *c;
	size_t chunk, off;
	int sv[2];

	if (!server && !(server = grpc_server__bind(&o)))
		abort();
	if (size < 1)
		return 0;
	chunk = data[0] ? data[0] : size;
	data++;
	size--;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv))
		abort();
	conn = grpc_conn__new(server, sv[0], "fuzz:1", "fuzz");
	if (!conn)
		abort();
	for (off = 0; off < size; off += chunk) {
		size_t len = size - off < chunk ? size - off : chunk;

		if (grpc_conn__input(conn, data + off, len))
			break;
		grpc_conn__output(conn);
		drain(sv[1]);
		while ((c = grpc_server__take(server))) {
			size_t mlen;
			const uint8_t *m = grpc_call__message(c, &mlen);

			if (!grpc_call__method(c) || grpc_call__peer(c)[0] == '\0')
				abort();
			/* The message picks the answer: echoed, or an error. */
			if (!mlen || !(m[0] & 1))
				grpc_call__finish(c, GRPC_STATUS_OK, NULL, m, mlen);
			else
				grpc_call__finish(c, GRPC_STATUS_NOT_FOUND, "n\xc3\xa9", NULL, 0);
		}
		grpc_server__answer_finished(server);
		grpc_conn__output(conn);
		drain(sv[1]);
	}
	grpc_conn__expire(conn, UINT64_MAX / 2);
	grpc_conn__shutdown(conn, "fuzz");
	grpc_conn__output(conn);
	grpc_conn__free(conn);
	close(sv[1]);
	if (grpc_server__take(server))
		abort();	/* a call queued past its connection's end */
	return 0;
}
