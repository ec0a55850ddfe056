// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The record loop's side of the in-process agents (docs/agent.md): found
 * in the targets by their control pages, asked for device detail with a
 * renewed lease while it is wanted, waited for when a window opens,
 * flushed when it closes, and what they said (or that a CUDA process has
 * none) put in the capture.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "record"
#include "lib/array.h"
#include "lib/log.h"
#include "capture/capture.h"
#include "collect/collector.h"
#include "session/recorder_internal.h"
#include "attach/agent_links.h"
#include "attach/runtime_attach.h"
#include "discover/targets.h"

/* The agents' lease: renewed every second while device detail is
 * wanted, so an acceltrace that died leaves it on 5 s at most. */
#define AGENT_LEASE_NS (5000 * 1000000ull)
/* At a window's close: how long the agents may take to hand over what
 * their runtime still holds. */
#define AGENT_FLUSH_WAIT_NS (1000 * 1000000ull)
/* How often the agents' pages are read for their state. */
#define AGENT_READ_NS (100 * 1000000ull)
/* At arming: how long agents found may take to turn device detail on. */
#define AGENT_START_WAIT_NS (2000 * 1000000ull)


/* The agents of the traced processes not found yet (a new one gets the
 * current lease at once). */
void recorder_find_agents(struct recorder *r)
{
	for (size_t i = 0; r->agents && i < targets__count(r->targets); i++) {
		const struct process_report *p = targets__report(r->targets, i);

		if (p && !agent_links__has(r->agents, p->pid) &&
		    agent_links__find(r->agents, p->pid) > 0)
			log_info("pid %d: acceltrace agent found", (int)p->pid);
	}
}

/*
 * The window's start, no earlier than device detail: agents found and
 * still turning on are waited for (a bounded time), and the window opens
 * once the last one is on, so that its first steps have their kernels
 * (CUPTI records only what is launched while it is on).
 */
/*
 * The agents' pages read; an agent that turned on or made buffers (a PJRT
 * agent makes them as it turns on and at its first collection) has them
 * found, and their headers read, at once: a device's buffer draws its
 * executions only once it is known.
 */
static void read_pages(struct recorder *r)
{
	if (!agent_links__poll(r->agents))
		return;
	recorder_find_devtrace(r);
	collector__poll_devtrace(r->col);
}

uint64_t recorder_agents_on(struct recorder *r, uint64_t start)
{
	uint64_t deadline = mono_ns() + AGENT_START_WAIT_NS, latest = 0;

	if (!r->want_device || !r->agents)
		return start;
	recorder_find_agents(r);
	for (;;) {
		bool pending = false;

		read_pages(r);	/* before the window opens */
		latest = 0;
		for (size_t i = 0; i < agent_links__count(r->agents); i++) {
			const struct agent_status *st = agent_links__status(r->agents, i);

			pending |= st->state == AGENT_STATE_DORMANT;
			if (st->state == AGENT_STATE_ACTIVE && st->state_since_ns > latest)
				latest = st->state_since_ns;
		}
		if (!pending)
			break;
		if (mono_ns() >= deadline || interrupts(r)) {
			log_warn("an acceltrace agent did not turn device detail on in %.1f s: "
				 "the window opens without it", AGENT_START_WAIT_NS / 1e9);
			break;
		}
		if (recorder_poll_once(r))
			break;
	}
	/* The agent's word for when it turned on, bounded by what can be. */
	if (latest > start && latest <= mono_ns()) {
		log_info("window opens with device detail, %.3f s after the first execution",
			 (latest - start) / 1e9);
		return latest;
	}
	return start;
}

/*
 * The agents' side of a tick: the lease renewed while device detail is
 * wanted, and an agent that turned on (or made buffers) has its devtrace
 * buffers looked for at once, not at the next full rescan.
 */
void recorder_tend_agents(struct recorder *r, uint64_t now)
{
	if (!r->agents || !agent_links__count(r->agents))
		return;
	if (r->want_device)
		agent_links__want(r->agents, now + AGENT_LEASE_NS, now);
	/* A page read is 4 KiB a process: ten times a second is soon enough. */
	if (now - r->agents_read_ns < AGENT_READ_NS)
		return;
	r->agents_read_ns = now;
	read_pages(r);
}

/* Device detail on or off in every agent, now. */
void recorder_want_device(struct recorder *r, bool on)
{
	uint64_t now = mono_ns();

	r->want_device = on;
	if (r->agents)
		agent_links__want(r->agents, on ? now + AGENT_LEASE_NS : 0, now);
}

/*
 * A window closes: what the agents' runtimes still hold (CUPTI keeps
 * finished kernels in buffers it has not handed over) is asked for and
 * waited for, a bounded time, while the rings are read.
 */
int recorder_flush_agents(struct recorder *r)
{
	uint64_t deadline = mono_ns() + AGENT_FLUSH_WAIT_NS;
	int err;

	if (!r->agents || !agent_links__flush(r->agents))
		return 0;
	while (!agent_links__flushed(r->agents)) {
		if (mono_ns() >= deadline) {
			log_warn("an acceltrace agent did not hand over its device records in "
				 "%.1f s: the window's last GPU work may be missing",
				 AGENT_FLUSH_WAIT_NS / 1e9);
			break;
		}
		err = recorder_drain_once(r);	/* a close: no rescan */
		if (err)
			return err;
	}
	read_pages(r);	/* so that the window's finish reads them */
	return 0;
}

/* What the agents said, into the window's capture. */
void recorder_note_agents(struct recorder *r)
{
	for (size_t i = 0; i < agent_links__count(r->agents); i++) {
		const struct agent_status *st = agent_links__status(r->agents, i);

		if (st->state == AGENT_STATE_UNAVAILABLE)
			capture__warn(r->cap, "pid %d: no device detail from the acceltrace agent: %s",
				      (int)st->pid, st->message[0] ? st->message : "no reason given");
		if (st->runtime_dropped)
			capture__warn(r->cap, "pid %d: the device's profiler (CUPTI, or the PJRT "
				      "plugin's) lost %llu records since the agent started", (int)st->pid,
				      (unsigned long long)st->runtime_dropped);
	}
}

/*
 * A CUDA process without the agent: its GPU work cannot be seen from
 * outside (CUPTI hands it out only inside the process). Said once per
 * process, and in the capture; the host side is recorded as ever.
 */
void recorder_say_no_agent(struct recorder *r)
{
	for (size_t i = 0; r->agents && i < targets__count(r->targets); i++) {
		const struct process_report *p = targets__report(r->targets, i);
		const struct attached_library *lib;
		bool told = false;

		if (!p || process_report__cuda_runtime(p, &lib) == CUDA_RT_NONE ||
		    agent_links__has(r->agents, p->pid))
			continue;
		for (size_t j = 0; j < r->n_told_no_agent; j++)
			told |= r->told_no_agent[j] == p->pid;
		if (!told) {
			log_info("pid %d has no acceltrace agent: GPU kernels cannot be recorded "
				 "(the agent is loaded at the process's start: record -- CMD, or "
				 "CUDA_INJECTION64_PATH; docs/agent.md); host side only", (int)p->pid);
			if (!ARRAY_GROW(r->told_no_agent, r->cap_told_no_agent,
					r->n_told_no_agent + 1))
				r->told_no_agent[r->n_told_no_agent++] = p->pid;
		}
		capture__warn(r->cap, "pid %d: no acceltrace agent, so no GPU kernels (see "
			      "docs/agent.md)", (int)p->pid);
	}
}

