/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Device memory in the capture model: every allocation and free in the
 * window (what XProf's Memory Profile reads: host events MemoryAllocation /
 * MemoryDeallocation), and memory timelines that reach back before the
 * window (the bytes in use of one process's allocator on one device since
 * the process started, or since acceltrace first saw it), coarser the
 * further back they go.
 *
 * An "allocator" is what XProf calls a memory id: one process, one layer
 * (PJRT buffers, or what the CUDA driver and runtime handed the process's
 * own allocator), one device. Its name is XProf's allocator_name, in TF's
 * "GPU_0_bfc" form: "<PLATFORM>_<ordinal>_<layer>", e.g. "TPU_0_pjrt_buffers",
 * "GPU_1_cuda_reserved" (the CUDA layer sees reservations, not tensors).
 */
#ifndef ACCELTRACE_CAPTURE_MEMORY_H
#define ACCELTRACE_CAPTURE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

struct capture;

enum capture_mem_op {
	CAPTURE_MEM_ALLOC = 0,
	CAPTURE_MEM_FREE = 1,
};

enum capture_mem_flags {
	/* A free of an allocation made before the probes: counted, its size
	 * unknown (bytes 0), never guessed. */
	CAPTURE_MEM_F_SIZE_UNKNOWN = 1u << 0,
	/* The bytes are a shape's logical size (PJRT: dims times element
	 * size), not the device's padded one. */
	CAPTURE_MEM_F_SIZE_FROM_SHAPE = 1u << 1,
	/* Sized later by Buffer_OnDeviceSizeInBytes (an execution's output). */
	CAPTURE_MEM_F_SIZE_QUERIED = 1u << 2,
	/* Reserved by a caching allocator or pool: not one tensor. */
	CAPTURE_MEM_F_RESERVED = 1u << 3,
	/* The call did not name its device; none was current: device 0. */
	CAPTURE_MEM_F_DEVICE_GUESSED = 1u << 4,
	/* An allocation the kernel's live table had no room for (the process
	 * at its share, or the table full): counted, with its bytes, but not
	 * in in_use_after, then or later. */
	CAPTURE_MEM_F_UNTRACKED = 1u << 5,
};

/* Identifies one allocator of one process. */
/*
 * A PJRT buffer first seen by its size (an execution's output, sized by
 * Buffer_OnDeviceSizeInBytes): no probed call names its device, so its
 * allocator's device is this, named "<PLATFORM>_unknown_<layer>".
 */
#define CAPTURE_MEM_DEVICE_UNKNOWN UINT32_MAX

struct capture_mem_allocator {
	uint32_t pid;
	uint32_t device;	/* the runtime's device ordinal, or ..._UNKNOWN */
	uint32_t name;		/* interned allocator_name, never 0 */
	uint32_t layer;		/* enum at_mem_layer (include/acceltrace/events.h) */
};

struct capture_mem_event {
	uint64_t ts_ns;
	uint32_t tid;		/* the calling thread */
	uint32_t op;		/* enum capture_mem_op */
	uint32_t flags;		/* enum capture_mem_flags */
	uint32_t api;		/* interned: the call ("cuMemAlloc_v2", ...) */
	struct capture_mem_allocator alloc;
	uint64_t addr;		/* as the runtime names it */
	uint64_t bytes;		/* allocation_bytes; 0: unknown */
	uint64_t requested_bytes;	/* what the call asked for (allocs) */
	uint64_t in_use_after;	/* bytes_allocated: the allocator's, after it */
	uint64_t peak_in_use;	/* peak_bytes_in_use: since first seen */
	uint32_t shape;		/* interned "f32[128,256]"; 0: unknown */
	uint32_t pad;
};

/* One point of a timeline: the bytes in use over [ts_ns, ts_ns + span_ns). */
struct capture_mem_point {
	uint64_t ts_ns;
	uint64_t span_ns;	/* the resolution at this age */
	uint64_t in_use;	/* at the end of the span */
	uint64_t min_in_use;	/* least and most within it */
	uint64_t max_in_use;
	uint64_t peak;		/* the allocator's peak so far */
};

/*
 * Adds one allocation or free (copied). -EINVAL for an unknown op or a
 * name 0, -EBUSY after finalize, -ENOMEM. Events beyond the capture's
 * budget are counted as dropped, as spans are (returns 0).
 */
int capture__add_mem_event(struct capture *c, const struct capture_mem_event *e);
/*
 * Sets the timeline of one allocator (replacing one set before): points
 * oldest first, copied. -EINVAL for points out of order, -EBUSY after
 * finalize, -ENOMEM.
 */
int capture__set_mem_timeline(struct capture *c, const struct capture_mem_allocator *a,
			      const struct capture_mem_point *points, size_t n);

/* enum at_mem_layer as a name ("pjrt_buffers", "cuda_reserved"); NULL for
 * a layer it does not know. The allocators' names end with it. */
const char *capture__mem_layer_name(uint32_t layer);

/* Reading (writers): events in time order once finalized. */
size_t capture__num_mem_events(const struct capture *c);
const struct capture_mem_event *capture__mem_event(const struct capture *c, size_t i);
uint64_t capture__mem_events_dropped(const struct capture *c);
size_t capture__num_mem_timelines(const struct capture *c);
const struct capture_mem_point *capture__mem_timeline(const struct capture *c, size_t i,
						      struct capture_mem_allocator *a,
						      size_t *n);

#endif /* ACCELTRACE_CAPTURE_MEMORY_H */
