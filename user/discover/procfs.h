/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What /proc says about a process besides its mappings (proc_maps.h):
 * names, open files, threads, liveness, and about acceltrace itself (its run
 * delay, its executable). Discovery's one reader of these files; the
 * collector asks here for names of threads and files it meets first in a
 * record, the daemon for its threads and run delay.
 */
#ifndef ACCELTRACE_PROCFS_H
#define ACCELTRACE_PROCFS_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

struct mount_table;

/*
 * The command name of a process (@tid 0) or of one of its threads, without
 * the newline. 0, or -errno with buf set to "".
 */
int procfs_comm(pid_t pid, pid_t tid, char *buf, size_t len);

/*
 * The process's parent (field 4 of /proc/PID/stat, after the name's last
 * ')': a name may hold spaces and parentheses). 0, or -errno (-EINVAL: a
 * line that does not parse).
 */
int procfs_ppid(pid_t pid, pid_t *ppid);
int procfs_parse_ppid(const char *stat_line, pid_t *ppid);

/*
 * The process's cgroup v2 path ("/kubepods.slice/.../cri-containerd-ID.scope"),
 * from the "0::" line of /proc/PID/cgroup, or of the first line on a v1-only
 * host. 0, or -errno with buf set to "" (-ENOENT: no such line).
 */
int procfs_cgroup(pid_t pid, char *buf, size_t len);

/* The owner of process @pid (its /proc entry's uid); 0 or -errno. */
int procfs_owner_uid(pid_t pid, uid_t *uid);
/* Our own open file @fd opened again with @flags (as for writing), the
 * same inode whatever its path names now; an fd, or -errno. */
int procfs_reopen_own_fd(int fd, int flags);
/* "/proc/PID/root": paths in @pid's own root (a container's) under it. */
void procfs_root_path(pid_t pid, char *buf, size_t len);
/* "/proc/PID/map_files/START-END": the file mapped at [@start, @end),
 * whatever its path in the process. */
void procfs_map_file_path(pid_t pid, uint64_t start, uint64_t end, char *buf, size_t len);
/*
 * A /proc file read whole (up to @max bytes: past that, cut) into *@buf
 * (free() it), its length in *@len. 0, or -errno.
 */
#define PROCFS_READ_MAX (16u << 20)
int procfs_read_file(const char *path, size_t max, char **buf, size_t *len);
/*
 * @pid's environment, "NAME=value" strings each ending in a NUL, in
 * *@env (free() it), its length in *@len; read up to PROCFS_ENVIRON_MAX
 * bytes (past that, cut). 0, or -errno.
 */
#define PROCFS_ENVIRON_MAX (4u << 20)
int procfs_environ(pid_t pid, char **env, size_t *len);

/* What fd @fd of @pid points at ("/dev/accel0", "anon_inode:[eventfd]");
 * 0, or -errno (the fd is closed, the process gone). */
int procfs_fd_path(pid_t pid, int fd, char *buf, size_t len);

/*
 * Calls fn for every open fd of @pid with its target; fn returning nonzero
 * stops the walk and is returned. -errno when the fds cannot be listed.
 */
int procfs_for_each_fd(pid_t pid, int (*fn)(void *ctx, int fd, const char *target),
		       void *ctx);

/*
 * The process's reads as the kernel accounts them (/proc/PID/io, every
 * thread, living or gone): syscr, the read, readv, pread64 and preadv calls
 * (and sendfile's and copy_file_range's), and rchar, the bytes they
 * returned. 0, or -errno (-ENOENT: gone; -EACCES: not ours to read).
 */
int procfs_io_reads(pid_t pid, uint64_t *calls, uint64_t *bytes);

/*
 * The id a process (@tid 0) or one of its threads has in its innermost PID
 * namespace (the last field of NSpid in its status): the pid a container's
 * process knows itself by. The id, or -errno.
 */
pid_t procfs_ns_pid(pid_t pid, pid_t tid);

/*
 * Calls @fn with each thread of @pid: its id on the host and in its PID
 * namespace (equal outside containers). -errno when they cannot be listed.
 */
int procfs_for_each_ns_tid(pid_t pid, void (*fn)(void *ctx, pid_t tid, pid_t ns_tid),
			   void *ctx);

/*
 * Calls @fn with each thread of @pid (its id on the host); @fn returning
 * nonzero stops the walk and is returned. -errno when they cannot be listed.
 */
int procfs_for_each_tid(pid_t pid, int (*fn)(void *ctx, pid_t tid), void *ctx);

/*
 * This process's run delay: the ns its main thread spent runnable and not
 * running (the second field of /proc/self/schedstat). 0, or -errno.
 */
int procfs_self_run_delay(uint64_t *ns);

/*
 * The host's CPU pressure (PSI, /proc/pressure/cpu): the share of the last
 * 10 s in which some task waited for a CPU, in percent. -ENOENT where the
 * kernel keeps none; the parse alone for tests.
 */
int procfs_cpu_pressure(double *some_avg10);
int procfs_parse_cpu_pressure(const char *text, double *some_avg10);

/* This process's executable, as /proc/self/exe names it. 0, or -errno. */
int procfs_self_exe(char *buf, size_t len);

/*
 * The mounts of a mount namespace, by id: what /proc/PID/mountinfo lists
 * (@pid 0: this process's namespace), read once. Reading it asks no file
 * system, so a mount a process serves (FUSE) cannot stall the answer. NULL
 * and errno when it cannot be read.
 */
struct mount_table *procfs_mount_table(pid_t pid);
/* The same, from mountinfo @text of @len bytes (tests, saved tables). */
struct mount_table *procfs_mount_table_parse(const char *text, size_t len);
/* Accepts NULL. */
void mount_table__free(struct mount_table *t);
/* Mount @mnt_id's file system type ("ext4", "tmpfs", "fuse.sshfs"), or
 * NULL when the namespace had no such mount. */
const char *mount_table__type(const struct mount_table *t, uint64_t mnt_id);

/* Alive and not a zombie: a zombie still answers kill(pid, 0). */
bool procfs_pid_alive(pid_t pid);

#endif /* ACCELTRACE_PROCFS_H */
