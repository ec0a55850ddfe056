/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What passes between the collector (the data lane) and the control lane
 * above it (session/). Downward only, by value or by question:
 *
 * - Control records: what changes what must be probed (a GetPjrtApi
 *   return, an OnReady callback, a device open, an eventfd handed to a
 *   driver, exec, fork, exit, code mapped). The collector queues them
 *   (collector__take_control); the record loop hands them to the attach
 *   controller after each poll, never from inside one: a ring record's
 *   path to the capture places no probe and writes no kernel table.
 * - Lookups and session reads: questions the collector asks of the
 *   control lane (what a probe id stands for, a process's platform, its
 *   memory, the open-call tables, loss counters). They answer and change
 *   nothing; tests/user/lane_calls.py checks that none of them reaches
 *   code that attaches.
 *
 * So collect/ includes neither the attach controller nor the probe
 * session.
 */
#ifndef ACCELTRACE_COLLECT_CONTROL_H
#define ACCELTRACE_COLLECT_CONTROL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "acceltrace/events.h"

struct rt_pack_entry;

enum control_kind {
	CTL_PJRT_API_RETURNED = 1,	/* value: the PJRT_Api table address */
	CTL_CALLBACK_REGISTERED,	/* value: the callback function's address */
	CTL_DEVICE_OPENED,		/* fd: a device node acceltrace knows */
	CTL_NOT_A_DEVICE,		/* fd: opened by a path the kernel's prefix
					 * matched and the full pattern did not */
	CTL_EVENTFD_REGISTERED,		/* fd: an eventfd handed to a driver */
	CTL_EXEC,			/* the process replaced its image */
	CTL_FORK,			/* value: the new child's pid */
	CTL_EXIT,			/* the process exited (its calls are closed) */
	CTL_MAPPED,			/* value: the start of a file mapping made
					 * executable (mmap, mprotect), with its
					 * end, offset and file's identity */
};

struct control_record {
	uint32_t kind;		/* enum control_kind */
	uint32_t pid;
	uint32_t fd;
	uint64_t value;
	/* CTL_MAPPED: the mapping [value, map_end) at page map_pgoff of the
	 * file (dev, ino); all 0 when the kernel could not say. */
	uint64_t map_end, map_pgoff;
	uint64_t dev, ino;
};

/* Control records queued between two takes, at most (~3.5 MB). A poll
 * holds thousands at the very most: past this, a storm of exec, fork and
 * mmap records waits for the next rescan rather than for memory. */
#define CONTROL_QUEUE_MAX 65536

const char *control_kind_name(enum control_kind kind);

/*
 * What the collector may ask of the control lane: answers only, nothing
 * placed or written. The attach controller provides them
 * (attach/attach_control.h: attach_control__lookups); tests provide their
 * own.
 */
struct control_lookups {
	void *ctx;
	/* The probe pack entry behind a runtime probe id; NULL if unknown. */
	const struct rt_pack_entry *(*probe_entry)(void *ctx, int probe_id);
	/*
	 * The platform of @pid's devices as XProf names planes ("GPU",
	 * "TPU"), from the runtimes it maps, and their vendor; NULL when
	 * unknown. May be NULL itself.
	 */
	const char *(*device_platform)(void *ctx, uint32_t pid, const char **vendor);
	/*
	 * Copies @len bytes at @addr in process @pid into @buf: 0, or -errno
	 * (-EFAULT: not all mapped). May be NULL: nothing is read then.
	 */
	int (*read_memory)(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len);
};

/* One record, as the probe session's ring callback hands them. */
typedef int (*control_record_fn)(void *ctx, const void *data, size_t size);

/*
 * What the collector reads of the probe session, never writes (the record
 * loop fills it from probe/probe_session.h). Any member may be NULL.
 */
struct session_reads {
	void *ctx;
	/* Calls in progress, each handed to @fn as a record with end 0. */
	int (*for_each_open)(void *ctx, control_record_fn fn, void *fn_ctx);
	/* The kernel's loss counters since attach. */
	void (*losses)(void *ctx, uint64_t losses[LOSS_KIND_MAX]);
	/* Probe hits the kernel ran no program for (recursion guard). */
	void (*skipped)(void *ctx, uint64_t *runtime, uint64_t *kernel);
	/* A loss counter's name in the capture. */
	const char *(*loss_name)(enum loss_kind kind);
};

#endif /* ACCELTRACE_COLLECT_CONTROL_H */
