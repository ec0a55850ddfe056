// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Target processes: validation, launching, discovery and rescans. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOG_CONTEXT "targets"
#include "lib/log.h"
#include "lib/array.h"
#include "discover/cgroup_scope.h"
#include "discover/device_nodes.h"
#include "discover/probe_packs.h"
#include "probe/probe_session.h"
#include "discover/proc_maps.h"
#include "discover/procfs.h"
#include "discover/runtime_kind.h"
#include "discover/targets.h"

struct traced {
	struct process_report report;
	uint32_t flags;		/* enum traced_flags */
	bool explicit_target;	/* named by --pid, or the command */
	bool gone;
};

struct targets {
	struct targets_opts opts;
	struct probe_session *ps;
	struct runtime_attach *ra;
	struct traced *procs;
	size_t n, cap;
	pid_t command_pid;
	int release_fd;		/* write end of the pipe holding the command */
	bool command_reaped;
	int command_status;
};

/* Reaps the launched command when it has exited (without blocking). */
static void reap_command(struct targets *t)
{
	if (t->command_pid && !t->command_reaped &&
	    waitpid(t->command_pid, &t->command_status, WNOHANG) == t->command_pid)
		t->command_reaped = true;
}

static struct traced *find(struct targets *t, pid_t pid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->procs[i].report.pid == pid)
			return &t->procs[i];
	return NULL;
}

static struct traced *track(struct targets *t, pid_t pid, uint32_t flags,
			    bool explicit_target)
{
	struct traced *p = find(t, pid);

	if (p)
		return p;
	if (ARRAY_GROW(t->procs, t->cap, t->n + 1))
		return NULL;
	p = &t->procs[t->n++];
	memset(p, 0, sizeof(*p));
	p->report.pid = pid;
	p->flags = flags;
	p->explicit_target = explicit_target;
	return p;
}

/* Puts @p in the kernel's traced set and looks at what it runs. */
static void examine(struct targets *t, struct traced *p)
{
	int n;

	if (t->ps)
		probe_session__trace_pid(t->ps, p->report.pid, p->flags);
	if (!t->ra)
		return;
	n = runtime_attach__add_process(t->ra, p->report.pid, &p->report);
	if (n == -ESRCH || n == -ENOENT)
		p->gone = true;
}

/* The children of @pid, from /proc/PID/task/TID/children. */
static void add_descendants(struct targets *t, pid_t pid)
{
	char dir[64], path[384];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		FILE *f;
		int child;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "%s/%s/children", dir, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fscanf(f, "%d", &child) == 1) {
			if (find(t, child))
				continue;
			examine(t, track(t, child, TRACED_CHILD, false));
			add_descendants(t, child);
		}
		fclose(f);
	}
	closedir(d);
}

static int is_device_node(void *ctx, int fd, const char *target)
{
	(void)ctx;
	(void)fd;
	return device_node_match(target) != NULL;
}

/*
 * Does @pid map a runtime library or hold a device node? (-a discovery)
 * Libraries are recognised by their exports, as runtime_attach does, each
 * file parsed once for the whole run however many processes map it.
 */
static bool uses_accelerator(pid_t pid)
{
	struct proc_maps *maps = proc_maps__read(pid);
	bool found = false;

	for (size_t i = 0; maps && i < proc_maps__object_count(maps) && !found; i++) {
		struct runtime_kind kind;

		found = !runtime_kind__of_object(pid, maps, proc_maps__object(maps, i),
						 &kind) && kind.pack;
	}
	proc_maps__free(maps);
	return found || procfs_for_each_fd(pid, is_device_node, NULL) > 0;
}

static void scan_host(struct targets *t)
{
	struct dirent *de;
	DIR *d = opendir("/proc");
	pid_t self = getpid();

	while (d && (de = readdir(d))) {
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (pid == self || find(t, pid))
			continue;
		/* --cgroup: the kernel adopts no one outside it either. */
		if (t->opts.scope && !cgroup_scope__holds(t->opts.scope, pid))
			continue;
		/* Adopted by the kernel (a runtime call, a device open), or
		 * found using an accelerator here. */
		if ((t->ps && probe_session__pid_traced(t->ps, pid)) ||
		    (t->opts.whole_host && uses_accelerator(pid)))
			examine(t, track(t, pid, TRACED_ADOPTED, false));
	}
	if (d)
		closedir(d);
}

static int launch(struct targets *t)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(fds[0]);
		close(fds[1]);
		return err;
	}
	if (pid == 0) {
		char go = 0;

		close(fds[1]);
		/* Held until the probes are in place; no go, no exec. */
		if (read(fds[0], &go, 1) != 1 || go != 'g')
			_exit(126);
		execvp(t->opts.command[0], t->opts.command);
		fprintf(stderr, "acceltrace: error: cannot run '%s': %s\n",
			t->opts.command[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	t->command_pid = pid;
	t->release_fd = fds[1];
	return 0;
}

struct targets *targets__new(const struct targets_opts *opts,
			     struct probe_session *ps, struct runtime_attach *ra)
{
	struct targets *t;
	int err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->opts = *opts;
	t->ps = ps;
	t->ra = ra;
	t->release_fd = -1;
	for (size_t i = 0; i < opts->n_pids; i++) {
		if (opts->pids[i] <= 0 || !procfs_pid_alive(opts->pids[i])) {
			log_err("no process with pid %d", opts->pids[i]);
			free(t);
			errno = ESRCH;
			return NULL;
		}
	}
	if (opts->command && opts->command[0]) {
		err = launch(t);
		if (err) {
			log_err("cannot start '%s': %s", opts->command[0], strerror(-err));
			free(t);
			errno = -err;
			return NULL;
		}
		/* Its runtime probes (all but --library's, attached already)
		 * for it only: no other process traps. With --children they
		 * stay on every process, its descendants are found later. */
		if (ps && !opts->children)
			probe_session__set_pid_scope(ps, &t->command_pid, 1);
	}
	return t;
}

void targets__free(struct targets *t)
{
	if (!t)
		return;
	/* Closing the pipe unreleased makes a held command exit (126). */
	if (t->release_fd >= 0)
		close(t->release_fd);
	free(t->procs);
	free(t);
}

int targets__start(struct targets *t)
{
	for (size_t i = 0; i < t->opts.n_pids; i++) {
		struct traced *p = track(t, t->opts.pids[i], TRACED_TARGET, true);

		if (!p)
			return -ENOMEM;
		examine(t, p);
		if (t->opts.children)
			add_descendants(t, t->opts.pids[i]);
	}
	if (t->command_pid) {
		struct traced *p = track(t, t->command_pid, TRACED_TARGET, true);

		if (!p)
			return -ENOMEM;
		/* Not exec'd yet: its environment is ours, and names the
		 * libraries it will load (TPU_LIBRARY_PATH, ...). */
		examine(t, p);
		if (write(t->release_fd, "g", 1) != 1)
			return -errno;
		close(t->release_fd);
		t->release_fd = -1;
	}
	if (t->opts.whole_host)
		scan_host(t);
	return 0;
}

/*
 * A process found gone by a rescan: its exit record normally tells the
 * attach controller first, but a record lost to a full ring must not
 * leave its probes and table entries behind. Forgetting twice is harmless.
 */
static void forget_gone(struct targets *t, pid_t pid)
{
	if (t->ps) {
		probe_session__forget_pid(t->ps, pid);
	}
	if (t->ra)
		runtime_attach__remove_process(t->ra, pid);
}

void targets__rescan(struct targets *t, bool full)
{
	reap_command(t);
	for (size_t i = 0; i < t->n; i++) {
		struct traced *p = &t->procs[i];

		if (p->gone)
			continue;
		if (!procfs_pid_alive(p->report.pid) ||
		    (p->report.pid == t->command_pid && t->command_reaped)) {
			p->gone = true;
			forget_gone(t, p->report.pid);
			continue;
		}
		examine(t, p);
	}
	if (full && (t->opts.whole_host || t->opts.children))
		scan_host(t);
}

bool targets__alive(const struct targets *t)
{
	if (t->opts.whole_host)
		return true;
	for (size_t i = 0; i < t->n; i++)
		if (t->procs[i].explicit_target && !t->procs[i].gone)
			return true;
	return false;
}

pid_t targets__command_pid(const struct targets *t)
{
	return t->command_pid;
}

int targets__wait_command(struct targets *t, int *status)
{
	if (!t->command_pid)
		return -ECHILD;
	if (!t->command_reaped) {
		if (waitpid(t->command_pid, &t->command_status, 0) < 0)
			return -errno;
		t->command_reaped = true;
	}
	*status = t->command_status;
	return 0;
}

size_t targets__count(const struct targets *t)
{
	return t->n;
}

const struct process_report *targets__report(const struct targets *t, size_t i)
{
	return i < t->n ? &t->procs[i].report : NULL;
}

void targets__diagnose(const struct targets *t, char *buf, size_t len)
{
	size_t used = 0;

#define SAY(...) do { \
	if (used < len) \
		used += snprintf(buf + used, len - used, __VA_ARGS__); \
	} while (0)

	buf[0] = '\0';
	if (!t->n) {
		SAY("no process on this host maps an accelerator runtime library or holds a device node");
		return;
	}
	for (size_t i = 0; i < t->n; i++) {
		const struct traced *p = &t->procs[i];
		const struct process_report *r = &p->report;
		bool table = false, refused = false;

		SAY("%sprocess %d%s: ", i ? "; " : "", r->pid, p->gone ? " (exited)" : "");
		if (!r->n_libraries) {
			SAY("no runtime library mapped (nothing that exports GetPjrtApi, "
			    "the CUDA driver or runtime API, the TPU C API or tf.data's GetNext)");
		} else {
			for (unsigned int l = 0; l < r->n_libraries; l++) {
				const struct attached_library *lib = r->libraries[l];

				SAY("%s%s", l ? ", " : "maps ", lib->path);
				if (lib->pack->pjrt) {
					table |= lib->has_table;
					refused |= lib->table_refused;
				}
			}
			if (refused)
				SAY("; its PJRT table was refused");
			else if (!table)
				SAY("; no PJRT table found (GetPjrtApi not called yet?)");
		}
		if (!r->n_device_nodes)
			SAY("; no device node open");
		else
			SAY("; %u device node(s) open (%s)", r->n_device_nodes,
			    r->device_nodes[0].path);
	}
	SAY("; no device activity (execute, transfer, infeed/outfeed or submit) was seen");
#undef SAY
}
