// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The flight recorder: a whole-host recorder whose window never closes
 * but to be written; its start follows the clock, N seconds behind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOG_CONTEXT "daemon"
#include "lib/clock.h"
#include "lib/log.h"
#include "capture/capture.h"
#include "collect/collector.h"
#include "session/recorder.h"
#include "daemon/flight_recorder.h"
#include "attach/runtime_attach.h"
#include "output/xspace_writer.h"
#include "probe/probe_session.h"

/* The start moves every tenth of N (at least this often): the recorder
 * reaches back between N and 1.1 N. */
#define MIN_TRIM_NS (250 * 1000000ull)
/* Device memory sampled once a second: the timelines' finest points. */
#define MEM_SAMPLE_NS (1000 * 1000000ull)

struct flight_recorder {
	struct flight_recorder_opts o;
	struct recorder *rec;
	uint64_t start_ns;		/* where the window begins now */
	uint64_t hold_ns;		/* a pending capture's start: kept */
	uint64_t last_trim_ns;
};


struct flight_recorder *flight_recorder__start(const struct flight_recorder_opts *opts)
{
	struct recorder_opts ro = { .sz = sizeof(ro) };
	struct flight_recorder *fr;
	int err;

	fr = calloc(1, sizeof(*fr));
	if (!fr)
		return NULL;
	memcpy(&fr->o, opts, opts->sz < sizeof(fr->o) ? opts->sz : sizeof(fr->o));
	fr->o.sz = sizeof(fr->o);
	ro.whole_host = true;
	ro.max_spans = fr->o.max_events;
	ro.grace_ns = fr->o.grace_ns;
	ro.observer = fr->o.observer;
	ro.scope = fr->o.scope;
	ro.mem_sample_ns = MEM_SAMPLE_NS;
	ro.mem_tiers = fr->o.mem_tiers;
	ro.n_mem_tiers = fr->o.n_mem_tiers;
	fr->rec = recorder__new(&ro);
	if (!fr->rec) {
		err = -errno;
		goto fail;
	}
	err = recorder__attach(fr->rec);
	if (err)
		goto fail;
	fr->start_ns = fr->last_trim_ns = mono_ns();
	err = recorder__open(fr->rec, fr->start_ns);
	if (err)
		goto fail;
	return fr;
fail:
	flight_recorder__free(fr);
	errno = -err;
	return NULL;
}

int flight_recorder__poll(struct flight_recorder *fr)
{
	uint64_t now, every, start;
	int err = recorder__poll(fr->rec);

	if (err)
		return err;
	now = mono_ns();
	every = fr->o.keep_ns / 10 > MIN_TRIM_NS ? fr->o.keep_ns / 10 : MIN_TRIM_NS;
	if (now - fr->last_trim_ns < every || now <= fr->o.keep_ns)
		return 0;
	fr->last_trim_ns = now;
	start = now - fr->o.keep_ns;
	/* A pending capture's start stays, however long its window runs (the
	 * span budget bounds the memory meanwhile). */
	if (fr->hold_ns && start > fr->hold_ns)
		start = fr->hold_ns;
	if (start > fr->start_ns) {
		fr->start_ns = start;
		recorder__forget_before(fr->rec, start);
	}
	return 0;
}

void flight_recorder__hold(struct flight_recorder *fr, uint64_t from_ns, uint64_t stop_ns)
{
	fr->hold_ns = from_ns;
	recorder__plan_stop(fr->rec, stop_ns);
}

void flight_recorder__set_keep(struct flight_recorder *fr, uint64_t keep_ns)
{
	fr->o.keep_ns = keep_ns;
}

/*
 * A fresh window from the last one's stop (the records that came while it
 * was written wait in the ring buffers); the last capture's memory goes
 * with it.
 */
static int reopen(struct flight_recorder *fr, uint64_t start_ns)
{
	int err = recorder__renew(fr->rec, NULL);

	if (err) {
		log_err("starting a new flight-recorder window failed: %s", strerror(-err));
		return err;
	}
	fr->start_ns = start_ns;
	fr->last_trim_ns = mono_ns();
	return recorder__open(fr->rec, fr->start_ns);
}

int flight_recorder__capture(struct flight_recorder *fr, uint64_t from_ns, uint64_t stop_ns,
			     const struct flight_recorder_dest *dest, const char *session,
			     struct xspace_written *out)
{
	struct capture *cap;
	int err, err2;

	if (from_ns > fr->start_ns) {
		recorder__forget_before(fr->rec, from_ns);
		fr->start_ns = from_ns;
	}
	err = recorder__close(fr->rec, stop_ns);
	if (!err) {
		cap = recorder__capture(fr->rec);
		err = capture__set_session(cap, session);
		if (!err)
			err = capture__set_reason(cap, dest->reason);
		capture__set_focus_pid(cap, dest->focus_pid);
		if (err)
			log_err("naming the capture failed: %s", strerror(-err));
		else if (dest->root_fd >= 0)
			err = xspace_write_capture_at(cap, dest->root_fd, dest->root, dest->host,
						      out);
		else
			err = xspace_write_capture(cap, dest->logdir, out);
	}
	/* Whatever became of this one, the recorder goes on. */
	fr->hold_ns = 0;
	err2 = reopen(fr, stop_ns);
	return err ? err : err2;
}

int flight_recorder__set_detail(struct flight_recorder *fr, bool on)
{
	return recorder__set_detail(fr->rec, on);
}

int flight_recorder__aggregates(const struct flight_recorder *fr, uint32_t pid,
				uint64_t out[AGG_MAX])
{
	struct probe_session *ps = recorder__probe_session(fr->rec);

	return ps ? probe_session__proc_aggregates(ps, pid, out) : -ENOTCONN;
}

const struct devmem_book *flight_recorder__mem_book(const struct flight_recorder *fr)
{
	return recorder__mem_book(fr->rec);
}

uint64_t flight_recorder__pjrt_refusals(const struct flight_recorder *fr)
{
	return runtime_attach__refusals(recorder__runtime_attach(fr->rec));
}

bool flight_recorder__traces(const struct flight_recorder *fr, pid_t pid)
{
	return recorder__traces(fr->rec, pid);
}

uint64_t flight_recorder__start_ns(const struct flight_recorder *fr)
{
	return fr->start_ns;
}

uint64_t flight_recorder__spans(const struct flight_recorder *fr)
{
	return capture__spans_kept(recorder__capture(fr->rec));
}

size_t flight_recorder__losses(const struct flight_recorder *fr, const char **names,
			       uint64_t *values, size_t max)
{
	struct probe_session *ps = recorder__probe_session(fr->rec);
	uint64_t losses[LOSS_KIND_MAX], rt_skipped, k_skipped;
	size_t n = 0;

	if (!ps)
		return 0;
	probe_session__losses(ps, losses);
	for (int i = 0; i < LOSS_KIND_MAX && n < max; i++, n++) {
		names[n] = loss_kind_name(i);
		values[n] = losses[i];
	}
	probe_session__skipped(ps, &rt_skipped, &k_skipped);
	if (n + 2 <= max) {
		names[n] = "runtime probe hits skipped (BPF recursion guard)";
		values[n++] = rt_skipped;
		names[n] = "kernel probe hits skipped (BPF recursion guard)";
		values[n++] = k_skipped;
	}
	return n;
}

uint64_t flight_recorder__ring_lost(const struct flight_recorder *fr)
{
	struct probe_session *ps = recorder__probe_session(fr->rec);
	uint64_t losses[LOSS_KIND_MAX];

	if (!ps)
		return 0;
	probe_session__losses(ps, losses);
	return losses[LOSS_RINGBUF_FULL];
}

void flight_recorder__free(struct flight_recorder *fr)
{
	if (!fr)
		return;
	recorder__free(fr->rec);
	free(fr);
}
