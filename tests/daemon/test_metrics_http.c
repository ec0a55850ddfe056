// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The metrics endpoint's doors (daemon/metrics_http.h): one address holding
 * its limit of idle connections is refused another, while a scraper at
 * another address is served; idle connections are closed at the timeout,
 * and the address is served again after.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "loopback.h"
#include "daemon/metrics_http.h"

#define LIMIT 3

/* GET /metrics from @from: the whole answer ("" when the server closed the
 * connection without one). */
static void get(const char *from, uint16_t port, char *buf, size_t len)
{
	static const char rq[] = "GET /metrics HTTP/1.0\r\n\r\n";
	int fd = connect_from(from, port);
	size_t got = 0;

	buf[0] = '\0';
	if (fd < 0 || write(fd, rq, sizeof(rq) - 1) != (ssize_t)sizeof(rq) - 1)
		goto out;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 5000) != 1)
			break;
		n = recv(fd, buf + got, len - 1 - got, 0);
		if (n <= 0)
			break;
		got += n;
	}
	buf[got] = '\0';
out:
	if (fd >= 0)
		close(fd);
}

/* Whether the server closed @fd within @ms. */

int main(void)
{
	struct metrics_http_opts o = { .sz = sizeof(o), .addr = "127.0.0.1",
				       .per_ip_limit = LIMIT, .timeout_s = 1 };
	static const char text[] = "acceltrace_up 1\n";
	struct metrics_http *h = metrics_http__bind(&o);
	int idle[LIMIT], n = 0;
	char buf[4096];
	uint16_t port;

	if (!ASSERT_OK_PTR(h, "bind"))
		return test_exit();
	port = metrics_http__port(h);
	ASSERT_NEQ(port, 0, "a port chosen");
	if (!ASSERT_OK(metrics_http__serve(h), "serve"))
		goto out;
	ASSERT_OK(metrics_http__publish(h, text, sizeof(text) - 1), "publish");
	get("127.0.0.1", port, buf, sizeof(buf));
	ASSERT_STRCONTAINS(buf, "acceltrace_up 1", "served");

	for (n = 0; n < LIMIT; n++)
		if (!ASSERT_TRUE((idle[n] = connect_from("127.0.0.1", port)) >= 0, "idle connection"))
			goto out;
	for (int i = 0; i < 500 && metrics_http__connections(h) < LIMIT; i++)
		usleep(10000);
	ASSERT_EQ(metrics_http__connections(h), LIMIT, "the idle connections accepted");
	get("127.0.0.1", port, buf, sizeof(buf));
	ASSERT_STREQ(buf, "", "one more from the same address refused");
	get("127.0.0.2", port, buf, sizeof(buf));
	ASSERT_STRCONTAINS(buf, "acceltrace_up 1", "another address served meanwhile");
	/* A timeout of 1 s: closed within a few, whatever the load. */
	for (int i = 0; i < LIMIT; i++)
		ASSERT_TRUE(closed_within(idle[i], 5000), "an idle connection closed at the timeout");
	/* The client sees the close before the server's thread has counted it
	 * out of the address's connections (later under load): wait for that. */
	for (int i = 0; i < 500 && metrics_http__connections(h) >= LIMIT; i++)
		usleep(10000);
	get("127.0.0.1", port, buf, sizeof(buf));
	ASSERT_STRCONTAINS(buf, "acceltrace_up 1", "the address served again after");
out:
	while (n > 0)
		close(idle[--n]);
	metrics_http__stop(h);
	return test_exit();
}
