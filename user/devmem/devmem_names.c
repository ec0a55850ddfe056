// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocator, element type and shape names for device memory (see
 * devmem_names.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <strings.h>
#include <linux/types.h>

#include "acceltrace/events.h"
#include "capture/capture_memory.h"
#include "devmem/devmem_names.h"

const char *devmem_layer_name(uint32_t layer)
{
	switch (layer) {
	case MEM_LAYER_PJRT:
		return "pjrt_buffers";
	case MEM_LAYER_CUDA:
		return "cuda_reserved";
	default:
		return NULL;
	}
}

const char *devmem_platform_name(const char *platform)
{
	if (platform && !strcasecmp(platform, "GPU"))
		return "GPU";
	if (platform && !strcasecmp(platform, "TPU"))
		return "TPU";
	return "DEVICE";
}

int devmem_allocator_name(char *buf, size_t len, const char *platform, uint32_t ordinal,
			  uint32_t layer)
{
	const char *l = devmem_layer_name(layer);
	int n;

	if (!l)
		return -EINVAL;
	/* No runtime said: as the XSpace writer names the process's device
	 * planes, GPU for CUDA's memory, else TPU. */
	if (!platform)
		platform = layer == MEM_LAYER_CUDA ? "GPU" : "TPU";
	if (ordinal == CAPTURE_MEM_DEVICE_UNKNOWN)
		n = snprintf(buf, len, "%s_unknown_%s", devmem_platform_name(platform), l);
	else
		n = snprintf(buf, len, "%s_%" PRIu32 "_%s", devmem_platform_name(platform),
			     ordinal, l);
	return n < 0 || (size_t)n >= len ? -ENOSPC : n;
}

const char *devmem_pjrt_type_name(uint64_t type)
{
	/* PJRT_Buffer_Type order, from pjrt_c_api.h (as pjrt_buffer_type_size
	 * in discover/probe_packs.c); XLA's primitive type names. */
	static const char *const names[] = {
		NULL,		/* INVALID */
		"pred", "s8", "s16", "s32", "s64",
		"u8", "u16", "u32", "u64",
		"f16", "f32", "f64", "bf16",
		"c64", "c128",
		"f8e5m2", "f8e4m3fn", "f8e4m3b11fnuz", "f8e5m2fnuz", "f8e4m3fnuz",
		"s4", "u4", "token",
		"s2", "u2",
		"f8e4m3", "f8e3m4", "f8e8m0fnu",
		"f4e2m1fn", "s1", "u1",
	};

	return type < sizeof(names) / sizeof(names[0]) ? names[type] : NULL;
}

int devmem_shape_string(char *buf, size_t len, const uint64_t *dims, uint32_t ndims)
{
	size_t at = 0;
	int n;

	if (ndims > AT_MEM_MAX_DIMS)
		return -EINVAL;
	if (len < 3)
		return -ENOSPC;
	buf[at++] = '[';
	for (uint32_t i = 0; i < ndims; i++) {
		n = snprintf(buf + at, len - at, i ? ",%" PRIu64 : "%" PRIu64, dims[i]);
		if (n < 0 || (size_t)n >= len - at)
			return -ENOSPC;
		at += n;
	}
	if (at + 2 > len)
		return -ENOSPC;
	buf[at++] = ']';
	buf[at] = '\0';
	return (int)at;
}
