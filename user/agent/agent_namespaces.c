// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * unshare and setns, interposed while the agent is preloaded: a process
 * that enters a new user namespace (or joins a mount or time namespace)
 * must be single-threaded, and the
 * agent's control thread would make it fail (EINVAL) where it works
 * without the agent (`unshare -U`, `unshare -r`, rootless containers,
 * bubblewrap). The thread is paused around the call (agent_thread.h) and
 * started again after, in the new namespace. These are thin syscall
 * wrappers in libc, so calling the kernel here changes nothing else.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_thread.h"

#define EXPORT __attribute__((visibility("default")))
/* The paused thread's last exit may not have been counted by the kernel
 * yet when the join returns: a refused call is tried again this often. */
#define RETRIES 50

/* @nr(a, b) with the thread paused when @needs_single does; errno as the
 * kernel left it. */
static int around(long nr, long a, long b, bool needs_single)
{
	struct timespec ms = { 0, 1000000 };
	bool paused = needs_single && agent_pause_thread();
	long ret = syscall(nr, a, b);
	int err = errno;

	for (int i = 0; paused && ret < 0 && (err == EINVAL || err == EUSERS) && i < RETRIES;
	     i++) {
		nanosleep(&ms, NULL);
		ret = syscall(nr, a, b);
		err = errno;
	}
	if (paused)
		agent_resume_thread();
	errno = err;
	return (int)ret;
}

EXPORT int unshare(int flags)
{
	return around(SYS_unshare, flags, 0, flags & CLONE_NEWUSER);
}

/* Joining a user, mount or time namespace needs a single thread (a mount
 * namespace: the threads share one fs_struct); 0 is any type, the fd's. */
EXPORT int setns(int fd, int nstype)
{
	return around(SYS_setns, fd, nstype,
		      !nstype || (nstype & (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWTIME)));
}
