// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The metrics endpoint's doors (daemon/metrics_http.h): on loopback, where
 * every client is 127.0.0.1, one local user holding its limit of idle
 * connections is refused another, while a scraper of another user (nobody)
 * is served; idle connections are closed at the timeout, and the user is
 * served again after; a client trickling its request a byte at a time
 * (which restarts the idle timeout) is let go at the timeout all the same.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
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

/* GET /metrics from a child that became @uid before making its socket:
 * the answer, as get() reads it. */
static void get_as(uid_t uid, uint16_t port, char *buf, size_t len)
{
	int pipefd[2], status;
	ssize_t n, got = 0;
	pid_t child;

	buf[0] = '\0';
	if (pipe(pipefd))
		return;
	child = fork();
	if (child == 0) {
		close(pipefd[0]);
		if (setresuid(uid, uid, uid))
			_exit(1);
		get("127.0.0.1", port, buf, len);
		n = write(pipefd[1], buf, strlen(buf));
		_exit(n < 0);
	}
	close(pipefd[1]);
	while (got < (ssize_t)len - 1 && (n = read(pipefd[0], buf + got, len - 1 - got)) > 0)
		got += n;
	buf[got] = '\0';
	close(pipefd[0]);
	waitpid(child, &status, 0);
}

/* A request a byte every 300 ms never idles 1 s, yet is let go within a
 * few seconds of its connect (the sweep at each publish). */
static void trickle(struct metrics_http *h, uint16_t port)
{
	static const char rq[] = "GET /metrics HTTP/1.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	int fd = connect_from("127.0.0.1", port);
	bool closed = false;
	size_t i;

	if (!ASSERT_TRUE(fd >= 0, "a trickling client"))
		return;
	for (i = 0; i < sizeof(rq) - 1 && !closed; i++) {
		if (send(fd, rq + i, 1, MSG_NOSIGNAL) != 1)
			break;
		metrics_http__publish(h, "acceltrace_up 1\n", 16);
		closed = closed_within(fd, 300);
	}
	ASSERT_TRUE(closed || i < sizeof(rq) - 1, "let go while it still trickled");
	ASSERT_LE(i, 12, "within about 3 s of its connect (1 s timeout, load)");
	close(fd);
}

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
	get("127.0.0.2", port, buf, sizeof(buf));
	ASSERT_STREQ(buf, "", "one more from the same user refused, whatever its address");
	if (getuid() == 0) {
		get_as(65534, port, buf, sizeof(buf));
		ASSERT_STRCONTAINS(buf, "acceltrace_up 1", "another local user served meanwhile");
	} else {
		printf("SKIP-PART: not root: no client of another uid\n");
	}
	/* A timeout of 1 s: closed within a few, whatever the load. */
	for (int i = 0; i < LIMIT; i++)
		ASSERT_TRUE(closed_within(idle[i], 5000), "an idle connection closed at the timeout");
	/* The client sees the close before the server's thread has counted it
	 * out of the address's connections (later under load): wait for that. */
	for (int i = 0; i < 500 && metrics_http__connections(h) >= LIMIT; i++)
		usleep(10000);
	get("127.0.0.1", port, buf, sizeof(buf));
	ASSERT_STRCONTAINS(buf, "acceltrace_up 1", "the user served again after");
	trickle(h, port);
out:
	while (n > 0)
		close(idle[--n]);
	metrics_http__stop(h);
	return test_exit();
}
