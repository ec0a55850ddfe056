// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devmem/devmem_names.h: allocator names in XProf's form for each layer and
 * platform (unknown ones: "DEVICE", or refused), shape strings, and buffers
 * too small refused, never overrun. (PJRT element type names:
 * tests/discover/test_probe_packs.c.)
 */
#include <string.h>

#include "test.h"
#include "capture/capture_memory.h"
#include "devmem/devmem_names.h"
#include <linux/types.h>

#include "acceltrace/events.h"

static void test_allocator_names(void)
{
	char buf[DEVMEM_ALLOCATOR_NAME_MAX];

	ASSERT_EQ(devmem_allocator_name(buf, sizeof(buf), "TPU", 0, MEM_LAYER_PJRT), 18, "len");
	ASSERT_STREQ(buf, "TPU_0_pjrt_buffers", "TPU PJRT");
	devmem_allocator_name(buf, sizeof(buf), "gpu", 1, MEM_LAYER_CUDA);
	ASSERT_STREQ(buf, "GPU_1_cuda_reserved", "GPU CUDA, platform in any case");
	devmem_allocator_name(buf, sizeof(buf), NULL, 2, MEM_LAYER_CUDA);
	ASSERT_STREQ(buf, "GPU_2_cuda_reserved", "no platform: CUDA's memory is a GPU's");
	devmem_allocator_name(buf, sizeof(buf), NULL, 2, MEM_LAYER_PJRT);
	ASSERT_STREQ(buf, "TPU_2_pjrt_buffers", "no platform: PJRT's, as the writer's planes say");
	devmem_allocator_name(buf, sizeof(buf), "TPU", CAPTURE_MEM_DEVICE_UNKNOWN, MEM_LAYER_PJRT);
	ASSERT_STREQ(buf, "TPU_unknown_pjrt_buffers", "a device no call named");
	devmem_allocator_name(buf, sizeof(buf), "NPU", 3, MEM_LAYER_PJRT);
	ASSERT_STREQ(buf, "DEVICE_3_pjrt_buffers", "another platform");
	ASSERT_EQ(devmem_allocator_name(buf, sizeof(buf), "GPU", 0, 0), -EINVAL, "layer 0");
	ASSERT_EQ(devmem_allocator_name(buf, sizeof(buf), "GPU", 0, 3), -EINVAL, "layer 3");
	ASSERT_TRUE(devmem_allocator_name(buf, sizeof(buf), "XPU", UINT32_MAX - 1,
					  MEM_LAYER_CUDA) > 0,
		    "the longest fits DEVMEM_ALLOCATOR_NAME_MAX");
	ASSERT_STREQ(buf, "DEVICE_4294967294_cuda_reserved", "longest");
	ASSERT_EQ(devmem_allocator_name(buf, 10, "GPU", 0, MEM_LAYER_CUDA), -ENOSPC, "too small");
}

static void test_shapes(void)
{
	uint64_t dims[AT_MEM_MAX_DIMS + 1] = { 128, 256 };
	char buf[DEVMEM_SHAPE_MAX];

	ASSERT_EQ(devmem_shape_string(buf, sizeof(buf), dims, 2), 9, "len");
	ASSERT_STREQ(buf, "[128,256]", "2-d");
	devmem_shape_string(buf, sizeof(buf), dims, 0);
	ASSERT_STREQ(buf, "[]", "scalar");
	for (int i = 0; i < AT_MEM_MAX_DIMS; i++)
		dims[i] = UINT64_MAX;
	ASSERT_TRUE(devmem_shape_string(buf, sizeof(buf), dims, AT_MEM_MAX_DIMS) > 0,
		    "the longest fits DEVMEM_SHAPE_MAX");
	ASSERT_EQ(strlen(buf), 8 * 20 + 7 + 2, "8 dims of 20 digits");
	ASSERT_EQ(devmem_shape_string(buf, sizeof(buf), dims, AT_MEM_MAX_DIMS + 1), -EINVAL,
		  "too many dims");
	ASSERT_EQ(devmem_shape_string(buf, 6, dims, 2), -ENOSPC, "too small");
	dims[0] = 1;
	ASSERT_EQ(devmem_shape_string(buf, 3, dims, 1), -ENOSPC, "no room for ]");
}

int main(void)
{
	test_allocator_names();
	test_shapes();
	return test_exit();
}
