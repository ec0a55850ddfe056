// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The plugin's PJRT table matches the documented layout at both minors the
 * simulator builds: header, slot count, every slot at its index (each
 * unimplemented slot names itself in its UNIMPLEMENTED error, checked
 * against the reference table typed out below, not against the plugin's own
 * slot list), CET prologues where the tracer puts uprobes, the table in
 * writable data where a scan of the plugin's mappings finds it, Args size
 * checks, and the implemented calls behaving as PJRT says.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "test.h"
#include "pjrt_abi.h"
#include "tpu_capi.h"

/* Slot names at minor 94 and 26, from reference/pjrt-and-probe-points.md
 * section 1.4 ("AsyncH2DTM_" abbreviates AsyncHostToDeviceTransferManager_). */
static const char *const slots94[129] = {
	"Error_Destroy", "Error_Message", "Error_GetCode", "Plugin_Initialize",
	"Plugin_Attributes", "Event_Destroy", "Event_IsReady", "Event_Error",
	"Event_Await", "Event_OnReady", "Client_Create", "Client_Destroy",
	"Client_PlatformName", "Client_ProcessIndex", "Client_PlatformVersion",
	"Client_Devices", "Client_AddressableDevices", "Client_LookupDevice",
	"Client_LookupAddressableDevice", "Client_AddressableMemories",
	"Client_Compile", "Client_DefaultDeviceAssignment",
	"Client_BufferFromHostBuffer", "DeviceDescription_Id",
	"DeviceDescription_ProcessIndex", "DeviceDescription_Attributes",
	"DeviceDescription_Kind", "DeviceDescription_DebugString",
	"DeviceDescription_ToString", "Device_GetDescription", "Device_IsAddressable",
	"Device_LocalHardwareId", "Device_AddressableMemories",
	"Device_DefaultMemory", "Device_MemoryStats", "Memory_Id", "Memory_Kind",
	"Memory_DebugString", "Memory_ToString", "Memory_AddressableByDevices",
	"Executable_Destroy", "Executable_Name", "Executable_NumReplicas",
	"Executable_NumPartitions", "Executable_NumOutputs",
	"Executable_SizeOfGeneratedCodeInBytes", "Executable_GetCostAnalysis",
	"Executable_OutputMemoryKinds", "Executable_OptimizedProgram",
	"Executable_Serialize", "LoadedExecutable_Destroy",
	"LoadedExecutable_GetExecutable", "LoadedExecutable_AddressableDevices",
	"LoadedExecutable_Delete", "LoadedExecutable_IsDeleted",
	"LoadedExecutable_Execute", "Executable_DeserializeAndLoad",
	"LoadedExecutable_Fingerprint", "Buffer_Destroy", "Buffer_ElementType",
	"Buffer_Dimensions", "Buffer_UnpaddedDimensions",
	"Buffer_DynamicDimensionIndices", "Buffer_GetMemoryLayout",
	"Buffer_OnDeviceSizeInBytes", "Buffer_Device", "Buffer_Memory",
	"Buffer_Delete", "Buffer_IsDeleted", "Buffer_CopyToDevice",
	"Buffer_ToHostBuffer", "Buffer_IsOnCpu", "Buffer_ReadyEvent",
	"Buffer_UnsafePointer", "Buffer_IncreaseExternalReferenceCount",
	"Buffer_DecreaseExternalReferenceCount",
	"Buffer_OpaqueDeviceMemoryDataPointer", "CopyToDeviceStream_Destroy",
	"CopyToDeviceStream_AddChunk", "CopyToDeviceStream_TotalBytes",
	"CopyToDeviceStream_GranuleSize", "CopyToDeviceStream_CurrentBytes",
	"TopologyDescription_Create", "TopologyDescription_Destroy",
	"TopologyDescription_PlatformName", "TopologyDescription_PlatformVersion",
	"TopologyDescription_GetDeviceDescriptions", "TopologyDescription_Serialize",
	"TopologyDescription_Attributes", "Compile", "Executable_OutputElementTypes",
	"Executable_OutputDimensions", "Buffer_CopyToMemory",
	"Client_CreateViewOfDeviceBuffer", "Executable_Fingerprint",
	"Client_TopologyDescription", "Executable_GetCompiledMemoryStats",
	"Memory_Kind_Id", "ExecuteContext_Create", "ExecuteContext_Destroy",
	"Buffer_CopyRawToHost", "AsyncH2DTM_Destroy", "AsyncH2DTM_TransferData",
	"Client_CreateBuffersForAsyncHostToDevice", "AsyncH2DTM_RetrieveBuffer",
	"AsyncH2DTM_Device", "AsyncH2DTM_BufferCount", "AsyncH2DTM_BufferSize",
	"AsyncH2DTM_SetBufferError", "AsyncH2DTM_AddMetadata", "Client_DmaMap",
	"Client_DmaUnmap", "Client_CreateUninitializedBuffer",
	"Client_UpdateGlobalProcessInfo", "TopologyDescription_Deserialize",
	"Client_CreateAliasBuffer", "Client_FulfillAliasBuffer",
	"LoadedExecutable_GetDeviceAssignment", "Client_CreateErrorBuffer",
	"AsyncH2DTM_TransferLiteral", "Buffer_CopyRawToHostFuture",
	"Device_PoisonExecution", "Device_CreateAsyncTrackingEvent",
	"AsyncTrackingEvent_Destroy", "Executable_GetCompileOptions",
	"Buffer_DonateWithControlDependency", "Event_Create", "Event_Set",
	"Device_GetAttributes",
};
static const char *const slots26[88] = {
	"Error_Destroy", "Error_Message", "Error_GetCode", "Plugin_Initialize",
	"Plugin_Attributes", "Event_Destroy", "Event_IsReady", "Event_Error",
	"Event_Await", "Event_OnReady", "Client_Create", "Client_Destroy",
	"Client_PlatformName", "Client_ProcessIndex", "Client_PlatformVersion",
	"Client_Devices", "Client_AddressableDevices", "Client_LookupDevice",
	"Client_LookupAddressableDevice", "Client_AddressableMemories",
	"Client_Compile", "Client_DefaultDeviceAssignment",
	"Client_BufferFromHostBuffer", "DeviceDescription_Id",
	"DeviceDescription_ProcessIndex", "DeviceDescription_Attributes",
	"DeviceDescription_Kind", "DeviceDescription_DebugString",
	"DeviceDescription_ToString", "Device_GetDescription", "Device_IsAddressable",
	"Device_LocalHardwareId", "Device_AddressableMemories",
	"Device_DefaultMemory", "Device_MemoryStats", "Memory_Id", "Memory_Kind",
	"Memory_DebugString", "Memory_ToString", "Memory_AddressableByDevices",
	"Executable_Destroy", "Executable_Name", "Executable_NumReplicas",
	"Executable_NumPartitions", "Executable_NumOutputs",
	"Executable_SizeOfGeneratedCodeInBytes", "Executable_GetCostAnalysis",
	"Executable_OutputMemoryKinds", "Executable_OptimizedProgram",
	"Executable_Serialize", "LoadedExecutable_Destroy",
	"LoadedExecutable_GetExecutable", "LoadedExecutable_AddressableDevices",
	"LoadedExecutable_Delete", "LoadedExecutable_IsDeleted",
	"LoadedExecutable_Execute", "Executable_DeserializeAndLoad", "Buffer_Destroy",
	"Buffer_ElementType", "Buffer_Dimensions", "Buffer_UnpaddedDimensions",
	"Buffer_DynamicDimensionIndices", "Buffer_GetMemoryLayout",
	"Buffer_OnDeviceSizeInBytes", "Buffer_Device", "Buffer_Memory",
	"Buffer_Delete", "Buffer_IsDeleted", "Buffer_CopyToDevice",
	"Buffer_ToHostBuffer", "Buffer_IsOnCpu", "Buffer_ReadyEvent",
	"Buffer_UnsafePointer", "Buffer_IncreaseExternalReferenceCount",
	"Buffer_DecreaseExternalReferenceCount",
	"Buffer_OpaqueDeviceMemoryDataPointer", "CopyToDeviceStream_Destroy",
	"CopyToDeviceStream_AddChunk", "CopyToDeviceStream_TotalBytes",
	"CopyToDeviceStream_GranuleSize", "CopyToDeviceStream_CurrentBytes",
	"TopologyDescription_Create", "TopologyDescription_Destroy",
	"TopologyDescription_PlatformName", "TopologyDescription_PlatformVersion",
	"TopologyDescription_GetDeviceDescriptions", "TopologyDescription_Serialize",
	"Compile",
};

static const char *const implemented[] = {
	"Error_Destroy", "Error_Message", "Error_GetCode", "Plugin_Initialize",
	"Event_Destroy", "Event_IsReady", "Event_Error", "Event_Await",
	"Event_OnReady", "Client_Create", "Client_Destroy", "Client_PlatformName",
	"Client_Devices", "Client_AddressableDevices", "Client_Compile",
	"Client_BufferFromHostBuffer", "LoadedExecutable_Destroy",
	"LoadedExecutable_Execute", "Buffer_Destroy", "Buffer_OnDeviceSizeInBytes",
	"Buffer_ToHostBuffer", "Buffer_ReadyEvent", "Buffer_Delete", "Buffer_IsDeleted",
	"Client_CreateUninitializedBuffer",
};

struct plugin {
	int minor;
	const char *const *names;
	int nslots;
	char path[4096];
	const PJRT_Api *api;
};

static void full_name(const char *abbrev, char *out, size_t len)
{
	if (!strncmp(abbrev, "AsyncH2DTM_", 11))
		snprintf(out, len, "AsyncHostToDeviceTransferManager_%s", abbrev + 11);
	else
		snprintf(out, len, "%s", abbrev);
}

/* The index of `name` in the documented layout; the test calls by it. */
static int slot(const struct plugin *p, const char *name)
{
	char full[128];
	int i;

	for (i = 0; i < p->nslots; i++) {
		full_name(p->names[i], full, sizeof(full));
		if (!strcmp(full, name))
			return i;
	}
	fprintf(stderr, "no slot %s at minor %d\n", name, p->minor);
	exit(1);
}

static PJRT_Error *call(const struct plugin *p, const char *name, void *args)
{
	return p->api->fns[slot(p, name)](args);
}

static int code_of(const struct plugin *p, PJRT_Error *err)
{
	PJRT_Error_GetCode_Args a = { .struct_size = sizeof(a), .error = err };

	if (!err)
		return 0;
	call(p, "Error_GetCode", &a);
	return a.code;
}

static const char *message_of(const struct plugin *p, PJRT_Error *err, char *buf, size_t len)
{
	PJRT_Error_Message_Args a = { .struct_size = sizeof(a), .error = err };

	call(p, "Error_Message", &a);
	snprintf(buf, len, "%.*s", (int)a.message_size, a.message);
	return buf;
}

static void error_free(const struct plugin *p, PJRT_Error *err)
{
	PJRT_Error_Destroy_Args a = { .struct_size = sizeof(a), .error = err };

	call(p, "Error_Destroy", &a);
}

/* Checks and frees: the call failed with `code`. */
static bool expect_code(const struct plugin *p, PJRT_Error *err, int code, const char *what)
{
	char msg[512] = "";
	bool ok;

	if (err)
		message_of(p, err, msg, sizeof(msg));
	ok = ASSERT_EQ(code_of(p, err), code, what);
	if (!ok)
		fprintf(stderr, "  message: %s\n", msg);
	if (err)
		error_free(p, err);
	return ok;
}

/* ---------------------------------------------------------------- mappings */

struct mapping {
	unsigned long lo, hi;
	char perms[5];
	char path[4096];
};

static int read_maps(struct mapping *m, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[8192];
	int n = 0;

	while (f && n < max && fgets(line, sizeof(line), f)) {
		m[n].path[0] = 0;
		if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %4095s", &m[n].lo, &m[n].hi,
			   m[n].perms, m[n].path) >= 3)
			n++;
	}
	if (f)
		fclose(f);
	return n;
}

static bool in_text(const struct mapping *m, int n, const char *path, const void *addr)
{
	unsigned long a = (unsigned long)addr;
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(m[i].path, path) && m[i].perms[2] == 'x' &&
		    a >= m[i].lo && a < m[i].hi)
			return true;
	return false;
}

/*
 * What a tracer attaching to a running process does (reference 1.4 and
 * 12 #1): scan the plugin's writable mappings, and the anonymous one right
 * after them (.bss past the file), for a PJRT_Api header whose pointers all
 * land in the plugin's text. Returns the number found; *found gets the last.
 */
static int scan_for_table(const struct mapping *m, int n, const char *path,
			  const void **found)
{
	int i, hits = 0;

	for (i = 0; i < n; i++) {
		bool mine = !strcmp(m[i].path, path);
		bool bss = !m[i].path[0] && i > 0 && !strcmp(m[i - 1].path, path) &&
			   m[i - 1].hi == m[i].lo;
		unsigned long a;

		if (m[i].perms[0] != 'r' || m[i].perms[1] != 'w' || !(mine || bss))
			continue;
		for (a = m[i].lo; a + 48 <= m[i].hi; a += 8) {
			const PJRT_Api *api = (const void *)a;
			const PJRT_Api_Version *v = &api->hdr.pjrt_api_version;
			size_t k, nfn;

			if (v->struct_size != 24 || v->major_version != 0 ||
			    v->minor_version < 1 || v->minor_version > 1000)
				continue;
			if (api->hdr.struct_size < 48 || (api->hdr.struct_size - 40) % 8 ||
			    a + api->hdr.struct_size > m[i].hi)
				continue;
			nfn = (api->hdr.struct_size - 40) / 8;
			for (k = 0; k < nfn; k++)
				if (!in_text(m, n, path, (const void *)api->fns[k]))
					break;
			if (k < nfn)
				continue;
			hits++;
			*found = api;
		}
	}
	return hits;
}

/* endbr64; push %rbp: where the tracer's uprobes go. */
static bool cet_prologue(const void *fn)
{
	static const unsigned char want[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0x55 };

	return !memcmp(fn, want, sizeof(want));
}

/* ---------------------------------------------------------------- events */

struct cb_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int calls;
	int tid;
	int err_code;
	void *arg_seen;
};

static struct cb_state cbs = {
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, NULL
};
static const struct plugin *cb_plugin;

static void on_ready(PJRT_Error *err, void *user_arg)
{
	pthread_mutex_lock(&cbs.lock);
	cbs.calls++;
	cbs.tid = (int)syscall(SYS_gettid);
	cbs.err_code = code_of(cb_plugin, err);
	cbs.arg_seen = user_arg;
	pthread_cond_broadcast(&cbs.cond);
	pthread_mutex_unlock(&cbs.lock);
	if (err)
		error_free(cb_plugin, err);
}

static void wait_calls(int n)
{
	pthread_mutex_lock(&cbs.lock);
	while (cbs.calls < n)
		pthread_cond_wait(&cbs.cond, &cbs.lock);
	pthread_mutex_unlock(&cbs.lock);
}

/* ---------------------------------------------------------------- checks */

/*
 * One extension, the profiler's (as libtpu has it), with the layout of
 * xla/pjrt/c/pjrt_c_api_profiler_extension.h typed out here as offsets, and
 * its ten fields' functions in the plugin's text with CET prologues.
 * test_plugin_profiler checks what they do.
 */
static void check_extensions(struct plugin *p)
{
	static struct mapping maps[4096];
	const unsigned char *ext = (const void *)p->api->hdr.extension_start;
	const unsigned char *papi;
	const void *fn;
	char what[128];
	int n, i;

	if (!ASSERT_TRUE(ext != NULL, "an extension chain"))
		return;
	ASSERT_EQ(*(const size_t *)ext, 40, "PJRT_Profiler_Extension struct_size");
	ASSERT_EQ(*(const int *)(ext + 8), 1, "type PJRT_Extension_Type_Profiler");
	ASSERT_TRUE(*(void *const *)(ext + 16) == NULL, "the only extension");
	papi = *(const unsigned char *const *)(ext + 24);
	ASSERT_EQ(*(const int64_t *)(ext + 32), 0, "traceme_context_id");
	if (!ASSERT_TRUE(papi != NULL, "profiler_api"))
		return;
	ASSERT_EQ(*(const size_t *)papi, 80, "PLUGIN_Profiler_Api struct_size");
	ASSERT_TRUE(*(void *const *)(papi + 8) == NULL, "priv");
	n = read_maps(maps, 4096);
	for (i = 0; i < 8; i++) {
		fn = *(void *const *)(papi + 16 + 8 * i);
		snprintf(what, sizeof(what), "minor %d profiler api function %d", p->minor, i);
		if (!ASSERT_TRUE(fn && in_text(maps, n, p->path, fn), what))
			continue;
		ASSERT_TRUE(cet_prologue(fn), what);
	}
}

static void check_layout(struct plugin *p)
{
	static struct mapping maps[4096];
	const void *found = NULL;
	char what[256], msg[512], full[128];
	int n, i, j, bad;

	ASSERT_EQ(p->api->hdr.struct_size, 40 + 8 * p->nslots, "PJRT_Api struct_size");
	check_extensions(p);
	ASSERT_EQ(p->api->hdr.pjrt_api_version.struct_size, 24, "version struct_size");
	ASSERT_EQ(p->api->hdr.pjrt_api_version.major_version, 0, "major");
	ASSERT_EQ(p->api->hdr.pjrt_api_version.minor_version, p->minor, "minor");

	n = read_maps(maps, 4096);
	for (i = 0, bad = 0; i < p->nslots; i++) {
		snprintf(what, sizeof(what), "minor %d slot %d (%s)", p->minor, i, p->names[i]);
		if (!ASSERT_TRUE(p->api->fns[i] != NULL, what))
			continue;
		ASSERT_TRUE(in_text(maps, n, p->path, (const void *)p->api->fns[i]), what);
		if (!cet_prologue((const void *)p->api->fns[i]) && bad++ < 3)
			fprintf(stderr, "%s does not begin endbr64; push %%rbp\n", what);
		for (j = 0; j < i; j++)
			if (p->api->fns[j] == p->api->fns[i])
				test_check(false, __FILE__, __LINE__, what,
					   "same function as slot %d", j);
	}
	ASSERT_EQ(bad, 0, "every slot begins endbr64; push %rbp");

	/* Each unimplemented slot says which it is. */
	for (i = 0; i < p->nslots; i++) {
		unsigned char args[512] = { 0 };
		PJRT_Error *err;
		bool impl = false;

		full_name(p->names[i], full, sizeof(full));
		for (j = 0; j < (int)(sizeof(implemented) / sizeof(implemented[0])); j++)
			impl |= !strcmp(implemented[j], full);
		if (impl)
			continue;
		*(size_t *)args = sizeof(args);
		err = p->api->fns[i](args);
		snprintf(what, sizeof(what), "minor %d slot %d is UNIMPLEMENTED", p->minor, i);
		if (!ASSERT_EQ(code_of(p, err), PJRT_Error_Code_UNIMPLEMENTED, what))
			continue;
		snprintf(what, sizeof(what),
			 "PJRT_%s is not implemented by the simulated TPU plugin", full);
		ASSERT_STREQ(message_of(p, err, msg, sizeof(msg)), what, "slot names itself");
		error_free(p, err);
	}

	/* The table is writable data, found by scanning, exactly once. */
	for (i = 0; i < n; i++) {
		unsigned long a = (unsigned long)p->api;

		if (a >= maps[i].lo && a < maps[i].hi) {
			ASSERT_TRUE(maps[i].perms[1] == 'w', "table in a writable mapping");
			ASSERT_TRUE(maps[i].perms[2] != 'x', "table not in text");
		}
	}
	ASSERT_EQ(scan_for_table(maps, n, p->path, &found), 1, "one table found by scanning");
	ASSERT_TRUE(found == p->api, "the scan finds GetPjrtApi's table");
}

static PJRT_Client *create_client(const struct plugin *p, const char *dir, int cores)
{
	char trace_dir[4096];
	PJRT_NamedValue opts[4] = {
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_cores", .name_size = 9,
		  .type = PJRT_NamedValue_kInt64, .int64_value = cores, .value_size = 1 },
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_device_dir", .name_size = 14,
		  .type = PJRT_NamedValue_kString, .string_value = dir, .value_size = strlen(dir) },
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_trace_dir", .name_size = 13,
		  .type = PJRT_NamedValue_kString, .string_value = trace_dir },
		{ .struct_size = sizeof(PJRT_NamedValue), .name = "sim_compile_ns", .name_size = 14,
		  .type = PJRT_NamedValue_kInt64, .int64_value = 0, .value_size = 1 },
	};
	PJRT_Client_Create_Args a = {
		.struct_size = p->minor >= 94 ? 88 : 72,
		.create_options = opts,
		.num_options = 4,
	};

	snprintf(trace_dir, sizeof(trace_dir), "%s/devtrace-%d", dir, p->minor);
	opts[2].value_size = strlen(trace_dir);
	if (!expect_code(p, call(p, "Client_Create", &a), 0, "Client_Create"))
		return NULL;
	return a.client;
}

static const char *program =
	"HloModule tiny_step, entry_computation_layout={(f32[4,8]{1,0})->f32[256]{0}}\n\n"
	"ENTRY %tiny_step (x: f32[4,8]) -> f32[256] {\n"
	"  %fusion.1 = f32[4,8]{1,0} fusion(%x), kind=kLoop, sim_ns=2000000, sim_flops=10, sim_bytes=20\n"
	"  %all-reduce.2 = f32[256]{0} all-reduce(%fusion.1), sim_ns=1000000\n"
	"  ROOT %tuple.3 = (f32[256]) tuple(%all-reduce.2), sim_output_bytes=1024\n}\n";

static const char *long_program =
	"HloModule long_step\n"
	"  %convolution.1 = f32[] convolution(), sim_ns=30000000000\n";

static PJRT_LoadedExecutable *compile(const struct plugin *p, PJRT_Client *c,
				      const char *code, const char *format, int want)
{
	PJRT_Program prog = {
		.struct_size = sizeof(prog), .code = (char *)code, .code_size = strlen(code),
		.format = format, .format_size = strlen(format),
	};
	PJRT_Client_Compile_Args a = {
		.struct_size = sizeof(a), .client = c, .program = &prog,
	};

	if (!expect_code(p, call(p, "Client_Compile", &a), want, "Client_Compile"))
		return NULL;
	return a.executable;
}

static void check_calls(struct plugin *p, const char *dir)
{
	PJRT_Plugin_Initialize_Args init = { .struct_size = sizeof(init) };
	PJRT_Client_Create_Args small = { .struct_size = p->minor >= 94 ? 72 : 64 };
	PJRT_NamedValue bad_opt = {
		.struct_size = sizeof(PJRT_NamedValue), .name = "sim_cores", .name_size = 9,
		.type = PJRT_NamedValue_kString, .string_value = "four", .value_size = 4,
	};
	PJRT_Client_Create_Args bad = {
		.struct_size = p->minor >= 94 ? 88 : 72, .create_options = &bad_opt, .num_options = 1,
	};
	PJRT_Client_PlatformName_Args pn = { .struct_size = sizeof(pn) };
	PJRT_Client_Devices_Args devs = { .struct_size = sizeof(devs) };
	PJRT_Client_Destroy_Args cd = { .struct_size = sizeof(cd) };
	PJRT_Client *c;
	PJRT_LoadedExecutable *exe, *longx;
	PJRT_Buffer *in[2], *out[2], *long_out[1];
	PJRT_Event *ev[2], *long_ev[1];
	int64_t dims[2] = { 4, 8 };
	float host[32] = { 1.0f };
	unsigned char loss[1024];
	int i, self = (int)syscall(SYS_gettid);

	cb_plugin = p;
	ASSERT_OK_PTR(dlsym(RTLD_DEFAULT, "GetPjrtApi") == NULL ? (void *)1 : NULL,
		      "RTLD_LOCAL: no global GetPjrtApi");
	expect_code(p, call(p, "Plugin_Initialize", &init), 0, "Plugin_Initialize");
	expect_code(p, call(p, "Client_Create", &small), PJRT_Error_Code_INVALID_ARGUMENT,
		    "Client_Create with a too-small struct");
	expect_code(p, call(p, "Client_Create", &bad), PJRT_Error_Code_INVALID_ARGUMENT,
		    "Client_Create with a string for an int option");
	c = create_client(p, dir, 2);
	if (!c)
		return;
	{
		PJRT_Client_Create_Args again = {
			.struct_size = p->minor >= 94 ? 88 : 72,
		};

		expect_code(p, call(p, "Client_Create", &again),
			    PJRT_Error_Code_FAILED_PRECONDITION, "TPU in use");
	}

	pn.client = c;
	expect_code(p, call(p, "Client_PlatformName", &pn), 0, "PlatformName");
	ASSERT_EQ(pn.platform_name_size, 3, "platform name size");
	ASSERT_TRUE(pn.platform_name && !strncmp(pn.platform_name, "tpu", 3), "tpu");
	devs.client = c;
	expect_code(p, call(p, "Client_AddressableDevices", &devs), 0, "AddressableDevices");
	ASSERT_EQ(devs.num_devices, 2, "two cores");
	devs.num_devices = 0;
	expect_code(p, call(p, "Client_Devices", &devs), 0, "Devices");
	ASSERT_EQ(devs.num_devices, 2, "two devices");

	compile(p, c, program, "mlir", PJRT_Error_Code_INVALID_ARGUMENT);
	compile(p, c, "not hlo", "hlo", PJRT_Error_Code_INVALID_ARGUMENT);
	exe = compile(p, c, program, "hlo", 0);
	longx = compile(p, c, long_program, "hlo", 0);
	if (!exe || !longx)
		return;

	/* H2D: F32[4,8] is 128 bytes; the copy is done when the call returns. */
	for (i = 0; i < 2; i++) {
		PJRT_Client_BufferFromHostBuffer_Args h = {
			.struct_size = sizeof(h), .client = c, .data = host,
			.type = PJRT_Buffer_Type_F32, .dims = dims, .num_dims = 2,
			.device = devs.devices[i],
		};
		PJRT_Event_IsReady_Args r = { .struct_size = sizeof(r) };
		PJRT_Buffer_OnDeviceSizeInBytes_Args sz = { .struct_size = sizeof(sz) };
		PJRT_Event_Destroy_Args ed = { .struct_size = sizeof(ed) };

		expect_code(p, call(p, "Client_BufferFromHostBuffer", &h), 0, "H2D");
		in[i] = h.buffer;
		r.event = h.done_with_host_buffer;
		expect_code(p, call(p, "Event_IsReady", &r), 0, "IsReady");
		ASSERT_TRUE(r.is_ready, "done_with_host_buffer ready on return");
		ed.event = h.done_with_host_buffer;
		expect_code(p, call(p, "Event_Destroy", &ed), 0, "Event_Destroy");
		sz.buffer = in[i];
		expect_code(p, call(p, "Buffer_OnDeviceSizeInBytes", &sz), 0, "OnDeviceSize");
		ASSERT_EQ(sz.on_device_size_in_bytes, 128, "4x8 f32");
	}

	/* Execute: checked Args, asynchronous, completion on the runtime thread. */
	{
		PJRT_ExecuteOptions opts = {
			.struct_size = p->minor >= 94 ? 112 : 52, .launch_id = 7,
		};
		PJRT_ExecuteOptions small_opts = { .struct_size = 40, .launch_id = 7 };
		PJRT_Buffer *const *args[2] = { &in[0], &in[1] };
		PJRT_Buffer **outs[2] = { &out[0], &out[1] };
		PJRT_LoadedExecutable_Execute_Args x = {
			.struct_size = 80, .executable = exe, .options = &opts,
			.argument_lists = args, .num_devices = 2, .num_args = 1,
			.output_lists = outs, .device_complete_events = ev,
		};
		PJRT_LoadedExecutable_Execute_Args x2 = x;
		PJRT_Event_OnReady_Args o = {
			.struct_size = sizeof(o), .callback = on_ready,
		};
		PJRT_Event_IsReady_Args r = { .struct_size = sizeof(r) };
		PJRT_Buffer_ToHostBuffer_Args d2h = { .struct_size = sizeof(d2h) };
		PJRT_Event_Await_Args aw = { .struct_size = sizeof(aw) };
		PJRT_Event_Destroy_Args ed = { .struct_size = sizeof(ed) };
		PJRT_Buffer_ReadyEvent_Args re = { .struct_size = sizeof(re) };
		uint64_t t0;
		struct timespec ts;

		x2.struct_size = 72;
		expect_code(p, call(p, "LoadedExecutable_Execute", &x2),
			    PJRT_Error_Code_INVALID_ARGUMENT, "Execute_Args of 72 bytes");
		x2 = x;
		x2.options = &small_opts;
		expect_code(p, call(p, "LoadedExecutable_Execute", &x2),
			    PJRT_Error_Code_INVALID_ARGUMENT, "ExecuteOptions too small");
		x2 = x;
		x2.num_devices = 3;
		expect_code(p, call(p, "LoadedExecutable_Execute", &x2),
			    PJRT_Error_Code_INVALID_ARGUMENT, "more devices than cores");

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		if (!expect_code(p, call(p, "LoadedExecutable_Execute", &x), 0, "Execute"))
			return;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		/* The program takes 3 ms: Execute returned long before that. */
		ASSERT_LE((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - t0,
			  2000000, "Execute is asynchronous");
		r.event = ev[0];
		expect_code(p, call(p, "Event_IsReady", &r), 0, "IsReady");
		ASSERT_FALSE(r.is_ready, "not ready right after Execute");

		o.event = ev[0];
		o.user_arg = &ev[0];
		expect_code(p, call(p, "Event_OnReady", &o), 0, "OnReady");
		wait_calls(1);
		ASSERT_NEQ(cbs.tid, self, "callback runs on a runtime thread");
		ASSERT_EQ(cbs.err_code, 0, "callback without error");
		ASSERT_TRUE(cbs.arg_seen == &ev[0], "user_arg passed through");

		/* Already ready: the callback runs at once, on this thread. */
		o.user_arg = &ev[1];
		o.event = ev[0];
		expect_code(p, call(p, "Event_OnReady", &o), 0, "OnReady when ready");
		ASSERT_EQ(cbs.calls, 2, "ran synchronously");
		ASSERT_EQ(cbs.tid, self, "on the calling thread");
		{
			PJRT_Event_Error_Args ee = { .struct_size = sizeof(ee), .event = ev[0] };

			expect_code(p, call(p, "Event_Error", &ee), 0, "Event_Error is NULL");
		}

		/* D2H: size query, then a copy awaited. */
		d2h.src = out[1];
		expect_code(p, call(p, "Buffer_ToHostBuffer", &d2h), 0, "size query");
		ASSERT_EQ(d2h.dst_size, 1024, "output size");
		ASSERT_TRUE(d2h.event == NULL, "no event for a size query");
		d2h.dst = loss;
		expect_code(p, call(p, "Buffer_ToHostBuffer", &d2h), 0, "ToHostBuffer");
		aw.event = d2h.event;
		expect_code(p, call(p, "Event_Await", &aw), 0, "Await");
		ed.event = d2h.event;
		expect_code(p, call(p, "Event_Destroy", &ed), 0, "destroy d2h event");
		re.buffer = out[1];
		expect_code(p, call(p, "Buffer_ReadyEvent", &re), 0, "ReadyEvent");
		r.event = re.event;
		expect_code(p, call(p, "Event_IsReady", &r), 0, "IsReady");
		ASSERT_TRUE(r.is_ready, "output ready after completion");
		ed.event = re.event;
		call(p, "Event_Destroy", &ed);
		for (i = 0; i < 2; i++) {
			PJRT_Buffer_Destroy_Args bd = { .struct_size = sizeof(bd), .buffer = out[i] };

			ed.event = ev[i];
			expect_code(p, call(p, "Event_Destroy", &ed), 0, "destroy device event");
			expect_code(p, call(p, "Buffer_Destroy", &bd), 0, "destroy output");
			bd.buffer = in[i];
			expect_code(p, call(p, "Buffer_Destroy", &bd), 0, "destroy input");
		}

		/* A 30 s execution, then the client goes: it completes cancelled. */
		{
			PJRT_Buffer **louts[1] = { &long_out[0] };
			PJRT_LoadedExecutable_Execute_Args lx = {
				.struct_size = 80, .executable = longx, .options = &opts,
				.num_devices = 1, .output_lists = louts,
				.device_complete_events = long_ev,
			};

			expect_code(p, call(p, "LoadedExecutable_Execute", &lx), 0, "long Execute");
			o.event = long_ev[0];
			o.user_arg = long_ev;
			expect_code(p, call(p, "Event_OnReady", &o), 0, "OnReady long");
		}
	}

	{
		PJRT_LoadedExecutable_Destroy_Args xd = { .struct_size = sizeof(xd) };
		PJRT_Buffer_Destroy_Args bd = { .struct_size = sizeof(bd), .buffer = long_out[0] };
		PJRT_Event_Destroy_Args ed = { .struct_size = sizeof(ed), .event = long_ev[0] };
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		cd.client = c;
		expect_code(p, call(p, "Client_Destroy", &cd), 0, "Client_Destroy");
		clock_gettime(CLOCK_MONOTONIC, &b);
		ASSERT_LE(b.tv_sec - a.tv_sec, 2, "Client_Destroy does not wait for the op");
		ASSERT_EQ(cbs.calls, 3, "long execution's callback ran");
		ASSERT_EQ(cbs.err_code, PJRT_Error_Code_CANCELLED, "with CANCELLED");
		call(p, "Event_Destroy", &ed);
		call(p, "Buffer_Destroy", &bd);
		xd.executable = exe;
		expect_code(p, call(p, "LoadedExecutable_Destroy", &xd), 0, "destroy exe");
		xd.executable = longx;
		expect_code(p, call(p, "LoadedExecutable_Destroy", &xd), 0, "destroy long exe");
	}
	cbs.calls = 0;

	/* Environment fallbacks; create_options override them. */
	{
		char env_trace[4200];
		PJRT_NamedValue two = {
			.struct_size = sizeof(PJRT_NamedValue), .name = "sim_cores",
			.name_size = 9, .type = PJRT_NamedValue_kInt64, .int64_value = 2,
			.value_size = 1,
		};
		PJRT_Client_Create_Args e = { .struct_size = p->minor >= 94 ? 88 : 72 };

		snprintf(env_trace, sizeof(env_trace), "%s/env-trace-%d", dir, p->minor);
		setenv("ACCELTRACE_SIM_CORES", "3", 1);
		setenv("ACCELTRACE_SIM_DEVICE_DIR", dir, 1);
		setenv("ACCELTRACE_SIM_TRACE_DIR", env_trace, 1);
		if (expect_code(p, call(p, "Client_Create", &e), 0, "Client_Create from env")) {
			devs.client = e.client;
			call(p, "Client_Devices", &devs);
			ASSERT_EQ(devs.num_devices, 3, "ACCELTRACE_SIM_CORES=3");
			strcat(env_trace, "/core2.devtrace");
			ASSERT_OK(access(env_trace, R_OK), "ACCELTRACE_SIM_TRACE_DIR used");
			cd.client = e.client;
			call(p, "Client_Destroy", &cd);
		}
		e.create_options = &two;
		e.num_options = 1;
		if (expect_code(p, call(p, "Client_Create", &e), 0, "options over env")) {
			devs.client = e.client;
			call(p, "Client_Devices", &devs);
			ASSERT_EQ(devs.num_devices, 2, "sim_cores=2 beats the environment");
			cd.client = e.client;
			call(p, "Client_Destroy", &cd);
		}
		unsetenv("ACCELTRACE_SIM_CORES");
		unsetenv("ACCELTRACE_SIM_DEVICE_DIR");
		unsetenv("ACCELTRACE_SIM_TRACE_DIR");
	}
}

static void check_exports(struct plugin *p, void *lib)
{
	static const char *const feeds[] = {
		"TpuTransferManager_TransferLiteralToInfeed",
		"TpuTransferManager_TransferLiteralFromOutfeed",
		"TpuExecutor_EnqueueInfeed",
		"TpuExecutor_DequeueOutfeed",
	};
	size_t i;

	ASSERT_TRUE(cet_prologue(dlsym(lib, "GetPjrtApi")), "GetPjrtApi prologue");
	for (i = 0; i < sizeof(feeds) / sizeof(feeds[0]); i++) {
		void *fn = dlsym(lib, feeds[i]);

		if (ASSERT_OK_PTR(fn, feeds[i]))
			ASSERT_TRUE(cet_prologue(fn), feeds[i]);
	}
	/* Implementations are not exported. */
	ASSERT_TRUE(dlsym(lib, "sim_PJRT_LoadedExecutable_Execute") == NULL, "hidden impl");
	ASSERT_TRUE(dlsym(lib, "truth_commit") != NULL, "(the truth library is separate)");
	{
		/* With no client, a feed call fails cleanly. */
		TpuExecutor_EnqueueInfeed_Fn enq = (TpuExecutor_EnqueueInfeed_Fn)
			dlsym(lib, "TpuExecutor_EnqueueInfeed");
		TF_Status st = { 0 };
		uint8_t b[4] = { 0 };

		if (enq) {
			enq(NULL, 0, b, 4, &st);
			ASSERT_EQ(st.code, PJRT_Error_Code_FAILED_PRECONDITION, "infeed without client");
		}
	}
}

/* Copies a file; 0 or -1. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n = 0;
	int in = open(from, O_RDONLY | O_CLOEXEC), out;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n) {
			n = -1;
			break;
		}
	close(in);
	if (close(out) || n < 0)
		return -1;
	return 0;
}

int main(void)
{
	const char *out = getenv("OUTPUT") ? getenv("OUTPUT") : "build";
	char dir[] = "/tmp/pjrt-table-XXXXXX";
	struct plugin ps[2] = {
		{ .minor = 94, .names = slots94, .nslots = 129 },
		{ .minor = 26, .names = slots26, .nslots = 88 },
	};
	int k;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	for (k = 0; k < 2; k++) {
		struct plugin *p = &ps[k];
		const PJRT_Api *(*get)(void);
		char real[4096];
		void *lib;

		snprintf(p->path, sizeof(p->path), "%s/sim/pjrt-0.%d/libtpu.so", out, p->minor);
		if (!realpath(p->path, real)) {
			fprintf(stderr, "no %s (set OUTPUT)\n", p->path);
			return 1;
		}
		/*
		 * A private copy (with libsimtruth.so beside, for its $ORIGIN/..
		 * RUNPATH): a tracer probing the shared build's plugin puts int3
		 * into every process mapping that file, which would read here as
		 * a wrong prologue. A copy is another inode no one probes.
		 */
		{
			char dst[4200], truth_src[4200];

			snprintf(dst, sizeof(dst), "%s/pjrt-0.%d", dir, p->minor);
			mkdir(dst, 0700);
			snprintf(dst, sizeof(dst), "%s/pjrt-0.%d/libtpu.so", dir, p->minor);
			snprintf(truth_src, sizeof(truth_src), "%s/sim/libsimtruth.so", out);
			if (copy_file(real, dst)) {
				fprintf(stderr, "cannot copy %s to %s\n", real, dst);
				return 1;
			}
			snprintf(p->path, sizeof(p->path), "%.4000s", dst);
			snprintf(dst, sizeof(dst), "%s/libsimtruth.so", dir);
			if (access(dst, F_OK) && copy_file(truth_src, dst)) {
				fprintf(stderr, "cannot copy %s\n", truth_src);
				return 1;
			}
		}
		lib = dlopen(p->path, RTLD_NOW | RTLD_LOCAL);
		if (!ASSERT_OK_PTR(lib, dlerror()))
			continue;
		get = (const PJRT_Api *(*)(void))dlsym(lib, "GetPjrtApi");
		if (!ASSERT_OK_PTR(get, "GetPjrtApi"))
			continue;
		p->api = get();
		ASSERT_TRUE(get() == p->api, "GetPjrtApi returns one table");
		check_layout(p);
		check_exports(p, lib);
		check_calls(p, dir);
	}
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return test_exit();
}
