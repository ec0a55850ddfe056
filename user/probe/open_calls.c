// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The open-call tables of a probe session: calls in progress read from the
 * BPF side's slots (mapped) and pending hash maps, so a capture can include
 * spans still open at its edges, and the per-process entries (open calls,
 * device fds) dropped when a traced process exits. See probe_session.h.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probe/probe_session.h"
#include "probe/probe_session_internal.h"
#include "probe/packed_records.h"
#include "acceltrace.skel.h"

/* ---------------------------------------------------------------- open calls */

/* A slot's owner field: a tid (4 bytes) or a runtime call's key (8). */
static uint64_t load_owner(const volatile void *owner, size_t size)
{
	if (size == sizeof(uint64_t))
		return __atomic_load_n((const volatile uint64_t *)owner, __ATOMIC_ACQUIRE);
	return __atomic_load_n((const volatile uint32_t *)owner, __ATOMIC_ACQUIRE);
}

/*
 * Copies a slot's record (@size bytes at @src) into @dst when a call is
 * kept there: taken between two equal, even reads of the slot's sequence
 * @seq, with the same owner and a start (struct sys_slot); a call that
 * returned meanwhile sends its record through the ring. Returns the owner,
 * or 0; *@seqp (if set) gets the sequence read.
 */
static uint64_t read_slot(const volatile void *owner, size_t owner_size,
			  const volatile uint32_t *seq, const volatile void *src,
			  void *dst, size_t size, uint32_t *seqp)
{
	uint32_t s0 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
	uint64_t who = load_owner(owner, owner_size);
	const struct ev_header *h = dst;

	if (!who || (s0 & 1))
		return 0;
	memcpy(dst, (const void *)src, size);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (*seq != s0 || load_owner(owner, owner_size) != who || !h->start_ns)
		return 0;
	if (seqp)
		*seqp = s0;
	return who;
}

/* Slot @i's runtime call into @rec, as read_slot(); its key, or 0. */
static uint64_t read_rt_slot(const struct probe_session *ps, uint32_t i,
			     struct ev_rt_call *rec, uint32_t *seqp)
{
	const volatile struct rt_slot *slot = &ps->rt_slots[i];
	uint64_t key = read_slot(&slot->key, sizeof(slot->key), &slot->seq, &slot->rec,
				 rec, sizeof(*rec), seqp);

	return key && rec->h.tid == key >> 32 ? key : 0;
}

/* Calls in progress: their pending records, marked open. */
static int open_runtime_calls(struct probe_session *ps, probe_record_fn fn,
			      void *ctx)
{
	int fd = bpf_map__fd(ps->skel->maps.rt_pending);
	struct rt_pending_key key, next;
	struct ev_rt_call rec;
	bool first = true;
	int err;

	/* Kept packed (payload after the probe's values): unpacked for
	 * @fn, as the collector unpacks ring records. */
	for (uint32_t i = 0; i < ps->n_slots; i++) {
		if (!read_rt_slot(ps, i, &rec, NULL) ||
		    rt_record__unpack(&rec, &rec, sizeof(rec)))
			continue;
		rec.flags |= RT_F_OPEN;
		err = fn(ctx, &rec, sizeof(rec));
		if (err)
			return err;
	}
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &rec) ||
		    rt_record__unpack(&rec, &rec, sizeof(rec)))
			continue;	/* returned meanwhile */
		rec.flags |= RT_F_OPEN;
		err = fn(ctx, &rec, sizeof(rec));
		if (err)
			return err;
	}
	return 0;
}

/* openat/eventfd in progress are not spans worth keeping. */
static bool open_syscall_wanted(const struct ev_syscall *rec)
{
	/* Calls that make records of their own kinds, not spans. */
	return rec->sc != SC_OPENAT && rec->sc != SC_EVENTFD && rec->sc != SC_MMAP &&
	       rec->sc != SC_MPROTECT;
}

/* Syscalls in progress in their threads' slots. */
static int open_syscalls_in_slots(struct probe_session *ps, probe_record_fn fn,
				  void *ctx)
{
	for (uint32_t i = 0; i < ps->n_slots; i++) {
		const volatile struct sys_slot *slot = &ps->sys_slots[i];
		struct ev_syscall rec;
		uint64_t tid = read_slot(&slot->tid, sizeof(slot->tid), &slot->seq,
					 &slot->rec, &rec, sizeof(rec), NULL);
		int err;

		/* Its argbuf past argbuf_len is undefined: unpacked. */
		if (!tid || rec.h.tid != tid || !open_syscall_wanted(&rec) ||
		    sys_record__unpack(&rec, &rec, sizeof(rec)))
			continue;
		err = fn(ctx, &rec, sizeof(rec));
		if (err)
			return err;
	}
	return 0;
}

/* Syscalls in progress: in the slots, then the threads' whose slot was taken. */
static int open_syscalls(struct probe_session *ps, probe_record_fn fn, void *ctx)
{
	int fd = bpf_map__fd(ps->skel->maps.sys_pending);
	__u32 key, next;
	bool first = true;
	int err = open_syscalls_in_slots(ps, fn, ctx);

	if (err)
		return err;
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		struct ev_syscall rec;

		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &rec) || !open_syscall_wanted(&rec) ||
		    sys_record__unpack(&rec, &rec, sizeof(rec)))
			continue;
		err = fn(ctx, &rec, sizeof(rec));
		if (err)
			return err;
	}
	return 0;
}

int probe_session__for_each_open(struct probe_session *ps, probe_record_fn fn,
				 void *ctx)
{
	int err = open_runtime_calls(ps, fn, ctx);

	return err ? err : open_syscalls(ps, fn, ctx);
}

/* ---------------------------------------------------------------- dead processes */

static bool call_of(const void *key, const union map_value *val, uint32_t pid)
{
	return val->h.pid == pid;
}

int probe_session__forget_pid_fds(struct probe_session *ps, uint32_t pid)
{
	return map_delete_matching(bpf_map__fd(ps->skel->maps.fd_kinds), sizeof(struct fd_key),
				   0, map_key_pid_is, pid, NULL);
}

int probe_session__forget_pid_calls(struct probe_session *ps, uint32_t pid)
{
	int deleted = 0;

	/* Its threads are gone, so nothing of theirs writes these slots; a
	 * new thread that reused a tid could, and the owner check keeps its
	 * call. The release mirrors SLOT_BEGIN/END_RELEASE in the BPF side. */
	for (uint32_t i = 0; i < ps->n_slots; i++) {
		volatile struct rt_slot *slot = &ps->rt_slots[i];
		struct ev_rt_call val;
		uint32_t seq;
		__u64 skey = read_rt_slot(ps, i, &val, &seq);

		if (!skey || val.h.pid != pid ||
		    !__atomic_compare_exchange_n(&slot->seq, &seq, seq + 1, false,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			continue;
		slot->rec.h.start_ns = 0;
		if (__atomic_compare_exchange_n(&slot->key, &skey, 0, false,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			deleted++;
		__atomic_fetch_add(&slot->seq, 1, __ATOMIC_SEQ_CST);
	}
	deleted += map_delete_matching(bpf_map__fd(ps->skel->maps.rt_pending),
				   sizeof(struct rt_pending_key), sizeof(struct ev_rt_call),
				   call_of, pid, &ps->skel->bss->rt_in_hash);
	deleted += map_delete_matching(bpf_map__fd(ps->skel->maps.sys_pending), sizeof(__u32),
				   sizeof(struct ev_syscall), call_of, pid,
				   &ps->skel->bss->sys_in_hash);
	return deleted;
}

void probe_session__calls_in_hash(const struct probe_session *ps, uint64_t *rt,
				  uint64_t *sys)
{
	*rt = __atomic_load_n(&ps->skel->bss->rt_in_hash, __ATOMIC_RELAXED);
	*sys = __atomic_load_n(&ps->skel->bss->sys_in_hash, __ATOMIC_RELAXED);
}
