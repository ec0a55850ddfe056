/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A run's cgroup scope (the daemon's --cgroup): one cgroup v2 directory
 * whose subtree holds the only processes a whole-host run may adopt. The
 * kernel side tests it with bpf_current_task_under_cgroup on the
 * directory's fd; user space with the process's "0::" line of
 * /proc/PID/cgroup, a path from the cgroup2 mount's root.
 */
#ifndef ACCELTRACE_CGROUP_SCOPE_H
#define ACCELTRACE_CGROUP_SCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct cgroup_scope;

/*
 * Opens @path: a cgroup v2 directory, absolute, or relative to the cgroup2
 * mount (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host).
 * NULL and errno on failure, @err saying what is wrong with the path.
 */
struct cgroup_scope *cgroup_scope__open(const char *path, char *err, size_t err_len);
void cgroup_scope__free(struct cgroup_scope *s);

/* The directory, open (O_DIRECTORY), for the kernel's cgroup array. */
int cgroup_scope__fd(const struct cgroup_scope *s);
/* Its path as /proc/PID/cgroup names it ("/kubepods.slice/..."), and in
 * the file system ("/sys/fs/cgroup/kubepods.slice/..."). */
const char *cgroup_scope__path(const struct cgroup_scope *s);
const char *cgroup_scope__dir(const struct cgroup_scope *s);

/* Is @cgroup_path (as /proc/PID/cgroup names it) inside the subtree? */
bool cgroup_scope__holds_path(const struct cgroup_scope *s, const char *cgroup_path);
/* Is process @pid inside the subtree now? (false when it is gone) */
bool cgroup_scope__holds(const struct cgroup_scope *s, pid_t pid);

#endif /* ACCELTRACE_CGROUP_SCOPE_H */
