// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The trainer's device-memory truth: one "mem_alloc" line per PJRT buffer
 * it gets (an H2D copy's, an execution output's, an uninitialised one's)
 * and one "mem_free" per buffer whose memory it gives back, written by the
 * framework side around the PJRT call, as a tracer's probes see the call.
 * Lines carry the train step in progress, which the loop sets.
 */
#include "simtruth.h"
#include "trainer.h"

static int64_t current_step = -1;

void trainer_mem_set_step(int64_t step)
{
	__atomic_store_n(&current_step, step, __ATOMIC_RELAXED);
}

/* An allocation that failed (out of memory): nothing changed. */
void trainer_mem_failed(const char *api, int device, size_t bytes, uint64_t t_call,
			uint64_t t_return, const char *size_from, int code)
{
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, "mem_alloc");
	tl_str(&l, "api", api);
	tl_str(&l, "layer", "pjrt_buffers");
	tl_u64(&l, "device", (uint64_t)device);
	tl_u64(&l, "addr", 0);
	tl_u64(&l, "bytes", bytes);
	tl_u64(&l, "t_call", t_call);
	tl_u64(&l, "t_return", t_return);
	tl_i64(&l, "step", __atomic_load_n(&current_step, __ATOMIC_RELAXED));
	tl_str(&l, "size_from", size_from);
	tl_bool(&l, "failed", true);
	tl_i64(&l, "result", code);
	truth_commit(&l);
}

void trainer_mem_truth(const char *type, const char *api, int device, const PJRT_Buffer *b,
		       size_t bytes, uint64_t t_call, uint64_t t_return, const char *size_from)
{
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, type);
	tl_str(&l, "api", api);
	tl_str(&l, "layer", "pjrt_buffers");
	tl_u64(&l, "device", (uint64_t)device);
	tl_u64(&l, "addr", (uint64_t)(uintptr_t)b);
	tl_u64(&l, "bytes", bytes);
	tl_u64(&l, "t_call", t_call);
	tl_u64(&l, "t_return", t_return);
	tl_i64(&l, "step", __atomic_load_n(&current_step, __ATOMIC_RELAXED));
	if (size_from)
		tl_str(&l, "size_from", size_from);
	truth_commit(&l);
}
