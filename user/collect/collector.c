// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Records -> capture model. One switch on the record type, one on the
 * runtime event kind; correlation state lives in hash maps keyed by
 * (pid, pointer) and is freed as work completes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_CONTEXT "collector"
#include "lib/log.h"
#include "lib/array.h"
#include "capture/capture.h"
#include "collect/collector.h"
#include "discover/device_nodes.h"
#include "lib/hashmap.h"
#include "probe/probe_session.h"
#include "discover/runtime_attach.h"
#include "lib/smallest_k.h"

#define PREARM_MAX 65536
/* Device executions remembered for step detection: as many as the default
 * capture budget keeps spans (40 bytes each). */
#define MAX_STEP_CANDIDATES 1000000

/* One Execute call: its per-device work completes one device at a time. */
struct launch {
	uint64_t launch_id;
	uint64_t enqueue_end;
	char module[64];	/* a string: captures (windows) come and go */
	uint32_t pending;	/* devices not complete yet */
};

/*
 * What acceltrace follows a PJRT_Event for. Only executions for now: a
 * transfer's done event is often destroyed without being awaited (JAX and
 * the simulator do), so following those would only pile up owners; DMA
 * completion will come from the device's own trace buffers.
 */
enum owner_kind { OWN_EXEC };

/* What a PJRT_Event stands for, from the call that returned it. */
struct owner {
	enum owner_kind kind;
	uint32_t pid;
	uint32_t device;	/* OWN_EXEC: index within the execution */
	struct launch *launch;
	uint64_t event;		/* the PJRT_Event pointer */
	uint64_t user_arg;	/* set when OnReady registered a callback */
	uint64_t issued_ns;
};

/* Per (pid, device): when the device last finished, for runtime-view starts. */
struct device_state {
	uint64_t last_end;
	uint32_t index;		/* capture device index */
	uint32_t gen;		/* of the capture @index belongs to */
};

/* A device execution kept in the window, for step detection at finish. */
struct module_exec {
	uint32_t pid, device, module;
	uint64_t start, end, launch_id;
	uint16_t flags;
};

struct eventfd_info {
	int64_t interrupt;
	const char *device;	/* the node pattern's description (static) */
};

struct off_cpu {
	uint64_t since;
	int64_t state;
};

struct collector {
	struct capture *cap;
	uint32_t cap_gen;		/* bumped with each new capture (window) */
	struct probe_session *ps;
	struct runtime_attach *ra;
	bool sched_switch;
	struct collector_stats st;

	/* window */
	bool window_open, closing;
	uint64_t start_ns, stop_ns;
	struct capture_span *prearm;	/* ring of spans before the window */
	size_t prearm_head, prearm_len;

	/* completions: OnReady registrations processed (callbacks probed) */
	uint64_t onready_seen;
	/* From when completions could be seen: earlier work may have completed
	 * unseen, so it is never reported as still running. */
	uint64_t completions_probed_ns;
	/* activity, for arming and --steps */
	uint64_t watch_after, first_activity;
	/* --steps N: the N + 1 earliest starts of the window's executions. */
	uint64_t steps;
	struct smallest_k step_starts;

	/* correlation */
	struct hashmap *owners;		/* (pid, event) -> owner */
	struct hashmap *user_args;	/* (pid, user_arg) -> owner */
	struct hashmap *executables;	/* (pid, executable) -> char[64] name */
	struct hashmap *devices;	/* (pid, device) -> device_state */
	struct hashmap *dev_fds;	/* (pid, fd) -> device_node_pattern */
	struct hashmap *eventfds;	/* (pid, fd) -> eventfd_info */
	struct hashmap *files;		/* (dev, ino) -> path id (as pointer) */
	struct hashmap *threads;	/* (pid, tid) -> seen marker */
	struct hashmap *processes;	/* (pid, 0) -> seen marker */
	struct hashmap *off_cpu;	/* (pid, tid) -> off_cpu */
	struct hashmap *exited;		/* (pid, 0) -> exit marker */
	struct module_exec *mods;
	size_t n_mods, cap_mods;

	/* interned names */
	uint32_t k_launch_id, k_num_devices, k_module, k_bytes, k_requested,
		 k_offset, k_file, k_fd, k_ret, k_value, k_interrupt, k_cmd,
		 k_kind, k_device, k_type, k_dims, k_step_num, k_state,
		 k_issued_before, k_path, k_old_name, k_irq, k_error;
};

static void free_value(void *v)
{
	free(v);
}

/* ---------------------------------------------------------------- names */

bool pjrt_program_module_name(const char *code, size_t len, char *name,
			      size_t name_len)
{
	static const char *const text_prefixes[] = { "HloModule ", "module @" };
	size_t n = 0;

	if (!name_len)
		return false;
	for (size_t p = 0; p < 2; p++) {
		size_t pl = strlen(text_prefixes[p]);
		const char *s = NULL;

		for (size_t i = 0; i + pl <= len; i++)
			if (!memcmp(code + i, text_prefixes[p], pl)) {
				s = code + i + pl;
				break;
			}
		if (!s)
			continue;
		while (s < code + len && n + 1 < name_len &&
		       (s[0] == '_' || s[0] == '.' || s[0] == '-' ||
			(s[0] >= '0' && s[0] <= '9') || (s[0] >= 'a' && s[0] <= 'z') ||
			(s[0] >= 'A' && s[0] <= 'Z')))
			name[n++] = *s++;
		name[n] = '\0';
		return n > 0;
	}
	/* HloModuleProto: field 1 (name), length-delimited, comes first. */
	if (len >= 3 && (unsigned char)code[0] == 0x0a) {
		size_t l = (unsigned char)code[1];

		if (l && !(l & 0x80) && l + 2 <= len && l < name_len) {
			for (size_t i = 0; i < l; i++) {
				unsigned char ch = code[2 + i];

				if (ch < 0x20 || ch > 0x7e)
					return false;
				name[i] = ch;
			}
			name[l] = '\0';
			return true;
		}
	}
	return false;
}

static void read_comm(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
}

static void ensure_process(struct collector *c, uint32_t pid)
{
	char path[64], comm[64];

	if (hashmap__get(c->processes, pid, 0))
		return;
	hashmap__put(c->processes, pid, 0, (void *)1, NULL);
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	read_comm(path, comm, sizeof(comm));
	capture__set_process(c->cap, pid, comm[0] ? comm : "?");
}

static void ensure_thread(struct collector *c, uint32_t pid, uint32_t tid)
{
	char path[80], comm[64];

	if (hashmap__get(c->threads, pid, tid))
		return;
	ensure_process(c, pid);
	hashmap__put(c->threads, pid, tid, (void *)1, NULL);
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	read_comm(path, comm, sizeof(comm));
	capture__set_thread(c->cap, pid, tid, comm[0] ? comm : "?", 0);
}

/* ---------------------------------------------------------------- spans */

static int host_track(struct collector *c, uint32_t pid, uint32_t tid)
{
	ensure_thread(c, pid, tid);
	return capture__host_track(c->cap, pid, tid);
}

static void prearm_push(struct collector *c, const struct capture_span *s)
{
	size_t i;

	if (!c->prearm) {
		c->prearm = calloc(PREARM_MAX, sizeof(*c->prearm));
		if (!c->prearm)
			return;
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

static void remember_module_exec(struct collector *c, const struct capture_span *s);

/* Keeps @s when it overlaps the window; holds it until the window opens. */
static void keep_span(struct collector *c, struct capture_span *s)
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
	err = capture__add_span(c->cap, s);
	if (err) {
		c->st.spans_refused++;
		log_debug("span refused by the capture: %s", strerror(-err));
		return;
	}
	/* Device work in the window: the candidates for steps. */
	if (s->kind == SPAN_DEVICE_MODULE) {
		remember_module_exec(c, s);
		c->st.device_executions++;
	}
}

static void init_span(struct capture_span *s, int track, enum span_kind kind,
		      uint32_t name, uint64_t start, uint64_t end)
{
	memset(s, 0, sizeof(*s));
	s->track = track;
	s->kind = kind;
	s->name = name;
	s->start_ns = start;
	s->end_ns = end < start ? start : end;
}

/* ---------------------------------------------------------------- devices */

static struct device_state *device_of(struct collector *c, uint32_t pid,
				      uint32_t device)
{
	struct device_state *d = hashmap__get(c->devices, pid, device);
	int idx;

	if (d && d->gen == c->cap_gen)
		return d;
	/* Seen from the runtime, the device's model is unknown: "TPU" is what
	 * XProf needs to classify the planes (peaks unknown: 0). */
	idx = capture__device(c->cap, pid, device, "TPU", 0, 0);
	if (idx < 0)
		return NULL;
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)
			return NULL;
		hashmap__put(c->devices, pid, device, d, NULL);
	}
	d->index = idx;
	d->gen = c->cap_gen;
	return d;
}

static void remember_module_exec(struct collector *c, const struct capture_span *s)
{
	const struct capture_track *t = capture__track(c->cap, s->track);
	struct module_exec *m;

	if (!t)
		return;
	/* As many as the capture could keep; beyond, steps are not found. */
	if (c->n_mods >= MAX_STEP_CANDIDATES) {
		c->st.steps_unexamined++;
		return;
	}
	if (ARRAY_GROW(c->mods, c->cap_mods, c->n_mods + 1))
		return;
	m = &c->mods[c->n_mods++];
	m->pid = t->pid;
	m->device = t->device;
	m->module = s->name;
	m->start = s->start_ns;
	m->end = s->end_ns;
	m->launch_id = s->correlation_id;
	m->flags = s->flags;
}

/* Device work seen from the runtime: it ran between the later of its enqueue
 * and the device's previous completion, and its completion. */
static void device_execution(struct collector *c, struct owner *o,
			     uint64_t end, uint16_t flags)
{
	struct launch *l = o->launch;
	struct device_state *d = device_of(c, o->pid, o->device);
	struct capture_span s;
	uint64_t start;
	int track;

	if (!d)
		return;
	start = l->enqueue_end > d->last_end ? l->enqueue_end : d->last_end;
	if (start > end)
		start = end;
	d->last_end = end;
	track = capture__device_track(c->cap, d->index, TRACK_DEVICE_MODULES);
	if (track < 0)
		return;
	init_span(&s, track, SPAN_DEVICE_MODULE, capture__intern(c->cap, l->module),
		  start, end);
	s.flags = SPAN_F_ESTIMATED | flags;
	s.correlation_id = l->launch_id;
	capture_span__add_u64(&s, c->k_launch_id, l->launch_id);
	keep_span(c, &s);
}

/* Removes @o from the maps, where they still point at it (pointers are
 * reused: a newer owner may have taken the key). */
static void owner_unlink(struct collector *c, struct owner *o)
{
	if (hashmap__get(c->owners, o->pid, o->event) == o)
		hashmap__remove(c->owners, o->pid, o->event);
	if (o->user_arg && hashmap__get(c->user_args, o->pid, o->user_arg) == o)
		hashmap__remove(c->user_args, o->pid, o->user_arg);
}

/* Frees @o, and its launch with the last of the launch's devices. */
static void free_owner(void *v)
{
	struct owner *o = v;

	if (o->launch && --o->launch->pending == 0)
		free(o->launch);
	free(o);
}

/* Registers @o's completion callback argument, replacing an older one. */
static void set_user_arg(struct collector *c, struct owner *o, uint64_t ua);

/* Work whose completion was never seen (it completed before its callback
 * was probed, or was issued before we attached): forgotten, and counted. */
static void owner_discard(struct collector *c, struct owner *o)
{
	owner_unlink(c, o);
	c->st.unobserved_completions++;
	free_owner(o);
}

static void set_user_arg(struct collector *c, struct owner *o, uint64_t ua)
{
	struct owner *prev = NULL;

	/* One registration per owner: drop an older one's key. */
	if (o->user_arg && o->user_arg != ua &&
	    hashmap__get(c->user_args, o->pid, o->user_arg) == o)
		hashmap__remove(c->user_args, o->pid, o->user_arg);
	o->user_arg = ua;
	hashmap__put(c->user_args, o->pid, ua, o, (void **)&prev);
	/* The user_arg is reused: the work it stood for completed unseen. */
	if (prev && prev != o) {
		prev->user_arg = 0;	/* the key is o's now */
		owner_discard(c, prev);
	}
}

static void owner_done(struct collector *c, struct owner *o, uint64_t t,
		       uint16_t flags)
{
	owner_unlink(c, o);
	if (o->kind == OWN_EXEC)
		device_execution(c, o, t, flags);
	free_owner(o);
}

/* ---------------------------------------------------------------- runtime */

static void note_activity(struct collector *c, uint64_t t)
{
	if (t >= c->watch_after && (!c->first_activity || t < c->first_activity))
		c->first_activity = t;
}

/* The module an executable runs: the name Compile saw, or its address. */
static void module_of(struct collector *c, uint32_t pid, uint64_t executable,
		      char *name, size_t len)
{
	const char *known = hashmap__get(c->executables, pid, executable);

	if (known)
		snprintf(name, len, "%s", known);
	else
		snprintf(name, len, "executable 0x%llx", (unsigned long long)executable);
}

/* An execution that started in the window: a step, for --steps. */
static void count_window_execution(struct collector *c, uint64_t start_ns)
{
	if (smallest_k__add(&c->step_starts, start_ns) && !c->st.steps_lost++)
		log_warn("out of memory counting steps: --steps may end late");
}

static void on_execute(struct collector *c, const struct ev_rt_call *r,
		       struct capture_span *s)
{
	uint64_t ndev = r->vals[V_EXEC_NUM_DEVICES];
	struct launch *l;
	char module[64];

	c->st.executions++;
	note_activity(c, r->h.start_ns);
	if (c->window_open && r->h.start_ns >= c->start_ns)
		count_window_execution(c, r->h.start_ns);

	s->kind = SPAN_EXECUTE;
	s->correlation_id = r->vals[V_EXEC_LAUNCH_ID];
	capture_span__add_u64(s, c->k_launch_id, r->vals[V_EXEC_LAUNCH_ID]);
	capture_span__add_u64(s, c->k_num_devices, ndev);
	module_of(c, r->h.pid, r->vals[V_EXEC_EXECUTABLE], module, sizeof(module));
	capture_span__add_str(s, c->k_module, capture__intern(c->cap, module));
	if (!r->vals[V_EXEC_EVENTS] || !ndev)
		return;		/* no completion events asked for */
	l = calloc(1, sizeof(*l));
	if (!l)
		return;
	l->launch_id = r->vals[V_EXEC_LAUNCH_ID];
	l->enqueue_end = r->h.end_ns;
	memcpy(l->module, module, sizeof(l->module));
	for (uint32_t i = 0; i < ndev && i < EXEC_MAX_EVENTS; i++) {
		uint64_t ev = r->vals[V_EXEC_EVENT0 + i];
		struct owner *o, *old;

		if (!ev || (r->fault_mask & (1u << (V_EXEC_EVENT0 + i))))
			continue;
		o = calloc(1, sizeof(*o));
		if (!o)
			break;
		o->kind = OWN_EXEC;
		o->pid = r->h.pid;
		o->device = i;
		o->launch = l;
		o->event = ev;
		o->issued_ns = r->h.end_ns;
		l->pending++;
		hashmap__put(c->owners, o->pid, ev, o, (void **)&old);
		/* A reused event pointer: the old one's completion went unseen. */
		if (old)
			owner_discard(c, old);
	}
	if (!l->pending)
		free(l);
}

static uint64_t sum_sizes(const struct ev_rt_call *r, int first, uint64_t count,
			  uint64_t scale)
{
	uint64_t total = 0;

	for (uint64_t i = 0; i < count && i < LIT_MAX_PARTS; i++)
		total += r->vals[first + i] * scale;
	return total;
}

static void on_runtime(struct collector *c, const struct ev_rt_call *r)
{
	const struct attached_probe *p = runtime_attach__probe(c->ra, r->probe_id);
	struct capture_span s;
	enum rt_event_kind ev;
	uint64_t bytes = 0;
	int track;

	if (!p) {
		c->st.unknown_probes++;
		return;
	}
	ev = p->entry->event;
	c->st.rt_calls[ev]++;
	if (r->fault_mask)
		c->st.rt_faults[ev]++;
	track = host_track(c, r->h.pid, r->h.tid);
	if (track < 0)
		return;
	init_span(&s, track, SPAN_HOST_OTHER, capture__intern_static(c->cap, p->entry->name),
		  r->h.start_ns, r->h.end_ns);
	if (r->flags & RT_F_OPEN)
		s.flags |= SPAN_F_OPEN_AT_STOP;

	switch (ev) {
	case RT_EV_GET_PJRT_API:
		if (!(r->flags & RT_F_OPEN))
			runtime_attach__on_pjrt_api(c->ra, r->h.pid, r->vals[V_API_TABLE]);
		return;
	case RT_EV_EXECUTE:
		on_execute(c, r, &s);
		break;
	case RT_EV_H2D: {
		uint64_t n = r->vals[V_H2D_NUM_DIMS], elems = 1;

		for (uint64_t i = 0; i < n && i < H2D_MAX_DIMS; i++)
			elems *= r->vals[V_H2D_DIM0 + i];
		bytes = elems * pjrt_buffer_type_size(r->vals[V_H2D_TYPE]);
		s.kind = SPAN_H2D;
		capture_span__add_u64(&s, c->k_bytes, bytes);
		capture_span__add_u64(&s, c->k_type, r->vals[V_H2D_TYPE]);
		capture_span__add_u64(&s, c->k_dims, n);
		note_activity(c, r->h.start_ns);
		break;
	}
	case RT_EV_D2H:
		if (!r->vals[V_D2H_DST])
			return;		/* a size query, not a transfer */
		s.kind = SPAN_D2H;
		bytes = r->vals[V_D2H_DST_SIZE];
		capture_span__add_u64(&s, c->k_bytes, bytes);
		note_activity(c, r->h.start_ns);
		break;
	case RT_EV_ON_READY: {
		struct owner *o = hashmap__get(c->owners, r->h.pid, r->vals[V_ONREADY_EVENT]);
		uint64_t cb = r->vals[V_ONREADY_CALLBACK];

		if (o)
			set_user_arg(c, o, r->vals[V_ONREADY_USER_ARG]);
		if (cb && !runtime_attach__callback_ready(c->ra, r->h.pid, cb))
			runtime_attach__on_callback(c->ra, r->h.pid, cb);
		if (!c->onready_seen++)
			c->completions_probed_ns = r->h.end_ns;
		return;		/* a registration, not a span worth a row */
	}
	case RT_EV_CALLBACK: {
		struct owner *o = hashmap__get(c->user_args, r->h.pid, r->vals[V_CB_USER_ARG]);

		s.kind = SPAN_CALLBACK;
		if (o) {
			c->st.completions++;
			if (o->launch)
				s.correlation_id = o->launch->launch_id;
			if (o->kind == OWN_EXEC)
				capture_span__add_u64(&s, c->k_device, o->device);
			owner_done(c, o, r->h.start_ns, 0);
		} else {
			c->st.unmatched_completions++;
			capture_span__add_u64(&s, c->k_issued_before, 1);
		}
		if (r->vals[V_CB_ERROR])
			s.flags |= SPAN_F_ERROR;
		break;
	}
	case RT_EV_AWAIT: {
		struct owner *o = hashmap__get(c->owners, r->h.pid, r->vals[V_AWAIT_EVENT]);

		s.kind = SPAN_AWAIT;
		/* Without a callback, the await's return is the completion. */
		if (o && !o->user_arg && !(r->flags & RT_F_OPEN)) {
			if (o->launch)
				s.correlation_id = o->launch->launch_id;
			owner_done(c, o, r->h.end_ns, 0);
		}
		break;
	}
	case RT_EV_COMPILE: {
		char name[64];
		uint32_t id;

		s.kind = SPAN_COMPILE;
		if (pjrt_program_module_name(r->payload, r->payload_len, name, sizeof(name))) {
			id = capture__intern(c->cap, name);
			capture_span__add_str(&s, c->k_module, id);
			if (r->vals[V_COMPILE_EXECUTABLE] && !(r->flags & RT_F_OPEN)) {
				char *copy = strdup(name), *old = NULL;

				if (copy)
					hashmap__put(c->executables, r->h.pid,
						     r->vals[V_COMPILE_EXECUTABLE], copy,
						     (void **)&old);
				free(old);
			}
		}
		break;
	}
	case RT_EV_INFEED_LITERAL:
	case RT_EV_OUTFEED_LITERAL:
		bytes = sum_sizes(r, V_LIT_SIZE0, r->vals[V_LIT_COUNT], 1);
		goto feed;
	case RT_EV_INFEED_BUFFERS:
		bytes = sum_sizes(r, V_BUFS_SIZE0, r->vals[V_BUFS_COUNT], 4);
		goto feed;
	case RT_EV_INFEED_RAW:
	case RT_EV_OUTFEED_RAW:
		bytes = r->vals[V_FEED_SIZE];
feed:
		s.kind = (ev == RT_EV_OUTFEED_LITERAL || ev == RT_EV_OUTFEED_RAW) ?
			 SPAN_OUTFEED : SPAN_INFEED;
		capture_span__add_u64(&s, c->k_bytes, bytes);
		note_activity(c, r->h.start_ns);
		break;
	case RT_EV_CUDA_LAUNCH:
	case RT_EV_CUDA_GRAPH_LAUNCH:
		s.kind = SPAN_EXECUTE;
		note_activity(c, r->h.start_ns);
		break;
	case RT_EV_CUDA_MEMCPY_H2D:
	case RT_EV_CUDA_MEMCPY_D2H:
		s.kind = ev == RT_EV_CUDA_MEMCPY_H2D ? SPAN_H2D : SPAN_D2H;
		capture_span__add_u64(&s, c->k_bytes, r->vals[V_CUMEM_BYTES]);
		note_activity(c, r->h.start_ns);
		break;
	case RT_EV_CUDA_SYNC:
		s.kind = SPAN_AWAIT;
		break;
	case RT_EV_DATASET_GET_NEXT:
		s.name = capture__intern_static(c->cap, "Iterator::GetNext");
		break;
	default:
		break;
	}
	keep_span(c, &s);
}

/* ---------------------------------------------------------------- syscalls */

static const struct device_node_pattern *device_fd(struct collector *c,
						   uint32_t pid, uint32_t fd)
{
	const struct device_node_pattern *p = hashmap__get(c->dev_fds, pid, fd);
	char link[64], target[256];
	ssize_t n;

	if (p)
		return p;
	/* Opened before the probes: ask /proc once. */
	snprintf(link, sizeof(link), "/proc/%u/fd/%u", pid, fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	p = device_node_match(target);
	if (p)
		hashmap__put(c->dev_fds, pid, fd, (void *)p, NULL);
	return p;
}

static uint32_t file_name(struct collector *c, const struct ev_syscall *r)
{
	uintptr_t id = (uintptr_t)hashmap__get(c->files, r->dev, r->ino);
	char link[64], target[512];
	ssize_t n = -1;

	if (id)
		return id;
	if (r->fd != (uint32_t)-1) {
		snprintf(link, sizeof(link), "/proc/%u/fd/%u", r->h.pid, r->fd);
		n = readlink(link, target, sizeof(target) - 1);
	}
	if (n > 0)
		target[n] = '\0';
	else
		snprintf(target, sizeof(target), "dev %llu:%llu inode %llu",
			 (unsigned long long)(r->dev >> 8),
			 (unsigned long long)(r->dev & 0xff),
			 (unsigned long long)r->ino);
	id = capture__intern(c->cap, target);
	hashmap__put(c->files, r->dev, r->ino, (void *)id, NULL);
	return id;
}

static const char *sc_name(uint32_t sc)
{
	switch (sc) {
	case SC_READ: return "read";
	case SC_PREAD64: return "pread64";
	case SC_READV: return "readv";
	case SC_PREADV: return "preadv";
	case SC_IOCTL: return "ioctl";
	case SC_CLOSE: return "close";
	case SC_IO_URING_READ: return "io_uring read";
	default: return "syscall";
	}
}

static void on_ioctl(struct collector *c, const struct ev_syscall *r,
		     struct capture_span *s)
{
	const struct device_node_pattern *pat = device_fd(c, r->h.pid, r->fd);
	const struct ioctl_decoder *d = pat ? ioctl_decode(pat->family, r->args[0]) : NULL;
	char name[96];

	s->kind = SPAN_IOCTL;
	if (d) {
		s->name = capture__intern_static(c->cap, d->name);
		capture_span__add_str(s, c->k_kind,
				      capture__intern_static(c->cap, ioctl_kind_name(d->kind)));
	} else {
		snprintf(name, sizeof(name), "ioctl 0x%08llx",
			 (unsigned long long)r->args[0]);
		s->name = capture__intern(c->cap, name);
	}
	capture_span__add_u64(s, c->k_cmd, r->args[0]);
	capture_span__add_i64(s, c->k_ret, r->ret);
	if (pat)
		capture_span__add_str(s, c->k_device,
				      capture__intern_static(c->cap, pat->family->name));
	if (r->ret < 0)
		s->flags |= SPAN_F_ERROR;
	if (!d)
		return;
	if (d->kind == IOCTL_SUBMIT)
		note_activity(c, r->h.start_ns);
	for (int i = 0; i < IOCTL_MAX_FIELDS && d->fields[i].name; i++) {
		const struct ioctl_field *f = &d->fields[i];
		uint64_t v;

		if (!ioctl_field_value(f, r->argbuf, r->argbuf_len, &v))
			continue;
		capture_span__add_u64(s, capture__intern_static(c->cap, f->name), v);
		/* A completion eventfd: its reads are device interrupts. */
		if (f->role == ROLE_EVENTFD && (int64_t)v >= 0) {
			struct eventfd_info *e = calloc(1, sizeof(*e)), *old;
			uint64_t irq = 0;

			if (!e)
				continue;
			e->interrupt = -1;
			for (int j = 0; j < IOCTL_MAX_FIELDS && d->fields[j].name; j++)
				if (d->fields[j].role == ROLE_INTERRUPT &&
				    ioctl_field_value(&d->fields[j], r->argbuf,
						      r->argbuf_len, &irq))
					e->interrupt = irq;
			e->device = pat->what;
			hashmap__put(c->eventfds, r->h.pid, v, e, (void **)&old);
			free(old);
			if (c->ps)
				probe_session__set_fd(c->ps, r->h.pid, v, FD_EVENTFD);
		}
	}
}

static void on_syscall(struct collector *c, const struct ev_syscall *r)
{
	struct capture_span s;
	int track = host_track(c, r->h.pid, r->h.tid);

	if (track < 0)
		return;
	init_span(&s, track, SPAN_FILE_READ, capture__intern_static(c->cap, sc_name(r->sc)),
		  r->h.start_ns, r->h.end_ns ? r->h.end_ns : r->h.start_ns);
	if (!r->h.end_ns)
		s.flags |= SPAN_F_OPEN_AT_STOP;

	switch (r->sc) {
	case SC_READ:
	case SC_PREAD64:
	case SC_READV:
	case SC_PREADV:
	case SC_IO_URING_READ:
		if (r->fd_kind == FD_EVENTFD) {
			struct eventfd_info *e = hashmap__get(c->eventfds, r->h.pid, r->fd);

			s.kind = SPAN_DEVICE_WAIT;
			s.name = capture__intern_static(c->cap, "eventfd read (device completion)");
			if (r->argbuf_len == 8)
				capture_span__add_u64(&s, c->k_value, *(uint64_t *)r->argbuf);
			if (e && e->interrupt >= 0)
				capture_span__add_i64(&s, c->k_interrupt, e->interrupt);
			if (e)
				capture_span__add_str(&s, c->k_device,
						      capture__intern_static(c->cap, e->device));
			capture_span__add_u64(&s, c->k_fd, r->fd);
			break;
		}
		if (r->fd_kind == FD_DEVICE) {
			s.kind = SPAN_HOST_OTHER;
			capture_span__add_u64(&s, c->k_fd, r->fd);
			break;
		}
		if (r->ret >= 0)
			capture_span__add_u64(&s, c->k_bytes, r->ret);
		else
			s.flags |= SPAN_F_ERROR;
		capture_span__add_u64(&s, c->k_requested, r->args[0]);
		if (r->args[1] != (uint64_t)-1)
			capture_span__add_u64(&s, c->k_offset, r->args[1]);
		capture_span__add_str(&s, c->k_file, file_name(c, r));
		if (r->fd != (uint32_t)-1)
			capture_span__add_u64(&s, c->k_fd, r->fd);
		break;
	case SC_IOCTL:
		on_ioctl(c, r, &s);
		break;
	case SC_CLOSE:
		free(hashmap__remove(c->eventfds, r->h.pid, r->fd));
		hashmap__remove(c->dev_fds, r->h.pid, r->fd);
		return;
	default:
		return;
	}
	keep_span(c, &s);
}

static void on_dev_open(struct collector *c, const struct ev_dev_open *r)
{
	const struct device_node_pattern *pat = device_node_match(r->path);
	struct capture_span s;
	char name[AT_PATH_MAX + 8];
	int track;

	if (!pat) {
		/* The kernel's prefix matched, the full pattern did not. */
		if (c->ps)
			probe_session__set_fd(c->ps, r->h.pid, r->fd, FD_UNKNOWN);
		return;
	}
	hashmap__put(c->dev_fds, r->h.pid, r->fd, (void *)pat, NULL);
	if (c->ra)
		runtime_attach__add_process(c->ra, r->h.pid, NULL);
	track = host_track(c, r->h.pid, r->h.tid);
	if (track < 0)
		return;
	snprintf(name, sizeof(name), "open %s", r->path);
	init_span(&s, track, SPAN_HOST_OTHER, capture__intern(c->cap, name),
		  r->h.start_ns, r->h.end_ns);
	capture_span__add_u64(&s, c->k_fd, r->fd);
	capture_span__add_str(&s, c->k_device, capture__intern_static(c->cap, pat->what));
	keep_span(c, &s);
}

/* ---------------------------------------------------------------- tasks */

struct exit_ctx {
	struct collector *c;
	uint32_t pid;
	uint64_t ts;
};

static int close_exited_owner(uint64_t pid, uint64_t ev, void *value, void *ctx)
{
	struct exit_ctx *x = ctx;
	struct owner *o = value;

	(void)ev;
	if (pid != x->pid)
		return 0;
	if (o->user_arg && hashmap__get(x->c->user_args, o->pid, o->user_arg) == o)
		hashmap__remove(x->c->user_args, o->pid, o->user_arg);
	if (o->kind == OWN_EXEC)
		device_execution(x->c, o, x->ts, SPAN_F_TARGET_EXITED);
	free_owner(o);
	return 1;
}

static int close_exited_call(void *ctx, const void *data, size_t size)
{
	struct exit_ctx *x = ctx;
	const struct ev_header *h = data;
	union {
		struct ev_rt_call rt;
		struct ev_syscall sc;
	} rec;

	if (h->pid != x->pid || size > sizeof(rec))
		return 0;
	memcpy(&rec, data, size);
	rec.rt.h.end_ns = x->ts;
	if (h->type == EV_RT_CALL) {
		rec.rt.flags &= ~RT_F_OPEN;
		on_runtime(x->c, &rec.rt);
	} else if (h->type == EV_SYSCALL) {
		on_syscall(x->c, &rec.sc);
	}
	return 0;
}

static void on_process_exit(struct collector *c, uint32_t pid, uint64_t ts)
{
	struct exit_ctx x = { .c = c, .pid = pid, .ts = ts };

	c->st.target_exits++;
	hashmap__put(c->exited, pid, 0, (void *)1, NULL);
	/* Work the process had in flight ends with it, marked. */
	hashmap__filter(c->owners, close_exited_owner, &x);
	if (c->ps) {
		probe_session__for_each_open(c->ps, close_exited_call, &x);
		probe_session__forget_pid_calls(c->ps, pid);
		probe_session__forget_pid_fds(c->ps, pid);
	}
	if (c->ra)
		runtime_attach__remove_process(c->ra, pid);
	capture__process_exited(c->cap, pid, ts);
}

static void on_task(struct collector *c, const struct ev_task *r)
{
	struct capture_span s;
	char name[80];
	int track;

	switch (r->event) {
	case TASK_NEW:
		ensure_process(c, r->h.pid);
		hashmap__put(c->threads, r->h.pid, r->h.tid, (void *)1, NULL);
		capture__set_thread(c->cap, r->h.pid, r->h.tid, r->comm, r->h.start_ns);
		break;
	case TASK_RENAME:
		track = host_track(c, r->h.pid, r->h.tid);
		capture__set_thread(c->cap, r->h.pid, r->h.tid, r->comm, 0);
		if (track < 0)
			break;
		snprintf(name, sizeof(name), "thread renamed %s", r->comm);
		init_span(&s, track, SPAN_INSTANT_THREAD, capture__intern(c->cap, name),
			  r->h.start_ns, r->h.start_ns);
		capture_span__add_str(&s, c->k_old_name, capture__intern(c->cap, r->oldcomm));
		keep_span(c, &s);
		break;
	case TASK_EXIT:
		capture__thread_exited(c->cap, r->h.pid, r->h.tid, r->h.start_ns);
		hashmap__remove(c->off_cpu, r->h.pid, r->h.tid);
		break;
	case TASK_PROC_EXIT:
		on_process_exit(c, r->h.pid, r->h.start_ns);
		break;
	case TASK_EXEC:
		if (c->ra)
			runtime_attach__add_process(c->ra, r->h.pid, NULL);
		capture__set_process(c->cap, r->h.pid, r->comm);
		break;
	case TASK_FORK:
		ensure_process(c, r->other);
		if (c->ra)
			runtime_attach__add_process(c->ra, r->other, NULL);
		break;
	}
}

static void on_switch(struct collector *c, const struct ev_sched_switch *r)
{
	struct off_cpu *o;

	if (!c->sched_switch)
		return;
	/* The traced thread going off CPU starts a gap; coming back ends it. */
	if (r->prev_tid == r->h.tid && r->prev_pid == r->h.pid) {
		o = hashmap__get(c->off_cpu, r->h.pid, r->h.tid);
		if (!o) {
			o = calloc(1, sizeof(*o));
			if (!o)
				return;
			hashmap__put(c->off_cpu, r->h.pid, r->h.tid, o, NULL);
		}
		o->since = r->h.start_ns;
		o->state = r->prev_state;
	}
	if (r->next_pid && (o = hashmap__remove(c->off_cpu, r->next_pid, r->next_tid))) {
		struct capture_span s;
		int track;

		track = host_track(c, r->next_pid, r->next_tid);
		if (track >= 0) {
			init_span(&s, track, SPAN_HOST_OTHER,
				  capture__intern_static(c->cap, o->state ? "off CPU (blocked)" :
									    "off CPU (preempted)"),
				  o->since, r->h.start_ns);
			capture_span__add_i64(&s, c->k_state, o->state);
			keep_span(c, &s);
		}
		free(o);
	}
}

static void on_irq(struct collector *c, const struct ev_irq *r)
{
	struct capture_span s;
	char name[32];
	int track;

	/* Interrupts belong to no process: one row per irq under pid 0. */
	if (!hashmap__get(c->processes, 0, 0)) {
		hashmap__put(c->processes, 0, 0, (void *)1, NULL);
		capture__set_process(c->cap, 0, "device interrupts");
	}
	snprintf(name, sizeof(name), "irq %u", r->irq);
	if (!hashmap__get(c->threads, 0, r->irq + 1)) {
		hashmap__put(c->threads, 0, r->irq + 1, (void *)1, NULL);
		capture__set_thread(c->cap, 0, r->irq + 1, name, 0);
	}
	track = capture__host_track(c->cap, 0, r->irq + 1);
	if (track < 0)
		return;
	init_span(&s, track, SPAN_INSTANT_INTERRUPT, capture__intern(c->cap, name),
		  r->h.start_ns, r->h.end_ns);
	capture_span__add_u64(&s, c->k_irq, r->irq);
	capture_span__add_i64(&s, c->k_ret, r->ret);
	keep_span(c, &s);
}

/* ---------------------------------------------------------------- records */

int collector__record(void *ctx, const void *data, size_t size)
{
	struct collector *c = ctx;
	const struct ev_header *h = data;
	static const size_t sizes[EV_TYPE_MAX] = {
		[EV_RT_CALL] = sizeof(struct ev_rt_call),
		[EV_SYSCALL] = sizeof(struct ev_syscall),
		[EV_DEV_OPEN] = sizeof(struct ev_dev_open),
		[EV_TASK] = sizeof(struct ev_task),
		[EV_SCHED_SWITCH] = sizeof(struct ev_sched_switch),
		[EV_IRQ] = sizeof(struct ev_irq),
	};

	if (size < sizeof(*h) || h->type == 0 || h->type >= EV_TYPE_MAX ||
	    size < sizes[h->type]) {
		c->st.bad_records++;
		return 0;
	}
	c->st.records[h->type]++;
	switch (h->type) {
	case EV_RT_CALL:
		on_runtime(c, data);
		break;
	case EV_SYSCALL:
		on_syscall(c, data);
		break;
	case EV_DEV_OPEN:
		on_dev_open(c, data);
		break;
	case EV_TASK:
		on_task(c, data);
		break;
	case EV_SCHED_SWITCH:
		on_switch(c, data);
		break;
	case EV_IRQ:
		on_irq(c, data);
		break;
	}
	return 0;
}

/* ---------------------------------------------------------------- window */

bool collector__completions_probed(const struct collector *c)
{
	/* Runtimes that register callbacks do so right after each Execute:
	 * a few executions without one mean this one awaits instead. */
	return c->onready_seen > 0 || c->st.executions >= 8;
}

uint64_t collector__first_activity(const struct collector *c, uint64_t after_ns)
{
	return c->first_activity >= after_ns ? c->first_activity : 0;
}

void collector__watch_activity(struct collector *c, uint64_t after_ns)
{
	c->watch_after = after_ns;
	if (c->first_activity < after_ns)
		c->first_activity = 0;
}

uint64_t collector__window_steps_end(const struct collector *c)
{
	return smallest_k__full(&c->step_starts) ? smallest_k__top(&c->step_starts) : 0;
}

void collector__set_capture(struct collector *c, struct capture *capture)
{
	c->cap = capture;
	c->window_open = c->closing = false;
	c->prearm_len = 0;
	c->n_mods = 0;
	/* Names and tracks live in the capture: start them afresh. */
	hashmap__free(c->threads, NULL);
	hashmap__free(c->processes, NULL);
	hashmap__free(c->files, NULL);
	c->threads = hashmap__new();
	c->processes = hashmap__new();
	c->files = hashmap__new();
	/* Devices keep their last completion; their index is the capture's. */
	c->cap_gen++;
#define KEY(f, s) c->f = capture__intern(capture, s)
	KEY(k_launch_id, "launch_id");
	KEY(k_num_devices, "num_devices");
	KEY(k_module, "module");
	KEY(k_bytes, "bytes");
	KEY(k_requested, "requested_bytes");
	KEY(k_offset, "offset");
	KEY(k_file, "file");
	KEY(k_fd, "fd");
	KEY(k_ret, "ret");
	KEY(k_value, "value");
	KEY(k_interrupt, "interrupt");
	KEY(k_cmd, "cmd");
	KEY(k_kind, "kind");
	KEY(k_device, "device");
	KEY(k_type, "element_type");
	KEY(k_dims, "num_dims");
	KEY(k_step_num, "step_num");
	KEY(k_state, "state");
	KEY(k_issued_before, "issued_before_probes");
	KEY(k_path, "path");
	KEY(k_old_name, "old_name");
	KEY(k_irq, "irq");
	KEY(k_error, "error");
#undef KEY
}

int collector__open_window(struct collector *c, uint64_t start_ns)
{
	c->start_ns = start_ns;
	c->window_open = true;
	smallest_k__reset(&c->step_starts, c->steps ? c->steps + 1 : 0);
	c->closing = false;
	/* Spans held before the window: keep those that reach into it, and
	 * count the executions among them as the window's steps. */
	for (size_t i = 0; i < c->prearm_len; i++) {
		struct capture_span *s = &c->prearm[(c->prearm_head + i) % PREARM_MAX];

		if (s->kind == SPAN_EXECUTE && s->start_ns >= start_ns)
			count_window_execution(c, s->start_ns);
		keep_span(c, s);
	}
	c->prearm_len = 0;
	c->prearm_head = 0;
	return capture__set_window(c->cap, start_ns, start_ns);
}

void collector__begin_close(struct collector *c, uint64_t stop_ns)
{
	c->stop_ns = stop_ns;
	c->closing = true;
}

static int count_open(void *ctx, const void *data, size_t size)
{
	const struct ev_header *h = data;
	struct collector *c = ((void **)ctx)[0];
	size_t *n = ((void **)ctx)[1];

	(void)size;
	if (h->start_ns <= c->stop_ns && !hashmap__get(c->exited, h->pid, 0))
		(*n)++;
	return 0;
}

bool collector__all_closed(struct collector *c)
{
	size_t n = 0;
	void *ctx[2] = { c, &n };

	if (c->ps)
		probe_session__for_each_open(c->ps, count_open, ctx);
	return n == 0 && hashmap__count(c->owners) == 0;
}

static int add_open_call(void *ctx, const void *data, size_t size)
{
	struct collector *c = ctx;
	const struct ev_header *h = data;
	union {
		struct ev_rt_call rt;
		struct ev_syscall sc;
	} rec;

	if (size > sizeof(rec) || h->start_ns > c->stop_ns)
		return 0;
	memcpy(&rec, data, size);
	/* A return running now may have half-written the entry (end, ret,
	 * flags): the end is set here, and a ret so read is the call's own. */
	rec.rt.h.end_ns = c->stop_ns;
	c->st.open_at_stop++;
	if (h->type == EV_RT_CALL) {
		rec.rt.flags |= RT_F_OPEN;
		on_runtime(c, &rec.rt);
	} else if (h->type == EV_SYSCALL) {
		rec.sc.h.end_ns = 0;	/* marks it open */
		on_syscall(c, &rec.sc);
	}
	return 0;
}

static int close_open_owner(uint64_t pid, uint64_t ev, void *value, void *ctx)
{
	struct collector *c = ctx;
	struct owner *o = value;

	(void)pid;
	(void)ev;
	if (o->kind != OWN_EXEC || o->issued_ns > c->stop_ns)
		return 0;
	/* Issued before its completion could be seen: it may well be done. */
	if (o->issued_ns < c->completions_probed_ns)
		return 0;
	/* Still running at stop: end it there, marked; keep tracking it. */
	if (o->launch) {
		struct device_state *d = device_of(c, o->pid, o->device);
		struct capture_span s;
		uint64_t start;
		int track;

		if (!d)
			return 0;
		start = o->launch->enqueue_end > d->last_end ? o->launch->enqueue_end :
							       d->last_end;
		track = capture__device_track(c->cap, d->index, TRACK_DEVICE_MODULES);
		if (track < 0 || start > c->stop_ns)
			return 0;
		init_span(&s, track, SPAN_DEVICE_MODULE,
			  capture__intern(c->cap, o->launch->module), start, c->stop_ns);
		s.flags = SPAN_F_ESTIMATED | SPAN_F_OPEN_AT_STOP;
		s.correlation_id = o->launch->launch_id;
		capture_span__add_u64(&s, c->k_launch_id, o->launch->launch_id);
		keep_span(c, &s);
		c->st.open_at_stop++;
	}
	return 0;
}

/*
 * Steps without markers: a step is one execution of the target's dominant
 * program (the one with the most device time) on each device.
 */
static void add_steps(struct collector *c)
{
	uint32_t best_pid = 0, best_module = 0;
	struct hashmap *totals = hashmap__new();
	uint64_t best = 0;

	if (!totals)
		return;
	for (size_t i = 0; i < c->n_mods; i++) {
		struct module_exec *m = &c->mods[i];
		uint64_t *t = hashmap__get(totals, m->pid, m->module);

		if (!t) {
			t = calloc(1, sizeof(*t));
			if (!t)
				break;
			hashmap__put(totals, m->pid, m->module, t, NULL);
		}
		*t += m->end - m->start;
	}
	for (size_t i = 0; i < c->n_mods; i++) {
		struct module_exec *m = &c->mods[i];
		uint64_t *t = hashmap__get(totals, m->pid, m->module);

		if (t && *t > best) {
			best = *t;
			best_pid = m->pid;
			best_module = m->module;
		}
	}
	hashmap__free(totals, free_value);
	if (!best)
		return;
	for (size_t i = 0; i < c->n_mods; i++) {
		struct module_exec *m = &c->mods[i];
		struct capture_span s;
		int track;

		/* Other processes' steps too: each process's own dominant program
		 * is the same name in data-parallel jobs. */
		if (m->module != best_module && m->pid == best_pid)
			continue;
		if (m->module != best_module)
			continue;
		track = capture__device_track(c->cap, m->device, TRACK_DEVICE_STEPS);
		if (track < 0)
			continue;
		init_span(&s, track, SPAN_DEVICE_STEP, m->module, m->start, m->end);
		s.flags = m->flags;
		s.correlation_id = m->launch_id;
		capture_span__add_u64(&s, c->k_step_num, m->launch_id);
		keep_span(c, &s);
	}
}

int collector__finish(struct collector *c)
{
	uint64_t losses[LOSS_KIND_MAX];

	if (!c->window_open)
		return -EINVAL;
	if (!c->closing)
		collector__begin_close(c, c->start_ns);
	/* A stop placed in the past (--steps) leaves later records' spans. */
	c->st.spans_outside += capture__drop_after(c->cap, c->stop_ns);
	if (c->ps) {
		uint64_t rt_skipped, k_skipped;

		probe_session__for_each_open(c->ps, add_open_call, c);
		probe_session__losses(c->ps, losses);
		for (int i = 0; i < LOSS_KIND_MAX; i++)
			if (losses[i])
				capture__count_loss(c->cap, loss_kind_name(i), losses[i]);
		probe_session__skipped(c->ps, &rt_skipped, &k_skipped);
		if (rt_skipped)
			capture__count_loss(c->cap, "runtime probe hits the kernel skipped (BPF recursion guard)",
					    rt_skipped);
		if (k_skipped)
			capture__count_loss(c->cap, "kernel probe hits the kernel skipped (BPF recursion guard)",
					    k_skipped);
	}
	hashmap__filter(c->owners, close_open_owner, c);
	add_steps(c);
	if (c->st.prearm_dropped)
		capture__count_loss(c->cap, "spans before the window dropped",
				    c->st.prearm_dropped);
	if (c->st.unknown_probes)
		capture__count_loss(c->cap, "records from unknown probes",
				    c->st.unknown_probes);
	if (c->st.bad_records)
		capture__count_loss(c->cap, "malformed records", c->st.bad_records);
	if (c->st.steps_lost)
		capture__warn(c->cap, "%llu execution starts not kept for --steps (out of memory): "
			      "the window may hold more steps", (unsigned long long)c->st.steps_lost);
	if (c->st.steps_unexamined)
		capture__warn(c->cap, "steps were found among the first %d device executions "
			      "only; %llu more were not examined", MAX_STEP_CANDIDATES,
			      (unsigned long long)c->st.steps_unexamined);
	if (c->st.unmatched_completions)
		capture__warn(c->cap, "%llu completions of device work issued before acceltrace attached",
			      (unsigned long long)c->st.unmatched_completions);
	return capture__set_window(c->cap, c->start_ns, c->stop_ns);
}

/* ---------------------------------------------------------------- lifecycle */

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
	c->owners = hashmap__new();
	c->user_args = hashmap__new();
	c->devices = hashmap__new();
	c->dev_fds = hashmap__new();
	c->eventfds = hashmap__new();
	c->off_cpu = hashmap__new();
	c->exited = hashmap__new();
	c->executables = hashmap__new();
	collector__set_capture(c, opts->capture);
	if (!c->owners || !c->user_args || !c->dev_fds || !c->eventfds ||
	    !c->off_cpu || !c->exited || !c->threads || !c->processes ||
	    !c->files || !c->devices || !c->executables) {
		collector__free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

void collector__connect(struct collector *c, struct probe_session *ps,
			struct runtime_attach *ra)
{
	c->ps = ps;
	c->ra = ra;
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	/* user_args point at the same owners: free them once, via owners. */
	hashmap__free(c->user_args, NULL);
	hashmap__free(c->owners, free_owner);
	hashmap__free(c->executables, free_value);
	hashmap__free(c->devices, free_value);
	hashmap__free(c->dev_fds, NULL);
	hashmap__free(c->eventfds, free_value);
	hashmap__free(c->files, NULL);
	hashmap__free(c->threads, NULL);
	hashmap__free(c->processes, NULL);
	hashmap__free(c->off_cpu, free_value);
	hashmap__free(c->exited, NULL);
	free(c->mods);
	free(c->prearm);
	smallest_k__free(&c->step_starts);
	free(c);
}

const struct collector_stats *collector__stats(const struct collector *c)
{
	return &c->st;
}
