// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Records -> capture model: the lifecycle, the one switch on the record
 * type, and the plumbing every record family shares (spans held until the
 * window opens, thread and process names, control records queued for the
 * record loop). Each family has its own file; collector_internal.h lists
 * them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "collector"
#include "lib/log.h"
#include "collect/collector_internal.h"
#include "lib/array.h"
#include "discover/cgroup_labels.h"
#include "discover/procfs.h"
#include "probe/packed_records.h"

/* ---------------------------------------------------------------- state */

void collect_out_of_memory(struct collector *c)
{
	if (!c->st.out_of_memory++)
		log_warn("out of memory: correlation state or names are being lost "
			 "(counted in the capture)");
}

int collect_put(struct collector *c, struct hashmap *h, uint64_t a, uint64_t b,
		void *value, void **old)
{
	int err = hashmap__put(h, a, b, value, old);

	if (err)
		collect_out_of_memory(c);
	return err;
}

const char *control_kind_name(enum control_kind kind)
{
	switch (kind) {
	case CTL_PJRT_API_RETURNED: return "GetPjrtApi returned";
	case CTL_CALLBACK_REGISTERED: return "callback registered";
	case CTL_DEVICE_OPENED: return "device opened";
	case CTL_NOT_A_DEVICE: return "not a device";
	case CTL_EVENTFD_REGISTERED: return "eventfd registered";
	case CTL_EXEC: return "exec";
	case CTL_FORK: return "fork";
	case CTL_EXIT: return "exit";
	case CTL_MAPPED: return "code mapped";
	}
	return "unknown";
}

static bool same_control(const struct control_record *a, const struct control_record *b)
{
	return a->kind == b->kind && a->pid == b->pid && a->fd == b->fd &&
	       a->value == b->value && a->map_end == b->map_end &&
	       a->map_pgoff == b->map_pgoff && a->dev == b->dev && a->ino == b->ino;
}

void collect_queue_control(struct collector *c, const struct control_record *rec)
{
	/* A runtime registers the same callback on every execution: one
	 * record for a run of the same, the controller would skip the rest. */
	if (c->n_control && same_control(&c->control[c->n_control - 1], rec))
		return;
	if (c->n_control >= CONTROL_QUEUE_MAX ||
	    ARRAY_GROW(c->control, c->control_cap, c->n_control + 1)) {
		if (!c->st.control_dropped++)
			log_warn("control records are arriving faster than they are acted on: "
				 "some wait for the next rescan");
		return;
	}
	c->control[c->n_control++] = *rec;
}

void collect_control(struct collector *c, enum control_kind kind, uint32_t pid,
		     uint32_t fd, uint64_t value)
{
	struct control_record rec = {
		.kind = kind, .pid = pid, .fd = fd, .value = value,
	};

	collect_queue_control(c, &rec);
}

const struct control_record *collector__take_control(struct collector *c, size_t *n)
{
	*n = c->n_control;
	c->n_control = 0;
	return c->control;
}

/* ---------------------------------------------------------------- names */

/* Its parent, container and pod, read while it lives (a report counts a
 * DataLoader worker's reads for the trainer that forked it). */
static void note_origin(struct collector *c, uint32_t pid)
{
	struct cgroup_labels cl = { "", "" };
	char path[4096];
	pid_t ppid = 0;

	if (procfs_ppid((pid_t)pid, &ppid))
		return;		/* gone already: nothing to say */
	if (!procfs_cgroup((pid_t)pid, path, sizeof(path)))
		cgroup_labels_parse(path, &cl);
	if (capture__set_process_origin(c->cap, pid, (uint32_t)ppid, cl.container, cl.pod))
		collect_out_of_memory(c);
}

void collect_ensure_process(struct collector *c, uint32_t pid)
{
	char comm[64];

	if (hashmap__get(c->processes, pid, 0))
		return;
	/* Without the marker the name is only looked up again: no loss. */
	collect_put(c, c->processes, pid, 0, (void *)1, NULL);
	procfs_comm(pid, 0, comm, sizeof(comm));
	if (capture__set_process(c->cap, pid, comm[0] ? comm : "?"))
		collect_out_of_memory(c);
	note_origin(c, pid);
}

static void ensure_thread(struct collector *c, uint32_t pid, uint32_t tid)
{
	char comm[64];

	if (hashmap__get(c->threads, pid, tid))
		return;
	collect_ensure_process(c, pid);
	collect_put(c, c->threads, pid, tid, (void *)1, NULL);
	procfs_comm(pid, tid, comm, sizeof(comm));
	if (capture__set_thread(c->cap, pid, tid, comm[0] ? comm : "?", 0))
		collect_out_of_memory(c);
}

int collect_host_track(struct collector *c, uint32_t pid, uint32_t tid)
{
	struct host_track_slot *e = &c->host_tracks[(tid ^ pid * 31) % HOST_TRACK_SLOTS];
	int track;

	/* Tracks are never removed from a capture: a hit is still its own. */
	if (e->gen == c->cap_gen && e->tid == tid && e->pid == pid)
		return e->track;
	ensure_thread(c, pid, tid);
	track = capture__host_track(c->cap, pid, tid);
	if (track < 0) {
		collect_out_of_memory(c);
		return track;
	}
	*e = (struct host_track_slot){ .pid = pid, .tid = tid, .gen = c->cap_gen,
				       .track = track };
	return track;
}

uint32_t collect_intern_static(struct collector *c, const char *s)
{
	struct static_name_slot *e =
		&c->static_names[((uintptr_t)s >> 3) % STATIC_NAME_SLOTS];
	uint32_t id;

	if (e->s == s && e->gen == c->cap_gen)
		return e->id;
	id = capture__intern_static(c->cap, s);
	/* A failed interning (id 0) is tried again next time. */
	if (id || !s || !*s)
		*e = (struct static_name_slot){ .s = s, .id = id, .gen = c->cap_gen };
	return id;
}

/* ---------------------------------------------------------------- spans */

void collect_init_span(struct capture_span *s, int track, enum span_kind kind,
		       uint32_t name, uint64_t start, uint64_t end)
{
	memset(s, 0, sizeof(*s));
	s->track = track;
	s->kind = kind;
	s->name = name;
	s->start_ns = start;
	s->end_ns = end < start ? start : end;
}

static void prearm_push(struct collector *c, const struct capture_span *s)
{
	size_t i;

	if (!c->prearm) {
		c->prearm = calloc(PREARM_MAX, sizeof(*c->prearm));
		if (!c->prearm) {
			c->st.prearm_dropped++;
			collect_out_of_memory(c);
			return;
		}
	}
	if (c->prearm_len == PREARM_MAX) {
		/* Oldest first out: it is the least likely to reach the window. */
		c->prearm_head = (c->prearm_head + 1) % PREARM_MAX;
		c->prearm_len--;
		c->st.prearm_dropped++;
	}
	i = (c->prearm_head + c->prearm_len) % PREARM_MAX;
	c->prearm[i] = *s;
	c->prearm_len++;
}

void collect_keep_span(struct collector *c, struct capture_span *s)
{
	int err;

	if (!c->window_open) {
		prearm_push(c, s);
		return;
	}
	if (s->end_ns < c->start_ns || (c->closing && s->start_ns > c->stop_ns)) {
		c->st.spans_outside++;
		return;
	}
	if (c->closing && s->end_ns > c->stop_ns &&
	    !(s->flags & (SPAN_F_OPEN_AT_STOP | SPAN_F_TARGET_EXITED))) {
		s->flags |= SPAN_F_ENDED_IN_GRACE;
		c->st.ended_in_grace++;
	}
	if (c->observer && c->observer->span)
		c->observer->span(c->observer->ctx, c->cap, s);
	err = capture__add_span(c->cap, s);
	if (err) {
		c->st.spans_refused++;
		log_debug("span refused by the capture: %s", strerror(-err));
		return;
	}
	/* Device work in the window: the candidates for steps. */
	if (s->kind == SPAN_DEVICE_MODULE) {
		collect_remember_execution(c, s);
		c->st.device_executions++;
	}
}

/* ---------------------------------------------------------------- records */

int collect_replay_open_call(struct collector *c, const void *data, size_t size,
			     uint64_t end_ns, bool still_open)
{
	const struct ev_header *h = data;
	union {
		struct ev_rt_call rt;
		struct ev_syscall sc;
	} rec;

	if (size > sizeof(rec))
		return -EINVAL;
	memcpy(&rec, data, size);
	/* A return running now may have half-written the entry (end, ret,
	 * flags): the end is set here, and a ret so read is the call's own. */
	if (h->type == EV_RT_CALL) {
		rec.rt.h.end_ns = end_ns;
		if (still_open)
			rec.rt.flags |= RT_F_OPEN;
		else
			rec.rt.flags &= ~RT_F_OPEN;
		collect_runtime(c, &rec.rt);
	} else if (h->type == EV_SYSCALL) {
		rec.sc.h.end_ns = still_open ? 0 : end_ns;	/* 0 marks it open */
		collect_syscall(c, &rec.sc);
	} else {
		return -EINVAL;
	}
	return 0;
}

/*
 * A window closing at its stop reads the ring buffers past it, and one whose
 * stop is planned reads past it before it closes: records of work that
 * began after the stop belong to the next window, which opens at that stop
 * (the daemon's flight recorder, record --windows), not to this one. They are kept as they came (a span would hold the old capture's
 * string and track ids) and replayed once the next capture is set, before
 * any record read after them (collector__set_capture). Task, device-open
 * and mapping records act at once: they change what is probed.
 */
static bool carry(struct collector *c, const void *data, size_t size)
{
	const struct ev_header *h = data;
	struct raw_record *r;

	if (!(c->closing || c->stop_planned) || h->start_ns <= c->stop_ns || c->replaying ||
	    h->type == EV_TASK || h->type == EV_DEV_OPEN || h->type == EV_MAPPED)
		return false;
	if (c->n_carried >= MAX_CARRIED) {
		c->st.carried_dropped++;
		return true;
	}
	r = malloc(sizeof(*r) + size);
	if (!r || ARRAY_GROW(c->carried, c->cap_carried, c->n_carried + 1)) {
		free(r);
		c->st.carried_dropped++;
		collect_out_of_memory(c);
		return true;
	}
	r->size = size;
	memcpy(r->data, data, size);
	c->carried[c->n_carried++] = r;
	return true;
}

void collect_replay_carried(struct collector *c)
{
	c->replaying = true;
	for (size_t i = 0; i < c->n_carried; i++) {
		collector__record(c, c->carried[i]->data, c->carried[i]->size);
		free(c->carried[i]);
	}
	c->replaying = false;
	c->n_carried = 0;
}

int collector__record(void *ctx, const void *data, size_t size)
{
	struct collector *c = ctx;
	const struct ev_header *h = data;
	static const size_t sizes[EV_TYPE_MAX] = {
		[EV_RT_CALL] = RT_CALL_HEAD,	/* packed: checked by its unpacking */
		[EV_SYSCALL] = SYSCALL_HEAD,	/* packed, as EV_RT_CALL */
		[EV_DEV_OPEN] = sizeof(struct ev_dev_open),
		[EV_TASK] = sizeof(struct ev_task),
		[EV_SCHED_SWITCH] = sizeof(struct ev_sched_switch),
		[EV_IRQ] = sizeof(struct ev_irq),
		[EV_MAPPED] = sizeof(struct ev_mapped),
	};

	/* Records carried past the last window's stop come first (the
	 * replay clears the flag before it calls back here). */
	if (c->replay_pending)
		collect_replay_pending(c);
	if (size < sizeof(*h) || h->type == 0 || h->type >= EV_TYPE_MAX ||
	    size < sizes[h->type]) {
		c->st.bad_records++;
		return 0;
	}
	/* Packed records: only as long as used, checked and unpacked here. */
	if (h->type == EV_RT_CALL || h->type == EV_SYSCALL) {
		union {
			struct ev_rt_call rt;
			struct ev_syscall sc;
		} u;

		if (h->type == EV_RT_CALL ? rt_record__unpack(&u.rt, data, size) :
					    sys_record__unpack(&u.sc, data, size)) {
			c->st.bad_records++;
			return 0;
		}
		collect_record_in(c, &u, h->type == EV_RT_CALL ? sizeof(u.rt) : sizeof(u.sc));
		return 0;
	}
	collect_record_in(c, data, size);
	return 0;
}

void collect_record_in(struct collector *c, const void *data, size_t size)
{
	const struct ev_header *h = data;

	if (carry(c, data, size) || collect_programs_hold(c, data, size))
		return;
	c->st.records[h->type]++;
	switch (h->type) {
	case EV_RT_CALL:
		collect_runtime(c, data);
		break;
	case EV_SYSCALL:
		collect_syscall(c, data);
		break;
	case EV_DEV_OPEN:
		collect_dev_open(c, data);
		break;
	case EV_TASK:
		collect_task(c, data);
		break;
	case EV_SCHED_SWITCH:
		collect_switch(c, data);
		break;
	case EV_IRQ:
		collect_irq(c, data);
		break;
	case EV_MAPPED:
		collect_mapped(c, data);
		break;
	}
}

/* ---------------------------------------------------------------- lifecycle */

static void free_value(void *v)
{
	free(v);
}

struct collector *collector__new(const struct collector_opts *opts)
{
	struct collector *c;

	if (!opts || !opts->capture) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->sched_switch = opts->sched_switch;
	c->steps = opts->steps;
	c->arm_on_any_activity = opts->arm_on_any_activity;
	c->observer = opts->observer;
	c->owners = hashmap__new();
	c->user_args = hashmap__new();
	c->devices = hashmap__new();
	c->dev_fds = hashmap__new();
	c->eventfds = hashmap__new();
	c->off_cpu = hashmap__new();
	c->exited = hashmap__new();
	c->executables = hashmap__new();
	c->compiling = hashmap__new();
	c->program_runs = hashmap__new();
	c->cuda_threads = hashmap__new();
	c->held = hashmap__new();
	if (!c->held || !c->program_runs || !c->cuda_threads || !c->owners || !c->user_args || !c->dev_fds ||
	    !c->eventfds || !c->off_cpu || !c->exited || !c->devices ||
	    !c->executables || !c->compiling ||
	    collector__set_capture(c, opts->capture)) {
		collector__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void collector__connect(struct collector *c, const struct session_reads *reads,
			const struct control_lookups *lookups)
{
	if (reads)
		c->reads = *reads;
	else
		memset(&c->reads, 0, sizeof(c->reads));
	if (lookups)
		c->ctl = *lookups;
	else
		memset(&c->ctl, 0, sizeof(c->ctl));
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	collect_devtrace_free(c);
	collect_devmem_free(c);
	collect_programs_free(c);
	/* user_args point at the same owners: free them once, via owners. */
	hashmap__free(c->user_args, NULL);
	hashmap__free(c->owners, collect_free_owner);
	hashmap__free(c->executables, free_value);
	hashmap__free(c->compiling, free_value);
	hashmap__free(c->program_runs, NULL);
	hashmap__free(c->cuda_threads, free_value);
	hashmap__free(c->devices, free_value);
	hashmap__free(c->dev_fds, NULL);
	hashmap__free(c->eventfds, free_value);
	hashmap__free(c->files, NULL);
	hashmap__free(c->threads, NULL);
	hashmap__free(c->processes, NULL);
	hashmap__free(c->off_cpu, free_value);
	hashmap__free(c->exited, NULL);
	free(c->execs);
	free(c->control);
	free(c->prearm);
	for (size_t i = 0; i < c->n_carried; i++)
		free(c->carried[i]);
	free(c->carried);
	smallest_k__free(&c->step_starts);
	free(c);
}

const struct collector_stats *collector__stats(const struct collector *c)
{
	return &c->st;
}
