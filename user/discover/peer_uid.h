/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who is on the other end of a TCP connection on this host: the uid that
 * owns the client's socket, from the kernel's socket tables (sock_diag,
 * what `ss -e` reads). On loopback every client is 127.0.0.1, so a limit
 * per address means nothing there; a limit per local user does.
 */
#ifndef ACCELTRACE_PEER_UID_H
#define ACCELTRACE_PEER_UID_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

/* Whether @a is a loopback address (127/8, ::1, or ::ffff:127/104). */
bool peer_is_loopback(const struct sockaddr *a);

/*
 * The uid owning the client socket of the TCP connection whose server end
 * is @local and client end @peer (both as the server sees them). 0 or
 * -errno (-ENOENT: no such socket, it closed).
 */
int peer_uid(const struct sockaddr *local, const struct sockaddr *peer, uid_t *uid);

#endif /* ACCELTRACE_PEER_UID_H */
