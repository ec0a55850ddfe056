// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device-memory calls (a probe whose pack entry has a memory effect) into
 * the capture's allocation and free events, beside whatever else the call
 * is (a BufferFromHostBuffer is both an H2D span and an allocation).
 * devmem/devmem_events.c reads the record; here it is placed: its device
 * (a PJRT_Device handle named as an ordinal), its platform (what the
 * process's runtimes drive), and the window (events held until a window
 * opens, kept only inside it, as spans are).
 *
 * PJRT_Device handles: no probe reads a device's id, so a process's
 * handles are numbered in the order its memory calls first name them
 * (a guess that holds when device 0 is used first, as JAX's default
 * device is). The daemon's samples of the kernel's aggregates, keyed by
 * handle, are named the same way (collector__mem_device).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "collector"
#include "lib/log.h"
#include "collect/collector_internal.h"
#include "devmem/devmem_events.h"
#include "devmem/devmem_names.h"
#include "discover/probe_packs.h"

/* Events held before a window opens (~512 KB). */
#define MEM_PREARM_MAX 4096
/* PJRT_Device handles numbered per process; more go to device 0, guessed. */
#define MAX_HANDLES_PER_PID 256
/* The key under which a process's handle count is kept (no handle is). */
#define HANDLE_COUNT_KEY UINT64_MAX

struct collect_devmem {
	struct devmem_events *events;
	/* (pid, PJRT_Device) -> ordinal + 1; (pid, HANDLE_COUNT_KEY) -> count */
	struct hashmap *handles;
	struct capture_mem_event *prearm;	/* a ring */
	size_t prearm_head, prearm_len;
};

static struct collect_devmem *devmem_of(struct collector *c)
{
	struct collect_devmem *m = c->devmem;

	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	m->events = devmem_events__new();
	m->handles = hashmap__new();
	if (!m->events || !m->handles)
		goto nomem;
	c->devmem = m;
	return m;
nomem:
	if (m) {
		devmem_events__free(m->events);
		hashmap__free(m->handles, NULL);
		free(m);
	}
	collect_out_of_memory(c);
	return NULL;
}

void collect_devmem_free(struct collector *c)
{
	struct collect_devmem *m = c->devmem;

	if (!m)
		return;
	devmem_events__free(m->events);
	hashmap__free(m->handles, NULL);
	free(m->prearm);
	free(m);
	c->devmem = NULL;
}

static bool handle_ordinal(const struct collect_devmem *m, uint32_t pid, uint64_t handle,
			   uint32_t *ordinal)
{
	uintptr_t v = (uintptr_t)hashmap__get(m->handles, pid, handle);

	if (!v || handle == HANDLE_COUNT_KEY)
		return false;
	*ordinal = (uint32_t)(v - 1);
	return true;
}

/* The handle's ordinal, numbering it when new; false past the bound. */
static bool number_handle(struct collector *c, struct collect_devmem *m, uint32_t pid,
			  uint64_t handle, uint32_t *ordinal)
{
	uintptr_t count;

	/* No handle (an execution's output sized later, a NULL device): the
	 * device is unknown, not numbered. */
	if (!handle || handle == HANDLE_COUNT_KEY)
		return false;
	if (handle_ordinal(m, pid, handle, ordinal))
		return true;
	count = (uintptr_t)hashmap__get(m->handles, pid, HANDLE_COUNT_KEY);
	if (count >= MAX_HANDLES_PER_PID) {
		c->st.mem_handles_unnamed++;
		return false;
	}
	if (collect_put(c, m->handles, pid, handle, (void *)(count + 1), NULL) ||
	    collect_put(c, m->handles, pid, HANDLE_COUNT_KEY, (void *)(count + 1), NULL)) {
		hashmap__remove(m->handles, pid, handle);
		return false;
	}
	*ordinal = (uint32_t)count;
	return true;
}

static const char *platform_of(struct collector *c, uint32_t pid)
{
	const char *vendor;

	return c->ctl.device_platform ? c->ctl.device_platform(c->ctl.ctx, pid, &vendor) : NULL;
}

static void keep(struct collector *c, struct collect_devmem *m,
		 const struct capture_mem_event *e)
{
	int err;

	if (!c->window_open) {
		/* Made at the first event before a window (~360 KB): the
		 * daemon, whose window is always open, never needs it. */
		if (!m->prearm) {
			m->prearm = malloc(MEM_PREARM_MAX * sizeof(*m->prearm));
			if (!m->prearm) {
				c->st.mem_prearm_dropped++;
				collect_out_of_memory(c);
				return;
			}
		}
		if (m->prearm_len == MEM_PREARM_MAX) {
			/* The oldest goes: a window opens at recent activity. */
			m->prearm_head = (m->prearm_head + 1) % MEM_PREARM_MAX;
			m->prearm_len--;
			c->st.mem_prearm_dropped++;
		}
		m->prearm[(m->prearm_head + m->prearm_len++) % MEM_PREARM_MAX] = *e;
		return;
	}
	if (e->ts_ns < c->start_ns || (c->closing && e->ts_ns > c->stop_ns)) {
		c->st.mem_outside++;
		return;
	}
	err = capture__add_mem_event(c->cap, e);
	if (err) {
		log_debug("memory event refused by the capture: %s", strerror(-err));
		if (err == -ENOMEM)
			collect_out_of_memory(c);
		return;
	}
	c->st.mem_events++;
}

void collect_devmem(struct collector *c, const struct ev_rt_call *r,
		    const struct rt_pack_entry *entry)
{
	struct collect_devmem *m = devmem_of(c);
	const struct at_mem_desc *mem = &entry->mem;
	struct devmem_call call = {
		.rec = r, .mem = mem, .api = entry->name,
	};
	struct capture_mem_event e;
	int ret;

	/* Still running at a window's stop: it has changed nothing yet. */
	if (!m || (r->flags & RT_F_OPEN))
		return;
	if (mem->op != MEM_OP_SET_DEVICE && mem->op != MEM_OP_CTX_DEVICE &&
	    mem->op != MEM_OP_SET_CTX)
		call.platform = platform_of(c, r->h.pid);
	if ((mem->flags & MEM_F_DEVICE_HANDLE) && mem->dev_val < r->n_vals &&
	    mem->dev_val < AT_MAX_FETCH_OPS && !(r->flags & (RT_F_MEM_FAILED | RT_F_MEM_NESTED)))
		call.device_resolved = number_handle(c, m, r->h.pid, r->vals[mem->dev_val],
						     &call.device);
	ret = devmem_events__make(m->events, c->cap, &call, &e);
	if (ret == -ENOMEM)
		collect_out_of_memory(c);
	else if (ret == -EINVAL)
		c->st.bad_records++;
	if (ret == 1)
		keep(c, m, &e);
}

void collect_devmem_window_opened(struct collector *c, uint64_t start_ns)
{
	struct collect_devmem *m = c->devmem;

	if (!m)
		return;
	for (size_t i = 0; i < m->prearm_len; i++) {
		const struct capture_mem_event *e =
			&m->prearm[(m->prearm_head + i) % MEM_PREARM_MAX];

		if (e->ts_ns >= start_ns)
			keep(c, m, e);
		else
			c->st.mem_outside++;
	}
	m->prearm_len = m->prearm_head = 0;
}

void collect_devmem_new_capture(struct collector *c)
{
	if (c->devmem)
		c->devmem->prearm_len = c->devmem->prearm_head = 0;
}

void collect_devmem_count_losses(struct collector *c)
{
	const struct devmem_events_stats *st;

	if (c->st.mem_prearm_dropped)
		capture__count_loss(c->cap, "device-memory events before the window dropped",
				    c->st.mem_prearm_dropped);
	if (c->st.mem_handles_unnamed)
		capture__count_loss(c->cap, "device-memory calls past the PJRT devices a process "
				    "may name (device guessed)", c->st.mem_handles_unnamed);
	if (!c->devmem)
		return;
	st = devmem_events__stats(c->devmem->events);
	if (st->untracked)
		capture__count_loss(c->cap, "device-memory allocations or thread devices past "
				    "user space's tables (a free's device guessed)", st->untracked);
}

static int handle_of_pid(uint64_t pid, uint64_t b, void *value, void *ctx)
{
	(void)b;
	(void)value;
	return pid == *(const uint32_t *)ctx;
}

void collect_devmem_process_exit(struct collector *c, uint32_t pid)
{
	struct collect_devmem *m = c->devmem;

	if (!m)
		return;
	devmem_events__forget_pid(m->events, pid);
	hashmap__filter(m->handles, handle_of_pid, &pid);
}

bool collector__mem_device(void *ctx, const struct at_mem_agg_key *key, uint32_t *ordinal,
			   const char **platform)
{
	struct collector *c = ctx;

	if ((key->flags & MEM_F_DEVICE_HANDLE) && !key->device) {
		/* Buffers first seen by their size: the kernel keys them by
		 * no handle (devmem_events.c names them the same way). */
		*ordinal = CAPTURE_MEM_DEVICE_UNKNOWN;
	} else if (key->flags & MEM_F_DEVICE_HANDLE) {
		if (!c->devmem || !handle_ordinal(c->devmem, key->pid, key->device, ordinal))
			return false;
	} else {
		*ordinal = key->device > UINT32_MAX ? UINT32_MAX : (uint32_t)key->device;
	}
	/* NULL while no runtime said: the book names it by the layer's guess
	 * (devmem_allocator_name) and again once the platform is known. */
	*platform = platform_of(c, key->pid);
	return true;
}
