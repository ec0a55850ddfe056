/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's one thread, paused around what a multithreaded process may
 * not do: unshare(CLONE_NEWUSER) and setns into a user namespace refuse a
 * caller with a second thread (EINVAL), and rootless containers,
 * bubblewrap and sandboxes started under `record -- CMD` (which hands the
 * agent to every child) do just that (agent_namespaces.c).
 */
#ifndef ACCELTRACE_AGENT_THREAD_H
#define ACCELTRACE_AGENT_THREAD_H

#include <stdbool.h>

/*
 * Asks the control thread to return while it is dormant and waits for it
 * (200 ms at most): true when it has, false when there is none or it is
 * active (a lease: device detail on), and so stays.
 */
bool agent_pause_thread(void);
/* Starts it again after agent_pause_thread returned true. */
void agent_resume_thread(void);

#endif /* ACCELTRACE_AGENT_THREAD_H */
