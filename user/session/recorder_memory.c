// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The recorder's device-memory timelines: the kernel's per (process, layer,
 * device) aggregates sampled into a devmem_book from the attach on (record:
 * every 100 ms; the daemon: every second), a process's timelines stopped at
 * its exit and its kernel entries dropped, and each capture given its
 * processes' timelines before it is finalized.
 */
#include <errno.h>
#include <string.h>

#define LOG_CONTEXT "record"
#include "lib/log.h"
#include "capture/capture.h"
#include "collect/collector.h"
#include "devmem/devmem_book.h"
#include "probe/probe_session.h"
#include "session/recorder_internal.h"

#define DEFAULT_SAMPLE_NS (100 * 1000000ull)

struct sample_walk {
	struct recorder *r;
	uint64_t now;
};

/*
 * A process whose allocations the kernel's live table had no room for
 * (at its share of it, or the table full): its in-use figures are short
 * from now on, so it is named, once (the metrics keep the count).
 */
static void say_untracked(struct recorder *r, const struct at_mem_agg_key *key,
			  const struct at_mem_agg *agg)
{
	const size_t max = sizeof(r->mem_untracked_pids) / sizeof(r->mem_untracked_pids[0]);

	if (!agg->untracked)
		return;
	for (size_t i = 0; i < r->n_mem_untracked_pids; i++)
		if (r->mem_untracked_pids[i] == key->pid)
			return;
	if (r->n_mem_untracked_pids == max)
		return;
	r->mem_untracked_pids[r->n_mem_untracked_pids++] = key->pid;
	log_warn("device memory: pid %u has more live allocations than the kernel's table "
		 "keeps for it: %llu allocations (%llu bytes) untracked so far, and its bytes in "
		 "use are short by up to that from now on (said in captures and in the daemon's "
		 "acceltrace_device_memory_untracked_bytes)%s", key->pid,
		 (unsigned long long)agg->untracked,
		 (unsigned long long)agg->untracked_bytes,
		 r->n_mem_untracked_pids == max ? "; further processes past it are not named" : "");
}

static int sample_one(void *ctx, const struct at_mem_agg_key *key, const struct at_mem_agg *agg)
{
	struct sample_walk *w = ctx;

	say_untracked(w->r, key, agg);
	/* The collector names the device (a PJRT_Device handle is the
	 * process's own); refusals are the book's to count (-ENOSPC) or to
	 * retry at the next sample (-EAGAIN). */
	devmem_book__sample(w->r->mem_book, w->now, key, agg, collector__mem_device, w->r->col);
	return 0;
}

static void sample(struct recorder *r, uint64_t now)
{
	struct sample_walk w = { .r = r, .now = now };
	int err = probe_session__mem_for_each(r->ps, sample_one, &w);

	if (err && !r->mem_walk_failed) {
		r->mem_walk_failed = true;
		log_warn("reading the device-memory aggregates failed: %s (memory timelines "
			 "stop here)", strerror(-err));
	}
}

/* The collector's observer: an exit stops the process's timelines, whose
 * last point is the last tick's sample (the attach controller has dropped
 * the kernel's entries by now: the collector hands it the exit first);
 * everything goes on to the caller's observer. */
static void on_span(void *ctx, const struct capture *cap, const struct capture_span *s)
{
	struct recorder *r = ctx;

	r->o.observer->span(r->o.observer->ctx, cap, s);
}

static void on_process_exit(void *ctx, uint32_t pid, int32_t exit_code, uint64_t ts_ns)
{
	struct recorder *r = ctx;

	/* A pid the book does not hold: nothing. */
	devmem_book__process_exited(r->mem_book, pid, mono_ns());
	if (r->o.observer && r->o.observer->process_exit)
		r->o.observer->process_exit(r->o.observer->ctx, pid, exit_code, ts_ns);
}

int recorder_mem_start(struct recorder *r)
{
	struct devmem_book_opts bo = { .sz = sizeof(bo) };

	bo.tiers = r->o.mem_tiers;
	bo.n_tiers = r->o.n_mem_tiers;
	r->mem_book = devmem_book__new(&bo);
	if (!r->mem_book) {
		log_err("the device-memory timelines: %s", strerror(errno));
		return -errno;
	}
	if (!r->o.mem_sample_ns)
		r->o.mem_sample_ns = DEFAULT_SAMPLE_NS;
	/* Spans pass straight on when the caller watches them, and cost
	 * nothing when it does not. */
	r->mem_observer.span = r->o.observer && r->o.observer->span ? on_span : NULL;
	r->mem_observer.process_exit = on_process_exit;
	r->mem_observer.ctx = r;
	return 0;
}

void recorder_mem_tick(struct recorder *r, uint64_t now, bool force)
{
	if (!r->mem_book || !r->ps)
		return;
	if (!force && now - r->mem_sampled_ns < r->o.mem_sample_ns)
		return;
	r->mem_sampled_ns = now;
	sample(r, now);
	devmem_book__expire(r->mem_book, now);
}

void recorder_mem_to_capture(struct recorder *r)
{
	int err = 0;

	if (!r->mem_book || !devmem_book__count(r->mem_book))
		return;
	recorder_mem_tick(r, mono_ns(), true);
	for (size_t i = 0; i < capture__num_processes(r->cap) && err >= 0; i++)
		err = devmem_book__to_capture(r->mem_book, r->cap,
					      capture__process(r->cap, i)->pid, 0);
	if (err < 0)
		log_warn("the memory timelines are not in this capture: %s", strerror(-err));
}

void recorder_mem_free(struct recorder *r)
{
	devmem_book__free(r->mem_book);
	r->mem_book = NULL;
}

const struct devmem_book *recorder__mem_book(const struct recorder *r)
{
	return r->mem_book;
}
