/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A listening TCP socket on an address literal: what the daemon's HTTP
 * endpoints (metrics, the ProfilerService) bind before they drop their
 * privileges.
 */
#ifndef ACCELTRACE_TCP_LISTEN_H
#define ACCELTRACE_TCP_LISTEN_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Listens on @addr, an IPv4 or IPv6 literal ("[::1]" too), @port (0: any
 * free one), non-blocking and close-on-exec. SO_REUSEADDR, so a restart
 * binds again at once; an IPv6 address is IPv6 only. The fd, the port
 * bound in @bound_port and the family in @ipv6 (either may be NULL); or
 * -errno, -EINVAL when @addr is not an IP address.
 */
int tcp_listen(const char *addr, uint16_t port, int backlog, uint16_t *bound_port, bool *ipv6);

#endif /* ACCELTRACE_TCP_LISTEN_H */
