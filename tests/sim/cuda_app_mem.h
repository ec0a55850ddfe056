/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cuda-app's device memory (docs/simulator-cuda.md, "Device memory of
 * the CUDA pair"): each step's tensors allocated at its start and freed at its
 * end, through one of four allocators as frameworks have them, with the
 * ground truth of every allocation and free the driver or runtime saw
 * (mem_alloc, mem_free) and of the tensors no probe sees (mem_tensor).
 */
#ifndef ACCELTRACE_SIM_CUDA_APP_MEM_H
#define ACCELTRACE_SIM_CUDA_APP_MEM_H

#include <stdbool.h>
#include <stdint.h>

enum alloc_mode {
	ALLOC_NONE,		/* no memory calls (the default) */
	ALLOC_DIRECT,		/* cudaMalloc/cudaFree per tensor */
	ALLOC_CACHING,		/* PyTorch-like blocks of 2 MiB / 20 MiB */
	ALLOC_VMM,		/* expandable segments: cuMemCreate + cuMemMap */
	ALLOC_POOL,		/* cudaMallocAsync/cudaFreeAsync */
};

struct app_mem_config {
	enum alloc_mode mode;
	bool driver;			/* driver API (--mode driver) */
	unsigned int allocs_per_step;
	uint64_t leak_bytes;		/* kept each step on device 0 */
	int devices;
	int64_t oom_step;		/* -1: none */
	uint64_t device_memory;		/* the driver's per-device size */
};

/* Parses an --alloc-mode value; -1 for an unknown one. */
int app_mem__parse_mode(const char *s);
/* 0 or -errno. */
int app_mem__init(const struct app_mem_config *c);
/* The step's tensors, on every device (and the leak on device 0). */
int app_mem__step_begin(uint64_t step);
int app_mem__step_end(uint64_t step);
/* empty_cache: what the caching and vmm allocators still reserve and hold
 * no tensor is given back (outside steps). */
int app_mem__finish(void);

#endif /* ACCELTRACE_SIM_CUDA_APP_MEM_H */
