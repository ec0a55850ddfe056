// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The driver interface and file I/O, seen from syscalls: opens of device
 * nodes, ioctls on them (with the argument struct copied at entry), reads of
 * completion eventfds, reads of regular files by traced threads (with the
 * file's identity), io_uring read requests, and files mapped executable
 * (a library's text: mmap or mprotect with PROT_EXEC), so that a runtime
 * loaded late is probed when it is mapped, not at the next rescan.
 *
 * Two attach flavours share one body: per-syscall tracepoints (the default:
 * they fire only for these syscalls) and raw sys_enter/sys_exit (when tracefs
 * is unavailable; they fire for every syscall, so the class comes from
 * sc_by_nr). User space enables one flavour with bpf_program__set_autoload.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "acceltrace.bpf.h"

#define S_IFMT	00170000
#define S_IFREG	0100000
#define S_IFCHR	0020000

#define PROT_EXEC	0x4
#define MAP_ANONYMOUS	0x20
#define VM_EXEC		0x4

/* Device-node path prefixes (probe-pack data), matched on open. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AT_MAX_DEV_PREFIXES);
	__type(key, __u32);
	__type(value, struct dev_prefix);
} dev_prefixes SEC(".maps");

/* Syscall number -> enum sc_class, for the raw sys_enter flavour. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} sc_by_nr SEC(".maps");

struct io_uring_pending {
	__u64 start_ns;
	__u32 pid;
	__u32 tid;
	__u64 dev;
	__u64 ino;
	__u32 opcode;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);	/* the request's kernel address */
	__type(value, struct io_uring_pending);
} uring_pending SEC(".maps");

struct open_scratch {
	struct ev_syscall p;
	char path[AT_PATH_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct open_scratch);
} sys_scratch SEC(".maps");

static __always_inline __u32 fd_kind_of(__u32 pid, __u32 fd)
{
	struct fd_key key = { .pid = pid, .fd = fd };
	__u32 *kind = bpf_map_lookup_elem(&fd_kinds, &key);

	return kind ? *kind : FD_UNKNOWN;
}

/*
 * The kernel keeps dev_t as major << 20 | minor; records carry the encoding
 * stat(2) reports (glibc's makedev), so user space compares them directly.
 */
static __always_inline __u64 user_dev(__u32 kdev)
{
	__u64 major = kdev >> 20, minor = kdev & 0xfffff;

	return ((major & 0xfffff000ull) << 32) | ((major & 0xfffull) << 8) |
	       ((minor & 0xffffff00ull) << 12) | (minor & 0xffull);
}

/* Bytes of a struct inode read at once: its mode, superblock and number
 * sit near the start on every kernel acceltrace knows. */
#define INODE_HEAD 128

/*
 * The identity of the regular file @f; false for anything else. Reads are
 * the cost here (one bpf_probe_read_kernel() each), so the inode's first
 * bytes come in one read and the fields from there, at their CO-RE offsets.
 */
static __always_inline bool regular_file(struct file *f, __u64 *dev, __u64 *ino)
{
	__u32 o_mode = bpf_core_field_offset(struct inode, i_mode);
	__u32 o_sb = bpf_core_field_offset(struct inode, i_sb);
	__u32 o_ino = bpf_core_field_offset(struct inode, i_ino);
	struct super_block *sb;
	struct inode *inode;
	__u8 head[INODE_HEAD];
	umode_t mode;

	if (!f)
		return false;
	inode = BPF_CORE_READ(f, f_inode);
	if (!inode)
		return false;
	if (o_mode + sizeof(mode) > INODE_HEAD || o_sb + sizeof(sb) > INODE_HEAD ||
	    o_ino + sizeof(*ino) > INODE_HEAD ||
	    bpf_core_field_size(struct inode, i_ino) != sizeof(*ino)) {
		/* A layout this kernel does not share: field by field. */
		mode = BPF_CORE_READ(inode, i_mode);
		if ((mode & S_IFMT) != S_IFREG)
			return false;
		*ino = BPF_CORE_READ(inode, i_ino);
		*dev = user_dev(BPF_CORE_READ(inode, i_sb, s_dev));
		return true;
	}
	if (bpf_probe_read_kernel(head, sizeof(head), inode))
		return false;
	mode = *(umode_t *)&head[o_mode & (INODE_HEAD - 1)];
	if ((mode & S_IFMT) != S_IFREG)
		return false;
	*ino = *(__u64 *)&head[o_ino & (INODE_HEAD - 1)];
	sb = *(struct super_block **)&head[o_sb & (INODE_HEAD - 1)];
	*dev = user_dev(BPF_CORE_READ(sb, s_dev));
	return true;
}

/*
 * The struct file behind @fd in the current task. Through the task's BTF
 * pointer (Linux 5.11+) the walk to the fd array is plain loads the JIT
 * guards; older kernels take a bpf_probe_read_kernel() per step, and the
 * verifier never sees the branch they lack.
 */
static __always_inline struct file *current_file(__u32 fd)
{
	struct file **fds;
	struct file *f = NULL;

	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)) {
		struct task_struct *task = bpf_get_current_task_btf();
		struct files_struct *files = task->files;
		struct fdtable *fdt = files ? files->fdt : NULL;

		if (!fdt || fd >= fdt->max_fds)
			return NULL;
		fds = fdt->fd;
	} else {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);

		if (!fdt || fd >= BPF_CORE_READ(fdt, max_fds))
			return NULL;
		fds = BPF_CORE_READ(fdt, fd);
	}
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/* Does @path begin with one of the configured device-node prefixes? */
static __always_inline int match_dev_prefix(const char *path)
{
	for (__u32 i = 0; i < AT_MAX_DEV_PREFIXES; i++) {
		struct dev_prefix *pfx = bpf_map_lookup_elem(&dev_prefixes, &i);
		bool same = true;

		if (!pfx || !pfx->len)
			break;
		for (__u32 j = 0; j < AT_DEV_PREFIX_LEN; j++) {
			if (j >= pfx->len)
				break;
			if (path[j] != pfx->bytes[j]) {
				same = false;
				break;
			}
		}
		if (same)
			return i;
	}
	return -1;
}

static __always_inline bool sc_is_read(__u32 sc)
{
	return sc == SC_READ || sc == SC_PREAD64 || sc == SC_READV || sc == SC_PREADV;
}

/* Bytes of an ioctl's argument struct copied: _IOC_SIZE when the command
 * has one, else a whole buffer. */
static __always_inline __u32 ioctl_arg_size(__u64 cmd)
{
	__u32 n = (cmd >> 16) & 0x3fff;

	return n == 0 || n > AT_ARGBUF ? AT_ARGBUF : n;
}

/*
 * A syscall's entry. What it is and whether it is wanted is settled in
 * locals first; then its record is written once, in place: in the
 * thread's slot when it can be claimed (free, or the thread's own, left by
 * a syscall whose exit never came), its seq odd meanwhile, else in scratch
 * and kept in sys_pending.
 */
static __always_inline int on_sys_enter(__u32 sc, __u64 a0, __u64 a1, __u64 a2,
					__u64 a3)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 pid = pid_tgid >> 32, tid = (__u32)pid_tgid, zero = 0;
	__u32 fd = 0, kind = FD_UNKNOWN;
	__u64 args[3] = {}, dev = 0, ino = 0;
	struct open_scratch *s;
	struct sys_slot *slot;
	struct ev_syscall *p;

	/* Whole-host mode watches every open for device nodes, but never ours
	 * nor, with --cgroup, those of processes outside that cgroup. */
	if (!pid_traced(pid) &&
	    (sc != SC_OPENAT || !cfg_whole_host || !may_adopt(pid)))
		return 0;
	/* Reads and ioctls are detail: their tracepoints are attached only
	 * while the detail switch is on (the raw flavour's stay, and the
	 * switch turns them away here). Opens, closes and mappings are core
	 * (they keep the fd table and the runtime libraries right). */
	if (sc == SC_IOCTL) {
		kind = fd_kind_of(pid, a0);
		if (kind == FD_DEVICE)
			agg_add(pid, AGG_DEVICE_IOCTLS, 1);
	}
	if (detail_off && (sc_is_read(sc) || sc == SC_IOCTL))
		return 0;

	switch (sc) {
	case SC_READ:
	case SC_PREAD64:
	case SC_READV:
	case SC_PREADV:
		fd = a0;
		kind = fd_kind_of(pid, fd);
		if (kind == FD_UNKNOWN && !regular_file(current_file(fd), &dev, &ino))
			return 0;	/* sockets, pipes, ttys: not input files */
		args[0] = a2;	/* count, or iovcnt */
		args[1] = (sc == SC_PREAD64 || sc == SC_PREADV) ? a3 : (__u64)-1;
		args[2] = a1;	/* buffer: an eventfd read's value is there */
		break;
	case SC_IOCTL:
		fd = a0;
		if (kind != FD_DEVICE)
			return 0;
		args[0] = a1;	/* cmd */
		args[1] = a2;	/* argp */
		break;
	case SC_OPENAT:
		args[0] = a1;	/* the path, read at exit */
		break;
	case SC_CLOSE:
		fd = a0;
		kind = fd_kind_of(pid, fd);
		if (kind == FD_UNKNOWN)
			return 0;
		break;
	case SC_EVENTFD:
		break;
	case SC_MMAP:
	case SC_MPROTECT:
		/* Code from a file only (a2: prot, a3: flags): malloc's
		 * anonymous mappings and data leave before any work. */
		if (!(a2 & PROT_EXEC) || (sc == SC_MMAP && (a3 & MAP_ANONYMOUS)))
			return 0;
		args[0] = a0;	/* address (mprotect; mmap's returns it) */
		args[1] = a1;	/* length */
		args[2] = a2;	/* prot */
		break;
	default:
		return 0;
	}

	slot = sys_slot_of(tid);
	if (SLOT_CLAIM(slot, tid, tid)) {
		__sync_fetch_and_add(&slot->seq, 1);
		p = &slot->rec;
	} else {
		slot = NULL;
		s = bpf_map_lookup_elem(&sys_scratch, &zero);
		if (!s)
			return 0;
		p = &s->p;
	}
	/* Every field is set here (argbuf as far as argbuf_len): the slot
	 * and the scratch hold earlier records. */
	p->h.type = EV_SYSCALL;
	p->h.cpu = 0;
	p->h.pid = pid;
	p->h.tid = tid;
	p->h.end_ns = 0;
	p->sc = sc;
	p->fd = fd;
	p->ret = 0;
	p->args[0] = args[0];
	p->args[1] = args[1];
	p->args[2] = args[2];
	p->dev = dev;
	p->ino = ino;
	p->fd_kind = kind;
	p->argbuf_len = 0;
	if (sc == SC_IOCTL && a2) {
		__u32 n = ioctl_arg_size(a1);

		if (!bpf_probe_read_user(p->argbuf, n, (void *)a2))
			p->argbuf_len = n;
	}
	p->h.start_ns = bpf_ktime_get_ns();
	if (slot) {
		__sync_fetch_and_add(&slot->seq, 1);
		/* An older entry of this thread's would read as open forever. */
		HASH_FORGET(&sys_pending, &tid, sys_in_hash);
		return 0;
	}
	HASH_KEEP(&sys_pending, &tid, p, sys_in_hash);
	return 0;
}


/* Sends a finished syscall: its pending record, completed in place. */
static __always_inline void emit_syscall(struct ev_syscall *p, __s64 ret, __u64 now)
{
	struct ev_syscall *dst;
	void *ring = NULL;

	p->h.end_ns = now;
	p->ret = ret;
	p->h.cpu = bpf_get_smp_processor_id();
	/* Reserved at a constant size (no argbuf when it holds nothing, the
	 * common read) and copied once: cheaper than bpf_ringbuf_output(),
	 * as measured for runtime calls. */
	if (!p->argbuf_len) {
		dst = reserve_record(&ring, SYSCALL_HEAD, EV_SYSCALL);
		if (!dst)
			return;
		__builtin_memcpy(dst, p, SYSCALL_HEAD);
	} else {
		dst = reserve_record(&ring, sizeof(*dst), EV_SYSCALL);
		if (!dst)
			return;
		__builtin_memcpy(dst, p, sizeof(*dst));
	}
	submit_record(ring, dst, EV_SYSCALL);
}

static __always_inline void finish_open(struct ev_syscall *p, __u64 pid_tgid,
					__s64 ret, __u64 now)
{
	__u32 pid = pid_tgid >> 32, zero = 0;
	struct open_scratch *s;
	struct ev_dev_open *rec;
	struct fd_key key;
	__u32 kind = FD_DEVICE;
	void *ring;
	int which;

	if (ret < 0)
		return;
	s = bpf_map_lookup_elem(&sys_scratch, &zero);
	if (!s)
		return;
	if (bpf_probe_read_user_str(s->path, sizeof(s->path), (void *)p->args[0]) <= 0)
		return;
	which = match_dev_prefix(s->path);
	if (which < 0)
		return;
	/* Device nodes are character devices: files beside a node under the
	 * same prefix (a simulator's data, say) are not, and their reads must
	 * not be taken for device reads before user space can check. */
	{
		struct file *f = current_file(ret);
		struct inode *inode = f ? BPF_CORE_READ(f, f_inode) : NULL;

		if (!inode || (BPF_CORE_READ(inode, i_mode) & S_IFMT) != S_IFCHR)
			return;
	}
	key.pid = pid;
	key.fd = ret;
	if (bpf_map_update_elem(&fd_kinds, &key, &kind, BPF_ANY))
		count_loss(LOSS_FD_TABLE_FULL);
	if (cfg_whole_host)
		trace_pid(pid, TRACED_ADOPTED);

	rec = reserve_record(&ring, sizeof(*rec), EV_DEV_OPEN);
	if (!rec)
		return;
	fill_ids(&rec->h, pid_tgid);
	rec->h.start_ns = p->h.start_ns;
	rec->h.end_ns = now;
	rec->fd = ret;
	rec->prefix = which;
	__builtin_memcpy(rec->path, s->path, sizeof(rec->path));
	submit_record(ring, rec, EV_DEV_OPEN);
}

/* The mapping that holds an address, as bpf_find_vma() shows it. */
struct vma_found {
	__u64 start, end, pgoff, dev, ino;
	__u32 code_file;	/* executable and backed by a regular file */
	__u32 pad;
};

static long vma_of_addr(struct task_struct *task, struct vm_area_struct *vma,
			void *ctx)
{
	struct vma_found *v = ctx;

	v->start = vma->vm_start;
	v->end = vma->vm_end;
	v->pgoff = vma->vm_pgoff;
	v->code_file = (vma->vm_flags & VM_EXEC) &&
		       regular_file(vma->vm_file, &v->dev, &v->ino);
	return 0;
}

/*
 * A file mapped executable: its mapping and identity go to user space at
 * once (the attach controller probes a runtime before it is called).
 * Where bpf_find_vma() is missing (before 5.17) or the address space is
 * locked for writing just now, the record says only the address, and user
 * space examines the whole process instead.
 */
static __always_inline void finish_mapped(struct ev_syscall *p, __u64 pid_tgid,
					  __s64 ret, __u64 now)
{
	struct vma_found v = {};
	struct ev_mapped *rec;
	__u64 addr;
	void *ring;

	if (ret < 0)
		return;
	addr = p->sc == SC_MMAP ? (__u64)ret : p->args[0];
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_find_vma)) {
		if (!bpf_find_vma(bpf_get_current_task_btf(), addr, vma_of_addr, &v, 0)) {
			if (!v.code_file)
				return;	/* anonymous code (a JIT's): no library */
		} else {
			v.start = v.end = v.pgoff = v.dev = v.ino = 0;
		}
	}
	rec = reserve_record(&ring, sizeof(*rec), EV_MAPPED);
	if (!rec)
		return;
	fill_ids(&rec->h, pid_tgid);
	rec->h.start_ns = p->h.start_ns;
	rec->h.end_ns = now;
	rec->start = v.start;
	rec->end = v.end;
	rec->pgoff = v.pgoff;
	rec->dev = v.dev;
	rec->ino = v.ino;
	rec->addr = addr;
	rec->len = p->args[1];
	rec->sc = p->sc;
	rec->prot = p->args[2];
	submit_record_now(rec, EV_MAPPED);
}

/* @sc: the syscall's class, or 0 where the attach flavour cannot tell. */
static __always_inline int on_sys_exit(__u32 sc, __s64 ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid, pid = pid_tgid >> 32;
	struct fd_key key = { .pid = pid };
	struct sys_slot *slot;
	struct ev_syscall *p;
	__u64 now;

	/* Only traced processes have syscalls in progress, and in whole-host
	 * mode any process's openat: the rest leave before the table lookup. */
	if (!pid_traced(pid) && (!cfg_whole_host || (sc && sc != SC_OPENAT)))
		return 0;
	now = bpf_ktime_get_ns();
	slot = sys_slot_of(tid);
	if (slot && slot->tid == tid) {
		SLOT_BEGIN_RELEASE(slot);
		p = &slot->rec;
	} else {
		slot = NULL;
		p = HASH_KEPT(&sys_pending, &tid, sys_in_hash);
		if (!p)
			return 0;
	}

	/*
	 * Another call's entry (per-syscall tracepoints: @sc known), or a read
	 * or ioctl entered before detail last came on: its exit tracepoint was
	 * detached meanwhile, so whichever exit this is, it is not that call's
	 * end. Dropped: a call blocked across a whole gap between slices is
	 * lost, never drawn from one slice to the next.
	 */
	if (sc && (p->sc != sc ||
		   ((sc_is_read(sc) || sc == SC_IOCTL) && p->h.start_ns < detail_on_ns)))
		goto release;

	switch (p->sc) {
	case SC_OPENAT:
		finish_open(p, pid_tgid, ret, now);
		break;
	case SC_MMAP:
	case SC_MPROTECT:
		finish_mapped(p, pid_tgid, ret, now);
		break;
	case SC_EVENTFD:
		if (ret >= 0) {
			__u32 kind = FD_EVENTFD;

			key.fd = ret;
			if (bpf_map_update_elem(&fd_kinds, &key, &kind, BPF_ANY))
				count_loss(LOSS_FD_TABLE_FULL);
			p->fd = ret;
			emit_syscall(p, ret, now);
		}
		break;
	case SC_CLOSE:
		if (ret == 0) {
			key.fd = p->fd;
			bpf_map_delete_elem(&fd_kinds, &key);
		}
		emit_syscall(p, ret, now);
		break;
	case SC_READ:
		/* The value an eventfd read returned: the completion count. */
		if (p->fd_kind == FD_EVENTFD && ret == 8 &&
		    !bpf_probe_read_user(p->argbuf, 8, (void *)p->args[2]))
			p->argbuf_len = 8;
		emit_syscall(p, ret, now);
		break;
	default:
		emit_syscall(p, ret, now);
	}
release:
	if (slot)
		SLOT_END_RELEASE(slot, tid);
	else
		HASH_FORGET(&sys_pending, &tid, sys_in_hash);
	return 0;
}

/* ---- flavour 1: per-syscall tracepoints --------------------------------- */

/*
 * The kernel refuses to attach a program that reads past the event's record,
 * and each syscall's record holds only its own arguments: read the first
 * @nargs and pass 0 for the rest (the compiler drops the other reads).
 */
#define SC_ARG(ctx, i, nargs) ((i) < (nargs) ? (ctx)->args[(i) < (nargs) ? (i) : 0] : 0)

#define SYSCALL_TP(name, sc, nargs)					\
SEC("tp/syscalls/sys_enter_" #name)					\
int sc_enter_##name(struct trace_event_raw_sys_enter *ctx)		\
{									\
	return on_sys_enter(sc, SC_ARG(ctx, 0, nargs),			\
			    SC_ARG(ctx, 1, nargs), SC_ARG(ctx, 2, nargs),	\
			    SC_ARG(ctx, 3, nargs));			\
}									\
SEC("tp/syscalls/sys_exit_" #name)					\
int sc_exit_##name(struct trace_event_raw_sys_exit *ctx)		\
{									\
	return on_sys_exit(sc, ctx->ret);				\
}

SYSCALL_TP(read, SC_READ, 3)
SYSCALL_TP(pread64, SC_PREAD64, 4)
SYSCALL_TP(readv, SC_READV, 3)
SYSCALL_TP(preadv, SC_PREADV, 4)
SYSCALL_TP(ioctl, SC_IOCTL, 3)
SYSCALL_TP(openat, SC_OPENAT, 2)
SYSCALL_TP(close, SC_CLOSE, 1)
SYSCALL_TP(eventfd2, SC_EVENTFD, 1)
SYSCALL_TP(mmap, SC_MMAP, 4)
SYSCALL_TP(mprotect, SC_MPROTECT, 3)

/* ---- flavour 2: raw sys_enter / sys_exit -------------------------------- */

SEC("raw_tp/sys_enter")
int sc_raw_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	__u32 nr = ctx->args[1], *sc;

	sc = bpf_map_lookup_elem(&sc_by_nr, &nr);
	if (!sc || !*sc)
		return 0;
	return on_sys_enter(*sc, PT_REGS_PARM1_CORE_SYSCALL(regs),
			    PT_REGS_PARM2_CORE_SYSCALL(regs),
			    PT_REGS_PARM3_CORE_SYSCALL(regs),
			    PT_REGS_PARM4_CORE_SYSCALL(regs));
}

SEC("raw_tp/sys_exit")
int sc_raw_exit(struct bpf_raw_tracepoint_args *ctx)
{
	return on_sys_exit(0, ctx->args[1]);
}

/* ---- io_uring read requests: submit to completion ------------------------ */

#define IORING_OP_READV		1
#define IORING_OP_READ_FIXED	4
#define IORING_OP_READ		22

SEC("tp/io_uring/io_uring_submit_req")
int uring_submit(struct trace_event_raw_io_uring_submit_req *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct io_uring_pending p = {};
	__u64 req = (__u64)ctx->req;
	__u8 op = ctx->opcode;

	if (op != IORING_OP_READV && op != IORING_OP_READ_FIXED &&
	    op != IORING_OP_READ)
		return 0;
	if (detail_off || !pid_traced(pid_tgid >> 32))
		return 0;
	/* The request gets its file after this point: identity at completion. */
	p.start_ns = bpf_ktime_get_ns();
	p.pid = pid_tgid >> 32;
	p.tid = (__u32)pid_tgid;
	p.opcode = op;
	if (bpf_map_update_elem(&uring_pending, &req, &p, BPF_ANY))
		count_loss(LOSS_PENDING_FULL);
	return 0;
}

SEC("tp/io_uring/io_uring_complete")
int uring_complete(struct trace_event_raw_io_uring_complete *ctx)
{
	__u64 req = (__u64)ctx->req;
	struct io_uring_pending *p;
	struct ev_syscall *rec;
	void *ring;

	p = bpf_map_lookup_elem(&uring_pending, &req);
	if (!p)
		return 0;
	/* Reads of regular files only: input data, not sockets or pipes. */
	if (!regular_file(BPF_CORE_READ((struct io_kiocb *)ctx->req, file),
			  &p->dev, &p->ino)) {
		bpf_map_delete_elem(&uring_pending, &req);
		return 0;
	}
	/* Packed: no argbuf. */
	rec = reserve_record(&ring, SYSCALL_HEAD, EV_SYSCALL);
	if (rec) {
		rec->h.pid = p->pid;
		rec->h.tid = p->tid;
		rec->h.start_ns = p->start_ns;
		rec->h.end_ns = bpf_ktime_get_ns();
		rec->sc = SC_IO_URING_READ;
		rec->fd = (__u32)-1;
		rec->ret = ctx->res;
		rec->args[0] = p->opcode;
		rec->args[1] = (__u64)-1;
		rec->args[2] = 0;
		rec->dev = p->dev;
		rec->ino = p->ino;
		rec->fd_kind = FD_UNKNOWN;
		rec->argbuf_len = 0;
		submit_record(ring, rec, EV_SYSCALL);
	}
	bpf_map_delete_elem(&uring_pending, &req);
	return 0;
}
