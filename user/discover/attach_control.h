/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The attach controller: what must be probed changes as traced processes
 * run (a GetPjrtApi call returns a table, OnReady registers a callback, a
 * device node is opened, an eventfd is registered with a driver, a process
 * execs, forks or exits). The collector sees those moments in the records;
 * it hands each over as a control record and the controller acts on it:
 * attaching runtime probes, updating the kernel's fd and open-call tables.
 * The collector itself attaches nothing and writes no BPF map, as retsnoop
 * keeps its mass attacher apart from event handling.
 */
#ifndef ACCELTRACE_ATTACH_CONTROL_H
#define ACCELTRACE_ATTACH_CONTROL_H

#include <stddef.h>
#include <stdint.h>

struct attach_control;
struct probe_session;
struct rt_pack_entry;
struct runtime_attach;

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

const char *control_kind_name(enum control_kind kind);

/*
 * What the collector is given: where control records go and how a runtime
 * probe id is looked up. The attach controller provides one
 * (attach_control__ops); tests provide their own.
 */
struct control_ops {
	void *ctx;
	/* Acts on one control record; 0 or -errno. */
	int (*handle)(void *ctx, const struct control_record *rec);
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

/*
 * The probe session (for its fd and open-call tables) and the runtime
 * attach manager (for probes); either may be NULL, and what needs it is
 * then skipped. NULL and errno on failure.
 */
struct attach_control *attach_control__new(struct probe_session *ps,
					   struct runtime_attach *ra);
void attach_control__free(struct attach_control *ac);

/* Acts on one control record; 0 or -errno (failures are logged). */
int attach_control__handle(struct attach_control *ac,
			   const struct control_record *rec);
/* The ops that hand control records to @ac. */
struct control_ops attach_control__ops(struct attach_control *ac);

#endif /* ACCELTRACE_ATTACH_CONTROL_H */
