// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The plugin's buffers as device memory, at PJRT 0.94: sizes from shapes
 * (Client_BufferFromHostBuffer, Client_CreateUninitializedBuffer) and from
 * the program (execution outputs), answered by Buffer_OnDeviceSizeInBytes;
 * CreateUninitializedBuffer's checks (Args size, device, element type,
 * negative dims) and its contents reading as zeros; Buffer_Delete freeing
 * the memory and keeping the handle (IsDeleted, ToHostBuffer and Execute
 * refused), a second Delete a no-op, Buffer_Destroy after it; a core's
 * memory (32 GiB by default) refusing what does not fit with
 * RESOURCE_EXHAUSTED, and taking it once Delete gave memory back.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pjrt_abi.h"
#include "test.h"

static const PJRT_Api *api;

static PJRT_Error *call(int slot, void *args)
{
	return api->fns[slot](args);
}

static int code_of(PJRT_Error *err)
{
	PJRT_Error_GetCode_Args g = { .struct_size = sizeof(g), .error = err };
	PJRT_Error_Destroy_Args d = { .struct_size = sizeof(d), .error = err };

	if (!err)
		return 0;
	call(PJRT_SLOT_Error_GetCode, &g);
	call(PJRT_SLOT_Error_Destroy, &d);
	return g.code;
}

static size_t size_of(PJRT_Buffer *b)
{
	PJRT_Buffer_OnDeviceSizeInBytes_Args a = { .struct_size = sizeof(a), .buffer = b };

	return code_of(call(PJRT_SLOT_Buffer_OnDeviceSizeInBytes, &a)) ? 0 :
		a.on_device_size_in_bytes;
}

static bool is_deleted(PJRT_Buffer *b)
{
	PJRT_Buffer_IsDeleted_Args a = { .struct_size = sizeof(a), .buffer = b };

	ASSERT_EQ(code_of(call(PJRT_SLOT_Buffer_IsDeleted, &a)), 0, "IsDeleted");
	return a.is_deleted;
}

static void destroy(PJRT_Buffer *b)
{
	PJRT_Buffer_Destroy_Args a = { .struct_size = sizeof(a), .buffer = b };

	ASSERT_EQ(code_of(call(PJRT_SLOT_Buffer_Destroy, &a)), 0, "Buffer_Destroy");
}

static PJRT_Client *create_client(const char *dir)
{
	PJRT_NamedValue opts[] = {
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_device_dir", .name_size = 14,
		  .type = PJRT_NamedValue_kString, .string_value = dir, .value_size = strlen(dir) },
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_no_devtrace", .name_size = 15,
		  .type = PJRT_NamedValue_kBool, .bool_value = true, .value_size = 1 },
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_compile_ns", .name_size = 14,
		  .type = PJRT_NamedValue_kInt64, .int64_value = 0, .value_size = 1 },
	};
	PJRT_Client_Create_Args a = {
		.struct_size = PJRT_Client_Create_Args_SIZE_94, .create_options = opts,
		.num_options = 3,
	};

	if (!ASSERT_EQ(code_of(call(PJRT_SLOT_Client_Create, &a)), 0, "Client_Create"))
		return NULL;
	return a.client;
}

static PJRT_Buffer *uninit(PJRT_Client *c, PJRT_Device *dev, PJRT_Buffer_Type type,
			   const int64_t *dims, size_t n, int want)
{
	PJRT_Client_CreateUninitializedBuffer_Args a = {
		.struct_size = sizeof(a), .client = c, .shape_dims = dims, .shape_num_dims = n,
		.shape_element_type = type, .device = dev,
	};

	ASSERT_EQ(code_of(call(PJRT_SLOT_Client_CreateUninitializedBuffer, &a)), want,
		  "CreateUninitializedBuffer's result");
	return want ? NULL : a.buffer;
}

static void check_buffers(PJRT_Client *c)
{
	PJRT_Client_AddressableDevices_Args devs = { .struct_size = sizeof(devs), .client = c };
	PJRT_Client_CreateUninitializedBuffer_Args small = { .struct_size = 72, .client = c };
	static const int64_t f32_4x8[] = { 4, 8 }, negative[] = { 4, -1 };
	static const float host[32];
	unsigned char dst[128];
	PJRT_Buffer *b, *h;

	if (!ASSERT_EQ(code_of(call(PJRT_SLOT_Client_AddressableDevices, &devs)), 0, "devices"))
		return;
	ASSERT_EQ(code_of(call(PJRT_SLOT_Client_CreateUninitializedBuffer, &small)),
		  PJRT_Error_Code_INVALID_ARGUMENT, "Args of 72 bytes");
	uninit(c, devs.devices[0], PJRT_Buffer_Type_F32, negative, 2,
	       PJRT_Error_Code_INVALID_ARGUMENT);
	uninit(c, devs.devices[0], PJRT_Buffer_Type_INVALID, f32_4x8, 2,
	       PJRT_Error_Code_UNIMPLEMENTED);
	uninit(c, (PJRT_Device *)&devs, PJRT_Buffer_Type_F32, f32_4x8, 2,
	       PJRT_Error_Code_INVALID_ARGUMENT);

	b = uninit(c, devs.devices[1], PJRT_Buffer_Type_F32, f32_4x8, 2, 0);
	if (!ASSERT_OK_PTR(b, "uninitialised F32[4,8]"))
		return;
	ASSERT_EQ(size_of(b), 128, "F32[4,8] is 128 bytes");
	ASSERT_FALSE(is_deleted(b), "a new buffer is not deleted");
	{
		PJRT_Buffer_ToHostBuffer_Args d2h = {
			.struct_size = sizeof(d2h), .src = b, .dst = dst, .dst_size = sizeof(dst),
		};
		PJRT_Event_Await_Args aw = { .struct_size = sizeof(aw) };
		PJRT_Event_Destroy_Args ed = { .struct_size = sizeof(ed) };

		memset(dst, 0x5a, sizeof(dst));
		ASSERT_EQ(code_of(call(PJRT_SLOT_Buffer_ToHostBuffer, &d2h)), 0, "D2H");
		aw.event = ed.event = d2h.event;
		ASSERT_EQ(code_of(call(PJRT_SLOT_Event_Await, &aw)), 0, "Await");
		call(PJRT_SLOT_Event_Destroy, &ed);
		ASSERT_TRUE(dst[0] == 0 && !memcmp(dst, dst + 1, sizeof(dst) - 1),
			    "an uninitialised buffer reads as zeros");
	}

	/* Delete: the memory goes, the handle stays. */
	{
		PJRT_Buffer_Delete_Args del = { .struct_size = sizeof(del), .buffer = b };
		PJRT_Buffer_ToHostBuffer_Args d2h = {
			.struct_size = sizeof(d2h), .src = b, .dst = dst, .dst_size = sizeof(dst),
		};

		ASSERT_EQ(code_of(call(PJRT_SLOT_Buffer_Delete, &del)), 0, "Buffer_Delete");
		ASSERT_TRUE(is_deleted(b), "deleted");
		ASSERT_EQ(size_of(b), 128, "a deleted buffer keeps its size");
		ASSERT_EQ(code_of(call(PJRT_SLOT_Buffer_ToHostBuffer, &d2h)),
			  PJRT_Error_Code_INVALID_ARGUMENT, "D2H of a deleted buffer");
		ASSERT_EQ(code_of(call(PJRT_SLOT_Buffer_Delete, &del)), 0, "a second Delete");
		del.struct_size = 16;
		ASSERT_EQ(code_of(call(PJRT_SLOT_Buffer_Delete, &del)),
			  PJRT_Error_Code_INVALID_ARGUMENT, "Delete_Args of 16 bytes");
	}
	/* A deleted argument is refused by Execute; an H2D buffer is sized by
	 * its shape and frees with Destroy alone. */
	{
		PJRT_Client_BufferFromHostBuffer_Args a = {
			.struct_size = sizeof(a), .client = c, .data = host,
			.type = PJRT_Buffer_Type_F32, .dims = f32_4x8, .num_dims = 2,
			.device = devs.devices[0],
		};
		PJRT_Event_Destroy_Args ed = { .struct_size = sizeof(ed) };

		ASSERT_EQ(code_of(call(PJRT_SLOT_Client_BufferFromHostBuffer, &a)), 0, "H2D");
		h = a.buffer;
		ed.event = a.done_with_host_buffer;
		call(PJRT_SLOT_Event_Destroy, &ed);
		ASSERT_EQ(size_of(h), 128, "H2D F32[4,8]");
		ASSERT_FALSE(is_deleted(h), "an H2D buffer is not deleted");
		destroy(h);
	}
	destroy(b);
}

/* 20 GiB fits a 32 GiB core once: the second fails until the first is
 * deleted (not destroyed); another core is not affected. */
static void check_capacity(PJRT_Client *c)
{
	PJRT_Client_AddressableDevices_Args devs = { .struct_size = sizeof(devs), .client = c };
	static const int64_t gib20[] = { 20ll << 30 }, gib32[] = { (32ll << 30) + 1 };
	PJRT_Buffer_Delete_Args del = { .struct_size = sizeof(del) };
	PJRT_Buffer *a, *b, *other;

	if (!ASSERT_EQ(code_of(call(PJRT_SLOT_Client_AddressableDevices, &devs)), 0, "devices"))
		return;
	uninit(c, devs.devices[0], PJRT_Buffer_Type_U8, gib32, 1,
	       PJRT_Error_Code_RESOURCE_EXHAUSTED);
	a = uninit(c, devs.devices[0], PJRT_Buffer_Type_U8, gib20, 1, 0);
	uninit(c, devs.devices[0], PJRT_Buffer_Type_U8, gib20, 1,
	       PJRT_Error_Code_RESOURCE_EXHAUSTED);
	other = uninit(c, devs.devices[1], PJRT_Buffer_Type_U8, gib20, 1, 0);
	del.buffer = a;
	ASSERT_EQ(code_of(call(PJRT_SLOT_Buffer_Delete, &del)), 0, "Delete 20 GiB");
	b = uninit(c, devs.devices[0], PJRT_Buffer_Type_U8, gib20, 1, 0);
	ASSERT_OK_PTR(b, "20 GiB after the first was deleted");
	destroy(a);
	destroy(b);
	destroy(other);
}

/* An execution's outputs are the program's sim_output_bytes each. */
static void check_outputs(PJRT_Client *c)
{
	static const char code[] =
		"HloModule sized_step\n"
		"  %fusion.1 = f32[] fusion(), sim_ns=1000, sim_output_bytes=12345\n";
	PJRT_Program prog = { .struct_size = sizeof(prog), .code = (char *)code,
			      .code_size = sizeof(code) - 1, .format = "hlo", .format_size = 3 };
	PJRT_Client_Compile_Args cc = { .struct_size = sizeof(cc), .client = c,
					.program = &prog };
	PJRT_ExecuteOptions opts = { .struct_size = PJRT_ExecuteOptions_SIZE_94, .launch_id = 1 };
	PJRT_Buffer *outs[2] = { 0 };
	PJRT_Buffer **out_lists[2] = { &outs[0], &outs[1] };
	PJRT_LoadedExecutable_Execute_Args x = {
		.struct_size = sizeof(x), .options = &opts, .num_devices = 2,
		.output_lists = out_lists,
	};
	PJRT_LoadedExecutable_Destroy_Args ld = { .struct_size = sizeof(ld) };

	if (!ASSERT_EQ(code_of(call(PJRT_SLOT_Client_Compile, &cc)), 0, "Compile"))
		return;
	x.executable = ld.executable = cc.executable;
	if (ASSERT_EQ(code_of(call(PJRT_SLOT_LoadedExecutable_Execute, &x)), 0, "Execute")) {
		ASSERT_EQ(size_of(outs[0]), 12345, "output 0 of sim_output_bytes=12345");
		ASSERT_EQ(size_of(outs[1]), 12345, "output 1");
		destroy(outs[0]);
		destroy(outs[1]);
	}
	call(PJRT_SLOT_LoadedExecutable_Destroy, &ld);
}

int main(void)
{
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : "build";
	char path[4096], dir[] = "/tmp/plugin-buffers-XXXXXX", cmd[128];
	PJRT_Plugin_Initialize_Args init = { .struct_size = sizeof(init) };
	PJRT_Client_Destroy_Args cd = { .struct_size = sizeof(cd) };
	const PJRT_Api *(*get)(void);
	void *lib;

	snprintf(path, sizeof(path), "%s/sim/pjrt-0.94/libtpu.so", out);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "%s (set OUTPUT)\n", dlerror());
		return 1;
	}
	get = (const PJRT_Api *(*)(void))dlsym(lib, "GetPjrtApi");
	if (!ASSERT_OK_PTR(get, "GetPjrtApi") || !ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	api = get();
	ASSERT_EQ(code_of(call(PJRT_SLOT_Plugin_Initialize, &init)), 0, "Plugin_Initialize");
	cd.client = create_client(dir);
	if (cd.client) {
		check_buffers(cd.client);
		check_outputs(cd.client);
		check_capacity(cd.client);
		ASSERT_EQ(code_of(call(PJRT_SLOT_Client_Destroy, &cd)), 0, "Client_Destroy");
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return test_exit();
}
