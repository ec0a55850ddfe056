// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * discover/peer_uid.c: the owner of a loopback connection's client socket,
 * for a client of our own uid and for one that set its uid to nobody
 * (65534) before connecting; IPv4, and IPv6 where ::1 is up; and what a
 * loopback address is.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "test.h"
#include "discover/peer_uid.h"

/* A listener on @addr, a client connecting as @uid (-1: ours); the uid
 * peer_uid finds for the accepted connection, or -1. */
static long uid_of_client(int family, const char *addr, long uid)
{
	struct sockaddr_storage ss = {}, local, peer;
	socklen_t len = sizeof(ss), llen = sizeof(local), plen = sizeof(peer);
	int lfd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), cfd;
	uid_t got = (uid_t)-1;
	pid_t child;
	long ret = -1;

	ss.ss_family = family;
	if (family == AF_INET)
		inet_pton(AF_INET, addr, &((struct sockaddr_in *)&ss)->sin_addr);
	else
		inet_pton(AF_INET6, addr, &((struct sockaddr_in6 *)&ss)->sin6_addr);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&ss, family == AF_INET ?
			    sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)) ||
	    listen(lfd, 4) || getsockname(lfd, (struct sockaddr *)&ss, &len))
		goto out;
	child = fork();
	if (child == 0) {
		int fd;

		/* A socket is its creator's: made after the uid is set. */
		if (uid >= 0 && setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid))
			_exit(2);
		fd = socket(family, SOCK_STREAM, 0);
		if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len))
			_exit(1);
		pause();
		_exit(0);
	}
	cfd = accept(lfd, NULL, NULL);
	if (cfd >= 0 && !getsockname(cfd, (struct sockaddr *)&local, &llen) &&
	    !getpeername(cfd, (struct sockaddr *)&peer, &plen) &&
	    !peer_uid((struct sockaddr *)&local, (struct sockaddr *)&peer, &got))
		ret = (long)got;
	ASSERT_TRUE(peer_is_loopback((struct sockaddr *)&peer), "the peer is on loopback");
	if (cfd >= 0)
		close(cfd);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
out:
	if (lfd >= 0)
		close(lfd);
	return ret;
}

int main(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct sockaddr_in6 b = { .sin6_family = AF_INET6 };

	ASSERT_EQ(uid_of_client(AF_INET, "127.0.0.1", -1), (long)getuid(), "our own uid");
	if (getuid() == 0)
		ASSERT_EQ(uid_of_client(AF_INET, "127.0.0.1", 65534), 65534,
			  "a client that became nobody");
	else
		printf("SKIP-PART: not root: no client of another uid\n");
	if (uid_of_client(AF_INET6, "::1", -1) == (long)getuid())
		ASSERT_TRUE(true, "IPv6 loopback");
	else
		printf("SKIP-PART: no IPv6 loopback here\n");
	inet_pton(AF_INET, "10.1.2.3", &a.sin_addr);
	ASSERT_FALSE(peer_is_loopback((struct sockaddr *)&a), "10.1.2.3 is not loopback");
	inet_pton(AF_INET, "127.9.9.9", &a.sin_addr);
	ASSERT_TRUE(peer_is_loopback((struct sockaddr *)&a), "127/8 is");
	inet_pton(AF_INET6, "::ffff:127.0.0.1", &b.sin6_addr);
	ASSERT_TRUE(peer_is_loopback((struct sockaddr *)&b), "v4-mapped 127.0.0.1 is");
	inet_pton(AF_INET6, "::ffff:10.0.0.1", &b.sin6_addr);
	ASSERT_FALSE(peer_is_loopback((struct sockaddr *)&b), "v4-mapped 10.0.0.1 is not");
	return test_exit();
}
