// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The owner of a connection's client socket, by sock_diag (peer_uid.h). */
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "discover/peer_uid.h"

/* An IPv4 address, also as IPv6 maps it (::ffff:a.b.c.d). */
static bool v4_of(const struct sockaddr *a, struct in_addr *addr, in_port_t *port)
{
	const struct sockaddr_in6 *s6 = (const void *)a;
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	if (a->sa_family == AF_INET) {
		*addr = ((const struct sockaddr_in *)a)->sin_addr;
		*port = ((const struct sockaddr_in *)a)->sin_port;
		return true;
	}
	if (a->sa_family == AF_INET6 && !memcmp(s6->sin6_addr.s6_addr, mapped, 12)) {
		memcpy(&addr->s_addr, s6->sin6_addr.s6_addr + 12, 4);
		*port = s6->sin6_port;
		return true;
	}
	return false;
}

bool peer_is_loopback(const struct sockaddr *a)
{
	struct in_addr v4;
	in_port_t port;

	if (v4_of(a, &v4, &port))
		return (ntohl(v4.s_addr) >> 24) == 127;
	return a->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)a)->sin6_addr);
}

int peer_uid(const struct sockaddr *local, const struct sockaddr *peer, uid_t *uid)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_protocol = IPPROTO_TCP, .idiag_states = ~0u,
		       .id.idiag_cookie = { INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE } },
	};
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	struct in_addr l4, p4;
	in_port_t lport, pport;
	char buf[8192];
	ssize_t n;
	int fd, err = -ENOENT;

	/* The client's socket: its source is the peer, its destination us. */
	if (v4_of(local, &l4, &lport) && v4_of(peer, &p4, &pport)) {
		req.r.sdiag_family = AF_INET;
		memcpy(req.r.id.idiag_src, &p4, 4);
		memcpy(req.r.id.idiag_dst, &l4, 4);
	} else if (local->sa_family == AF_INET6 && peer->sa_family == AF_INET6) {
		req.r.sdiag_family = AF_INET6;
		memcpy(req.r.id.idiag_src, &((const struct sockaddr_in6 *)peer)->sin6_addr, 16);
		memcpy(req.r.id.idiag_dst, &((const struct sockaddr_in6 *)local)->sin6_addr, 16);
		pport = ((const struct sockaddr_in6 *)peer)->sin6_port;
		lport = ((const struct sockaddr_in6 *)local)->sin6_port;
	} else {
		return -EAFNOSUPPORT;
	}
	req.r.id.idiag_sport = pport;
	req.r.id.idiag_dport = lport;
	fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(fd, &req, sizeof(req), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0) {
		err = -errno;
		goto out;
	}
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
	     h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			err = e->error ? e->error : -ENOENT;
			break;
		}
		if (h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
			*uid = ((const struct inet_diag_msg *)NLMSG_DATA(h))->idiag_uid;
			err = 0;
			break;
		}
	}
out:
	close(fd);
	return err;
}
