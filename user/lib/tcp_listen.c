// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/tcp_listen.h"

int tcp_listen(const char *addr, uint16_t port, int backlog, uint16_t *bound_port, bool *ipv6)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t sa_len, len = sizeof(ss);
	int fd, one = 1, err;
	char a[64];
	size_t n = addr ? strlen(addr) : 0;

	/* "[::1]" as URLs write it, or the bare literal. */
	if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']' && n - 2 < sizeof(a)) {
		memcpy(a, addr + 1, n - 2);
		a[n - 2] = '\0';
	} else if (n < sizeof(a)) {
		memcpy(a, addr ? addr : "", n + 1);
	} else {
		return -EINVAL;
	}
	if (inet_pton(AF_INET, a, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sa_len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, a, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		sa_len = sizeof(*sin6);
	} else {
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    (ss.ss_family == AF_INET6 &&
	     setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(fd, (struct sockaddr *)&ss, sa_len) || listen(fd, backlog) ||
	    getsockname(fd, (struct sockaddr *)&ss, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (bound_port)
		*bound_port = ntohs(ss.ss_family == AF_INET6 ? sin6->sin6_port : sin->sin_port);
	if (ipv6)
		*ipv6 = ss.ss_family == AF_INET6;
	return fd;
}
