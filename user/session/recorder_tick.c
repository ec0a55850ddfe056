// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The record loop's tick: the rings read, what their records asked of the
 * control lane handed to the attach controller, the programs named, the
 * agents, device memory and devtrace buffers tended; and now and then the
 * targets rescanned and their visits acted on. recorder.c drives it.
 */
#include <errno.h>
#include <string.h>

#define LOG_CONTEXT "record"
#include "lib/clock.h"
#include "lib/log.h"
#include "collect/collector.h"
#include "session/recorder_internal.h"
#include "attach/agent_links.h"
#include "attach/attach_control.h"
#include "attach/runtime_attach.h"
#include "discover/targets.h"
#include "probe/probe_session.h"

#define POLL_MS 5
/* How often the ring's losses are read, to leave SCHED_IDLE when behind. */
#define LOST_CHECK_NS 50000000ull
#define RESCAN_NS (250 * 1000000ull)
/* While a runtime's table is still to be found, look again this soon, this
 * many times: GetPjrtApi can have been running when its probe was placed,
 * and only a scan then finds the table it filled. */
#define UNSETTLED_RESCAN_NS (20 * 1000000ull)
#define UNSETTLED_RESCANS 50
#define FULL_RESCAN_NS (1000 * 1000000ull)

/*
 * What the records just read asked of the control lane (a runtime's table
 * or callback to probe, a process to examine or forget, an fd to mark),
 * done now that the poll is over: no probe is placed and no kernel table
 * written from inside a ring callback (collect/control.h).
 */
void recorder_act_on_control(struct recorder *r)
{
	const struct control_record *recs;
	size_t n;

	recs = collector__take_control(r->col, &n);
	attach_control__act(r->ac, recs, n);
}

/* The ring buffers read (up to POLL_MS), what they asked for attached,
 * the programs they asked for named, the agents tended, the devtrace
 * buffers read: what is there consumed, nothing looked for. */
static int drain_step(struct recorder *r, uint64_t *now)
{
	int n = probe_session__poll(r->ps, POLL_MS);

	if (n < 0 && n != -EINTR) {
		log_err("reading the ring buffers failed: %s", strerror(-n));
		return n;
	}
	recorder_act_on_control(r);
	r->st.drains++;
	/* Off the drain: programs the records asked to be named. */
	collector__name_programs(r->col);
	*now = mono_ns();
	/* Behind at SCHED_IDLE: the rings turned records away. */
	if (r->cpu_inited && *now - r->lost_checked_ns >= LOST_CHECK_NS) {
		uint64_t losses[LOSS_KIND_MAX];

		r->lost_checked_ns = *now;
		probe_session__losses(r->ps, losses);
		cpu_priority__note_lost(&r->cpu, *now, losses[LOSS_RINGBUF_FULL]);
	}
	recorder_mem_tick(r, *now, false);
	recorder_tend_agents(r, *now);
	collector__poll_devtrace(r->col);
	return 0;
}

/*
 * A closing window's tick: the drain step only, no /proc rescan and no
 * attach. What a close waits for was running before its stop, in
 * processes and libraries already probed; a whole host's rescan (every
 * /proc entry, once a second) there only delayed the capture and took the
 * CPU from the trainer. The next full tick rescans at once (its clock did
 * not move).
 */
int recorder_drain_once(struct recorder *r)
{
	uint64_t now;
	int err = drain_step(r, &now);

	if (!err)
		recorder_tell(r);
	return err;
}

/* One tick: the drain step, and the targets rescanned now and then for
 * late libraries, new processes and their devtrace buffers. */
int recorder_poll_once(struct recorder *r)
{
	uint64_t now;
	int err = drain_step(r, &now);

	if (err)
		return err;
	if (runtime_attach__settled(r->ra))
		r->quick_rescans = 0;
	else if (r->quick_rescans < UNSETTLED_RESCANS &&
		 now - r->last_rescan >= UNSETTLED_RESCAN_NS) {
		r->quick_rescans++;
		targets__rescan(r->targets, false);
		attach_control__visit_targets(r->ac, r->targets);
		r->st.rescans++;
		r->last_rescan = now;
	}
	if (now - r->last_rescan >= RESCAN_NS) {
		bool full = now - r->last_full_rescan >= FULL_RESCAN_NS;

		targets__rescan(r->targets, full);
		attach_control__visit_targets(r->ac, r->targets);
		r->st.rescans++;
		r->last_rescan = now;
		if (full) {
			r->st.full_rescans++;
			/* An agent starts with CUDA, at any time: looked for
			 * with the devtrace buffers (and at arming, when it is
			 * waited for). */
			r->last_full_rescan = now;
			recorder_find_agents(r);
			if (r->agents)
				agent_links__drop_exited(r->agents);
			recorder_find_devtrace(r);
		}
	}
	/* Yields the CPU while it keeps up; every quarter second, whether it does. */
	if (r->cpu_inited)
		cpu_priority__poll(&r->cpu, now);
	recorder_tell(r);
	return 0;
}
