// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The window: spans held before it opens are kept when they reach into it;
 * --steps counts the window's executions; at the stop, what is still open
 * (in the kernel's open-call tables and in the correlation state) is ended
 * there and marked; then the steps and every loss go into the capture.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "collector"
#include "lib/log.h"
#include "lib/array.h"
#include "collect/collector_internal.h"

bool collector__completions_probed(const struct collector *c)
{
	/* Runtimes that register callbacks do so right after each Execute:
	 * a few executions without one mean this one awaits instead (CUDA
	 * launches count as executions: CUDA has no callbacks to wait for).
	 * A device busy with one long execution launches nothing: its own
	 * trace buffer shows the work instead. */
	return c->onready_seen > 0 || c->st.executions >= 8 ||
	       collect_devtrace_long_execution((struct collector *)c);
}

uint64_t collector__first_activity(const struct collector *c)
{
	return c->watch_after ? c->first_activity : 0;
}

void collector__start_at_first_run(struct collector *c, bool on)
{
	c->early_start = on;
}

void collector__watch_activity(struct collector *c, uint64_t after_ns)
{
	c->watch_after = after_ns;
	c->watches++;
	if (c->first_activity < after_ns)
		c->first_activity = 0;
}

struct busy_device {
	struct collector *c;
	uint64_t now;
	bool found;
};

static int long_in_flight(uint64_t pid, uint64_t event, void *value, void *ctx)
{
	struct busy_device *b = ctx;
	struct collector *c = b->c;
	struct owner *o = value;
	struct device_state *d;

	(void)event;
	if (b->found || o->kind != OWN_EXEC || !o->issued_ns ||
	    o->issued_ns >= c->watch_after || b->now - o->issued_ns <= LONG_EXECUTION_NS)
		return 0;
	/* Its completion would have been seen: a callback was registered for
	 * it, or it was issued once completions were probed. */
	if (!o->user_arg && (!c->completions_probed_ns || o->issued_ns < c->completions_probed_ns))
		return 0;
	/* A device completes in order: work issued after this one that
	 * completed means this one completed unseen (before its callback
	 * was probed), not that the device is busy with it. */
	d = hashmap__get(c->devices, pid, o->device);
	if (d && d->done_issued > o->issued_ns)
		return 0;
	b->found = true;
	return 0;
}

void collector__note_busy_device(struct collector *c, uint64_t now_ns)
{
	struct busy_device b = { .c = c, .now = now_ns };

	if (!c->watch_after || c->first_activity)
		return;
	hashmap__filter(c->owners, long_in_flight, &b);
	if (b.found)
		collect_note_activity(c, c->watch_after, ACT_EXECUTION);
}

uint64_t collector__window_steps_end(const struct collector *c)
{
	return smallest_k__full(&c->step_starts) ? smallest_k__top(&c->step_starts) : 0;
}

int collector__set_capture(struct collector *c, struct capture *capture)
{
	/* Names and tracks live in the capture: start them afresh. Made
	 * first, so that a failure leaves the collector as it was. */
	struct hashmap *threads = hashmap__new(), *processes = hashmap__new();
	struct hashmap *files = hashmap__new();
	bool named = true;

	if (!threads || !processes || !files) {
		hashmap__free(threads, NULL);
		hashmap__free(processes, NULL);
		hashmap__free(files, NULL);
		return -ENOMEM;
	}
	hashmap__free(c->threads, NULL);
	hashmap__free(c->processes, NULL);
	hashmap__free(c->files, NULL);
	c->threads = threads;
	c->processes = processes;
	c->files = files;
	c->cap = capture;
	c->window_open = c->closing = false;
	c->prearm_len = 0;
	collect_devmem_new_capture(c);
	c->n_execs = 0;
	/* Devices keep their last completion; their index is the capture's. */
	c->cap_gen++;
#define KEY(f, s) named &= (c->f = capture__intern(capture, s)) != 0
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
	KEY(k_state, "state");
	KEY(k_issued_before, "issued_before_probes");
	KEY(k_irq, "irq");
#undef KEY
	/* A key interned as 0 reads as "": its arguments would be unnamed. */
	if (!named)
		return -ENOMEM;
	/*
	 * Carrying ends with the last window: what it read past its stop is
	 * handled before any record read later. Held until the next window
	 * opened (record --windows: an interval later), its Executes took the
	 * events and callback arguments the runtime had freed and reused
	 * since, and work still running lost its completion. Where the next
	 * window opens at once (the daemon's flight recorder), it goes into
	 * that window, not through the pre-arm ring, which holds fewer spans
	 * than a close may carry.
	 */
	c->stop_planned = false;
	c->replay_pending = true;
	return 0;
}

void collect_replay_pending(struct collector *c)
{
	c->replay_pending = false;
	collect_replay_carried(c);
	collect_devtrace_replay_carried(c);
}

void collect_remember_execution(struct collector *c, const struct capture_span *s)
{
	const struct capture_track *t = capture__track(c->cap, s->track);
	struct step_candidate *m;

	if (!t)
		return;
	/* As many as the capture could keep; beyond, steps are not found. */
	if (c->n_execs >= MAX_STEP_CANDIDATES) {
		c->st.steps_unexamined++;
		return;
	}
	if (ARRAY_GROW(c->execs, c->cap_execs, c->n_execs + 1)) {
		c->st.steps_unexamined++;
		collect_out_of_memory(c);
		return;
	}
	m = &c->execs[c->n_execs++];
	m->pid = t->pid;
	m->device = t->device;
	m->program = s->name;
	m->start_ns = s->start_ns;
	m->end_ns = s->end_ns;
	m->launch_id = s->correlation_id;
	m->flags = s->flags;
}

/* A program execution the runtime's view estimated, on a device whose own
 * trace buffer was found since (an agent's, made as it turned on): the
 * buffer draws it. */
static bool drawn_by_devtrace(const struct collector *c, const struct capture_span *s)
{
	const struct capture_track *t;
	const struct capture_device *d;

	if (s->kind != SPAN_DEVICE_MODULE || !(s->flags & SPAN_F_ESTIMATED))
		return false;
	t = capture__track(c->cap, s->track);
	d = t ? capture__device_info(c->cap, t->device) : NULL;
	return d && collect_devtrace_covers(c, d->pid, d->core);
}

int collector__open_window(struct collector *c, uint64_t start_ns)
{
	int err;

	c->start_ns = start_ns;
	c->window_open = true;
	smallest_k__reset(&c->step_starts, c->steps ? c->steps + 1 : 0);
	c->closing = c->stop_planned = false;
	/* Spans held before the window: keep those that reach into it, and
	 * count the executions among them as the window's steps. */
	for (size_t i = 0; i < c->prearm_len; i++) {
		struct capture_span *s = &c->prearm[(c->prearm_head + i) % PREARM_MAX];

		if (s->kind == SPAN_EXECUTE && s->start_ns >= start_ns)
			collect_count_window_execution(c, s->start_ns);
		if (!drawn_by_devtrace(c, s))
			collect_keep_span(c, s);
	}
	c->prearm_len = 0;
	c->prearm_head = 0;
	collect_devmem_window_opened(c, start_ns);
	err = capture__set_window(c->cap, start_ns, start_ns);
	/* What the last window read past its stop, where no later record
	 * came first (collector__set_capture). */
	if (c->replay_pending)
		collect_replay_pending(c);
	return err;
}

void collector__begin_close(struct collector *c, uint64_t stop_ns)
{
	c->stop_ns = stop_ns;
	c->closing = true;
}

void collector__plan_stop(struct collector *c, uint64_t stop_ns)
{
	if (!c->window_open || c->closing)
		return;
	c->stop_planned = stop_ns != 0;
	c->stop_ns = stop_ns;
}

uint64_t collector__forget_before(struct collector *c, uint64_t start_ns)
{
	size_t w = 0;

	if (!c->window_open || c->closing || start_ns <= c->start_ns)
		return 0;
	c->start_ns = start_ns;
	/* Step candidates that ended before it would be steps outside it. */
	for (size_t i = 0; i < c->n_execs; i++) {
		if (c->execs[i].end_ns < start_ns)
			continue;
		if (w != i)
			c->execs[w] = c->execs[i];
		w++;
	}
	c->n_execs = w;
	collect_devtrace_forget_before(c, start_ns);
	return capture__drop_before(c->cap, start_ns);
}

struct open_count {
	struct collector *c;
	size_t n;
};

static int count_open(void *ctx, const void *data, size_t size)
{
	struct open_count *oc = ctx;
	const struct ev_header *h = data;

	(void)size;
	if (h->start_ns <= oc->c->stop_ns && !hashmap__get(oc->c->exited, h->pid, 0))
		oc->n++;
	return 0;
}

bool collector__all_closed(struct collector *c)
{
	struct open_count oc = { .c = c };

	if (c->reads.for_each_open)
		c->reads.for_each_open(c->reads.ctx, count_open, &oc);
	return oc.n == 0 && hashmap__count(c->owners) == 0;
}

/* A call still open at stop, from the kernel's open-call tables. */
static int add_open_call(void *ctx, const void *data, size_t size)
{
	struct collector *c = ctx;
	const struct ev_header *h = data;

	if (h->start_ns <= c->stop_ns &&
	    !collect_replay_open_call(c, data, size, c->stop_ns, true))
		c->st.open_at_stop++;
	return 0;
}

/* The window's executions of the dominant program, as step spans. */
static void add_steps(struct collector *c)
{
	uint32_t program;
	int err = steps_dominant_program(c->execs, c->n_execs, &program);

	if (err == -ENOMEM)
		collect_out_of_memory(c);
	if (err)
		return;
	for (size_t i = 0; i < c->n_execs; i++) {
		const struct step_candidate *m = &c->execs[i];
		struct capture_span s;
		int track;

		if (m->program != program)
			continue;
		track = capture__device_track(c->cap, m->device, TRACK_DEVICE_STEPS);
		if (track < 0) {
			collect_out_of_memory(c);
			continue;
		}
		collect_init_span(&s, track, SPAN_DEVICE_STEP, m->program, m->start_ns,
				  m->end_ns);
		s.flags = m->flags;
		/* The writer numbers steps (step_num, group_id) by correlation. */
		s.correlation_id = m->launch_id;
		collect_keep_span(c, &s);
	}
}

/* The probe session's kinds of loss that lose events (the others lose a
 * call's arguments, or memory and fd bookkeeping). */
static bool loses_events(enum loss_kind k)
{
	return k == LOSS_RINGBUF_FULL || k == LOSS_PENDING_FULL || k == LOSS_TRACED_FULL ||
	       k == LOSS_RETURN_UNMATCHED;
}

/* The probe session's losses, and the collector's own. */
static void count_losses(struct collector *c)
{
	uint64_t losses[LOSS_KIND_MAX], rt_skipped, k_skipped;

	if (c->reads.losses && c->reads.skipped && c->reads.loss_name) {
		c->reads.losses(c->reads.ctx, losses);
		for (int i = 0; i < LOSS_KIND_MAX; i++)
			if (losses[i] > c->losses_reported[i])
				(loses_events(i) ? capture__count_event_loss : capture__count_loss)
					(c->cap, c->reads.loss_name(i),
					 losses[i] - c->losses_reported[i]);
		c->reads.skipped(c->reads.ctx, &rt_skipped, &k_skipped);
		rt_skipped -= rt_skipped < c->rt_skipped_reported ? rt_skipped :
							   c->rt_skipped_reported;
		k_skipped -= k_skipped < c->k_skipped_reported ? k_skipped :
							 c->k_skipped_reported;
		if (rt_skipped)
			capture__count_event_loss(c->cap, "runtime probe hits the kernel skipped (BPF recursion guard)",
					    rt_skipped);
		if (k_skipped)
			capture__count_event_loss(c->cap, "kernel probe hits the kernel skipped (BPF recursion guard)",
					    k_skipped);
	}
	if (c->st.carried_dropped)
		capture__count_loss(c->cap, "records past a window's stop not kept for the next",
				    c->st.carried_dropped);
	if (c->st.prearm_dropped)
		capture__count_loss(c->cap, "spans before the window dropped",
				    c->st.prearm_dropped);
	if (c->st.unknown_probes)
		capture__count_event_loss(c->cap, "records from unknown probes",
				    c->st.unknown_probes);
	if (c->st.programs_too_large)
		capture__count_loss(c->cap, "programs past the naming bounds (named \"unnamed program\")",
				    c->st.programs_too_large);
	if (c->st.bad_records)
		capture__count_event_loss(c->cap, "malformed records", c->st.bad_records);
	collect_devmem_count_losses(c);
	if (c->st.out_of_memory)
		capture__count_event_loss(c->cap, "collector state lost (out of memory)",
				    c->st.out_of_memory);
	if (c->st.control_dropped)
		capture__warn(c->cap, "%llu attach requests waited for a rescan (the control "
			      "queue was full): probes may have been placed late",
			      (unsigned long long)c->st.control_dropped);
	if (c->st.steps_lost)
		capture__warn(c->cap, "%llu execution starts not kept for --steps (out of memory): "
			      "the window may hold more steps", (unsigned long long)c->st.steps_lost);
	if (c->st.steps_unexamined)
		capture__warn(c->cap, "steps were found among the first %llu device executions "
			      "only; %llu more were not examined",
			      (unsigned long long)c->n_execs,
			      (unsigned long long)c->st.steps_unexamined);
	if (c->st.unmatched_completions)
		capture__warn(c->cap, "%llu completions of device work issued before acceltrace attached",
			      (unsigned long long)c->st.unmatched_completions);
}

int collector__finish(struct collector *c)
{
	if (!c->window_open)
		return -EINVAL;
	/* Records waiting for a program's name are the window's too. */
	collect_programs_flush(c);
	if (!c->closing)
		collector__begin_close(c, c->start_ns);
	/* A stop placed in the past (--steps) leaves later records' spans. */
	c->st.spans_outside += capture__drop_after(c->cap, c->stop_ns);
	if (c->reads.for_each_open)
		c->reads.for_each_open(c->reads.ctx, add_open_call, c);
	collect_runtime_close_open(c);
	collect_devtrace_finish(c);
	add_steps(c);
	count_losses(c);
	/* The next window reports what is lost after this one's. */
	if (c->reads.losses && c->reads.skipped) {
		c->reads.losses(c->reads.ctx, c->losses_reported);
		c->reads.skipped(c->reads.ctx, &c->rt_skipped_reported, &c->k_skipped_reported);
	}
	return capture__set_window(c->cap, c->start_ns, c->stop_ns);
}
