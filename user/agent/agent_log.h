/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the agent could not do, said once: a line on the process's stderr
 * ("acceltrace-agent: ...") and the control page's message, which
 * acceltrace copies into the capture. Never more than once per problem, so
 * a trainer's log is not flooded by a tracer it did not ask for.
 */
#ifndef ACCELTRACE_AGENT_LOG_H
#define ACCELTRACE_AGENT_LOG_H

struct agent_control;

enum agent_problem {
	AGENT_P_CONTROL,	/* no control page: acceltrace cannot reach the agent */
	AGENT_P_THREAD,
	AGENT_P_CUPTI_LOAD,	/* no libcupti in or for the process */
	AGENT_P_CUPTI_ENABLE,	/* CUPTI refused (privileges, another subscriber) */
	AGENT_P_BUFFERS,	/* no devtrace buffer could be made */
	AGENT_P_NO_JOIN,	/* API records unavailable: kernels not joined to launches */
	AGENT_P_DROPPED,	/* CUPTI dropped records */
	AGENT_P_PJRT,		/* no PJRT plugin with a profiler, or it refused */
	AGENT_P_PJRT_DATA,	/* a collection the agent could not read whole */
	AGENT_P__COUNT,
};

/* Where messages are copied from now on (NULL: stderr only). */
void agent_log_set_page(struct agent_control *page);
void agent_say(enum agent_problem p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Debug lines, with ACCELTRACE_AGENT_DEBUG=1 in the environment. */
void agent_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* ACCELTRACE_AGENT_LOG_H */
