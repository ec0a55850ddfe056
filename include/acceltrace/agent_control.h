/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The in-process agent's control page (docs/agent.md): one small file the
 * agent creates and maps in the process it runs in, and that acceltrace
 * finds among the process's mappings by its magic, as it finds devtrace
 * buffers. acceltrace asks for device detail by writing a lease (until
 * when it wants it) and bumping a futex word; the agent's one thread wakes,
 * turns its backend on or off, and says what it did in the fields it
 * owns. Nothing else passes between them: no signal, no code run in the
 * process on acceltrace's behalf.
 *
 * Little-endian, naturally aligned. Like every shared header this one
 * includes nothing: include <linux/types.h> (or vmlinux.h) first.
 */
#ifndef ACCELTRACE_AGENT_CONTROL_H
#define ACCELTRACE_AGENT_CONTROL_H

#define AGENT_CONTROL_MAGIC	0x314c525443544741ULL	/* "AGTCTRL1" */
#define AGENT_CONTROL_VERSION	1
#define AGENT_CONTROL_SIZE	4096
#define AGENT_MESSAGE_MAX	256

/* agent_control.backends: what the agent can drive in this process. */
#define AGENT_BACKEND_CUPTI	0x1	/* CUDA's CUPTI Activity API */
#define AGENT_BACKEND_PJRT	0x2	/* a PJRT plugin's profiler extension */

enum agent_state {
	AGENT_STATE_DORMANT = 1,	/* no subscription, no session: costs nothing */
	AGENT_STATE_ACTIVE = 2,		/* recording device work into devtrace */
	AGENT_STATE_UNAVAILABLE = 3,	/* cannot record here: message says why */
	AGENT_STATE_NO_RUNTIME = 4,	/* no CUDA nor PJRT plugin loaded (yet): nothing
					 * to record; tried again at the next lease */
};

struct agent_control {
	/* Written by the agent once, at creation (magic last). */
	__u64 magic;			/*   0: AGENT_CONTROL_MAGIC */
	__u32 version;			/*   8: AGENT_CONTROL_VERSION */
	__u32 size;			/*  12: bytes of the file */
	__u32 pid;			/*  16: the process the agent runs in */
	__u32 backends;			/*  20: AGENT_BACKEND_* it can drive */
	/* Written by acceltrace. */
	__u64 lease_until_ns;		/*  24: detail wanted until this CLOCK_MONOTONIC */
	__u32 wake;			/*  32: futex word: +1 after any change here */
	__u32 flush_request;		/*  36: +1: hand over all the runtime holds */
	/* Written by the agent. */
	__u32 state;			/*  40: enum agent_state */
	__u32 flush_done;		/*  44: the flush_request last carried out */
	__u64 state_since_ns;		/*  48: CLOCK_MONOTONIC when it took state */
	__u64 activations;		/*  56: times it went ACTIVE */
	__u64 records;			/*  64: devtrace records written */
	__u64 runtime_dropped;		/*  72: records the runtime dropped (CUPTI) */
	__u64 incomplete;		/*  80: records without an end, skipped */
	__u32 buffers;			/*  88: devtrace buffers it created */
	__u32 reserved0;		/*  92 */
	char message[AGENT_MESSAGE_MAX];	/*  96: the last problem, NUL-terminated */
	__u8 reserved1[AGENT_CONTROL_SIZE - 352];	/* 352: zero */
};

#endif /* ACCELTRACE_AGENT_CONTROL_H */
