/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The TPU C API infeed/outfeed entry points that libtpu exports for
 * TensorFlow's StreamExecutor path (reference section 2.1 and 9), with their
 * real names and argument shapes. The simulated plugin exports exactly these
 * four besides GetPjrtApi.
 *
 * The opaque handles are the simulator's own: SE_StreamExecutor* is a
 * PJRT_Device* of the client (NULL means core 0), XLA_TransferManager* is
 * ignored, and TF_Status is the small struct below, because the real
 * TpuStatus_New/TF_NewStatus are not exported by the simulator.
 */
#ifndef ACCELTRACE_SIM_TPU_CAPI_H
#define ACCELTRACE_SIM_TPU_CAPI_H

#include <stddef.h>
#include <stdint.h>

typedef struct SE_StreamExecutor SE_StreamExecutor;
typedef struct XLA_TransferManager XLA_TransferManager;
typedef struct XLA_Shape XLA_Shape;

/* The leading fields of the real XLA_Literal (c_api_decl.h); XLA_Shape
 * follows in the real struct and the simulator never reads it. */
typedef struct XLA_Literal {
	char **buffers;
	size_t *sizes;		/* payload bytes = sum of sizes[0..count) */
	size_t count;
} XLA_Literal;

/* TF_Status as the simulator fills it: code 0 is OK, else a PJRT code. */
typedef struct TF_Status {
	int32_t code;
	char message[124];
} TF_Status;

typedef void (*TpuTransferManager_TransferLiteralToInfeed_Fn)(
	XLA_TransferManager *manager, SE_StreamExecutor *executor,
	XLA_Literal *c_literal, TF_Status *status);
typedef void (*TpuTransferManager_TransferLiteralFromOutfeed_Fn)(
	XLA_TransferManager *manager, SE_StreamExecutor *executor,
	XLA_Shape *shape, XLA_Literal *c_literal, TF_Status *status);
typedef void (*TpuExecutor_EnqueueInfeed_Fn)(
	SE_StreamExecutor *executor, int32_t infeed_queue_index,
	const uint8_t *data, int64_t size, TF_Status *status);
typedef void (*TpuExecutor_DequeueOutfeed_Fn)(
	SE_StreamExecutor *executor, int32_t outfeed_queue_index,
	uint8_t *data, int64_t size, TF_Status *status);

#endif /* ACCELTRACE_SIM_TPU_CAPI_H */
