/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * acceltrace's side of the in-process agent (docs/agent.md): the control
 * pages found in traced processes, device detail asked for through them
 * (a lease, renewed while wanted, and a futex wake-up), and what each
 * agent says back. The page is the traced process's file: it is read and
 * written with pread/pwrite only (a mapping the process truncates would
 * fault), its fields are bounded before use, and nothing in it is trusted
 * beyond what it says of device detail.
 */
#ifndef ACCELTRACE_AGENT_LINKS_H
#define ACCELTRACE_AGENT_LINKS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

#include "acceltrace/agent_control.h"

struct agent_links;

struct agent_status {
	pid_t pid;			/* the process it was found in */
	uint32_t state;			/* enum agent_state; 0: unreadable */
	uint64_t state_since_ns;	/* CLOCK_MONOTONIC when it took state */
	uint32_t backends;		/* AGENT_BACKEND_* */
	uint64_t activations, records, runtime_dropped, incomplete;
	uint32_t buffers;
	char message[AGENT_MESSAGE_MAX];	/* NUL-terminated, printable */
};

struct agent_links *agent_links__new(void);
void agent_links__free(struct agent_links *l);

/* Finds @pid's control page, if it has one not found yet: 1 found, 0 none,
 * -errno. A newly found agent gets the current lease at once. */
int agent_links__find(struct agent_links *l, pid_t pid);
/* Device detail wanted from every agent until @until_ns (CLOCK_MONOTONIC);
 * 0 releases it (each agent turns off unless another acceltrace renews).
 * Renewing more often than every RENEW_NS writes nothing. */
void agent_links__want(struct agent_links *l, uint64_t until_ns, uint64_t now_ns);
/* Asks every active agent to hand over all its runtime holds (a window
 * closes): how many were asked. agent_links__flushed says when all did. */
int agent_links__flush(struct agent_links *l);
bool agent_links__flushed(struct agent_links *l);
/* Re-reads every agent's state: how many became ACTIVE or made new
 * buffers since the last call (their devtrace buffers are to be found). */
int agent_links__poll(struct agent_links *l);

/* Lets go of the agents of processes that exited (their page, its
 * mapping and fd): a daemon meets processes for weeks. */
void agent_links__drop_exited(struct agent_links *l);

size_t agent_links__count(const struct agent_links *l);
const struct agent_status *agent_links__status(const struct agent_links *l, size_t i);
bool agent_links__has(const struct agent_links *l, pid_t pid);

#endif /* ACCELTRACE_AGENT_LINKS_H */
