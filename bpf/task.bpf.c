// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Thread identity and lifecycle of traced processes: threads created, renamed
 * (input pipelines name theirs: pt_data_worker, tf_data_*), exited; processes
 * forked (with --children), exec'd and exited; and, when enabled, when traced
 * threads go on and off CPU.
 *
 * BTF tracepoints and raw tracepoints pass the same arguments, so each body is
 * attached through either flavour; task fields are read with CO-RE reads,
 * which both accept. Only the arguments every kernel since 5.15 passes are
 * read: a program that reads one the running kernel lacks does not load
 * (tp_btf) or attach (raw_tp).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "acceltrace.bpf.h"
#include "devmem.bpf.h"

#define CLONE_THREAD 0x00010000

static __always_inline void emit_task(__u32 pid, __u32 tid, enum task_event ev,
				      __u32 other, __s32 exit_code,
				      const char *comm_kernel,
				      const char *oldcomm_kernel)
{
	struct ev_task *rec;
	void *ring;

	rec = reserve_record(&ring, sizeof(*rec), EV_TASK);
	if (!rec)
		return;
	rec->h.pid = pid;
	rec->h.tid = tid;
	rec->h.start_ns = rec->h.end_ns = bpf_ktime_get_ns();
	rec->event = ev;
	rec->other = other;
	rec->exit_code = exit_code;
	rec->pad = 0;
	if (comm_kernel)
		bpf_probe_read_kernel_str(rec->comm, sizeof(rec->comm), comm_kernel);
	else
		rec->comm[0] = '\0';
	if (oldcomm_kernel)
		bpf_probe_read_kernel_str(rec->oldcomm, sizeof(rec->oldcomm),
					  oldcomm_kernel);
	else
		rec->oldcomm[0] = '\0';
	submit_record(ring, rec, EV_TASK);
}

static __always_inline int on_newtask(struct task_struct *task, __u64 clone_flags)
{
	__u32 pid = BPF_CORE_READ(task, tgid), tid = BPF_CORE_READ(task, pid);
	__u64 current = bpf_get_current_pid_tgid();
	__u32 creator = (__u32)current, parent = current >> 32;

	if (clone_flags & CLONE_THREAD) {
		if (pid_traced(pid))
			emit_task(pid, tid, TASK_NEW, creator, 0, task->comm, NULL);
		return 0;
	}
	/* A new process: traced only as a child of a traced one. */
	if (!cfg_children || !pid_traced(parent))
		return 0;
	trace_pid(pid, TRACED_CHILD);
	emit_task(parent, creator, TASK_FORK, pid, 0, task->comm, NULL);
	emit_task(pid, tid, TASK_NEW, creator, 0, task->comm, NULL);
	return 0;
}

static __always_inline int on_rename(struct task_struct *task, const char *comm)
{
	__u32 pid = BPF_CORE_READ(task, tgid), tid = BPF_CORE_READ(task, pid);

	/* The tracepoint fires before the copy: task->comm is the old name. */
	if (pid_traced(pid))
		emit_task(pid, tid, TASK_RENAME, 0, 0, comm, task->comm);
	return 0;
}

static __always_inline int on_exit(struct task_struct *task, bool group_dead)
{
	__u32 pid = BPF_CORE_READ(task, tgid), tid = BPF_CORE_READ(task, pid);
	struct sys_slot *slot = sys_slot_of(tid);
	__s32 code;

	/* A thread that dies in a syscall never sees its exit: free its
	 * slot, traced or not (user space may have untraced its process). */
	if (slot && slot->tid == tid) {
		SLOT_BEGIN_RELEASE(slot);
		SLOT_END_RELEASE(slot, tid);
	}
	HASH_FORGET(&sys_pending, &tid, sys_in_hash);
	/* Its current device and outer-call mark (devmem.bpf.h) die with it:
	 * tids are reused. No lookup while the tables hold none. */
	HASH_FORGET(&mem_thread_dev, &tid, mem_thread_in_hash);
	HASH_FORGET(&mem_outer, &tid, mem_outer_in_hash);
	if (!pid_traced(pid))
		return 0;
	code = BPF_CORE_READ(task, exit_code);
	emit_task(pid, tid, TASK_EXIT, 0, code, task->comm, NULL);
	if (group_dead) {
		emit_task(pid, tid, TASK_PROC_EXIT, 0, code, task->comm, NULL);
		/* The pid may be reused: forget it here, not later. */
		untrace_pid(pid);
	}
	return 0;
}

/*
 * Whether the exiting thread is its process's last: the count of live
 * threads, decremented before the tracepoint. sched_process_exit passes
 * that answer as an argument only since 6.16, so every kernel reads the
 * count. Threads exiting together may all see 0: the first untraces the
 * process, the others record nothing more (as with the argument, where
 * threads past the last one's exit find the process untraced too).
 */
static __always_inline bool exit_group_dead(struct task_struct *task)
{
	return BPF_CORE_READ(task, signal, live.counter) == 0;
}

static __always_inline int on_exec(struct task_struct *task, pid_t old_pid)
{
	__u32 pid = BPF_CORE_READ(task, tgid), tid = BPF_CORE_READ(task, pid);

	if (pid_traced(pid))
		emit_task(pid, tid, TASK_EXEC, old_pid, 0, task->comm, NULL);
	return 0;
}

/* Before 5.14 the state was task_struct's "long state". */
struct task_struct___pre_5_14 {
	long state;
} __attribute__((preserve_access_index));

/*
 * The state @prev leaves the CPU in, as the kernel's own sched_switch event
 * reports it: running when preempted, else its state now. sched_switch
 * passes that state as a 4th argument only since 5.18, so it is read from
 * the task (->__state since 5.14, ->state before).
 */
static __always_inline __u64 switch_prev_state(bool preempt, struct task_struct *prev)
{
	struct task_struct___pre_5_14 *old = (void *)prev;

	if (preempt)
		return 0;	/* TASK_RUNNING */
	if (bpf_core_field_exists(prev->__state))
		return BPF_CORE_READ(prev, __state);
	return BPF_CORE_READ(old, state);
}

static __always_inline int on_switch(bool preempt, struct task_struct *prev,
				     struct task_struct *next)
{
	__u32 ppid, npid;
	bool pt, nt;
	struct ev_sched_switch *rec;
	void *ring;

	/* Detail: the switch is the first test on this hot path. */
	if (detail_off)
		return 0;
	ppid = BPF_CORE_READ(prev, tgid);
	npid = BPF_CORE_READ(next, tgid);
	pt = pid_traced(ppid);
	nt = pid_traced(npid);
	if (!pt && !nt)
		return 0;
	rec = reserve_record(&ring, sizeof(*rec), EV_SCHED_SWITCH);
	if (!rec)
		return 0;
	rec->prev_tid = BPF_CORE_READ(prev, pid);
	rec->next_tid = BPF_CORE_READ(next, pid);
	rec->prev_pid = ppid;
	rec->next_pid = npid;
	rec->prev_state = switch_prev_state(preempt, prev);
	rec->h.pid = pt ? ppid : npid;
	rec->h.tid = pt ? rec->prev_tid : rec->next_tid;
	rec->h.start_ns = rec->h.end_ns = bpf_ktime_get_ns();
	submit_record(ring, rec, EV_SCHED_SWITCH);
	return 0;
}

/* One body per event, attached through BTF or raw tracepoints. */
#define TASK_PROGS(flavour)							\
SEC(#flavour "/task_newtask")							\
int BPF_PROG(flavour##_newtask, struct task_struct *task, __u64 clone_flags)	\
{ return on_newtask(task, clone_flags); }					\
SEC(#flavour "/task_rename")							\
int BPF_PROG(flavour##_rename, struct task_struct *task, const char *comm)	\
{ return on_rename(task, comm); }						\
SEC(#flavour "/sched_process_exit")						\
int BPF_PROG(flavour##_exit, struct task_struct *task)			\
{ return on_exit(task, exit_group_dead(task)); }				\
SEC(#flavour "/sched_process_exec")						\
int BPF_PROG(flavour##_exec, struct task_struct *task, pid_t old_pid)		\
{ return on_exec(task, old_pid); }						\
SEC(#flavour "/sched_switch")							\
int BPF_PROG(flavour##_switch, bool preempt, struct task_struct *prev,	\
	     struct task_struct *next)						\
{ return on_switch(preempt, prev, next); }

TASK_PROGS(tp_btf)
TASK_PROGS(raw_tp)
