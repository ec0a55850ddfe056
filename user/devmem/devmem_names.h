/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The names device memory is written under: XProf's allocator names in
 * TF's "GPU_0_bfc" form ("<PLATFORM>_<ordinal>_<layer>": "TPU_0_pjrt_buffers",
 * "GPU_1_cuda_reserved"), and a PJRT buffer's element type and shape as
 * XProf's Memory Profile shows them ("f32", "[128,256]").
 */
#ifndef ACCELTRACE_DEVMEM_NAMES_H
#define ACCELTRACE_DEVMEM_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Longest allocator name, NUL included ("DEVICE_4294967295_cuda_reserved"). */
#define DEVMEM_ALLOCATOR_NAME_MAX 40
/* Longest shape string: AT_MEM_MAX_DIMS dims of 20 digits, commas, "[]". */
#define DEVMEM_SHAPE_MAX (8 * 21 + 2)

/* "GPU" or "TPU" as they are (any case); anything else, NULL included:
 * "DEVICE". */
const char *devmem_platform_name(const char *platform);
/*
 * "<PLATFORM>_<ordinal>_<layer>" into @buf (DEVMEM_ALLOCATOR_NAME_MAX
 * bytes suffice). Its length, or -EINVAL for an unknown layer, -ENOSPC
 * when @len is too small.
 */
int devmem_allocator_name(char *buf, size_t len, const char *platform, uint32_t ordinal,
			  uint32_t layer);
/*
 * "[d0,d1,...]" into @buf ("[]" for a scalar). Its length, or -EINVAL for
 * more than AT_MEM_MAX_DIMS dims, -ENOSPC when @len is too small
 * (DEVMEM_SHAPE_MAX suffices).
 */
int devmem_shape_string(char *buf, size_t len, const uint64_t *dims, uint32_t ndims);

#endif /* ACCELTRACE_DEVMEM_NAMES_H */
