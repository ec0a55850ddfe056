/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Raw TCP clients on loopback for the tests of the daemon's endpoints
 * (metrics, the ProfilerService): a connection from a chosen 127.0.0.x,
 * so that per-address limits can be met, and whether the server closed
 * it in time. Include after test.h.
 */
#ifndef ACCELTRACE_TEST_LOOPBACK_H
#define ACCELTRACE_TEST_LOOPBACK_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

/* A connection to 127.0.0.1:@port from @from (127.0.0.x), or -1. */
static inline int connect_from(const char *from, uint16_t port)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, from, &src.sin_addr);
	inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&src, sizeof(src)) ||
	    connect(fd, (struct sockaddr *)&dst, sizeof(dst))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Whether the server closed @fd within @ms (what it sent first is read). */
static inline bool closed_within(int fd, int ms)
{
	long long deadline = test_now_ms() + ms;
	char buf[4096];

	while (test_now_ms() < deadline) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, (int)(deadline - test_now_ms())) != 1)
			return false;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return true;
	}
	return false;
}

#endif /* ACCELTRACE_TEST_LOOPBACK_H */
