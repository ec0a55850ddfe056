// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Task records (threads created, renamed, exited; processes exec'ing,
 * forking, exiting), scheduler switches (off-CPU spans of traced threads)
 * and device interrupts. A process's exit closes what it had open, marked;
 * exec, fork and exit go to the attach controller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "collector"
#include "lib/log.h"
#include "collect/collector_internal.h"

struct exit_ctx {
	struct collector *c;
	uint32_t pid;
	uint64_t ts;
};

/* A call the process had open when it exited: it ends at the exit. */
static int close_exited_call(void *ctx, const void *data, size_t size)
{
	struct exit_ctx *x = ctx;
	const struct ev_header *h = data;

	if (h->pid == x->pid)
		collect_replay_open_call(x->c, data, size, x->ts, false);
	return 0;
}

static void on_process_exit(struct collector *c, uint32_t pid, int32_t exit_code,
			    uint64_t ts)
{
	struct exit_ctx x = { .c = c, .pid = pid, .ts = ts };

	c->st.target_exits++;
	/* Without the marker its calls may be counted open at stop. */
	collect_put(c, c->exited, pid, 0, (void *)1, NULL);
	/* Work the process had in flight ends with it, marked. */
	collect_runtime_process_exit(c, pid, ts);
	collect_devtrace_process_exit(c, pid, ts);
	if (c->reads.for_each_open)
		c->reads.for_each_open(c->reads.ctx, close_exited_call, &x);
	/* Then its open calls, fds and probes are forgotten. */
	collect_control(c, CTL_EXIT, pid, 0, 0);
	capture__process_exited(c->cap, pid, ts);
	if (c->observer && c->observer->process_exit)
		c->observer->process_exit(c->observer->ctx, pid, exit_code, ts);
}

/*
 * A rename is the thread's name history, not an event: no span, and no
 * track (a thread whose only activity is renames gets no line). A thread
 * first seen renaming had the old name until then.
 */
static void on_rename(struct collector *c, const struct ev_task *r)
{
	char comm[AT_COMM_LEN + 1], old[AT_COMM_LEN + 1];

	snprintf(comm, sizeof(comm), "%.*s", AT_COMM_LEN, r->comm);
	snprintf(old, sizeof(old), "%.*s", AT_COMM_LEN, r->oldcomm);
	if (!hashmap__get(c->threads, r->h.pid, r->h.tid)) {
		collect_ensure_process(c, r->h.pid);
		/* Without the marker /proc is only read again: no loss. */
		collect_put(c, c->threads, r->h.pid, r->h.tid, (void *)1, NULL);
		if (capture__set_thread(c->cap, r->h.pid, r->h.tid, old, 0))
			collect_out_of_memory(c);
	}
	if (capture__rename_thread(c->cap, r->h.pid, r->h.tid, comm, r->h.start_ns))
		collect_out_of_memory(c);
}

void collect_task(struct collector *c, const struct ev_task *r)
{
	switch (r->event) {
	case TASK_NEW:
		collect_ensure_process(c, r->h.pid);
		collect_put(c, c->threads, r->h.pid, r->h.tid, (void *)1, NULL);
		if (capture__set_thread(c->cap, r->h.pid, r->h.tid, r->comm, r->h.start_ns))
			collect_out_of_memory(c);
		break;
	case TASK_RENAME:
		on_rename(c, r);
		break;
	case TASK_EXIT:
		capture__thread_exited(c->cap, r->h.pid, r->h.tid, r->h.start_ns);
		free(hashmap__remove(c->off_cpu, r->h.pid, r->h.tid));
		break;
	case TASK_PROC_EXIT:
		on_process_exit(c, r->h.pid, r->exit_code, r->h.start_ns);
		break;
	case TASK_EXEC:
		collect_control(c, CTL_EXEC, r->h.pid, 0, 0);
		if (capture__set_process(c->cap, r->h.pid, r->comm))
			collect_out_of_memory(c);
		break;
	case TASK_FORK:
		collect_ensure_process(c, r->other);
		collect_control(c, CTL_FORK, r->h.pid, 0, r->other);
		break;
	}
}

void collect_switch(struct collector *c, const struct ev_sched_switch *r)
{
	struct off_cpu *o;

	if (!c->sched_switch)
		return;
	/* The traced thread going off CPU starts a gap; coming back ends it. */
	if (r->prev_tid == r->h.tid && r->prev_pid == r->h.pid) {
		o = hashmap__get(c->off_cpu, r->h.pid, r->h.tid);
		if (!o) {
			o = calloc(1, sizeof(*o));
			if (!o || collect_put(c, c->off_cpu, r->h.pid, r->h.tid, o, NULL)) {
				if (!o)
					collect_out_of_memory(c);
				free(o);
				return;
			}
		}
		o->since = r->h.start_ns;
		o->state = r->prev_state;
	}
	if (r->next_pid && (o = hashmap__remove(c->off_cpu, r->next_pid, r->next_tid))) {
		struct capture_span s;
		int track;

		track = collect_host_track(c, r->next_pid, r->next_tid);
		if (track >= 0) {
			collect_init_span(&s, track, SPAN_HOST_OTHER,
					  collect_intern_static(c, o->state ?
								 "off CPU (blocked)" :
								 "off CPU (preempted)"),
					  o->since, r->h.start_ns);
			capture_span__add_i64(&s, c->k_state, o->state);
			collect_keep_span(c, &s);
		}
		free(o);
	}
}

void collect_irq(struct collector *c, const struct ev_irq *r)
{
	struct capture_span s;
	char name[32];
	int track;

	/* Interrupts belong to no process: one row per irq under pid 0. */
	if (!hashmap__get(c->processes, 0, 0) &&
	    !collect_put(c, c->processes, 0, 0, (void *)1, NULL))
		capture__set_process(c->cap, 0, "device interrupts");
	snprintf(name, sizeof(name), "irq %u", r->irq);
	if (!hashmap__get(c->threads, 0, r->irq + 1) &&
	    !collect_put(c, c->threads, 0, r->irq + 1, (void *)1, NULL))
		capture__set_thread(c->cap, 0, r->irq + 1, name, 0);
	track = capture__host_track(c->cap, 0, r->irq + 1);
	if (track < 0) {
		collect_out_of_memory(c);
		return;
	}
	collect_init_span(&s, track, SPAN_INSTANT_INTERRUPT, capture__intern(c->cap, name),
			  r->h.start_ns, r->h.end_ns);
	capture_span__add_u64(&s, c->k_irq, r->irq);
	capture_span__add_i64(&s, c->k_ret, r->ret);
	collect_keep_span(c, &s);
}
