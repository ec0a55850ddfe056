// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Runtime calls (uprobes on PJRT, the TPU C API, libcuda, libcudart,
 * tf.data) into host spans, and the correlation that turns them into
 * device work: an
 * Execute returns one completion event per device; OnReady registers a
 * callback for an event; the callback running (or an Await returning) is
 * the completion. State is keyed by (pid, pointer) and freed as work
 * completes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "collector"
#include "lib/log.h"
#include "analyze/program_name.h"
#include "collect/collector_internal.h"
#include "discover/pjrt_api.h"
#include "discover/probe_packs.h"

/* ---------------------------------------------------------------- devices */

static struct device_state *device_of(struct collector *c, uint32_t pid,
				      uint32_t device)
{
	struct device_state *d = hashmap__get(c->devices, pid, device);
	int idx;

	if (d && d->gen == c->cap_gen)
		return d;
	/* Seen from the runtime, the device's model is unknown; its
	 * platform is what the runtimes the process maps drive. */
	idx = capture__device(c->cap, pid, device, NULL, 0, 0);
	if (idx < 0) {
		collect_out_of_memory(c);
		return NULL;
	}
	if (c->ctl.device_platform) {
		const char *vendor, *platform;

		platform = c->ctl.device_platform(c->ctl.ctx, pid, &vendor);
		if (capture__device_platform(c->cap, idx, platform, vendor) == -ENOMEM)
			collect_out_of_memory(c);
	}
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d || collect_put(c, c->devices, pid, device, d, NULL)) {
			if (!d)
				collect_out_of_memory(c);
			free(d);
			return NULL;
		}
	}
	d->index = idx;
	d->gen = c->cap_gen;
	return d;
}

/* The launch's module name in this capture, interned once per launch. */
static uint32_t launch_module(struct collector *c, struct launch *l)
{
	if (!l->module_id || l->module_gen != c->cap_gen) {
		l->module_id = capture__intern(c->cap, l->module);
		l->module_gen = c->cap_gen;
	}
	return l->module_id;
}

/* Device work seen from the runtime: it ran between the later of its
 * enqueue and the device's previous completion, and @end. */
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
	if (o->issued_ns > d->done_issued)
		d->done_issued = o->issued_ns;
	/* The device's own trace buffer draws its executions. */
	if (collect_devtrace_covers(c, o->pid, o->device))
		return;
	track = capture__device_track(c->cap, d->index, TRACK_DEVICE_MODULES);
	if (track < 0) {
		collect_out_of_memory(c);
		return;
	}
	collect_init_span(&s, track, SPAN_DEVICE_MODULE, launch_module(c, l), start, end);
	s.flags = SPAN_F_ESTIMATED | flags;
	s.correlation_id = l->launch_id;
	capture_span__add_u64(&s, c->k_launch_id, l->launch_id);
	collect_keep_span(c, &s);
}

/* ---------------------------------------------------------------- owners */

/* Removes @o's callback argument key, where it still points at @o
 * (pointers are reused: a newer owner may have taken the key). */
static void owner_unlink_user_arg(struct collector *c, struct owner *o)
{
	if (o->user_arg)
		hashmap__remove_if(c->user_args, o->pid, o->user_arg, o);
}

/* Removes @o from the maps, where they still point at it. */
static void owner_unlink(struct collector *c, struct owner *o)
{
	hashmap__remove_if(c->owners, o->pid, o->event, o);
	owner_unlink_user_arg(c, o);
}

/* Frees @o, and its launch with the last of the launch's devices. */
void collect_free_owner(void *v)
{
	struct owner *o = v;

	if (o->launch && --o->launch->pending == 0)
		free(o->launch);
	free(o);
}

/* Work whose completion was never seen (it completed before its callback
 * was probed, or was issued before we attached): forgotten, and counted. */
static void owner_discard(struct collector *c, struct owner *o)
{
	owner_unlink(c, o);
	c->st.unobserved_completions++;
	collect_free_owner(o);
}

/* Registers @o's completion callback argument, replacing an older one. */
static void set_user_arg(struct collector *c, struct owner *o, uint64_t ua)
{
	struct owner *prev = NULL;

	/* One registration per owner: drop an older one's key. */
	if (o->user_arg != ua)
		owner_unlink_user_arg(c, o);
	if (collect_put(c, c->user_args, o->pid, ua, o, (void **)&prev)) {
		/* Its callback cannot be matched; an Await still can. */
		o->user_arg = 0;
		return;
	}
	o->user_arg = ua;
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
	collect_free_owner(o);
}

/* ---------------------------------------------------------------- runtime */

void collect_note_activity(struct collector *c, uint64_t t, enum activity what)
{
	if (what != ACT_EXECUTION && !c->arm_on_any_activity)
		return;
	if (t >= c->watch_after && (!c->first_activity || t < c->first_activity))
		c->first_activity = t;
}

/*
 * Arming on a program's executions: a program's first execution arms the
 * window once the program runs a second time (it is a step), so the
 * one-off programs of start-up (parameter initialisation, warm-up) do not
 * open it; the window then starts at that first execution (its spans are
 * held until the window opens). A program first run before the watch
 * began arms at its next execution. --from-start arms on any execution.
 *
 * A program is its executable, known by its address and, when Compile was
 * seen, its module name too: runtimes free one-off executables and the
 * next one compiled may get the same address (the name tells them apart),
 * and start-up compiles one name for several shapes (the address does).
 */
static void note_program_execution(struct collector *c, uint32_t pid,
				   uint64_t executable, uint64_t t)
{
	const char *name = hashmap__get(c->executables, pid, executable);
	uint64_t first, key = executable;

	if (c->arm_on_any_activity) {
		collect_note_activity(c, t, ACT_EXECUTION);
		return;
	}
	if (name) {
		uint64_t h = 14695981039346656037ull;	/* FNV-1a */

		for (const char *p = name; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
		key ^= h;
	}
	first = (uintptr_t)hashmap__get(c->program_runs, pid, key);
	if (!first) {
		/* Not remembered: it arms one execution later, nothing lost. */
		collect_put(c, c->program_runs, pid, key, (void *)(uintptr_t)t, NULL);
		return;
	}
	/*
	 * First run before the first watch began, while the completion
	 * callback was being probed, of a runtime loaded after acceltrace
	 * attached (a plugin dlopen'ed mid-run, a command's): the window
	 * still starts there, for every execution since was seen (its
	 * library was probed as it loaded) and held; completions the
	 * callback probe missed are counted (unobserved), and a device
	 * trace buffer draws them anyway. A runtime found already loaded
	 * waits for the watch (what ran before it may be half seen), and a
	 * later watch (the next window) starts at the next execution.
	 */
	if (first < c->watch_after && c->watch_after && c->watches == 1 && c->early_start) {
		if (!c->first_activity || first < c->first_activity)
			c->first_activity = first;
		return;
	}
	collect_note_activity(c, first >= c->watch_after ? first : t, ACT_EXECUTION);
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

void collect_count_window_execution(struct collector *c, uint64_t start_ns)
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
	uint32_t module_id;

	c->st.executions++;
	note_program_execution(c, r->h.pid, r->vals[V_EXEC_EXECUTABLE], r->h.start_ns);
	if (c->window_open && r->h.start_ns >= c->start_ns)
		collect_count_window_execution(c, r->h.start_ns);

	s->kind = SPAN_EXECUTE;
	s->correlation_id = r->vals[V_EXEC_LAUNCH_ID];
	capture_span__add_u64(s, c->k_launch_id, r->vals[V_EXEC_LAUNCH_ID]);
	capture_span__add_u64(s, c->k_num_devices, ndev);
	module_of(c, r->h.pid, r->vals[V_EXEC_EXECUTABLE], module, sizeof(module));
	module_id = capture__intern(c->cap, module);
	capture_span__add_str(s, c->k_module, module_id);
	if (!r->vals[V_EXEC_EVENTS] || !ndev)
		return;		/* no completion events asked for */
	/* Returned while detail was off: its completions are not recorded
	 * (the device's trace buffers, where there are any, show its work). */
	if (r->flags & RT_F_NO_DETAIL) {
		c->st.executions_without_detail++;
		return;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		collect_out_of_memory(c);
		return;
	}
	l->launch_id = r->vals[V_EXEC_LAUNCH_ID];
	l->enqueue_end = r->h.end_ns;
	memcpy(l->module, module, sizeof(l->module));
	l->module_id = module_id;
	l->module_gen = c->cap_gen;
	for (uint32_t i = 0; i < ndev && i < EXEC_MAX_EVENTS; i++) {
		uint64_t ev = r->vals[V_EXEC_EVENT0 + i];
		struct owner *o, *old = NULL;

		if (!ev || (r->fault_mask & (1u << (V_EXEC_EVENT0 + i))))
			continue;
		o = calloc(1, sizeof(*o));
		if (!o) {
			collect_out_of_memory(c);
			break;
		}
		o->kind = OWN_EXEC;
		o->pid = r->h.pid;
		o->device = i;
		o->launch = l;
		o->event = ev;
		o->issued_ns = r->h.end_ns;
		if (collect_put(c, c->owners, o->pid, ev, o, (void **)&old)) {
			free(o);	/* its completion goes unseen */
			continue;
		}
		l->pending++;
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

/*
 * Compile's entry: the program must be read in the target while Compile
 * runs (JAX frees its bytecode as the call returns, and bytecode names its
 * module near its end, past the 64 bytes a probe copies). It is queued and
 * read after the drain (collect_programs.c); the name is kept for the
 * thread until the call's return names the executable, and that return
 * waits for it.
 */
static void on_compile_program(struct collector *c, const struct ev_rt_call *r)
{
	collect_programs_queue(c, r);
}

/* Compile: the program's name, remembered for the executable it returns:
 * the name read at the call's entry, else the one in the program's first
 * bytes (copied by the probe). */
static void on_compile(struct collector *c, const struct ev_rt_call *r,
		       struct capture_span *s)
{
	char name[64], *copy, *old = NULL, *read = NULL;

	s->kind = SPAN_COMPILE;
	read = hashmap__remove(c->compiling, r->h.pid, r->h.tid);
	if (read) {
		snprintf(name, sizeof(name), "%s", read);
		free(read);
	} else if (!pjrt_program_module_name(r->payload, r->payload_len, name,
					     sizeof(name))) {
		return;
	}
	capture_span__add_str(s, c->k_module, capture__intern(c->cap, name));
	if (!r->vals[V_COMPILE_EXECUTABLE] || (r->flags & RT_F_OPEN))
		return;
	copy = strdup(name);
	if (!copy) {
		collect_out_of_memory(c);
		return;
	}
	if (collect_put(c, c->executables, r->h.pid, r->vals[V_COMPILE_EXECUTABLE],
			copy, (void **)&old))
		free(copy);
	free(old);
}

void collect_runtime(struct collector *c, const struct ev_rt_call *r)
{
	const struct rt_pack_entry *entry = c->ctl.probe_entry ?
		c->ctl.probe_entry(c->ctl.ctx, r->probe_id) : NULL;
	struct capture_span s;
	enum rt_event_kind ev;
	uint64_t bytes = 0;
	int track;

	if (!entry) {
		c->st.unknown_probes++;
		return;
	}
	/* An allocation or free, and whatever else the call is. */
	if (entry->mem.op != MEM_OP_NONE)
		collect_devmem(c, r, entry);
	ev = entry->event;
	c->st.rt_calls[ev]++;
	if (r->fault_mask)
		c->st.rt_faults[ev]++;
	/* Its detail twin's record is the call's span while detail is on. */
	if (entry->memory_twin && !(r->flags & RT_F_NO_DETAIL))
		return;
	track = collect_host_track(c, r->h.pid, r->h.tid);
	if (track < 0)
		return;
	collect_init_span(&s, track, SPAN_HOST_OTHER,
			  collect_intern_static(c, entry->name),
			  r->h.start_ns, r->h.end_ns);
	if (r->flags & RT_F_OPEN)
		s.flags |= SPAN_F_OPEN_AT_STOP;

	switch (ev) {
	case RT_EV_GET_PJRT_API:
		if (!(r->flags & RT_F_OPEN))
			collect_control(c, CTL_PJRT_API_RETURNED, r->h.pid, 0,
					r->vals[V_API_TABLE]);
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
		collect_note_activity(c, r->h.start_ns, ACT_OTHER);
		break;
	}
	case RT_EV_D2H:
		if (!r->vals[V_D2H_DST])
			return;		/* a size query, not a transfer */
		s.kind = SPAN_D2H;
		bytes = r->vals[V_D2H_DST_SIZE];
		capture_span__add_u64(&s, c->k_bytes, bytes);
		collect_note_activity(c, r->h.start_ns, ACT_OTHER);
		break;
	case RT_EV_ON_READY: {
		struct owner *o = hashmap__get(c->owners, r->h.pid, r->vals[V_ONREADY_EVENT]);
		uint64_t cb = r->vals[V_ONREADY_CALLBACK];

		if (o)
			set_user_arg(c, o, r->vals[V_ONREADY_USER_ARG]);
		/* The controller probes each callback function once. */
		if (cb)
			collect_control(c, CTL_CALLBACK_REGISTERED, r->h.pid, 0, cb);
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
	case RT_EV_COMPILE:
		on_compile(c, r, &s);
		break;
	case RT_EV_COMPILE_PROGRAM:
		on_compile_program(c, r);
		return;		/* the call's span comes at its return */
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
		collect_note_activity(c, r->h.start_ns, ACT_OTHER);
		break;
	case RT_EV_CUDA_LAUNCH:
		collect_cuda_launch_stats(c, &s, r->vals[V_CU_GRID_X], r->vals[V_CU_GRID_Y],
					  r->vals[V_CU_GRID_Z],
					  r->vals[V_CU_BLOCK_X] * r->vals[V_CU_BLOCK_Y] *
					  r->vals[V_CU_BLOCK_Z], r->vals[V_CU_STREAM]);
		s.kind = SPAN_EXECUTE;
		collect_note_activity(c, r->h.start_ns, ACT_EXECUTION);
		break;
	case RT_EV_CUDA_GRAPH_LAUNCH:
		/* cuGraphLaunch(exec, stream) */
		s.kind = SPAN_EXECUTE;
		collect_span_stat(c, &s, "graph_exec", r->vals[0]);
		collect_span_stat(c, &s, "stream", r->vals[1]);
		collect_note_activity(c, r->h.start_ns, ACT_EXECUTION);
		break;
	case RT_EV_CUDA_MEMCPY_H2D:
	case RT_EV_CUDA_MEMCPY_D2H:
		s.kind = ev == RT_EV_CUDA_MEMCPY_H2D ? SPAN_H2D : SPAN_D2H;
		capture_span__add_u64(&s, c->k_bytes, r->vals[V_CUMEM_BYTES]);
		collect_span_stat(c, &s, "stream", r->vals[V_CUMEM_STREAM]);
		collect_note_activity(c, r->h.start_ns, ACT_OTHER);
		break;
	case RT_EV_CUDA_SYNC:
		s.kind = SPAN_AWAIT;
		collect_span_stat(c, &s, "stream", r->vals[V_CUSYNC_STREAM]);
		break;
	case RT_EV_CUDART_LAUNCH:
		collect_cudart_launch(c, r, &s);
		break;
	case RT_EV_CUDART_MEMCPY:
		collect_cudart_memcpy(c, r, entry, &s);
		break;
	case RT_EV_CUDART_GRAPH_LAUNCH:
		s.kind = SPAN_EXECUTE;
		c->st.executions++;
		collect_span_stat(c, &s, "graph_exec", r->vals[V_CUDART_HANDLE]);
		collect_span_stat(c, &s, "stream", r->vals[V_CUDART_HANDLE_STREAM]);
		collect_note_activity(c, r->h.start_ns, ACT_EXECUTION);
		break;
	case RT_EV_CUDART_STREAM_SYNC:
		s.kind = SPAN_AWAIT;
		collect_span_stat(c, &s, "stream", r->vals[V_CUDART_HANDLE]);
		break;
	case RT_EV_CUDART_EVENT_SYNC:
		s.kind = SPAN_AWAIT;
		collect_span_stat(c, &s, "event", r->vals[V_CUDART_HANDLE]);
		break;
	case RT_EV_CUDART_DEVICE_SYNC:
		s.kind = SPAN_AWAIT;
		break;
	case RT_EV_CUDART_EVENT_RECORD:
		collect_span_stat(c, &s, "event", r->vals[V_CUDART_HANDLE]);
		collect_span_stat(c, &s, "stream", r->vals[V_CUDART_HANDLE_STREAM]);
		break;
	case RT_EV_DATASET_GET_NEXT:
		s.name = collect_intern_static(c, "Iterator::GetNext");
		break;
	default:
		break;
	}
	/* CUDA's layers: each piece of work counted at one of them. */
	if (rt_event_kind_is_cuda_driver(ev) && collect_cuda_driver_span(c, r, &s))
		return;
	if (rt_event_kind_is_cudart(ev))
		collect_cuda_runtime_call(c, r);
	collect_keep_span(c, &s);
}

/* ---------------------------------------------------------------- endings */

static int close_open_owner(uint64_t pid, uint64_t ev, void *value, void *ctx)
{
	struct collector *c = ctx;
	struct owner *o = value;
	struct device_state *d;
	struct capture_span s;
	uint64_t start;
	int track;

	(void)pid;
	(void)ev;
	if (o->kind != OWN_EXEC || o->issued_ns > c->stop_ns || !o->launch)
		return 0;
	/* Issued before its completion could be seen: it may well be done. */
	if (o->issued_ns < c->completions_probed_ns)
		return 0;
	/* Still running at stop: end it there, marked; keep tracking it. */
	d = device_of(c, o->pid, o->device);
	if (!d)
		return 0;
	/* Later work on its device completed: so did this, unseen (its
	 * callback ran before it was probed). */
	if (d->done_issued > o->issued_ns)
		return 0;
	start = o->launch->enqueue_end > d->last_end ? o->launch->enqueue_end :
						       d->last_end;
	if (start > c->stop_ns || collect_devtrace_covers(c, o->pid, o->device))
		return 0;
	track = capture__device_track(c->cap, d->index, TRACK_DEVICE_MODULES);
	if (track < 0) {
		collect_out_of_memory(c);
		return 0;
	}
	collect_init_span(&s, track, SPAN_DEVICE_MODULE, launch_module(c, o->launch),
			  start, c->stop_ns);
	s.flags = SPAN_F_ESTIMATED | SPAN_F_OPEN_AT_STOP;
	s.correlation_id = o->launch->launch_id;
	capture_span__add_u64(&s, c->k_launch_id, o->launch->launch_id);
	collect_keep_span(c, &s);
	c->st.open_at_stop++;
	return 0;
}

void collect_runtime_close_open(struct collector *c)
{
	/* Driver spans no runtime call enclosed: their own work. */
	collect_cuda_flush_all(c);
	hashmap__filter(c->owners, close_open_owner, c);
}

struct exit_ctx {
	struct collector *c;
	uint32_t pid;
	uint64_t ts;
};

/* State kept per (pid, ...): forgotten with the process (pids are reused). */
static int of_pid(uint64_t pid, uint64_t b, void *value, void *ctx)
{
	(void)b;
	(void)value;
	return pid == ((struct exit_ctx *)ctx)->pid;
}

static int name_of_pid(uint64_t pid, uint64_t b, void *value, void *ctx)
{
	if (!of_pid(pid, b, value, ctx))
		return 0;
	free(value);
	return 1;
}

static int close_exited_owner(uint64_t pid, uint64_t ev, void *value, void *ctx)
{
	struct exit_ctx *x = ctx;
	struct owner *o = value;

	(void)ev;
	if (pid != x->pid)
		return 0;
	owner_unlink_user_arg(x->c, o);
	if (o->kind == OWN_EXEC)
		device_execution(x->c, o, x->ts, SPAN_F_TARGET_EXITED);
	collect_free_owner(o);
	return 1;
}

static int drop_undetailed_owner(uint64_t pid, uint64_t ev, void *value, void *ctx)
{
	struct collector *c = ctx;
	struct owner *o = value;

	(void)pid;
	(void)ev;
	owner_unlink_user_arg(c, o);
	c->st.completions_without_detail++;
	collect_free_owner(o);
	return 1;
}

void collector__detail_ended(struct collector *c)
{
	/* The records the detail slice left waiting for a name first. */
	collect_programs_flush(c);
	hashmap__filter(c->owners, drop_undetailed_owner, c);
}

void collect_runtime_process_exit(struct collector *c, uint32_t pid, uint64_t ts)
{
	struct exit_ctx x = { .c = c, .pid = pid, .ts = ts };

	/* What waited for a program's name is handled before the exit. */
	collect_programs_flush_pid(c, pid);
	hashmap__filter(c->owners, close_exited_owner, &x);
	collect_cuda_process_exit(c, pid);
	hashmap__filter(c->executables, name_of_pid, &x);
	hashmap__filter(c->compiling, name_of_pid, &x);
	hashmap__filter(c->program_runs, of_pid, &x);
	collect_devmem_process_exit(c, pid);
}
