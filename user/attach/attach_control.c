// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The attach controller: acts on the control records the collector queued
 * (collect/control.h), which the record loop hands over after each poll.
 * One switch, one action per kind; the probes themselves are placed by
 * runtime_attach and the kernel's tables written through the probe
 * session.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#define LOG_CONTEXT "attach"
#include "lib/log.h"
#include "acceltrace/events.h"
#include "attach/attach_control.h"
#include "discover/device_irqs.h"
#include "discover/proc_maps.h"
#include "attach/runtime_attach.h"
#include "discover/targets.h"
#include "probe/probe_session.h"

struct attach_control {
	struct probe_session *ps;
	struct runtime_attach *ra;
	uint64_t failures;
};

struct attach_control *attach_control__new(struct probe_session *ps,
					   struct runtime_attach *ra)
{
	struct attach_control *ac = calloc(1, sizeof(*ac));

	if (!ac)
		return NULL;
	ac->ps = ps;
	ac->ra = ra;
	return ac;
}

void attach_control__free(struct attach_control *ac)
{
	free(ac);
}

/* A process to examine (again): what it maps and holds may have changed. */
static int examine(struct attach_control *ac, uint32_t pid)
{
	int n;

	if (!ac->ra)
		return 0;
	n = runtime_attach__add_process(ac->ra, pid, NULL);
	/* Gone already: its exit record follows and cleans up. */
	return n < 0 && n != -ESRCH && n != -ENOENT ? n : 0;
}

int attach_control__attach_kernel(struct attach_control *ac)
{
	return ac->ps ? probe_session__attach_kernel(ac->ps) : 0;
}

size_t attach_control__set_detail(struct attach_control *ac, bool on)
{
	size_t n = 0;

	if (on) {
		/* Probes first, then the switch: until it turns, the new
		 * probes turn their calls away whole. */
		if (ac->ra)
			n = runtime_attach__set_detail(ac->ra, true);
		/* A kernel program that cannot attach again is logged; the
		 * others record, and the next slice tries it again. */
		if (ac->ps)
			(void)probe_session__set_detail(ac->ps, true);
		return n;
	}
	if (ac->ps)
		probe_session__set_detail(ac->ps, false);
	if (ac->ra)
		n = runtime_attach__set_detail(ac->ra, false);
	return n;
}

static int set_fd(struct attach_control *ac, uint32_t pid, uint32_t fd,
		  enum fd_kind kind)
{
	return ac->ps ? probe_session__set_fd(ac->ps, pid, fd, kind) : 0;
}

static int forget(struct attach_control *ac, uint32_t pid)
{
	int err = 0;

	/* Its calls, fds, aggregates and device memory: a reused pid must
	 * not find this process's. */
	if (ac->ps)
		err = probe_session__forget_pid(ac->ps, pid);
	if (ac->ra)
		runtime_attach__remove_process(ac->ra, pid);
	return err;
}

int attach_control__visit(struct attach_control *ac, const struct target_visit *v,
			  struct process_report *report)
{
	int n = 0;

	if (v->gone)
		return forget(ac, (uint32_t)v->pid);
	if (ac->ps)
		probe_session__trace_pid(ac->ps, (uint32_t)v->pid, v->flags);
	if (ac->ra)
		n = runtime_attach__add_process(ac->ra, v->pid, report);
	if (n == -ESRCH || n == -ENOENT) {
		/* Gone before its exit record or a rescan said so: forgotten
		 * now (twice is harmless). */
		forget(ac, (uint32_t)v->pid);
		return -ESRCH;
	}
	return n < 0 ? n : 0;
}

void attach_control__visit_targets(struct attach_control *ac, struct targets *t)
{
	const struct target_visit *v;
	size_t n;

	v = targets__take_visits(t, &n);
	for (size_t i = 0; i < n; i++)
		if (attach_control__visit(ac, &v[i], targets__report_of(t, v[i].pid)) == -ESRCH)
			targets__note_gone(t, v[i].pid);
}

int attach_control__scope(struct attach_control *ac, const pid_t *pids, size_t n)
{
	return ac->ps ? probe_session__set_pid_scope(ac->ps, pids, n) : 0;
}

int attach_control__trace_device_irqs(struct attach_control *ac)
{
	struct device_irq *irqs = NULL;
	int n = ac->ps ? device_irqs__find(&irqs) : 0;

	for (int i = 0; i < n; i++) {
		int err = probe_session__trace_irq(ac->ps, irqs[i].irq, 0);

		if (err)
			log_warn("cannot trace irq %u (%s): %s", irqs[i].irq, irqs[i].name,
				 strerror(-err));
		else
			log_debug("tracing irq %u (%s)", irqs[i].irq, irqs[i].name);
	}
	free(irqs);
	return n;
}

int attach_control__handle(struct attach_control *ac,
			   const struct control_record *rec)
{
	int err = 0;

	switch ((enum control_kind)rec->kind) {
	case CTL_PJRT_API_RETURNED:
		/* A refused table (-EINVAL) is the attach manager's to explain
		 * (it warns, and probes shows why): declined, not failed. */
		if (ac->ra)
			err = runtime_attach__on_pjrt_api(ac->ra, rec->pid, rec->value);
		if (err == -EINVAL)
			err = 0;
		break;
	case CTL_CALLBACK_REGISTERED:
		/* Runtimes register the same few callbacks on every execution:
		 * probed once per function. A callback in memory no file backs
		 * (JIT code: -ENOENT) or past the limit (-E2BIG, warned) cannot
		 * be probed: declined, not failed. */
		if (ac->ra && rec->value &&
		    !runtime_attach__callback_ready(ac->ra, rec->pid, rec->value))
			err = runtime_attach__on_callback(ac->ra, rec->pid, rec->value);
		if (err == -ENOENT || err == -E2BIG)
			err = 0;
		break;
	case CTL_DEVICE_OPENED:
	case CTL_EXEC:
		err = examine(ac, rec->pid);
		break;
	case CTL_FORK:
		err = examine(ac, (uint32_t)rec->value);
		break;
	case CTL_MAPPED:
		/* Known files (the C library, a runtime already probed) cost a
		 * lookup; a new runtime is probed now, before its first call. */
		if (ac->ra) {
			struct runtime_mapping m = {
				.start = rec->value, .end = rec->map_end,
				.pgoff = rec->map_pgoff, .dev = rec->dev, .ino = rec->ino,
			};

			err = runtime_attach__on_mapped(ac->ra, rec->pid, &m);
		}
		err = err == -ESRCH || err == -ENOENT || err > 0 ? 0 : err;
		break;
	case CTL_NOT_A_DEVICE:
		err = set_fd(ac, rec->pid, rec->fd, FD_UNKNOWN);
		break;
	case CTL_EVENTFD_REGISTERED:
		err = set_fd(ac, rec->pid, rec->fd, FD_EVENTFD);
		break;
	case CTL_EXIT:
		err = forget(ac, rec->pid);
		break;
	default:
		err = -EINVAL;
		break;
	}
	if (err) {
		ac->failures++;
		log_debug("%s (pid %u): %s", control_kind_name(rec->kind), rec->pid,
			  strerror(-err));
	}
	return err;
}

void attach_control__act(struct attach_control *ac,
			 const struct control_record *recs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		(void)attach_control__handle(ac, &recs[i]);
}

uint64_t attach_control__failures(const struct attach_control *ac)
{
	return ac->failures;
}

static const struct rt_pack_entry *lookup_probe_entry(void *ctx, int probe_id)
{
	struct attach_control *ac = ctx;
	const struct attached_probe *p;

	p = ac->ra ? runtime_attach__probe(ac->ra, probe_id) : NULL;
	return p ? p->entry : NULL;
}

static const char *lookup_device_platform(void *ctx, uint32_t pid, const char **vendor)
{
	struct attach_control *ac = ctx;

	*vendor = NULL;
	if (!ac->ra)
		return NULL;
	return rt_platform_name(runtime_attach__platform(ac->ra, pid, vendor));
}

static int lookup_read_memory(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	return process_read(pid, addr, buf, len);
}

struct control_lookups attach_control__lookups(struct attach_control *ac)
{
	return (struct control_lookups){
		.ctx = ac,
		.probe_entry = lookup_probe_entry,
		.device_platform = lookup_device_platform,
		.read_memory = lookup_read_memory,
	};
}

static int reads_for_each_open(void *ctx, control_record_fn fn, void *fn_ctx)
{
	struct attach_control *ac = ctx;

	return probe_session__for_each_open(ac->ps, fn, fn_ctx);
}

static void reads_losses(void *ctx, uint64_t losses[LOSS_KIND_MAX])
{
	struct attach_control *ac = ctx;

	probe_session__losses(ac->ps, losses);
}

static void reads_skipped(void *ctx, uint64_t *runtime, uint64_t *kernel)
{
	struct attach_control *ac = ctx;

	probe_session__skipped(ac->ps, runtime, kernel);
}

struct session_reads attach_control__reads(struct attach_control *ac)
{
	if (!ac->ps)
		return (struct session_reads){ 0 };
	return (struct session_reads){
		.ctx = ac,
		.for_each_open = reads_for_each_open,
		.losses = reads_losses,
		.skipped = reads_skipped,
		.loss_name = loss_kind_name,
	};
}
