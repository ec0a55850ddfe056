/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The recorder's state, shared by recorder.c (the record loop: attach,
 * arm, windows) and recorder_agents.c (the in-process agents it asks for
 * device detail).
 */
#ifndef ACCELTRACE_RECORDER_INTERNAL_H
#define ACCELTRACE_RECORDER_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "lib/clock.h"
#include "session/recorder.h"
#include "probe/kernel_features.h"
#include "collect/collector.h"
#include "session/cpu_priority.h"

struct agent_links;
struct attach_control;
struct devmem_book;
struct devtrace_seen;
struct probe_session;
struct runtime_attach;
struct targets;

struct recorder {
	struct recorder_opts o;
	struct features features;
	struct probe_session *ps;
	struct runtime_attach *ra;
	struct attach_control *ac;	/* acts on the collector's control records */
	uint64_t attach_failures_said;	/* its failures warned of in a capture */
	struct collector *col;
	struct targets *targets;
	struct capture *cap;		/* the current window's */
	uint32_t window;		/* the current window, from 1 */
	uint64_t start_ns;		/* where the armed window opens */
	uint64_t arm_wait_ns;		/* how long the last arming waited */
	uint64_t probes_attached_ns;
	uint64_t last_rescan, last_full_rescan;
	uint64_t lost_checked_ns;	/* ring losses last read (cpu priority) */
	unsigned int quick_rescans;	/* since the probes were last settled */
	struct devtrace_seen *devtrace_seen;	/* buffers handed to the collector */
	struct agent_links *agents;	/* the agents in the targets */
	bool want_device;		/* device detail asked of them now */
	uint64_t agents_read_ns;	/* their pages last read */
	pid_t *told_no_agent;		/* CUDA targets said to have no agent */
	size_t n_told_no_agent, cap_told_no_agent;
	/* Where the run stands, for opts.progress (recorder_tell). */
	enum recorder_phase phase;
	bool phase_told;		/* its first call made */
	uint64_t phase_ns, deadline_ns;
	bool bounded_by_duration;	/* arming: --duration bounds the wait */
	bool arm_timeout_given;		/* opts.arm_timeout_ns was not 0 */
	bool no_runtime;		/* arming: no target maps a runtime */
	size_t n_devtrace;		/* buffers handed to the collector */
	struct recorder_stats st;
	struct cpu_priority cpu;	/* opts.cpu_priority idle: while a window is open */
	bool cpu_inited;		/* at the first window's open */
	/* recorder_memory.c: the device-memory timelines, sampled from the
	 * kernel's aggregates; exits reach it through mem_observer, which
	 * passes everything on to opts.observer. */
	struct devmem_book *mem_book;
	uint64_t mem_sampled_ns;	/* the last sample */
	bool mem_walk_failed;		/* said once */
	/* Processes said to be past the kernel's live-allocation table
	 * (once each; the first 16 of them). */
	uint32_t mem_untracked_pids[16];
	size_t n_mem_untracked_pids;
	struct collector_observer mem_observer;
};


static inline int interrupts(const struct recorder *r)
{
	return r->o.interrupts ? *r->o.interrupts : 0;
}

/* Tells opts.progress where the run stands (recorder.c); a tick. */
void recorder_tell(struct recorder *r);
/* A new phase, told at once; @deadline_ns as recorder_progress says. */
void recorder_enter(struct recorder *r, enum recorder_phase phase, uint64_t deadline_ns);
/* Some target maps an accelerator runtime library or holds a device node. */
bool recorder_targets_have_runtime(const struct recorder *r);

/* recorder_tick.c: what the records just read asked of the control lane
 * (collector__take_control), handed to the attach controller: after every
 * poll and drain, never from inside one. */
void recorder_act_on_control(struct recorder *r);
/* One tick of the record loop (recorder_tick.c). */
int recorder_poll_once(struct recorder *r);
/* A closing window's tick: the rings and devtrace buffers consumed, the
 * agents tended; no /proc rescan, no attach. */
int recorder_drain_once(struct recorder *r);
/* The devtrace buffers of the targets not handed over yet. */
void recorder_find_devtrace(struct recorder *r);
/* The buffers --devtrace names, handed to the collector: 0, or -errno
 * (-EINVAL: one is not a devtrace buffer), said. */
int recorder_open_devtrace_paths(struct recorder *r);

/* recorder_agents.c: the agents in the targets (docs/agent.md). */
void recorder_find_agents(struct recorder *r);
/* Device detail on or off in every agent, now. */
void recorder_want_device(struct recorder *r, bool on);
/* A tick's share: the lease renewed, states read, new buffers looked for. */
void recorder_tend_agents(struct recorder *r, uint64_t now);
/* The window's start, no earlier than the agents' device detail. */
uint64_t recorder_agents_on(struct recorder *r, uint64_t start);
/* At a window's close: what the agents' runtimes hold, handed over. */
int recorder_flush_agents(struct recorder *r);
/* What the agents said, and which CUDA targets have none, in the capture. */
void recorder_note_agents(struct recorder *r);
void recorder_say_no_agent(struct recorder *r);

/* recorder_memory.c: device-memory timelines (devmem/devmem_book.h). */
/* The book and the observer the collector is given: 0 or -errno. */
int recorder_mem_start(struct recorder *r);
/* A tick's share: the aggregates sampled when opts.mem_sample_ns passed
 * (@force: now), exited processes' timelines expired. */
void recorder_mem_tick(struct recorder *r, uint64_t now, bool force);
/* Before the capture is finalized: its processes' timelines into it. */
void recorder_mem_to_capture(struct recorder *r);
void recorder_mem_free(struct recorder *r);

#endif /* ACCELTRACE_RECORDER_INTERNAL_H */
