// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The benchmarks' own BPF programs: the floors acceltrace's probes are
 * measured against (empty programs attached exactly where acceltrace's
 * are), pieces of acceltrace's hot path in isolation (a ring-buffer write
 * of an EV_RT_CALL-sized record, user-memory reads), and the synthetic
 * producer of 64-byte records for the collector benchmark.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "acceltrace/events.h"

/* ---- floors: nothing but the hook -------------------------------------- */

SEC("uprobe")
int floor_entry(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int floor_return(void *ctx)
{
	return 0;
}

SEC("tp/syscalls/sys_enter_pread64")
int floor_sys_enter(void *ctx)
{
	return 0;
}

SEC("tp/syscalls/sys_exit_pread64")
int floor_sys_exit(void *ctx)
{
	return 0;
}

/* ---- pieces of the hot path --------------------------------------------- */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} piece_ring SEC(".maps");

__u64 piece_drops;
/* User-memory reads the read piece does per hit (set by user space). */
__u32 piece_reads;

/*
 * A record the size of acceltrace's runtime-call record, reserved, given
 * its header and submitted with the same wakeup rule (query, then
 * BPF_RB_NO_WAKEUP or a forced wakeup at an eighth of the ring).
 */
SEC("uprobe")
int piece_ringbuf(void *ctx)
{
	struct ev_rt_call *rec;
	__u64 flags = BPF_RB_NO_WAKEUP;

	rec = bpf_ringbuf_reserve(&piece_ring, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&piece_drops, 1);
		return 0;
	}
	rec->h.type = EV_RT_CALL;
	rec->h.start_ns = 0;
	if (bpf_ringbuf_query(&piece_ring, BPF_RB_AVAIL_DATA) >= (1 << 20))
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
	return 0;
}

/* piece_reads 8-byte bpf_probe_read_user() calls at the first argument. */
SEC("uprobe")
int BPF_KPROBE(piece_read, void *arg)
{
	__u64 sum = 0;

	for (__u32 i = 0; i < 16; i++) {
		__u64 v = 0;

		if (i >= piece_reads)
			break;
		bpf_probe_read_user(&v, sizeof(v), arg + 8 * i);
		sum += v;
	}
	return sum == 0x5a5a5a5a5a5a5a5aull;	/* keeps the reads */
}

/*
 * The syscall path's file lookup (fd -> struct file -> inode: is it a
 * regular file, which one), made as bpf/syscalls.bpf.c makes it, with a
 * chain of BPF_CORE_READ()s (one bpf_probe_read_kernel() each), and made
 * with direct loads through bpf_get_current_task_btf(), which the verifier
 * turns into inline guarded loads. Attached to sys_enter_pread64 alone.
 */
__u64 piece_sink;

#define S_IFMT_	00170000
#define S_IFREG_	0100000

SEC("tp/syscalls/sys_enter_pread64")
int piece_fileid_core(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	__u32 fd = ctx->args[0];
	struct file **fds, *f = NULL;
	struct inode *inode;

	if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	if (!f)
		return 0;
	inode = BPF_CORE_READ(f, f_inode);
	if (!inode || (BPF_CORE_READ(inode, i_mode) & S_IFMT_) != S_IFREG_)
		return 0;
	piece_sink += BPF_CORE_READ(inode, i_ino) + BPF_CORE_READ(inode, i_sb, s_dev);
	return 0;
}

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

SEC("tp/syscalls/sys_enter_pread64")
int piece_fileid_btf(struct trace_event_raw_sys_enter *ctx)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	__u32 fd = ctx->args[0];
	struct file *fp = NULL, *f;
	struct inode *inode;

	if (!fdt || fd >= fdt->max_fds)
		return 0;
	/* The fd array is not typed memory: one read, then a typed cast. */
	bpf_probe_read_kernel(&fp, sizeof(fp), &fdt->fd[fd]);
	if (!fp)
		return 0;
	f = bpf_rdonly_cast(fp, bpf_core_type_id_kernel(struct file));
	inode = f->f_inode;
	if (!inode || (inode->i_mode & S_IFMT_) != S_IFREG_)
		return 0;
	piece_sink += inode->i_ino + inode->i_sb->s_dev;
	return 0;
}

/* ---- the collector benchmark's producer --------------------------------- */

/*
 * Records as acceltrace's sched_switch programs make them (56 bytes, 64
 * with the ring's header), into a ring the benchmark sizes like one of
 * acceltrace's shards. Each test run emits prod_batch records: odd ones take
 * a thread off CPU, even ones bring it back, over prod_threads threads.
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} prod_ring SEC(".maps");

__u32 prod_batch;
__u32 prod_threads;
__u64 prod_wakeup_bytes;
__u64 prod_seq;
__u64 prod_emitted;
__u64 prod_drops;

static long produce_one(__u32 i, void *unused)
{
	struct ev_sched_switch *rec;
	__u64 seq = prod_seq++, flags = BPF_RB_NO_WAKEUP;
	__u32 threads = prod_threads ? prod_threads : 1;
	__u32 tid = 1000 + (__u32)((seq >> 1) % threads);

	rec = bpf_ringbuf_reserve(&prod_ring, sizeof(*rec), 0);
	if (!rec) {
		prod_drops++;
		return 0;
	}
	rec->h.type = EV_SCHED_SWITCH;
	rec->h.cpu = 0;
	rec->h.pid = 999;
	rec->h.tid = tid;
	rec->h.start_ns = rec->h.end_ns = bpf_ktime_get_ns();
	if (seq & 1) {		/* tid goes off CPU */
		rec->prev_tid = tid;
		rec->prev_pid = 999;
		rec->next_tid = 0;
		rec->next_pid = 0;
		rec->prev_state = 1;
	} else {		/* tid comes back */
		rec->prev_tid = 0;
		rec->prev_pid = 0;
		rec->next_tid = tid;
		rec->next_pid = 999;
		rec->prev_state = 0;
	}
	if (bpf_ringbuf_query(&prod_ring, BPF_RB_AVAIL_DATA) >= prod_wakeup_bytes)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(rec, flags);
	prod_emitted++;
	return 0;
}

SEC("raw_tp")
int produce(void *ctx)
{
	bpf_loop(prod_batch, produce_one, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
