/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The part of NVIDIA's CUPTI Activity API the agent uses, declared from
 * CUPTI's public documentation (docs.nvidia.com/cupti, "Activity API"),
 * as the PJRT header was written: no NVIDIA header is needed to build, and
 * libcupti is opened with dlopen at run time, never linked.
 *
 * Activity records are read by offset, and only the fields whose offsets
 * every record version since CUDA 11 shares (CUpti_ActivityKernel4 to
 * CUpti_ActivityKernel10, CUpti_ActivityMemcpy5/6, CUpti_ActivityMemset4,
 * CUpti_ActivityAPI): a newer CUPTI that appends fields or grows a record
 * still reads right, since records are walked with cuptiActivityGetNextRecord.
 * The offsets were checked against CUDA 13.0's cupti_activity.h on the
 * lent H100 (docs/agent.md).
 */
#ifndef ACCELTRACE_AGENT_CUPTI_ABI_H
#define ACCELTRACE_AGENT_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int CUptiResult;		/* CUptiResult */
#define CUPTI_SUCCESS 0
#define CUPTI_ERROR_MAX_LIMIT_REACHED 12	/* GetNextRecord: no more records */
#define CUPTI_ERROR_NOT_INITIALIZED 15
#define CUPTI_ERROR_INSUFFICIENT_PRIVILEGES 35
#define CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED 39

/* CUpti_ActivityKind: the kinds the agent enables. */
enum {
	CUPTI_ACTIVITY_KIND_MEMCPY = 1,
	CUPTI_ACTIVITY_KIND_MEMSET = 2,
	CUPTI_ACTIVITY_KIND_KERNEL = 3,		/* serialises kernels: not used */
	CUPTI_ACTIVITY_KIND_DRIVER = 4,
	CUPTI_ACTIVITY_KIND_RUNTIME = 5,
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
};

/* CUpti_ActivityFlag for cuptiActivityFlushAll. */
#define CUPTI_ACTIVITY_FLAG_FLUSH_FORCED 1u

/* CUpti_ActivityThreadIdType: SYSTEM makes threadId the kernel's tid. */
#define CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM 1

/* CUpti_CallbackDomain, for cuptiGetCallbackName. */
enum {
	CUPTI_CB_DOMAIN_DRIVER_API = 1,
	CUPTI_CB_DOMAIN_RUNTIME_API = 2,
};

/* CUpti_ActivityMemcpyKind (the copy's direction). */
enum {
	CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN = 0,
	CUPTI_ACTIVITY_MEMCPY_KIND_HTOD = 1,
	CUPTI_ACTIVITY_MEMCPY_KIND_DTOH = 2,
	CUPTI_ACTIVITY_MEMCPY_KIND_HTOA = 3,
	CUPTI_ACTIVITY_MEMCPY_KIND_ATOH = 4,
	CUPTI_ACTIVITY_MEMCPY_KIND_ATOA = 5,
	CUPTI_ACTIVITY_MEMCPY_KIND_ATOD = 6,
	CUPTI_ACTIVITY_MEMCPY_KIND_DTOA = 7,
	CUPTI_ACTIVITY_MEMCPY_KIND_DTOD = 8,
	CUPTI_ACTIVITY_MEMCPY_KIND_HTOH = 9,
	CUPTI_ACTIVITY_MEMCPY_KIND_PTOP = 10,
};

/* Every record starts with its kind (CUpti_Activity). */
struct cupti_activity {
	uint32_t kind;
};

/*
 * CONCURRENT_KERNEL records (CUpti_ActivityKernel4..10): the leading
 * fields, at the offsets every version has.
 */
struct cupti_kernel_prefix {
	uint32_t kind;			/*   0 */
	uint8_t cache_config;		/*   4 */
	uint8_t shared_memory_config;	/*   5 */
	uint16_t registers_per_thread;	/*   6 */
	uint32_t partitioned_cache_requested;	/* 8 */
	uint32_t partitioned_cache_executed;	/* 12 */
	uint64_t start;			/*  16: ns, CUPTI's timestamp */
	uint64_t end;			/*  24 */
	uint64_t completed;		/*  32 */
	uint32_t device_id;		/*  40 */
	uint32_t context_id;		/*  44 */
	uint32_t stream_id;		/*  48 */
	int32_t grid_x, grid_y, grid_z;	/*  52 */
	int32_t block_x, block_y, block_z;	/* 64 */
	int32_t static_shared_memory;	/*  76 */
	int32_t dynamic_shared_memory;	/*  80 */
	uint32_t local_memory_per_thread;	/* 84 */
	uint32_t local_memory_total;	/*  88 */
	uint32_t correlation_id;	/*  92 */
	int64_t grid_id;		/*  96 */
	const char *name;		/* 104: the (mangled) kernel name */
};

/* MEMCPY (CUpti_ActivityMemcpy5/6) and MEMSET (CUpti_ActivityMemset4):
 * the same leading layout; byte 4 is the copy kind, or for a memset the
 * first byte of its 32-bit value. */
struct cupti_transfer_prefix {
	uint32_t kind;			/*   0 */
	uint8_t copy_kind;		/*   4: CUPTI_ACTIVITY_MEMCPY_KIND_* */
	uint8_t src_kind, dst_kind;	/*   5 */
	uint8_t flags;			/*   7 */
	uint64_t bytes;			/*   8 */
	uint64_t start;			/*  16 */
	uint64_t end;			/*  24 */
	uint32_t device_id;		/*  32 */
	uint32_t context_id;		/*  36 */
	uint32_t stream_id;		/*  40 */
	uint32_t correlation_id;	/*  44 */
};

/* DRIVER and RUNTIME records (CUpti_ActivityAPI). */
struct cupti_api {
	uint32_t kind;			/*   0 */
	uint32_t cbid;			/*   4: CUpti_CallbackId in its domain */
	uint64_t start;			/*   8 */
	uint64_t end;			/*  16 */
	uint32_t process_id;		/*  24 */
	uint32_t thread_id;		/*  28: the tid, with THREAD_ID_TYPE_SYSTEM */
	uint32_t correlation_id;	/*  32 */
	uint32_t return_value;		/*  36 */
};

_Static_assert(offsetof(struct cupti_kernel_prefix, start) == 16, "Kernel start");
_Static_assert(offsetof(struct cupti_kernel_prefix, device_id) == 40, "Kernel deviceId");
_Static_assert(offsetof(struct cupti_kernel_prefix, stream_id) == 48, "Kernel streamId");
_Static_assert(offsetof(struct cupti_kernel_prefix, correlation_id) == 92, "Kernel corr");
_Static_assert(offsetof(struct cupti_kernel_prefix, name) == 104, "Kernel name");
_Static_assert(sizeof(struct cupti_kernel_prefix) == 112, "Kernel prefix");
_Static_assert(offsetof(struct cupti_transfer_prefix, bytes) == 8, "Memcpy bytes");
_Static_assert(offsetof(struct cupti_transfer_prefix, stream_id) == 40, "Memcpy streamId");
_Static_assert(offsetof(struct cupti_transfer_prefix, correlation_id) == 44, "Memcpy corr");
_Static_assert(sizeof(struct cupti_api) == 40, "CUpti_ActivityAPI");

/* Callbacks CUPTI calls: a buffer wanted, a buffer filled (validSize bytes). */
typedef void (*cupti_buffer_requested_fn)(uint8_t **buffer, size_t *size,
					  size_t *max_num_records);
typedef void (*cupti_buffer_completed_fn)(void *context, uint32_t stream_id,
					  uint8_t *buffer, size_t size, size_t valid_size);
typedef uint64_t (*cupti_timestamp_fn)(void);

/* The entry points, by the names dlsym finds them under. */
struct cupti_api_table {
	CUptiResult (*ActivityRegisterCallbacks)(cupti_buffer_requested_fn,
						 cupti_buffer_completed_fn);
	CUptiResult (*ActivityEnable)(uint32_t kind);
	CUptiResult (*ActivityDisable)(uint32_t kind);
	CUptiResult (*ActivityFlushAll)(uint32_t flag);
	CUptiResult (*ActivityGetNextRecord)(uint8_t *buffer, size_t valid_size,
					     struct cupti_activity **record);
	CUptiResult (*ActivityGetNumDroppedRecords)(void *context, uint32_t stream_id,
						    size_t *dropped);
	CUptiResult (*GetTimestamp)(uint64_t *timestamp);
	CUptiResult (*GetResultString)(CUptiResult result, const char **str);
	CUptiResult (*GetVersion)(uint32_t *version);
	/* Optional: absent from older CUPTIs. */
	CUptiResult (*GetCallbackName)(uint32_t domain, uint32_t cbid, const char **name);
	CUptiResult (*SetThreadIdType)(uint32_t type);
	CUptiResult (*ActivityRegisterTimestampCallback)(cupti_timestamp_fn fn);
};

#endif /* ACCELTRACE_AGENT_CUPTI_ABI_H */
