// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The TPU C API infeed/outfeed entry points (tpu_capi.h), exported with the
 * real names. Infeed copies the data to the core's device infeed queue,
 * blocking while it is full; the program's infeed op waits for and consumes
 * it. Outfeed blocks the calling thread until the device's outfeed op has
 * produced data, as TensorFlow's OutfeedDequeue does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"
#include "simtruth.h"
#include "tpu_capi.h"

static void set_status(TF_Status *st, int code, const char *fmt, ...)
{
	va_list ap;

	if (!st)
		return;
	st->code = code;
	st->message[0] = 0;
	if (!fmt)
		return;
	va_start(ap, fmt);
	vsnprintf(st->message, sizeof(st->message), fmt, ap);
	va_end(ap);
}

static int code_of(int err)
{
	return err == -ECANCELED ? PJRT_Error_Code_CANCELLED :
	       err == -EINVAL ? PJRT_Error_Code_INVALID_ARGUMENT :
	       PJRT_Error_Code_RESOURCE_EXHAUSTED;
}

/* The client and core for `executor`, holding the client; NULL on error. */
static PJRT_Client *feed_begin(SE_StreamExecutor *executor, int *core, TF_Status *st)
{
	PJRT_Client *c = sim_client_get();

	if (!c) {
		set_status(st, PJRT_Error_Code_FAILED_PRECONDITION,
			   "no TPU client: create one with PJRT_Client_Create");
		return NULL;
	}
	*core = executor ? sim_device_core(c, executor) : 0;
	if (*core < 0) {
		set_status(st, PJRT_Error_Code_INVALID_ARGUMENT,
			   "executor is not a device of the TPU client");
		sim_client_put(c);
		return NULL;
	}
	return c;
}

static void truth_feed(const char *type, const char *api, int core, size_t bytes,
		       uint64_t t0, int err)
{
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, type);
	tl_str(&l, "api", api);
	tl_u64(&l, "core", (uint64_t)core);
	tl_u64(&l, "bytes", bytes);
	tl_u64(&l, "t_call", t0);
	tl_u64(&l, "t_return", truth_now());
	if (err)
		tl_i64(&l, "error", err);
	truth_commit(&l);
}

static void infeed(const char *api, SE_StreamExecutor *executor, const void *data,
		   size_t bytes, TF_Status *st, uint64_t t0)
{
	PJRT_Client *c;
	uint64_t va;
	int core, err;

	c = feed_begin(executor, &core, st);
	if (!c)
		return;
	va = devnode__map(c->node, data, bytes);
	err = simdev__infeed(c->dev, core, data, bytes);
	devnode__unmap(c->node, data, bytes, va);
	if (err)
		set_status(st, code_of(err), "infeed: %s", strerror(-err));
	else
		set_status(st, 0, NULL);
	truth_feed("infeed", api, core, bytes, t0, err);
	sim_client_put(c);
}

static void outfeed(const char *api, SE_StreamExecutor *executor, void *data,
		    size_t cap, size_t *got, TF_Status *st, uint64_t t0)
{
	PJRT_Client *c;
	uint64_t va;
	int core, err;

	*got = 0;
	c = feed_begin(executor, &core, st);
	if (!c)
		return;
	va = devnode__map(c->node, data, cap);
	err = simdev__outfeed(c->dev, core, data, cap, got);
	devnode__unmap(c->node, data, cap, va);
	if (err)
		set_status(st, code_of(err), "outfeed: %s", strerror(-err));
	else if (*got > cap)
		set_status(st, PJRT_Error_Code_INVALID_ARGUMENT,
			   "outfeed entry of %zu bytes does not fit in %zu", *got, cap);
	else
		set_status(st, 0, NULL);
	truth_feed("outfeed", api, core, *got, t0, err);
	sim_client_put(c);
}

static size_t literal_bytes(const XLA_Literal *lit)
{
	size_t i, n = 0;

	for (i = 0; lit && i < lit->count; i++)
		n += lit->sizes[i];
	return n;
}

SIM_EXPORT void TpuTransferManager_TransferLiteralToInfeed(
	XLA_TransferManager *manager, SE_StreamExecutor *executor,
	XLA_Literal *c_literal, TF_Status *status)
{
	uint64_t t0 = truth_now();
	size_t bytes = literal_bytes(c_literal), i, off = 0;
	char *flat;

	if (!c_literal) {
		set_status(status, PJRT_Error_Code_INVALID_ARGUMENT, "literal is NULL");
		return;
	}
	if (c_literal->count == 1) {
		infeed(__func__, executor, c_literal->buffers[0], bytes, status, t0);
		return;
	}
	/* A tuple goes to the device as one linearized transfer. */
	flat = malloc(bytes ? bytes : 1);
	if (!flat) {
		set_status(status, PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	for (i = 0; i < c_literal->count; i++) {
		memcpy(flat + off, c_literal->buffers[i], c_literal->sizes[i]);
		off += c_literal->sizes[i];
	}
	infeed(__func__, executor, flat, bytes, status, t0);
	free(flat);
}

SIM_EXPORT void TpuTransferManager_TransferLiteralFromOutfeed(
	XLA_TransferManager *manager, SE_StreamExecutor *executor,
	XLA_Shape *shape, XLA_Literal *c_literal, TF_Status *status)
{
	uint64_t t0 = truth_now();
	size_t cap = literal_bytes(c_literal), got, i, off = 0;
	char *flat;

	if (!c_literal) {
		set_status(status, PJRT_Error_Code_INVALID_ARGUMENT, "literal is NULL");
		return;
	}
	if (c_literal->count == 1) {
		outfeed(__func__, executor, c_literal->buffers[0], cap, &got, status, t0);
		return;
	}
	flat = malloc(cap ? cap : 1);
	if (!flat) {
		set_status(status, PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
		return;
	}
	outfeed(__func__, executor, flat, cap, &got, status, t0);
	for (i = 0; i < c_literal->count && off < got; i++) {
		size_t n = c_literal->sizes[i] < got - off ? c_literal->sizes[i] : got - off;

		memcpy(c_literal->buffers[i], flat + off, n);
		off += n;
	}
	free(flat);
}

SIM_EXPORT void TpuExecutor_EnqueueInfeed(SE_StreamExecutor *executor,
					  int32_t infeed_queue_index,
					  const uint8_t *data, int64_t size,
					  TF_Status *status)
{
	uint64_t t0 = truth_now();

	if (size < 0 || (!data && size)) {
		set_status(status, PJRT_Error_Code_INVALID_ARGUMENT, "bad infeed buffer");
		return;
	}
	infeed(__func__, executor, data, (size_t)size, status, t0);
}

SIM_EXPORT void TpuExecutor_DequeueOutfeed(SE_StreamExecutor *executor,
					   int32_t outfeed_queue_index,
					   uint8_t *data, int64_t size,
					   TF_Status *status)
{
	uint64_t t0 = truth_now();
	size_t got;

	if (size < 0 || (!data && size)) {
		set_status(status, PJRT_Error_Code_INVALID_ARGUMENT, "bad outfeed buffer");
		return;
	}
	outfeed(__func__, executor, data, (size_t)size, &got, status, t0);
}
