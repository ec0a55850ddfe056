/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * devtrace: the per-core device trace buffer ABI (docs/devtrace.md).
 *
 * One file per device core: a header, a table of names, then a ring of
 * fixed-size records that the device (or its driver, or a runtime shim)
 * writes while it runs and that any other process reads with plain read()s.
 * Records carry a sequence number, so a reader can tell when the ring wrapped
 * past it and exactly how many records it lost.
 *
 * All fields are little-endian. Like every shared header here this one
 * includes nothing: include <linux/types.h> (or vmlinux.h) first.
 */
#ifndef ACCELTRACE_DEVTRACE_H
#define ACCELTRACE_DEVTRACE_H

#define DEVTRACE_MAGIC		0x3145434152545644ULL	/* "DVTRACE1" */
#define DEVTRACE_VERSION	1
#define DEVTRACE_HEADER_SIZE	4096
#define DEVTRACE_RECORD_SIZE	64
#define DEVTRACE_NAME_SIZE	64
#define DEVTRACE_NAME_MAX	56	/* bytes of name text in one entry */
#define DEVTRACE_NO_NAME	0xffffffffU
/* The largest name table a reader accepts (4 MiB of entries): a header
 * announcing more is refused, so a table's size cannot make a reader's
 * memory or time grow past this (docs/devtrace.md, "Names"). */
#define DEVTRACE_NAME_CAPACITY_MAX	65536

/* header.flags */
#define DEVTRACE_F_CLOSED	0x1	/* the writer closed the buffer cleanly */
#define DEVTRACE_F_STREAMS	0x2	/* per-stream spans only (KERNEL, TRANSFER,
					 * LAUNCH): programs and steps come from
					 * the host runtime, not this buffer */

struct devtrace_header {
	__u64 magic;			/*   0: DEVTRACE_MAGIC */
	__u32 version;			/*   8: DEVTRACE_VERSION */
	__u32 header_size;		/*  12: bytes reserved for the header */
	__u32 record_size;		/*  16: DEVTRACE_RECORD_SIZE */
	__u32 name_size;		/*  20: DEVTRACE_NAME_SIZE */
	__u32 name_capacity;		/*  24: entries in the name table,
					 *      <= DEVTRACE_NAME_CAPACITY_MAX */
	__u32 core;			/*  28: core index within the device */
	__u64 names_offset;		/*  32: file offset of name entry 0 */
	__u64 records_offset;		/*  40: file offset of record slot 0 */
	__u64 record_capacity;		/*  48: slots in the ring */
	__u64 clock_rate_hz;		/*  56: nominal device clock rate */
	__u64 run_id;			/*  64: new each time the file is created */
	__u32 num_cores;		/*  72: cores of the device */
	__u32 flags;			/*  76: DEVTRACE_F_* */
	__u64 sync_host_ns;		/*  80: CLOCK_MONOTONIC at creation ... */
	__u64 sync_device_ts;		/*  88: ... and the device clock then */
	char device_kind[32];		/*  96: NUL-terminated, e.g. "TPU v4" */
	__u32 device_id;		/* 128: device index on the host */
	__u32 owner_pid;		/* 132: process that owns the device context */
	char platform[8];		/* 136: "GPU", "TPU"; "" unknown (NUL-padded) */
	__u8 reserved0[48];		/* 144: zero */
	__u64 name_count;		/* 192: published name entries (release) */
	__u64 names_dropped;		/* 200: names refused, table full */
	__u8 reserved1[48];		/* 208: zero */
	__u64 write_seq;		/* 256: seq of the last published record */
	__u64 begin_seq;		/* 264: seq of the record being written */
	__u8 reserved2[48];		/* 272: zero; up to header_size */
};

/* devtrace_name.kind */
enum devtrace_name_kind {
	DEVTRACE_NAME_MODULE = 1,
	DEVTRACE_NAME_OP = 2,		/* ops, GPU kernels, copies ("MemcpyH2D") */
	DEVTRACE_NAME_API = 3,		/* a host API function (LAUNCH records) */
	DEVTRACE_NAME_MORE = 4,		/* more of the entry before: a name longer
					 * than DEVTRACE_NAME_MAX spans entries */
};

/* The longest name a writer spreads over MORE entries, in bytes. */
#define DEVTRACE_LONG_NAME_MAX	1024

struct devtrace_name {
	__u32 id;			/*  0: index of this entry */
	__u16 kind;			/*  4: enum devtrace_name_kind */
	__u16 len;			/*  6: bytes of text, <= DEVTRACE_NAME_MAX */
	char name[DEVTRACE_NAME_MAX];	/*  8: not NUL-terminated when full */
};

enum devtrace_kind {
	DEVTRACE_MODULE_BEGIN = 1,
	DEVTRACE_MODULE_END = 2,
	DEVTRACE_STEP_BEGIN = 3,
	DEVTRACE_STEP_END = 4,
	DEVTRACE_OP_BEGIN = 5,
	DEVTRACE_OP_END = 6,
	DEVTRACE_INFEED_WAIT_BEGIN = 7,
	DEVTRACE_INFEED_WAIT_END = 8,
	DEVTRACE_CLOCK_SYNC = 9,
	DEVTRACE_DMA_BEGIN = 10,	/* defined, not written by the simulator */
	DEVTRACE_DMA_END = 11,
	/*
	 * Complete spans, written once they ended, in the order the runtime
	 * hands them out: unlike the kinds above, their ts may be earlier
	 * than the record before (work on another stream ended first).
	 */
	DEVTRACE_KERNEL = 12,		/* a kernel ran on a stream */
	DEVTRACE_TRANSFER = 13,		/* a copy or memset ran on a stream */
	DEVTRACE_LAUNCH = 14,		/* a host thread's call that queued device work */
	DEVTRACE_KIND_MAX = 15,
};

/* Kinds whose record is a whole span, outside the ts order of the rest. */
#define DEVTRACE_KIND_IS_SPAN(k) ((k) >= DEVTRACE_KERNEL && (k) <= DEVTRACE_LAUNCH)

enum devtrace_category {
	DEVTRACE_CAT_NONE = 0,
	DEVTRACE_CAT_CONVOLUTION = 1,
	DEVTRACE_CAT_FUSION = 2,
	DEVTRACE_CAT_ALL_REDUCE = 3,
	DEVTRACE_CAT_INFEED = 4,
	DEVTRACE_CAT_OUTFEED = 5,
	DEVTRACE_CAT_DOT = 6,
	DEVTRACE_CAT_COPY = 7,
	DEVTRACE_CAT_OTHER = 8,
	DEVTRACE_CAT_MAX = 9,
};

/* devtrace_record.flags */
#define DEVTRACE_RF_CANCELLED	0x1	/* span cut short (device reset, shutdown) */

struct devtrace_record {
	__u64 seq;		/*  0: 1, 2, 3, ... (slot = (seq - 1) % capacity) */
	__u64 ts;		/*  8: device clock ticks */
	__u16 kind;		/* 16: enum devtrace_kind */
	__u8 category;		/* 18: enum devtrace_category (OP_*), else 0 */
	__u8 flags;		/* 19: DEVTRACE_RF_* */
	__u32 name_id;		/* 20: name table index or DEVTRACE_NO_NAME */
	__u64 correlation_id;	/* 24: PJRT launch_id of the execution; the
				 * runtime's correlation id for span kinds */
	__u64 step;		/* 32: per-module execution number on this core;
				 * KERNEL/TRANSFER: stream id; LAUNCH: host tid */
	__u64 flops;		/* 40: OP_END: floating-point operations */
	__u64 bytes;		/* 48: OP_END / INFEED_WAIT_END / DMA_*: bytes */
	__u64 arg;		/* 56: per kind, see docs/devtrace.md; span
				 * kinds: the end, in device ticks (>= ts) */
};

#endif /* ACCELTRACE_DEVTRACE_H */
