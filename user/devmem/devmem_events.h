/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One device-memory call's record into a capture's MemoryAllocation /
 * MemoryDeallocation event (capture/capture_memory.h). The record's values
 * are read as its probe's struct at_mem_desc says (include/acceltrace/
 * events.h): the address, the size the call asked for, the device, and the
 * two values the BPF side wrote back: the bytes allocated or freed (a
 * free's from the kernel's live table; 0: unknown) and the bytes in use on
 * that device after the call.
 *
 * What makes no event, counted: a call that failed (RT_F_MEM_FAILED) or
 * ran inside an outer layer's (RT_F_MEM_NESTED: counted there); an
 * allocation of no known size yet (RT_F_MEM_UNSIZED: its size query makes
 * the event); a size query of an allocation already sized (the BPF side
 * writes 0 bytes back for it); device and context changes (they only
 * place later calls). A free the live table lacked (RT_F_MEM_UNKNOWN) is
 * an event with CAPTURE_MEM_F_SIZE_UNKNOWN and 0 bytes: counted, never
 * sized.
 *
 * Kept across windows: each allocator's peak since first seen, each
 * thread's current device (for calls that do not name one), and each live
 * allocation's device (a free is its allocation's device's, whatever the
 * thread's current one is by then), all bounded.
 */
#ifndef ACCELTRACE_DEVMEM_EVENTS_H
#define ACCELTRACE_DEVMEM_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/types.h>

#include "acceltrace/events.h"
#include "capture/capture_memory.h"

struct capture;
struct devmem_events;

/* Allocators whose peak is kept; past it an event's peak is its in-use. */
#define DEVMEM_MAX_ALLOCATORS AT_MEM_AGG_MAX
/* Threads and contexts whose current device is kept (as the kernel's). */
#define DEVMEM_MAX_THREADS AT_MEM_THREAD_MAX
/* Live allocations whose device is kept for their free (as the kernel's). */
#define DEVMEM_MAX_LIVE AT_MEM_LIVE_MAX

struct devmem_events_stats {
	uint64_t events;		/* allocations and frees made */
	uint64_t failed;		/* RT_F_MEM_FAILED: nothing changed */
	uint64_t nested;		/* RT_F_MEM_NESTED: counted by the outer call */
	uint64_t handle_only;		/* RT_F_MEM_HANDLE_ONLY: its memory went earlier */
	uint64_t unsized;		/* allocations waiting for their size query */
	uint64_t already_sized;		/* size queries of known allocations */
	uint64_t unknown_frees;		/* frees of allocations made before the probes */
	uint64_t table_full;		/* allocations the live table had no room for:
					 * their frees will not be sized */
	uint64_t device_changes;	/* SET_DEVICE, CTX_DEVICE, SET_CTX */
	uint64_t bad_records;		/* value indexes beyond the record */
	uint64_t untracked;		/* peaks or thread devices not kept: full */
};

/* One record and what its caller knows of it. */
struct devmem_call {
	const struct ev_rt_call *rec;
	const struct at_mem_desc *mem;	/* its probe's */
	const char *api;		/* the call's name (static) */
	const char *platform;		/* "GPU", "TPU"; NULL: unknown */
	/*
	 * With MEM_F_DEVICE_HANDLE, the caller's ordinal for the handle in
	 * vals[mem->dev_val] (device_resolved false: none known, device 0,
	 * guessed).
	 */
	bool device_resolved;
	uint32_t device;
};

struct devmem_events *devmem_events__new(void);
void devmem_events__free(struct devmem_events *d);
/*
 * Makes @call's event in @cap's strings into *out: 1 when there is one, 0
 * when the call makes none (counted), -EINVAL for a record whose value
 * indexes lie beyond it (counted), -ENOMEM.
 */
int devmem_events__make(struct devmem_events *d, struct capture *cap,
			const struct devmem_call *call, struct capture_mem_event *out);
/* The thread's current device, as SET_DEVICE and SET_CTX calls left it;
 * false when none was seen. */
bool devmem_events__thread_device(const struct devmem_events *d, uint32_t pid, uint32_t tid,
				  uint32_t *device);
/* @pid exited: its peaks, threads' devices and live allocations go (a new
 * process may get its pid). */
void devmem_events__forget_pid(struct devmem_events *d, uint32_t pid);
const struct devmem_events_stats *devmem_events__stats(const struct devmem_events *d);

#endif /* ACCELTRACE_DEVMEM_EVENTS_H */
