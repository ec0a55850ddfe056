// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device buffers and host transfers: Client_BufferFromHostBuffer (H2D) and
 * Buffer_ToHostBuffer (D2H), each DMA-mapped with the driver around the
 * copy, plus Client_CreateUninitializedBuffer, Buffer_Delete (the memory
 * goes now, the handle stays), _IsDeleted, _Destroy, _ReadyEvent and
 * _OnDeviceSizeInBytes.
 *
 * Buffers an execution or CreateUninitializedBuffer makes have no host
 * memory behind them (they read as zeros): a trainer can hold gigabytes of
 * "device memory" in them. Each core has sim_device_memory bytes: a buffer
 * that does not fit fails RESOURCE_EXHAUSTED and changes nothing; its
 * bytes count from its creation until Buffer_Delete or its last reference.
 * The count is the process's (one client per process, and buffers may
 * outlive it).
 *
 * H2D copies during the call (every host buffer semantic is treated as
 * "immutable only during call"), so its events are ready on return. D2H of
 * a buffer an execution has not produced yet is queued on the buffer's ready
 * event and copied on the runtime thread when the execution completes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugin.h"
#include "simtruth.h"

static uint64_t mem_capacity = 32ull << 30;
static uint64_t mem_used[SIM_MAX_CORES];

void sim_buffer_set_capacity(uint64_t bytes)
{
	__atomic_store_n(&mem_capacity, bytes, __ATOMIC_RELAXED);
}

static bool mem_charge(int core, size_t bytes)
{
	uint64_t cap = __atomic_load_n(&mem_capacity, __ATOMIC_RELAXED);
	uint64_t used = __atomic_load_n(&mem_used[core], __ATOMIC_RELAXED);

	do {
		if (bytes > cap || used > cap - bytes)
			return false;
	} while (!__atomic_compare_exchange_n(&mem_used[core], &used, used + bytes, true,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

/* Gives the buffer's bytes back, once. */
static void mem_uncharge(PJRT_Buffer *b)
{
	if (__atomic_exchange_n(&b->charged, false, __ATOMIC_ACQ_REL))
		__atomic_sub_fetch(&mem_used[b->core], b->bytes, __ATOMIC_RELAXED);
}

PJRT_Error *sim_buffer_error(int core, size_t bytes)
{
	if (errno != ENOSPC)
		return sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
	return sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
			 "Out of memory allocating %zu bytes on TPU core %d: %llu of %llu "
			 "bytes in use", bytes, core,
			 (unsigned long long)__atomic_load_n(&mem_used[core], __ATOMIC_RELAXED),
			 (unsigned long long)__atomic_load_n(&mem_capacity, __ATOMIC_RELAXED));
}

PJRT_Buffer *sim_buffer_new(PJRT_Client *c, int core, size_t bytes, bool backed)
{
	PJRT_Buffer *b;

	if (!mem_charge(core, bytes)) {
		errno = ENOSPC;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		__atomic_sub_fetch(&mem_used[core], bytes, __ATOMIC_RELAXED);
		errno = ENOMEM;
		return NULL;
	}
	b->charged = true;
	b->client = c;
	b->core = core;
	b->refs = 1;
	b->bytes = bytes;
	b->type = PJRT_Buffer_Type_U8;
	b->data = backed ? calloc(1, bytes ? bytes : 1) : NULL;
	b->ready = sim_event_new();
	if ((backed && !b->data) || !b->ready) {
		sim_event_unref(b->ready);
		mem_uncharge(b);
		free(b->data);
		free(b);
		errno = ENOMEM;
		return NULL;
	}
	return b;
}

void sim_buffer_unref(PJRT_Buffer *b)
{
	if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL))
		return;
	mem_uncharge(b);
	sim_event_unref(b->ready);
	free(b->data);
	free(b);
}

static size_t element_size(PJRT_Buffer_Type t)
{
	switch (t) {
	case PJRT_Buffer_Type_PRED: case PJRT_Buffer_Type_S8: case PJRT_Buffer_Type_U8:
		return 1;
	case PJRT_Buffer_Type_S16: case PJRT_Buffer_Type_U16:
	case PJRT_Buffer_Type_F16: case PJRT_Buffer_Type_BF16:
		return 2;
	case PJRT_Buffer_Type_S32: case PJRT_Buffer_Type_U32: case PJRT_Buffer_Type_F32:
		return 4;
	case PJRT_Buffer_Type_S64: case PJRT_Buffer_Type_U64:
	case PJRT_Buffer_Type_F64: case PJRT_Buffer_Type_C64:
		return 8;
	case PJRT_Buffer_Type_C128:
		return 16;
	default:
		return 0;
	}
}

/* Bytes of a dense array of `type` and dims; 0 with *err set when bad. */
static size_t shape_bytes(PJRT_Buffer_Type type, const int64_t *dims, size_t num_dims,
			  PJRT_Error **err)
{
	size_t bytes = element_size(type), i;

	*err = NULL;
	if (!bytes) {
		*err = sim_error(PJRT_Error_Code_UNIMPLEMENTED,
				 "buffer type %d is not supported by the simulator", (int)type);
		return 0;
	}
	if (num_dims && !dims) {
		*err = sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "dims is NULL");
		return 0;
	}
	for (i = 0; i < num_dims; i++) {
		if (dims[i] < 0 || (dims[i] && bytes > SIZE_MAX / (size_t)dims[i])) {
			*err = sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
					 "dimension %zu (%lld) is negative or too large", i,
					 (long long)dims[i]);
			return 0;
		}
		bytes *= (size_t)dims[i];
	}
	return bytes;
}

static void truth_transfer(const char *type, size_t bytes, int core,
			   uint64_t t0, uint64_t t1, uint64_t t_done,
			   const PJRT_Buffer *b, int tid)
{
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, type);
	if (tid != truth_tid()) {
		/* Finished on another thread: record the caller's. */
		l.len = 0;
		tl_begin_dev(&l, type);
		tl_u64(&l, "tid", (uint64_t)tid);
	}
	tl_u64(&l, "bytes", bytes);
	tl_u64(&l, "core", (uint64_t)core);
	tl_u64(&l, "t_call", t0);
	tl_u64(&l, "t_return", t1);
	tl_u64(&l, "t_done", t_done);
	tl_u64(&l, "buffer", (uint64_t)(uintptr_t)b);
	truth_commit(&l);
}

PJRT_Error *sim_PJRT_Client_BufferFromHostBuffer(void *args)
{
	PJRT_Client_BufferFromHostBuffer_Args *a = args;
	uint64_t t0 = truth_now(), t_done, va;
	PJRT_Event *done;
	PJRT_Error *err;
	PJRT_Buffer *b;
	size_t bytes;
	int core = 0;

	SIM_CHECK_ARGS(a, PJRT_Client_BufferFromHostBuffer_Args, buffer);
	if (!a->client || (!a->data && a->num_dims))
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
				 "client and data are required");
	if (a->device) {
		core = sim_device_core(a->client, a->device);
		if (core < 0)
			return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
					 "device is not a device of this client");
	}
	bytes = shape_bytes(a->type, a->dims, a->num_dims, &err);
	if (err)
		return err;
	b = sim_buffer_new(a->client, core, bytes, true);
	if (!b)
		return sim_buffer_error(core, bytes);
	done = sim_event_new();
	if (!done) {
		sim_buffer_unref(b);
		return sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
	}
	b->type = a->type;
	va = devnode__map(a->client->node, a->data, bytes);
	if (bytes)
		memcpy(b->data, a->data, bytes);
	devnode__unmap(a->client->node, a->data, bytes, va);
	t_done = truth_now();
	sim_event_set_ready(b->ready, NULL);
	sim_event_set_ready(done, NULL);
	a->done_with_host_buffer = done;
	a->buffer = b;
	truth_transfer("h2d", bytes, core, t0, truth_now(), t_done, b, truth_tid());
	return NULL;
}

/* A D2H copy in flight: finished by whichever of the call and the copy
 * ends last, so its record has both times. */
struct d2h {
	PJRT_Buffer *b;
	void *dst;
	PJRT_Event *ev;
	uint64_t t_call, t_return, t_done;
	int tid;
	int refs;
};

static void d2h_put(struct d2h *op)
{
	if (__atomic_sub_fetch(&op->refs, 1, __ATOMIC_ACQ_REL))
		return;
	truth_transfer("d2h", op->b->bytes, op->b->core, op->t_call, op->t_return,
		       op->t_done, op->b, op->tid);
	sim_buffer_unref(op->b);
	free(op);
}

static void d2h_copy(PJRT_Error *err, void *arg)
{
	struct d2h *op = arg;
	PJRT_Buffer *b = op->b;
	PJRT_Event *ev = op->ev;
	uint64_t va;

	if (!err) {
		va = devnode__map(b->client->node, op->dst, b->bytes);
		if (b->data)
			memcpy(op->dst, b->data, b->bytes);
		else
			memset(op->dst, 0, b->bytes);
		devnode__unmap(b->client->node, op->dst, b->bytes, va);
	}
	op->t_done = truth_now();
	d2h_put(op);
	sim_event_set_ready(ev, err);
	sim_event_unref(ev);
}

PJRT_Error *sim_PJRT_Buffer_ToHostBuffer(void *args)
{
	PJRT_Buffer_ToHostBuffer_Args *a = args;
	uint64_t t0 = truth_now();
	struct d2h *op;
	PJRT_Buffer *b;

	SIM_CHECK_ARGS(a, PJRT_Buffer_ToHostBuffer_Args, event);
	b = a->src;
	if (!b)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "src is NULL");
	if (b->deleted)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
				 "the buffer has been deleted");
	if (!a->dst) {
		a->dst_size = b->bytes;		/* a size query */
		return NULL;
	}
	if (a->dst_size < b->bytes)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
				 "dst_size %zu is smaller than the buffer (%zu bytes)",
				 a->dst_size, b->bytes);
	op = calloc(1, sizeof(*op));
	if (!op)
		return sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
	op->ev = sim_event_new();
	if (!op->ev) {
		free(op);
		return sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
	}
	__atomic_add_fetch(&b->refs, 1, __ATOMIC_ACQ_REL);
	op->b = b;
	op->dst = a->dst;
	op->t_call = t0;
	op->tid = truth_tid();
	op->refs = 2;
	a->event = sim_event_ref(op->ev);	/* the caller's; op keeps one */
	sim_event_on_ready(b->ready, d2h_copy, op);
	op->t_return = truth_now();
	d2h_put(op);
	return NULL;
}

PJRT_Error *sim_PJRT_Buffer_Destroy(void *args)
{
	PJRT_Buffer_Destroy_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Buffer_Destroy_Args, buffer);
	sim_buffer_unref(a->buffer);
	return NULL;
}

/* A buffer of a shape, on a device, with no contents yet (ready at once:
 * the simulated device has nothing to wait for). */
PJRT_Error *sim_PJRT_Client_CreateUninitializedBuffer(void *args)
{
	PJRT_Client_CreateUninitializedBuffer_Args *a = args;
	PJRT_Error *err;
	PJRT_Buffer *b;
	size_t bytes;
	int core = 0;

	SIM_CHECK_ARGS(a, PJRT_Client_CreateUninitializedBuffer_Args, buffer);
	if (!a->client)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "client is NULL");
	if (a->device) {
		core = sim_device_core(a->client, a->device);
		if (core < 0)
			return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
					 "device is not a device of this client");
	}
	bytes = shape_bytes(a->shape_element_type, a->shape_dims, a->shape_num_dims, &err);
	if (err)
		return err;
	b = sim_buffer_new(a->client, core, bytes, false);
	if (!b)
		return sim_buffer_error(core, bytes);
	b->type = a->shape_element_type;
	sim_event_set_ready(b->ready, NULL);
	a->buffer = b;
	return NULL;
}

/* The device memory goes now (the contents too, once no copy holds them);
 * the handle stays valid, deleted, until Buffer_Destroy. */
PJRT_Error *sim_PJRT_Buffer_Delete(void *args)
{
	PJRT_Buffer_Delete_Args *a = args;
	PJRT_Buffer *b;

	SIM_CHECK_ARGS(a, PJRT_Buffer_Delete_Args, buffer);
	b = a->buffer;
	if (!b)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "buffer is NULL");
	if (b->deleted)
		return NULL;
	b->deleted = true;
	mem_uncharge(b);
	if (__atomic_load_n(&b->refs, __ATOMIC_ACQUIRE) == 1) {
		free(b->data);
		b->data = NULL;
	}
	return NULL;
}

PJRT_Error *sim_PJRT_Buffer_IsDeleted(void *args)
{
	PJRT_Buffer_IsDeleted_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Buffer_IsDeleted_Args, is_deleted);
	if (!a->buffer)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "buffer is NULL");
	a->is_deleted = a->buffer->deleted;
	return NULL;
}

PJRT_Error *sim_PJRT_Buffer_ReadyEvent(void *args)
{
	PJRT_Buffer_ReadyEvent_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Buffer_ReadyEvent_Args, event);
	if (!a->buffer)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "buffer is NULL");
	a->event = sim_event_ref(a->buffer->ready);
	return NULL;
}

PJRT_Error *sim_PJRT_Buffer_OnDeviceSizeInBytes(void *args)
{
	PJRT_Buffer_OnDeviceSizeInBytes_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Buffer_OnDeviceSizeInBytes_Args, on_device_size_in_bytes);
	if (!a->buffer)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "buffer is NULL");
	a->on_device_size_in_bytes = a->buffer->bytes;
	return NULL;
}
