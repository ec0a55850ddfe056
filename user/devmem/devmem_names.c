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
	const char *l = capture__mem_layer_name(layer);
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
