// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Event names by what they do. Producers name the same work differently
 * (acceltrace writes the probed function's name, JAX's profiler its own
 * TraceMe names, tf.data its Iterator:: names); every such list is here.
 */
#include <string.h>

#include "report/report_internal.h"

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool in_list(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (starts(name, *list))
			return true;
	return false;
}

/* Host calls that hand a program to the device. */
bool name_is_launch(const char *name)
{
	static const char *const names[] = {
		"PJRT_LoadedExecutable_Execute", "PjRtLoadedExecutable::Execute",
		"PjRtStreamExecutorLoadedExecutable::Execute", "cuLaunchKernel",
		"cuGraphLaunch", "cudaLaunchKernel", "cudaGraphLaunch",
		"TpuExecutable::Execute", NULL,
	};

	return in_list(name, names);
}

/* Host work that moves input to the device (XProf's HOST_TO_DEVICE). */
bool name_is_h2d(const char *name)
{
	static const char *const names[] = {
		"PJRT_Client_BufferFromHostBuffer", "PjRtClient::BufferFromHostBuffer",
		"cuMemcpyHtoD", "cudaMemcpyHtoD", "MemcpyH2D", "H2D Dispatch",
		"TransferLiteralToInfeed", "TpuTransferManager_TransferLiteralToInfeed",
		"TpuExecutor_EnqueueInfeed", "InfeedEnqueue", "TransferToInfeed",
		"h2d", "infeed", NULL,
	};

	return in_list(name, names);
}

/* Reading input data: syscalls and tf.data's readers. */
bool name_is_file_read(const char *name)
{
	static const char *const exact[] = {
		"read", "pread64", "readv", "preadv", "preadv2", "file_read", NULL,
	};
	static const char *const prefix[] = {
		"Iterator::TFRecord", "Iterator::TextLine", "Iterator::FixedLengthRecord",
		"Iterator::ParallelInterleave", "Iterator::Interleave", NULL,
	};

	for (const char *const *e = exact; *e; e++)
		if (!strcmp(name, *e))
			return true;
	return in_list(name, prefix);
}

/* Preprocessing: tf.data's transformations. */
bool name_is_preprocess(const char *name)
{
	static const char *const prefix[] = {
		"Iterator::Map", "Iterator::ParallelMap", "Iterator::Batch",
		"Iterator::MapAndBatch", "Iterator::ParallelBatch", "Iterator::Shuffle",
		"Iterator::Filter", NULL,
	};

	return in_list(name, prefix);
}

/* HLO categories in which the device waits on the host (XProf's TPU input). */
bool category_is_input(const char *c)
{
	return c && (!strcmp(c, "infeed") || !strcmp(c, "outfeed") ||
		     !strcmp(c, "host send") || !strcmp(c, "host recv") ||
		     !strcmp(c, "send") || !strcmp(c, "recv"));
}

/* Device lines that summarise ops rather than being ops. */
bool line_is_device_summary(const char *n)
{
	return !strcmp(n, "Steps") || !strcmp(n, "XLA Modules") ||
	       !strcmp(n, "XLA TraceMe") || !strcmp(n, "Launch Stats") ||
	       !strcmp(n, "Framework Ops") || !strcmp(n, "Framework Name Scope") ||
	       !strcmp(n, "Source code") || !strcmp(n, "Sparse Core Steps");
}
