/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Records that cross the kernel boundary, and the configuration user space
 * hands to the BPF side. Included after vmlinux.h (BPF) and after
 * <linux/types.h> (user space): fixed-width types only, no includes.
 *
 * Every ring-buffer record starts with struct ev_header, whose first field is
 * the record type; one struct per type; user space checks the size before
 * reading. Times are CLOCK_MONOTONIC nanoseconds (bpf_ktime_get_ns).
 */
#ifndef ACCELTRACE_EVENTS_H
#define ACCELTRACE_EVENTS_H

/* ---- limits ----------------------------------------------------------- */

#define AT_MAX_PROBES		1024	/* runtime probe specs (cookie = index) */
#define AT_MAX_FETCH_OPS	16	/* fetch steps per runtime probe */
#define AT_MAX_FETCH_BLOCKS	4	/* block reads per runtime probe */
#define AT_FETCH_BLOCK_MAX	128	/* bytes one block read covers */
#define AT_RT_PAYLOAD		64	/* bytes of string/bytes one probe may copy */
/* Runtime calls of at most this many values and no payload take
 * RT_CALL_SIZE(AT_RT_SMALL_VALS, 0), 88 bytes, in the ring, others the
 * full struct's 248: a reserve takes only a constant size. */
#define AT_RT_SMALL_VALS	4
#define AT_ARGBUF		64	/* bytes of an ioctl argument struct copied */
#define AT_PATH_MAX		256	/* device-node path bytes in an open record */
#define AT_MAX_DEV_PREFIXES	16	/* device-node path prefixes matched in BPF */
#define AT_DEV_PREFIX_LEN	32
#define AT_MAX_RINGS		64	/* ring buffer shards */
#define AT_COMM_LEN		16
/* The traced-process table has a byte per pid (PID_MAX_LIMIT on 64-bit
 * Linux is 1 << 22), in chunks small enough for one array-map value. */
#define AT_PID_SPACE		(1u << 22)
#define AT_PID_CHUNK		(1u << 21)
/* Slots for calls in progress (syscalls by tid, runtime calls by a hash of
 * tid and probe): the default and largest number, a power of two. */
#define AT_CALL_SLOTS		(1u << 14)

/* ---- record types ----------------------------------------------------- */

enum ev_type {
	EV_RT_CALL = 1,		/* a runtime-library call (uprobe) */
	EV_SYSCALL = 2,		/* a syscall of interest, entry and exit paired */
	EV_DEV_OPEN = 3,	/* a device node opened (path) */
	EV_TASK = 4,		/* thread/process lifecycle */
	EV_SCHED_SWITCH = 5,	/* a traced thread went on or off CPU */
	EV_IRQ = 6,		/* a device interrupt handler ran */
	EV_MAPPED = 7,		/* a traced process mapped a file executable */
	EV_TYPE_MAX = 8,
};

struct ev_header {
	__u32 type;		/* enum ev_type: always first */
	__u32 cpu;
	__u32 pid;		/* tgid */
	__u32 tid;
	__u64 start_ns;		/* entry (instants: the time) */
	__u64 end_ns;		/* exit; == start_ns for instants */
};

/* ---- runtime calls: generic uprobes driven by fetch programs ----------- */

/*
 * A fetch program says which values a runtime probe reads, as data: probe
 * packs describe "Execute: launch_id is *(u32 *)(*(args + 24) + 48)" and the
 * BPF side interprets it. Op i stores its result in vals[i].
 *
 * Each user-memory read costs more than the rest of a probe together, so
 * user space groups dereferences of one base into blocks: the first op of a
 * block reads the whole range once and the others take their bytes from it.
 * An op whose block could not be read is read alone, so a block never loses
 * a value a read of its own would have got.
 */
enum at_fetch_src {
	FETCH_NONE = 0,
	FETCH_ARG0 = 1,		/* ..FETCH_ARG5 = 6: integer argument registers */
	FETCH_SP = 7,		/* stack pointer at entry ([sp] = return address) */
	FETCH_RET = 8,		/* return value: return-time ops only */
	FETCH_VAL = 16,		/* + j: the value fetched by op j (< i) */
};

enum at_fetch_flags {
	FETCH_DEREF = 1 << 0,	/* value = *(size *)(base + offset) */
	FETCH_AT_RETURN = 1 << 1,	/* run at the return probe */
	FETCH_PAYLOAD_STR = 1 << 2,	/* copy a string at base + offset to payload */
	FETCH_PAYLOAD_BYTES = 1 << 3,	/* copy AT_RT_PAYLOAD bytes at base + offset */
};

struct at_fetch_op {
	__u8 src;		/* enum at_fetch_src */
	__u8 size;		/* 1, 2, 4 or 8 bytes for FETCH_DEREF */
	__u8 flags;		/* enum at_fetch_flags */
	__u8 block;		/* 0: read alone; b: in blocks[b - 1] */
	__s32 offset;
};

/* One read of [base + offset, base + offset + len) shared by several ops
 * with the same source, phase (FETCH_AT_RETURN) and base. */
struct at_fetch_block {
	__u8 src;		/* enum at_fetch_src, as its ops' */
	__u8 flags;		/* FETCH_AT_RETURN, as its ops' */
	__u16 len;		/* <= AT_FETCH_BLOCK_MAX */
	__s32 offset;
};

enum rt_spec_flags {
	RT_SPEC_RETURN = 1 << 0,	/* a return probe pairs with the entry */
	/* In whole-host mode, a process calling this becomes traced. */
	RT_SPEC_ADOPT = 1 << 1,
	/* Rare and acted on at once (GetPjrtApi): wake the consumer now. */
	RT_SPEC_URGENT = 1 << 2,
	/*
	 * Detail, not core: a high-rate call (a transfer, a completion) that
	 * the daemon's sampled mode records only while the detail switch is
	 * on. Its programs test the switch before anything else.
	 */
	RT_SPEC_DETAIL = 1 << 3,
};

/* ---- device memory: allocations kept in the kernel ---------------------- */

/*
 * What a runtime call does to device memory, as data beside its fetch
 * program (struct at_mem_desc in its spec). The BPF side keeps, for every
 * traced process and device, bytes in use, the peak and when, counts, and a
 * live-allocation table that gives a free its size; it writes what it
 * found into the call's record (the val_* indexes below), so a window's
 * record of each allocation and free says the bytes in use after it.
 *
 * Success is a zero return (CUresult, cudaError_t, PJRT_Error *): a paired
 * call that returned nonzero changes nothing (RT_F_MEM_FAILED). Entry-only
 * calls (a free whose return is not probed) count at entry.
 */
enum at_mem_op {
	MEM_OP_NONE = 0,
	MEM_OP_ALLOC,		/* addr, size, device: a new live allocation */
	MEM_OP_FREE,		/* addr: its size from the live table */
	/* addr, size: sizes an allocation seen without one (a PJRT buffer an
	 * execution made, sized by Buffer_OnDeviceSizeInBytes); one the table
	 * lacks is added (first seen by its size). */
	MEM_OP_SIZE,
	MEM_OP_SET_DEVICE,	/* device: the calling thread's current device */
	MEM_OP_CTX_DEVICE,	/* addr (a context), device: which device it is */
	MEM_OP_SET_CTX,		/* addr (a context): the thread's device is its */
};

enum at_mem_size_kind {
	MEM_SIZE_VAL = 0,	/* vals[size_val] bytes */
	/* A shape: element size of the PJRT_Buffer_Type in vals[size_val]
	 * times the product of vals[dims_val .. dims_val + vals[ndims_val]),
	 * at most AT_MEM_MAX_DIMS dims (the logical size, not the device's
	 * padded one: said so). */
	MEM_SIZE_SHAPE,
	MEM_SIZE_PRODUCT,	/* vals[size_val] * vals[dims_val] (pitch * height) */
	MEM_SIZE_UNKNOWN,	/* none at this call: sized later, or never */
};

enum at_mem_flags {
	/* An outer layer (the CUDA runtime): allocation calls of an inner
	 * layer (the driver) on the same thread while it runs are not counted
	 * again (their records carry RT_F_MEM_NESTED). */
	MEM_F_OUTER = 1 << 0,
	/* The device is not in the call: the thread's current device
	 * (MEM_OP_SET_DEVICE / SET_CTX), else 0 (RT_F_MEM_DEVICE_GUESSED). */
	MEM_F_THREAD_DEVICE = 1 << 1,
	/* vals[dev_val] is a PJRT_Device pointer, not an ordinal: the
	 * aggregate is keyed by it and user space names its ordinal. */
	MEM_F_DEVICE_HANDLE = 1 << 2,
	/* The allocation is a reservation by a caching allocator or pool
	 * (cuMemAlloc under PyTorch's allocator, cuMemCreate): what is seen
	 * is reserved memory, not tensors. Carried into the live entry. */
	MEM_F_RESERVED = 1 << 3,
	/* A free of the device memory whose handle lives on (PJRT's
	 * Buffer_Delete): the live entry stays, size 0 and marked
	 * AT_MEM_LIVE_DELETED, so the handle's own free later (Buffer_Destroy)
	 * is dropped silently, neither counted again nor unknown. */
	MEM_F_KEEP_HANDLE = 1 << 4,
};

/*
 * Which layer's memory a call accounts: kept apart, since one sits on the
 * other (a JAX GPU run's PJRT buffers are carved out of what its allocator
 * reserved from the CUDA driver).
 */
enum at_mem_layer {
	MEM_LAYER_PJRT = 1,	/* PJRT buffers: one per array */
	/* The CUDA driver and runtime (cuMemAlloc*, cudaMalloc*, cuMemCreate):
	 * what the process's allocator reserved, not its tensors. */
	MEM_LAYER_CUDA = 2,
};

#define AT_MEM_NO_VAL		0xff	/* an index that names no value */
#define AT_MEM_MAX_DIMS		8
/* A size above this (256 TiB) is no device's: a hostile or garbled value,
 * taken as unknown (RT_F_MEM_UNSIZED), so in_use cannot wrap. */
#define AT_MEM_MAX_BYTES	(1ull << 48)

/*
 * Element bytes of PJRT_Buffer_Type t (pjrt_c_api.h order) for
 * MEM_SIZE_SHAPE, as nibble t of two constants: 0 for sub-byte types or
 * none (a shape of them is not sized), else log2(bytes) + 1. Constants, not
 * a table: a BPF const array becomes a .rodata.cst32 section that the
 * project's BPF linker (libbpf 1.1) mislinks. Types 0-15: INVALID, PRED,
 * S8-S64, U8-U64, F16, F32, F64, BF16, C64, C128; 16-20 and 26-28 the
 * 1-byte F8 kinds; 21-25 and 29-31 sub-byte or none. Kept equal to user
 * space's pjrt_buffer_type_size() (tests/discover/test_mem_packs.c).
 */
#define AT_PJRT_ELEM_LOG2_LO	0x5424324321432110ull
#define AT_PJRT_ELEM_LOG2_HI	0x0001110000011111ull

/*
 * How the pack entries fit AT_MAX_FETCH_OPS: a shape takes 4 + 8 values
 * (type, dims, num_dims, device, dims[0..7]), the Args pointer and the out
 * buffer 2 more, the two written-back values the last 2: exactly 16. So
 * BufferFromHostBuffer's memory effect is its own core entry ("(memory)")
 * beside the detail H2D entry, whose values the collector reads unchanged.
 *
 * Status returns: the CUDA layer's are 32-bit (CUresult, cudaError_t: the
 * upper half of the register is not theirs), PJRT's a pointer. Device
 * values of ordinals are 32-bit (CUdevice, int) for the same reason.
 *
 * No room in the live table (the process at its cap, or the table full):
 * the allocation is counted (allocs, alloc_bytes, untracked,
 * untracked_bytes) but not in in_use, since its free cannot find it and
 * in_use would then only grow (a leak that is not); LOSS_MEM_TABLE_FULL,
 * RT_F_MEM_TABLE_FULL and the process's at_mem_proc.refused say it, and
 * its free is counted as unknown, subtracting nothing.
 */

struct at_mem_desc {
	__u8 op;		/* enum at_mem_op */
	__u8 size_kind;		/* enum at_mem_size_kind */
	__u8 flags;		/* enum at_mem_flags */
	__u8 addr_val;		/* value indexes into the record's vals[] */
	__u8 size_val;
	__u8 dims_val;
	__u8 ndims_val;
	__u8 dev_val;
	/* Written by the BPF side into the record (the pack reserves them
	 * with FETCH_NONE ops): the bytes the call allocated or freed (a
	 * free's from the live table; 0: unknown), and the bytes in use on
	 * that device after it. */
	__u8 out_bytes_val;
	__u8 out_in_use_val;
	__u8 layer;		/* enum at_mem_layer */
	__u8 pad[5];
};

struct rt_probe_spec {
	__u32 n_ops;
	__u32 flags;		/* enum rt_spec_flags */
	__u32 n_blocks;
	__u32 pad;
	struct at_fetch_op ops[AT_MAX_FETCH_OPS];
	struct at_fetch_block blocks[AT_MAX_FETCH_BLOCKS];
	struct at_mem_desc mem;	/* op MEM_OP_NONE: no memory effect */
};

/* Live allocations: key (pid, address as the runtime names it: a device
 * pointer, a PJRT_Buffer, a CUmemGenericAllocationHandle). */
struct at_mem_live_key {
	__u32 pid;
	__u32 pad;
	__u64 addr;
};

struct at_mem_live {
	__u64 bytes;		/* 0: not known yet (MEM_SIZE_UNKNOWN) */
	__u64 device;		/* as in struct at_mem_agg_key */
	/* When the allocating call completed (its record's end_ns): a free
	 * called before it cannot be of this allocation, but of an earlier
	 * one at a handle the runtime reused. */
	__u64 ts_ns;
	__u32 flags;		/* enum at_mem_flags of the allocating call */
	__u32 layer;		/* enum at_mem_layer */
};
/* In struct at_mem_live.flags: its memory was freed, its handle lives on
 * (MEM_F_KEEP_HANDLE). */
#define AT_MEM_LIVE_DELETED	(1u << 31)
/* ... a sizing call (MEM_OP_SIZE) took it: the first of racing ones. */
#define AT_MEM_LIVE_SIZING	(1u << 30)

/* Per (pid, layer, device): device is an ordinal, or with
 * MEM_F_DEVICE_HANDLE a PJRT_Device pointer (flags says which). */
struct at_mem_agg_key {
	__u32 pid;
	__u16 layer;		/* enum at_mem_layer */
	__u16 flags;		/* MEM_F_DEVICE_HANDLE or 0 */
	__u64 device;
};

struct at_mem_agg {
	__u64 in_use;		/* bytes of live allocations of known size */
	__u64 peak;		/* most in_use so far, */
	__u64 peak_ns;		/* and when (bpf_ktime_get_ns) */
	__u64 allocs;		/* allocations counted, */
	__u64 alloc_bytes;	/* and their bytes */
	__u64 frees;		/* frees that found their allocation, */
	__u64 free_bytes;	/* and its bytes */
	/* Frees of an allocation the table does not hold: made before the
	 * probes (or its entry lost): counted, never sized. */
	__u64 frees_unknown;
	/* Allocations made with no size known (counted in allocs): those
	 * sized later (MEM_OP_SIZE) are in alloc_bytes from then on. */
	__u64 allocs_unsized;
	__u64 reserved_in_use;	/* of in_use, by MEM_F_RESERVED calls */
	/* Allocations counted (allocs, alloc_bytes) that the live table had
	 * no room for (the process at its cap, or the table full): not in
	 * in_use, which is then short by at most untracked_bytes. */
	__u64 untracked;
	__u64 untracked_bytes;
};

/* Per process: its entries in the live table, against its cap. */
struct at_mem_proc {
	__u64 live;		/* entries it holds */
	__u64 refused;		/* entries refused it: at its cap, or the table full */
};

/*
 * Live allocations, all processes: allocated as used (BPF_F_NO_PREALLOC),
 * ~100 bytes of kernel memory each, so the size bounds the worst case; the
 * cost up front is the hash buckets' 16 MiB. A process holds at most a quarter of them (by default: the
 * cap is the session's, probe_session_opts.mem_live_proc_max), so one that
 * leaks millions of buffers cannot take the table from every other
 * process on the host.
 */
#define AT_MEM_LIVE_MAX		(1u << 20)
#define AT_MEM_LIVE_PROC_MAX	(AT_MEM_LIVE_MAX / 4)
#define AT_MEM_AGG_MAX		4096		/* (process, device) pairs */
#define AT_MEM_THREAD_MAX	8192		/* threads with a current device */


enum rt_call_flags {
	RT_F_FETCH_FAULT = 1 << 0,	/* some user-memory read failed */
	RT_F_NO_RETURN = 1 << 1,	/* entry-only record */
	RT_F_OPEN = 1 << 2,		/* still running: read from the pending table */
	/* Returned while the detail switch was off: the detail probes that
	 * would follow this call (its completions) record nothing. */
	RT_F_NO_DETAIL = 1 << 3,
	/* Device memory (struct at_mem_desc), set by the BPF side: */
	RT_F_MEM_FAILED = 1 << 4,	/* nonzero return: nothing changed */
	RT_F_MEM_NESTED = 1 << 5,	/* inside an outer layer's call: not counted */
	RT_F_MEM_UNKNOWN = 1 << 6,	/* a free the live table lacks (pre-attach) */
	RT_F_MEM_UNSIZED = 1 << 7,	/* an allocation of no known size yet */
	RT_F_MEM_DEVICE_GUESSED = 1 << 8,	/* no current device known: 0 */
	RT_F_MEM_TABLE_FULL = 1 << 9,	/* counted, but its free will not be sized */
	/* A handle whose memory an earlier call freed (Buffer_Destroy after
	 * Buffer_Delete), or a free another thread's won: nothing moved. */
	RT_F_MEM_HANDLE_ONLY = 1 << 10,
};

/*
 * A runtime call. In the ring and in the BPF tables of calls in progress
 * (the open-span tables) it is packed: only vals[0, n_vals) are there, and
 * the payload's payload_len bytes follow them at &vals[n_vals]. A ring
 * record holds at least RT_CALL_SIZE(n_vals, payload_len) bytes: 88 (the
 * small class, AT_RT_SMALL_VALS) for a callback's two values, where the
 * full struct is 248 (the ring write and the reader's copy scale with it).
 * User space unpacks it (rt_record__unpack()) into the full struct,
 * n_vals = AT_MAX_FETCH_OPS, values past the probe's ops and payload
 * bytes past payload_len 0: unpacking that again changes nothing.
 */
struct ev_rt_call {
	struct ev_header h;
	__u32 probe_id;		/* index into the probe specs (attach cookie) */
	__u32 flags;		/* enum rt_call_flags */
	__u64 ret;		/* return value, when paired */
	__u32 fault_mask;	/* bit i: op i's read failed */
	__u16 payload_len;	/* <= AT_RT_PAYLOAD */
	__u16 n_vals;		/* <= AT_MAX_FETCH_OPS: the values present */
	__u64 vals[AT_MAX_FETCH_OPS];
	char payload[AT_RT_PAYLOAD];
};

/* Bytes of a packed runtime-call record before its values, and in all. */
#define RT_CALL_HEAD		56
#define RT_CALL_SIZE(n_vals, payload_len) \
	(RT_CALL_HEAD + 8u * (n_vals) + (__u32)(payload_len))

/* A runtime call in progress is keyed by its thread and probe. */
struct rt_pending_key {
	__u32 tid;
	__u32 probe_id;
};

/*
 * A runtime call in progress, in the slot its (thread, probe) hashes to,
 * as struct sys_slot is for syscalls: a compare-and-swap on @key claims
 * it, and a call whose slot another holds uses the rt_pending hash table
 * instead.
 */
struct rt_slot {
	__u64 key;		/* tid << 32 | probe id; 0: free */
	__u32 seq;		/* see struct sys_slot */
	__u32 pad;
	struct ev_rt_call rec;
};

/* The slot of a runtime call: probe ids spread by a multiplicative hash, so
 * a thread's calls of different probes rarely share one. */
static inline __attribute__((always_inline)) __u32 at_rt_slot_index(__u32 tid,
								   __u32 probe_id,
								   __u32 slot_mask)
{
	return (tid ^ (probe_id * 0x9e3779b1u)) & slot_mask;
}

/* ---- syscalls on device nodes, eventfds and files --------------------- */

enum sc_class {
	SC_READ = 1,
	SC_PREAD64 = 2,
	SC_READV = 3,
	SC_PREADV = 4,
	SC_IOCTL = 5,
	SC_OPENAT = 6,
	SC_CLOSE = 7,
	SC_EVENTFD = 8,		/* eventfd2: a new eventfd (ret = fd) */
	SC_IO_URING_READ = 9,	/* an io_uring read request, submit to completion */
	SC_POLL = 10,		/* ppoll/poll on fds including a completion eventfd */
	SC_MMAP = 11,		/* mmap of a file with PROT_EXEC: an EV_MAPPED record */
	SC_MPROTECT = 12,	/* mprotect adding PROT_EXEC: an EV_MAPPED record */
	SC_CLASS_MAX = 13,
};

/* What acceltrace knows an fd of a traced process to be. */
enum fd_kind {
	FD_UNKNOWN = 0,		/* regular files are looked up, not stored */
	FD_DEVICE = 1,		/* an accelerator device node */
	FD_EVENTFD = 2,		/* an eventfd (maybe a completion interrupt) */
};

struct fd_key {
	__u32 pid;
	__u32 fd;
};

/*
 * A syscall. A ring record whose argbuf holds nothing (a read) ends before
 * it (SYSCALL_HEAD: 96 bytes, where the struct is 160); user space unpacks
 * it (sys_record__unpack()), argbuf zero past argbuf_len. A syscall in progress is the same struct, kept per thread in
 * the BPF table of open syscalls, its argbuf past argbuf_len undefined.
 */
struct ev_syscall {
	struct ev_header h;
	__u32 sc;		/* enum sc_class */
	__u32 fd;
	__s64 ret;
	__u64 args[3];		/* ioctl: cmd, argp; reads: count, offset, buf;
				 * openat (in progress): the path pointer */
	__u64 dev;		/* the file's identity: st_dev (stat's encoding) */
	__u64 ino;
	__u32 fd_kind;		/* enum fd_kind at entry */
	__u32 argbuf_len;	/* bytes valid in argbuf */
	__u8 argbuf[AT_ARGBUF];	/* ioctl: arg struct at entry; eventfd read: value */
};

#define SYSCALL_HEAD		96	/* bytes before argbuf */
#define SYSCALL_SIZE(argbuf_len) (SYSCALL_HEAD + (__u32)(argbuf_len))

/*
 * A syscall in progress, in the slot of its thread (tid modulo the number
 * of slots): the common case costs an array element and a few atomic
 * operations where a hash map cost an insert, a lookup and a delete. A
 * thread whose slot another holds uses the hash table instead.
 *
 * For readers of the open-call table in user space, @seq is odd while
 * @rec is written and changes with every claim and release, and a freed
 * slot's record has start 0: a record copied between two equal, even
 * reads of @seq, with its owner unchanged and a start, is one call's.
 */
struct sys_slot {
	__u32 tid;		/* owner; 0: free */
	__u32 seq;
	struct ev_syscall rec;
};

struct ev_dev_open {
	struct ev_header h;
	__s32 fd;
	__u32 prefix;		/* which configured prefix matched */
	char path[AT_PATH_MAX];
};

/* A device-node path prefix, matched in BPF on open. */
struct dev_prefix {
	__u32 len;		/* 0: unused slot */
	__u32 pad;
	char bytes[AT_DEV_PREFIX_LEN];
};

/*
 * A file mapped executable by a traced process (a library's text: ld.so's
 * mmap of it, or an mprotect that made it executable), at the syscall's
 * exit: the attach controller examines the process at once instead of at
 * the next rescan of /proc/PID/maps. Anonymous executable memory (JIT
 * code) makes no record.
 */
struct ev_mapped {
	struct ev_header h;	/* start/end: the syscall's entry and exit */
	__u64 start;		/* the mapping (VMA) that holds the address */
	__u64 end;		/* 0 (with dev, ino, pgoff) when the kernel could
				 * not look the mapping up: examine the process */
	__u64 pgoff;		/* its file offset, in pages */
	__u64 dev;		/* the file's identity, as /proc/PID/maps shows */
	__u64 ino;
	__u64 addr;		/* what the call returned (mmap) or was given */
	__u64 len;
	__u32 sc;		/* SC_MMAP or SC_MPROTECT */
	__u32 prot;
};

/* ---- thread and process lifecycle -------------------------------------- */

enum task_event {
	TASK_NEW = 1,		/* a thread or process was created (other = creator tid) */
	TASK_RENAME = 2,	/* comm changed: oldcomm -> comm */
	TASK_EXIT = 3,		/* a thread exited */
	TASK_PROC_EXIT = 4,	/* the whole process exited (its last thread) */
	TASK_EXEC = 5,		/* the process exec'd */
	TASK_FORK = 6,		/* a child process (other = child pid) */
};

struct ev_task {
	struct ev_header h;
	__u32 event;		/* enum task_event */
	__u32 other;
	__s32 exit_code;
	__u32 pad;
	char comm[AT_COMM_LEN];
	char oldcomm[AT_COMM_LEN];
};

struct ev_sched_switch {
	struct ev_header h;	/* tid/pid: the traced thread */
	__u32 prev_tid;
	__u32 next_tid;
	__u32 prev_pid;
	__u32 next_pid;
	__s64 prev_state;	/* 0 runnable (preempted), else sleeping/blocked */
};

/* ---- interrupts -------------------------------------------------------- */

struct ev_irq {
	struct ev_header h;	/* pid/tid: whatever was interrupted */
	__u32 irq;
	__s32 ret;		/* IRQ_HANDLED etc. */
};

/* ---- traced-process set ------------------------------------------------ */

/* A pid's byte in the traced-process table: 0 untraced, else these. */
enum traced_flags {
	TRACED_TARGET = 1 << 0,		/* named by the user (--pid) */
	TRACED_CHILD = 1 << 1,		/* a descendant, with --children */
	TRACED_ADOPTED = 1 << 2,	/* found in whole-host mode */
};

/* ---- per-process aggregates, kept in the kernel -------------------------- */

/*
 * Counted for every traced process by the probes that see them: one
 * per-CPU hash entry per process (struct at_proc_agg), summed by user
 * space. The ioctl programs are detail, attached only while the switch is
 * on; skipped hits are counted while it is off. (Reads and their bytes need
 * no probe: the kernel keeps them in /proc/PID/io.)
 */
enum agg_counter {
	AGG_DEVICE_IOCTLS = 0,	/* ioctls on the process's device nodes */
	AGG_DETAIL_SKIPPED = 1,	/* detail probe hits the switch turned away */
	AGG_MAX = 2,
};

struct at_proc_agg {
	__u64 v[AGG_MAX];
};

#define AT_MAX_AGG_PROCS	4096	/* processes with aggregates at once */

/* ---- loss counters (per CPU), indexed by enum loss_kind ----------------- */

enum loss_kind {
	LOSS_RINGBUF_FULL = 0,		/* bpf_ringbuf_reserve failed */
	LOSS_PENDING_FULL = 1,		/* no room to remember a call in progress */
	LOSS_FETCH_FAULT = 2,		/* a user-memory read in a fetch failed */
	LOSS_FD_TABLE_FULL = 3,		/* no room to track a device fd */
	LOSS_TRACED_FULL = 4,		/* a pid beyond the traced-process table */
	LOSS_RETURN_UNMATCHED = 5,	/* a return without its entry */
	LOSS_AGG_FULL = 6,		/* no room for a process's aggregates */
	LOSS_MEM_TABLE_FULL = 7,	/* no room for a live allocation or pair */
	LOSS_KIND_MAX = 8,
};

/* Loss and record counters, a copy per CPU (the BPF map "counters"). */
struct at_counters {
	__u64 losses[LOSS_KIND_MAX];
	__u64 emitted[EV_TYPE_MAX];	/* records put in a ring, by enum ev_type */
};

#endif /* ACCELTRACE_EVENTS_H */
