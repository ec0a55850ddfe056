// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recorder's device trace buffers: those the user named (--devtrace)
 * and those found in the traced processes, each handed to the collector
 * tied to the process (and the pid namespace) it was found in.
 */
#include <errno.h>
#include <string.h>

#define LOG_CONTEXT "record"
#include "lib/log.h"
#include "collect/collector.h"
#include "session/recorder_internal.h"
#include "discover/devtrace_buffers.h"
#include "discover/procfs.h"
#include "discover/targets.h"

/* @seen: where a found buffer is recorded (NULL: one the user named).
 * The buffer's index, or -errno. */
static int add_devtrace(struct recorder *r, int fd, const char *path,
			struct devtrace_seen *seen)
{
	int i = collector__add_devtrace(r->col, fd, path, seen);

	if (i < 0) {
		log_warn("devtrace buffer %s: %s", path, strerror(-i));
	} else {
		r->n_devtrace++;
		log_debug("reading devtrace buffer %s", path);
	}
	return i;
}

/* A container's threads, its namespace's ids against the host's. */
static int ns_tids(void *ctx, uint32_t pid, void (*each)(void *, pid_t, pid_t), void *each_ctx)
{
	(void)ctx;
	return procfs_for_each_ns_tid((pid_t)pid, each, each_ctx);
}

struct found_in {
	struct recorder *r;
	pid_t pid, ns_pid;
};

static int add_found_devtrace(void *ctx, int fd, const char *path)
{
	struct found_in *f = ctx;
	int i = add_devtrace(f->r, fd, path, f->r->devtrace_seen);

	/* Its own pid in its namespace, read when a buffer is found only. */
	if (i >= 0 && !f->ns_pid)
		f->ns_pid = procfs_ns_pid(f->pid, 0);
	if (i >= 0 && f->ns_pid > 0) {
		collector__devtrace_found_in(f->r->col, i, (uint32_t)f->pid, (uint32_t)f->ns_pid);
		collector__set_ns_tids(f->r->col, ns_tids, NULL);
	}
	return 0;
}

/* The devtrace buffers of every traced process not handed over yet, each
 * tied to the process it was found in. */
void recorder_find_devtrace(struct recorder *r)
{
	for (size_t i = 0; i < targets__count(r->targets); i++) {
		const struct process_report *p = targets__report(r->targets, i);
		struct found_in f = { .r = r };

		if (!p)
			continue;
		f.pid = p->pid;
		devtrace_buffers_find(p->pid, r->devtrace_seen, add_found_devtrace, &f);
	}
}

/* The buffers --devtrace names: each must be one. */
int recorder_open_devtrace_paths(struct recorder *r)
{
	for (size_t i = 0; i < r->o.n_devtrace_paths; i++) {
		const char *path = r->o.devtrace_paths[i];
		int fd = devtrace_buffer_open(r->devtrace_seen, path);

		if (fd == -EEXIST)
			continue;
		if (fd < 0) {
			log_err("--devtrace %s: %s", path, fd == -ENOTSUP ?
				"not a devtrace buffer (no DVTRACE1 magic)" : strerror(-fd));
			return fd == -ENOTSUP ? -EINVAL : fd;
		}
		add_devtrace(r, fd, path, NULL);
	}
	return 0;
}
