/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's privileges after start-up. Once its probes are loaded and
 * attached and its sockets bound, it goes on parsing what traced processes
 * control (ELF files, programs, devtrace buffers, /proc) and what arrives
 * on its ports, for weeks. So it keeps only the capabilities that later
 * work needs (privileges_kept: each with the reason), drops every other one
 * from its effective, permitted, inheritable, ambient and bounding sets,
 * and sets no_new_privs, so that nothing it might execute gains any back.
 *
 * Capabilities are per thread: a thread created before the drop keeps
 * what it had. The daemon drops them before it starts any thread (the
 * metrics server's is started after, metrics_http.h).
 */
#ifndef ACCELTRACE_DAEMON_PRIVILEGES_H
#define ACCELTRACE_DAEMON_PRIVILEGES_H

#include <stddef.h>
#include <stdint.h>

struct privilege {
	int cap;		/* CAP_* */
	const char *name;	/* "CAP_BPF" */
	const char *why;	/* what the daemon needs it for after start-up */
};

/* The capabilities kept, @n of them. */
const struct privilege *privileges_kept(size_t *n);

/*
 * Drops every capability but the kept ones (those the process has) from
 * every set, the bounding set included where CAP_SETPCAP allows, and sets
 * no_new_privs. 0, or -errno (the process's capabilities then unchanged but
 * for the bounding set). @kept_mask gets the capabilities kept (bit n: cap n).
 */
int privileges_drop(uint64_t *kept_mask);

#endif /* ACCELTRACE_DAEMON_PRIVILEGES_H */
