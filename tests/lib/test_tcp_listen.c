// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tcp_listen: an IPv4 and a bracketed IPv6 literal listen on the port the
 * kernel chose and accept a connection there; the family is told; what is
 * not an IP address (a name, garbage, too long) is -EINVAL; a port taken
 * by a socket of another process's kind is -EADDRINUSE.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test.h"
#include "lib/tcp_listen.h"

/* Connects to @port on loopback of @family: 0 or -errno. */
static int connect_to(int family, uint16_t port)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sin6->sin6_addr = in6addr_loopback;
	}
	if (connect(fd, (struct sockaddr *)&ss, family == AF_INET ? sizeof(*sin) : sizeof(*sin6)))
		err = -errno;
	close(fd);
	return err;
}

int main(void)
{
	char longer[200];
	uint16_t port = 0, again_port;
	bool ipv6 = true;
	int fd, again;

	fd = tcp_listen("127.0.0.1", 0, 4, &port, &ipv6);
	if (ASSERT_GE(fd, 0, "IPv4 loopback listens")) {
		ASSERT_NEQ(port, 0, "the port the kernel chose is told");
		ASSERT_FALSE(ipv6, "IPv4 said");
		ASSERT_OK(connect_to(AF_INET, port), "a client connects there");
		again = tcp_listen("127.0.0.1", port, 4, &again_port, NULL);
		ASSERT_EQ(again, -EADDRINUSE, "a port in use");
		if (again >= 0)
			close(again);
		close(fd);
	}

	fd = tcp_listen("[::1]", 0, 4, &port, &ipv6);
	if (fd == -EADDRNOTAVAIL || fd == -EAFNOSUPPORT) {
		printf("SKIP-PART: no IPv6 loopback here (%s)\n", strerror(-fd));
	} else if (ASSERT_GE(fd, 0, "bracketed IPv6 loopback listens")) {
		ASSERT_TRUE(ipv6, "IPv6 said");
		ASSERT_OK(connect_to(AF_INET6, port), "a client connects there");
		close(fd);
	}

	ASSERT_EQ(tcp_listen("localhost", 0, 4, NULL, NULL), -EINVAL, "a name is not an address");
	ASSERT_EQ(tcp_listen("", 0, 4, NULL, NULL), -EINVAL, "an empty address");
	ASSERT_EQ(tcp_listen(NULL, 0, 4, NULL, NULL), -EINVAL, "no address");
	ASSERT_EQ(tcp_listen("[::1", 0, 4, NULL, NULL), -EINVAL, "an unclosed bracket");
	memset(longer, '1', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	ASSERT_EQ(tcp_listen(longer, 0, 4, NULL, NULL), -EINVAL, "too long to be an address");
	return test_exit();
}
