// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Target processes: validation, launching, discovery and rescans. What is
 * found is a fact for the attach controller to act on (a process to put in
 * the traced set and examine, one gone to forget): queued as visits, never
 * acted on here. The kernel's tables are only read (a process the probes
 * adopted).
 */
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
	const struct probe_session *ps;	/* read only: whom the probes adopted */
	struct traced *procs;
	size_t n, cap;
	/* For the attach controller: targets__take_visits. */
	struct target_visit *visits;
	size_t n_visits, visits_cap;
	bool visits_lost;		/* out of memory: every process again */
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

/* A visit for the attach controller: examine @p, or forget it (@gone).
 * False when it could not be queued (out of memory). */
static bool visit(struct targets *t, const struct traced *p, bool gone)
{
	if (!p)
		return false;
	if (ARRAY_GROW(t->visits, t->visits_cap, t->n_visits + 1)) {
		t->visits_lost = true;
		return false;
	}
	t->visits[t->n_visits++] = (struct target_visit){
		.pid = p->report.pid, .flags = p->flags, .gone = gone,
	};
	return true;
}

/* Puts @p in the kernel's traced set and looks at what it runs: queued. */
static void examine(struct targets *t, struct traced *p)
{
	visit(t, p, false);
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
			     const struct probe_session *ps)
{
	struct targets *t;
	int err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->opts = *opts;
	t->ps = ps;
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
	free(t->visits);
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
		 * libraries it will load (TPU_LIBRARY_PATH, ...). Released by
		 * targets__release_command once examined. */
		examine(t, p);
	}
	if (t->opts.whole_host)
		scan_host(t);
	return 0;
}

int targets__release_command(struct targets *t)
{
	if (t->release_fd < 0)
		return 0;
	if (write(t->release_fd, "g", 1) != 1)
		return -errno;
	close(t->release_fd);
	t->release_fd = -1;
	return 0;
}

const struct target_visit *targets__take_visits(struct targets *t, size_t *n)
{
	/* A visit lost to memory: every process not known gone visited
	 * again (one that died meanwhile is forgotten by the controller when
	 * its examination finds it gone; a rescan's forget that could not be
	 * queued is tried again at the next rescan). */
	if (t->visits_lost) {
		t->visits_lost = false;
		t->n_visits = 0;
		for (size_t i = 0; i < t->n; i++)
			if (!t->procs[i].gone)
				visit(t, &t->procs[i], false);
	}
	*n = t->n_visits;
	t->n_visits = 0;
	return t->visits;
}

struct process_report *targets__report_of(struct targets *t, pid_t pid)
{
	struct traced *p = find(t, pid);

	return p ? &p->report : NULL;
}

void targets__note_gone(struct targets *t, pid_t pid)
{
	struct traced *p = find(t, pid);

	if (p)
		p->gone = true;
}

void targets__rescan(struct targets *t, bool full)
{
	reap_command(t);
	for (size_t i = 0; i < t->n; i++) {
		struct traced *p = &t->procs[i];

		if (p->gone)
			continue;
		/* Its exit record normally tells the attach controller
		 * first, but a record lost to a full ring must not leave its
		 * probes and table entries behind: forgetting twice is
		 * harmless. */
		if (!procfs_pid_alive(p->report.pid) ||
		    (p->report.pid == t->command_pid && t->command_reaped)) {
			if (visit(t, p, true))
				p->gone = true;
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

bool targets__gone(const struct targets *t, size_t i)
{
	return i < t->n && t->procs[i].gone;
}
