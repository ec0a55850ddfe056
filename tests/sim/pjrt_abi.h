/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The part of the PJRT C API (xla/pjrt/c/pjrt_c_api.h) that the simulated
 * plugin implements and the trainer calls, written from the layout in
 * reference/pjrt-and-probe-points.md section 1. Field order and sizes are
 * the real ones for x86-64; the static asserts at the end pin the offsets a
 * tracer reads. Both minors the simulator builds (26 and 94) share every
 * layout here except the two sizes in pjrt_struct_size_for_minor().
 */
#ifndef ACCELTRACE_SIM_PJRT_ABI_H
#define ACCELTRACE_SIM_PJRT_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PJRT_API_MAJOR 0
#define PJRT_STRUCT_SIZE(type, last) \
	(offsetof(type, last) + sizeof(((type *)0)->last))

typedef struct PJRT_Error PJRT_Error;
typedef struct PJRT_Event PJRT_Event;
typedef struct PJRT_Client PJRT_Client;
typedef struct PJRT_Device PJRT_Device;
typedef struct PJRT_Memory PJRT_Memory;
typedef struct PJRT_LoadedExecutable PJRT_LoadedExecutable;
typedef struct PJRT_Buffer PJRT_Buffer;
typedef struct PJRT_Extension_Base PJRT_Extension_Base;

typedef enum {
	PJRT_Error_Code_CANCELLED = 1,
	PJRT_Error_Code_UNKNOWN = 2,
	PJRT_Error_Code_INVALID_ARGUMENT = 3,
	PJRT_Error_Code_DEADLINE_EXCEEDED = 4,
	PJRT_Error_Code_NOT_FOUND = 5,
	PJRT_Error_Code_ALREADY_EXISTS = 6,
	PJRT_Error_Code_PERMISSION_DENIED = 7,
	PJRT_Error_Code_RESOURCE_EXHAUSTED = 8,
	PJRT_Error_Code_FAILED_PRECONDITION = 9,
	PJRT_Error_Code_ABORTED = 10,
	PJRT_Error_Code_OUT_OF_RANGE = 11,
	PJRT_Error_Code_UNIMPLEMENTED = 12,
	PJRT_Error_Code_INTERNAL = 13,
	PJRT_Error_Code_UNAVAILABLE = 14,
	PJRT_Error_Code_DATA_LOSS = 15,
	PJRT_Error_Code_UNAUTHENTICATED = 16,
} PJRT_Error_Code;

typedef struct PJRT_Api_Version {
	size_t struct_size;			/* 24 */
	PJRT_Extension_Base *extension_start;
	int major_version;
	int minor_version;
} PJRT_Api_Version;

/* The header of PJRT_Api; function pointers follow at 40 + 8 * slot. */
typedef struct PJRT_Api_Header {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Api_Version pjrt_api_version;
} PJRT_Api_Header;

typedef PJRT_Error *(*PJRT_Fn)(void *args);

typedef struct PJRT_Api {
	PJRT_Api_Header hdr;
	PJRT_Fn fns[];
} PJRT_Api;

/* ------------------------------------------------------------ extensions */

/*
 * Extensions hang off PJRT_Api.extension_start (and off any Args struct's)
 * as a chain of structs that each begin with PJRT_Extension_Base
 * (xla/pjrt/c/pjrt_c_api.h). A consumer walks `next` and picks its type.
 */
typedef enum {
	PJRT_Extension_Type_Gpu_Custom_Call = 0,
	PJRT_Extension_Type_Profiler = 1,
} PJRT_Extension_Type;

struct PJRT_Extension_Base {
	size_t struct_size;
	PJRT_Extension_Type type;
	PJRT_Extension_Base *next;
};

/*
 * The profiler extension (xla/pjrt/c/pjrt_c_api_profiler_extension.h) and
 * the plugin profiler API it points to
 * (xla/backends/profiler/plugin/profiler_c_api.h). Errors are the API's
 * own objects, codes are absl::StatusCode values (the same numbers as
 * PJRT_Error_Code). Consumers in XLA (PluginTracer) leave struct_size of
 * these Args unset, so a plugin cannot check it.
 */
typedef struct PLUGIN_Profiler PLUGIN_Profiler;
typedef struct PLUGIN_Profiler_Error PLUGIN_Profiler_Error;

typedef struct {
	size_t struct_size;
	void *priv;
	PLUGIN_Profiler_Error *error;
} PLUGIN_Profiler_Error_Destroy_Args;

typedef struct {
	size_t struct_size;
	void *priv;
	const PLUGIN_Profiler_Error *error;
	const char *message;		/* out */
	size_t message_size;		/* out */
} PLUGIN_Profiler_Error_Message_Args;

typedef struct {
	size_t struct_size;
	void *priv;
	const PLUGIN_Profiler_Error *error;
	int code;			/* out */
} PLUGIN_Profiler_Error_GetCode_Args;

typedef struct {
	size_t struct_size;
	const char *options;		/* a serialized tensorflow.ProfileOptions */
	size_t options_size;
	PLUGIN_Profiler *profiler;	/* out */
} PLUGIN_Profiler_Create_Args;

typedef struct {
	size_t struct_size;
	PLUGIN_Profiler *profiler;
} PLUGIN_Profiler_Destroy_Args, PLUGIN_Profiler_Start_Args,
  PLUGIN_Profiler_Stop_Args;

typedef struct {
	size_t struct_size;
	PLUGIN_Profiler *profiler;
	uint8_t *buffer;		/* in/out: NULL = the plugin's buffer */
	size_t buffer_size_in_bytes;	/* out */
} PLUGIN_Profiler_CollectData_Args;

typedef void (*PLUGIN_Profiler_Error_Destroy)(PLUGIN_Profiler_Error_Destroy_Args *args);
typedef void (*PLUGIN_Profiler_Error_Message)(PLUGIN_Profiler_Error_Message_Args *args);
typedef PLUGIN_Profiler_Error *(*PLUGIN_Profiler_Error_GetCode)(
	PLUGIN_Profiler_Error_GetCode_Args *args);
typedef PLUGIN_Profiler_Error *(*PLUGIN_Profiler_Create)(PLUGIN_Profiler_Create_Args *args);
typedef PLUGIN_Profiler_Error *(*PLUGIN_Profiler_Destroy)(PLUGIN_Profiler_Destroy_Args *args);
typedef PLUGIN_Profiler_Error *(*PLUGIN_Profiler_Start)(PLUGIN_Profiler_Start_Args *args);
typedef PLUGIN_Profiler_Error *(*PLUGIN_Profiler_Stop)(PLUGIN_Profiler_Stop_Args *args);
typedef PLUGIN_Profiler_Error *(*PLUGIN_Profiler_CollectData)(
	PLUGIN_Profiler_CollectData_Args *args);

typedef struct {
	size_t struct_size;
	void *priv;
	PLUGIN_Profiler_Error_Destroy error_destroy;
	PLUGIN_Profiler_Error_Message error_message;
	PLUGIN_Profiler_Error_GetCode error_get_code;
	PLUGIN_Profiler_Create create;
	PLUGIN_Profiler_Destroy destroy;
	PLUGIN_Profiler_Start start;
	PLUGIN_Profiler_Stop stop;
	PLUGIN_Profiler_CollectData collect_data;
} PLUGIN_Profiler_Api;

typedef struct {
	PJRT_Extension_Base base;	/* type = PJRT_Extension_Type_Profiler */
	PLUGIN_Profiler_Api *profiler_api;
	int64_t traceme_context_id;
} PJRT_Profiler_Extension;

/* The first extension of `type` in the chain from `ext`, or NULL. */
static inline PJRT_Extension_Base *pjrt_find_extension(PJRT_Extension_Base *ext,
						       PJRT_Extension_Type type)
{
	for (; ext; ext = ext->next)
		if (ext->type == type)
			return ext;
	return NULL;
}

/* ---------------------------------------------------------------- values */

typedef enum {
	PJRT_NamedValue_kString = 0,
	PJRT_NamedValue_kInt64 = 1,
	PJRT_NamedValue_kInt64List = 2,
	PJRT_NamedValue_kFloat = 3,
	PJRT_NamedValue_kBool = 4,
} PJRT_NamedValue_Type;

typedef struct PJRT_NamedValue {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	const char *name;
	size_t name_size;
	PJRT_NamedValue_Type type;
	union {
		const char *string_value;
		int64_t int64_value;
		const int64_t *int64_array_value;
		float float_value;
		bool bool_value;
	};
	size_t value_size;
} PJRT_NamedValue;

/* ---------------------------------------------------------------- errors */

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Error *error;
} PJRT_Error_Destroy_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	const PJRT_Error *error;
	const char *message;		/* out */
	size_t message_size;		/* out */
} PJRT_Error_Message_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	const PJRT_Error *error;
	PJRT_Error_Code code;		/* out */
} PJRT_Error_GetCode_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
} PJRT_Plugin_Initialize_Args;

/* ---------------------------------------------------------------- events */

typedef void (*PJRT_Event_OnReadyCallback)(PJRT_Error *error, void *user_arg);

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Event *event;
} PJRT_Event_Destroy_Args, PJRT_Event_Error_Args, PJRT_Event_Await_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Event *event;
	bool is_ready;			/* out */
} PJRT_Event_IsReady_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Event *event;
	PJRT_Event_OnReadyCallback callback;
	void *user_arg;
} PJRT_Event_OnReady_Args;

/* ---------------------------------------------------------------- client */

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	const PJRT_NamedValue *create_options;
	size_t num_options;
	void *kv_get_callback;
	void *kv_get_user_arg;
	void *kv_put_callback;
	void *kv_put_user_arg;
	PJRT_Client *client;		/* out; the last field at minor 26 */
	void *kv_try_get_callback;	/* added before minor 94 */
	void *kv_try_get_user_arg;
} PJRT_Client_Create_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Client *client;
} PJRT_Client_Destroy_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Client *client;
	const char *platform_name;	/* out */
	size_t platform_name_size;	/* out */
} PJRT_Client_PlatformName_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Client *client;
	PJRT_Device *const *devices;	/* out */
	size_t num_devices;		/* out */
} PJRT_Client_Devices_Args, PJRT_Client_AddressableDevices_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	char *code;
	size_t code_size;
	const char *format;
	size_t format_size;
} PJRT_Program;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Client *client;
	const PJRT_Program *program;
	const char *compile_options;
	size_t compile_options_size;
	PJRT_LoadedExecutable *executable;	/* out */
} PJRT_Client_Compile_Args;

typedef enum {
	PJRT_Buffer_Type_INVALID, PJRT_Buffer_Type_PRED,
	PJRT_Buffer_Type_S8, PJRT_Buffer_Type_S16, PJRT_Buffer_Type_S32,
	PJRT_Buffer_Type_S64, PJRT_Buffer_Type_U8, PJRT_Buffer_Type_U16,
	PJRT_Buffer_Type_U32, PJRT_Buffer_Type_U64, PJRT_Buffer_Type_F16,
	PJRT_Buffer_Type_F32, PJRT_Buffer_Type_F64, PJRT_Buffer_Type_BF16,
	PJRT_Buffer_Type_C64, PJRT_Buffer_Type_C128,
} PJRT_Buffer_Type;

typedef enum {
	PJRT_HostBufferSemantics_kImmutableOnlyDuringCall = 0,
	PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes = 1,
	PJRT_HostBufferSemantics_kImmutableZeroCopy = 2,
	PJRT_HostBufferSemantics_kMutableZeroCopy = 3,
} PJRT_HostBufferSemantics;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Client *client;
	const void *data;
	PJRT_Buffer_Type type;
	const int64_t *dims;
	size_t num_dims;
	const int64_t *byte_strides;
	size_t num_byte_strides;
	PJRT_HostBufferSemantics host_buffer_semantics;
	PJRT_Device *device;
	PJRT_Memory *memory;
	void *device_layout;
	PJRT_Event *done_with_host_buffer;	/* out */
	PJRT_Buffer *buffer;			/* out */
} PJRT_Client_BufferFromHostBuffer_Args;

/* ---------------------------------------------------------------- execute */

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	void **send_callbacks;
	void **recv_callbacks;
	size_t num_send_ops;
	size_t num_recv_ops;
	int launch_id;			/* the last field at minor 26 */
	const int64_t *non_donatable_input_indices;
	size_t num_non_donatable_input_indices;
	void *context;
	const char *call_location;
	size_t num_tasks;
	int *task_ids;
	int64_t *incarnation_ids;
} PJRT_ExecuteOptions;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_LoadedExecutable *executable;
	PJRT_ExecuteOptions *options;
	PJRT_Buffer *const *const *argument_lists;
	size_t num_devices;
	size_t num_args;
	PJRT_Buffer **const *output_lists;	/* in/out */
	PJRT_Event **device_complete_events;	/* in/out, may be NULL */
	PJRT_Device *execute_device;
} PJRT_LoadedExecutable_Execute_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_LoadedExecutable *executable;
} PJRT_LoadedExecutable_Destroy_Args;

/* ---------------------------------------------------------------- buffers */

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Buffer *buffer;
} PJRT_Buffer_Destroy_Args, PJRT_Buffer_Delete_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Buffer *buffer;
	bool is_deleted;		/* out */
} PJRT_Buffer_IsDeleted_Args;

/* Minor 94 only (slot 112): a buffer of a shape, contents undefined. */
typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Client *client;
	const int64_t *shape_dims;
	size_t shape_num_dims;
	PJRT_Buffer_Type shape_element_type;
	void *shape_layout;		/* PJRT_Buffer_MemoryLayout *, may be NULL */
	PJRT_Device *device;
	PJRT_Memory *memory;
	PJRT_Buffer *buffer;		/* out */
} PJRT_Client_CreateUninitializedBuffer_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Buffer *src;
	void *host_layout;
	void *dst;			/* NULL: size query */
	size_t dst_size;		/* in/out */
	PJRT_Event *event;		/* out */
} PJRT_Buffer_ToHostBuffer_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Buffer *buffer;
	PJRT_Event *event;		/* out */
} PJRT_Buffer_ReadyEvent_Args;

typedef struct {
	size_t struct_size;
	PJRT_Extension_Base *extension_start;
	PJRT_Buffer *buffer;
	size_t on_device_size_in_bytes;	/* out */
} PJRT_Buffer_OnDeviceSizeInBytes_Args;

/*
 * Slot layout at minor 94 (129 slots, PJRT_Api struct_size 1072), in the
 * order of reference section 1.4. Minor 26 drops slots 57 and 88 and ends
 * with PJRT_Compile; pjrt_slot_for_minor() maps between them.
 */
#define PJRT_SLOTS(X) \
	X(0, Error_Destroy) X(1, Error_Message) X(2, Error_GetCode) \
	X(3, Plugin_Initialize) X(4, Plugin_Attributes) X(5, Event_Destroy) \
	X(6, Event_IsReady) X(7, Event_Error) X(8, Event_Await) \
	X(9, Event_OnReady) X(10, Client_Create) X(11, Client_Destroy) \
	X(12, Client_PlatformName) X(13, Client_ProcessIndex) \
	X(14, Client_PlatformVersion) X(15, Client_Devices) \
	X(16, Client_AddressableDevices) X(17, Client_LookupDevice) \
	X(18, Client_LookupAddressableDevice) X(19, Client_AddressableMemories) \
	X(20, Client_Compile) X(21, Client_DefaultDeviceAssignment) \
	X(22, Client_BufferFromHostBuffer) X(23, DeviceDescription_Id) \
	X(24, DeviceDescription_ProcessIndex) \
	X(25, DeviceDescription_Attributes) X(26, DeviceDescription_Kind) \
	X(27, DeviceDescription_DebugString) X(28, DeviceDescription_ToString) \
	X(29, Device_GetDescription) X(30, Device_IsAddressable) \
	X(31, Device_LocalHardwareId) X(32, Device_AddressableMemories) \
	X(33, Device_DefaultMemory) X(34, Device_MemoryStats) X(35, Memory_Id) \
	X(36, Memory_Kind) X(37, Memory_DebugString) X(38, Memory_ToString) \
	X(39, Memory_AddressableByDevices) X(40, Executable_Destroy) \
	X(41, Executable_Name) X(42, Executable_NumReplicas) \
	X(43, Executable_NumPartitions) X(44, Executable_NumOutputs) \
	X(45, Executable_SizeOfGeneratedCodeInBytes) \
	X(46, Executable_GetCostAnalysis) X(47, Executable_OutputMemoryKinds) \
	X(48, Executable_OptimizedProgram) X(49, Executable_Serialize) \
	X(50, LoadedExecutable_Destroy) X(51, LoadedExecutable_GetExecutable) \
	X(52, LoadedExecutable_AddressableDevices) \
	X(53, LoadedExecutable_Delete) X(54, LoadedExecutable_IsDeleted) \
	X(55, LoadedExecutable_Execute) X(56, Executable_DeserializeAndLoad) \
	X(57, LoadedExecutable_Fingerprint) X(58, Buffer_Destroy) \
	X(59, Buffer_ElementType) X(60, Buffer_Dimensions) \
	X(61, Buffer_UnpaddedDimensions) X(62, Buffer_DynamicDimensionIndices) \
	X(63, Buffer_GetMemoryLayout) X(64, Buffer_OnDeviceSizeInBytes) \
	X(65, Buffer_Device) X(66, Buffer_Memory) X(67, Buffer_Delete) \
	X(68, Buffer_IsDeleted) X(69, Buffer_CopyToDevice) \
	X(70, Buffer_ToHostBuffer) X(71, Buffer_IsOnCpu) X(72, Buffer_ReadyEvent) \
	X(73, Buffer_UnsafePointer) X(74, Buffer_IncreaseExternalReferenceCount) \
	X(75, Buffer_DecreaseExternalReferenceCount) \
	X(76, Buffer_OpaqueDeviceMemoryDataPointer) \
	X(77, CopyToDeviceStream_Destroy) X(78, CopyToDeviceStream_AddChunk) \
	X(79, CopyToDeviceStream_TotalBytes) \
	X(80, CopyToDeviceStream_GranuleSize) \
	X(81, CopyToDeviceStream_CurrentBytes) X(82, TopologyDescription_Create) \
	X(83, TopologyDescription_Destroy) \
	X(84, TopologyDescription_PlatformName) \
	X(85, TopologyDescription_PlatformVersion) \
	X(86, TopologyDescription_GetDeviceDescriptions) \
	X(87, TopologyDescription_Serialize) \
	X(88, TopologyDescription_Attributes) X(89, Compile) \
	X(90, Executable_OutputElementTypes) X(91, Executable_OutputDimensions) \
	X(92, Buffer_CopyToMemory) X(93, Client_CreateViewOfDeviceBuffer) \
	X(94, Executable_Fingerprint) X(95, Client_TopologyDescription) \
	X(96, Executable_GetCompiledMemoryStats) X(97, Memory_Kind_Id) \
	X(98, ExecuteContext_Create) X(99, ExecuteContext_Destroy) \
	X(100, Buffer_CopyRawToHost) \
	X(101, AsyncHostToDeviceTransferManager_Destroy) \
	X(102, AsyncHostToDeviceTransferManager_TransferData) \
	X(103, Client_CreateBuffersForAsyncHostToDevice) \
	X(104, AsyncHostToDeviceTransferManager_RetrieveBuffer) \
	X(105, AsyncHostToDeviceTransferManager_Device) \
	X(106, AsyncHostToDeviceTransferManager_BufferCount) \
	X(107, AsyncHostToDeviceTransferManager_BufferSize) \
	X(108, AsyncHostToDeviceTransferManager_SetBufferError) \
	X(109, AsyncHostToDeviceTransferManager_AddMetadata) \
	X(110, Client_DmaMap) X(111, Client_DmaUnmap) \
	X(112, Client_CreateUninitializedBuffer) \
	X(113, Client_UpdateGlobalProcessInfo) \
	X(114, TopologyDescription_Deserialize) X(115, Client_CreateAliasBuffer) \
	X(116, Client_FulfillAliasBuffer) \
	X(117, LoadedExecutable_GetDeviceAssignment) \
	X(118, Client_CreateErrorBuffer) \
	X(119, AsyncHostToDeviceTransferManager_TransferLiteral) \
	X(120, Buffer_CopyRawToHostFuture) X(121, Device_PoisonExecution) \
	X(122, Device_CreateAsyncTrackingEvent) \
	X(123, AsyncTrackingEvent_Destroy) X(124, Executable_GetCompileOptions) \
	X(125, Buffer_DonateWithControlDependency) X(126, Event_Create) \
	X(127, Event_Set) X(128, Device_GetAttributes)

enum pjrt_slot {
#define PJRT_SLOT_ENUM(n, name) PJRT_SLOT_##name = n,
	PJRT_SLOTS(PJRT_SLOT_ENUM)
#undef PJRT_SLOT_ENUM
	PJRT_SLOTS_94 = 129,
};

#define PJRT_SLOTS_26 88

/* Slot of the minor-94 slot `slot` in a table of `minor`, or -1 if absent. */
static inline int pjrt_slot_for_minor(int slot, int minor)
{
	if (minor >= 94 || slot < PJRT_SLOT_LoadedExecutable_Fingerprint)
		return slot;
	if (slot == PJRT_SLOT_LoadedExecutable_Fingerprint ||
	    slot == PJRT_SLOT_TopologyDescription_Attributes)
		return -1;
	if (slot < PJRT_SLOT_TopologyDescription_Attributes)
		return slot - 1;
	if (slot == PJRT_SLOT_Compile)
		return 87;
	return -1;
}

static inline int pjrt_num_slots(int minor)
{
	return minor >= 94 ? PJRT_SLOTS_94 : PJRT_SLOTS_26;
}

/* The struct sizes that differ between the two minors the simulator builds. */
#define PJRT_Client_Create_Args_SIZE_26 \
	PJRT_STRUCT_SIZE(PJRT_Client_Create_Args, client)
#define PJRT_Client_Create_Args_SIZE_94 \
	PJRT_STRUCT_SIZE(PJRT_Client_Create_Args, kv_try_get_user_arg)
#define PJRT_ExecuteOptions_SIZE_26 \
	PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, launch_id)
#define PJRT_ExecuteOptions_SIZE_94 \
	PJRT_STRUCT_SIZE(PJRT_ExecuteOptions, incarnation_ids)

#define PJRT_ARGS_SIZE(type, last) PJRT_STRUCT_SIZE(type, last)

/* The offsets a tracer reads (reference section 1.5), x86-64. */
_Static_assert(sizeof(PJRT_Api_Header) == 40, "PJRT_Api header");
_Static_assert(sizeof(PJRT_NamedValue) == 56, "PJRT_NamedValue");
_Static_assert(sizeof(PJRT_Extension_Base) == 24, "PJRT_Extension_Base");
_Static_assert(offsetof(PJRT_Extension_Base, next) == 16, "");
_Static_assert(sizeof(PJRT_Profiler_Extension) == 40, "PJRT_Profiler_Extension");
_Static_assert(offsetof(PJRT_Profiler_Extension, profiler_api) == 24, "");
_Static_assert(sizeof(PLUGIN_Profiler_Api) == 80, "PLUGIN_Profiler_Api");
_Static_assert(offsetof(PLUGIN_Profiler_Api, collect_data) == 72, "");
_Static_assert(sizeof(PLUGIN_Profiler_Create_Args) == 32, "Profiler Create");
_Static_assert(sizeof(PLUGIN_Profiler_CollectData_Args) == 32, "Profiler CollectData");
_Static_assert(offsetof(PLUGIN_Profiler_CollectData_Args, buffer) == 16, "");
_Static_assert(sizeof(PLUGIN_Profiler_Error_Message_Args) == 40, "Profiler Error_Message");
_Static_assert(offsetof(PLUGIN_Profiler_Error_GetCode_Args, code) == 24, "");
_Static_assert(PJRT_Client_Create_Args_SIZE_26 == 72, "Client_Create 26");
_Static_assert(PJRT_Client_Create_Args_SIZE_94 == 88, "Client_Create 94");
_Static_assert(sizeof(PJRT_LoadedExecutable_Execute_Args) == 80, "Execute");
_Static_assert(offsetof(PJRT_LoadedExecutable_Execute_Args, options) == 24, "");
_Static_assert(offsetof(PJRT_LoadedExecutable_Execute_Args, num_devices) == 40, "");
_Static_assert(offsetof(PJRT_LoadedExecutable_Execute_Args, output_lists) == 56, "");
_Static_assert(offsetof(PJRT_LoadedExecutable_Execute_Args, device_complete_events) == 64, "");
_Static_assert(offsetof(PJRT_LoadedExecutable_Execute_Args, execute_device) == 72, "");
_Static_assert(offsetof(PJRT_ExecuteOptions, launch_id) == 48, "launch_id");
_Static_assert(PJRT_ExecuteOptions_SIZE_94 == 112, "ExecuteOptions 94");
_Static_assert(sizeof(PJRT_Client_BufferFromHostBuffer_Args) == 120, "H2D");
_Static_assert(offsetof(PJRT_Client_BufferFromHostBuffer_Args, data) == 24, "");
_Static_assert(offsetof(PJRT_Client_BufferFromHostBuffer_Args, dims) == 40, "");
_Static_assert(offsetof(PJRT_Client_BufferFromHostBuffer_Args, device) == 80, "");
_Static_assert(offsetof(PJRT_Client_BufferFromHostBuffer_Args, done_with_host_buffer) == 104, "");
_Static_assert(offsetof(PJRT_Client_BufferFromHostBuffer_Args, buffer) == 112, "");
_Static_assert(sizeof(PJRT_Client_CreateUninitializedBuffer_Args) == 80, "uninit");
_Static_assert(offsetof(PJRT_Client_CreateUninitializedBuffer_Args, shape_dims) == 24, "");
_Static_assert(offsetof(PJRT_Client_CreateUninitializedBuffer_Args, shape_num_dims) == 32, "");
_Static_assert(offsetof(PJRT_Client_CreateUninitializedBuffer_Args, shape_element_type) == 40, "");
_Static_assert(offsetof(PJRT_Client_CreateUninitializedBuffer_Args, device) == 56, "");
_Static_assert(offsetof(PJRT_Client_CreateUninitializedBuffer_Args, buffer) == 72, "");
_Static_assert(sizeof(PJRT_Buffer_IsDeleted_Args) == 32, "IsDeleted");
_Static_assert(sizeof(PJRT_Buffer_ToHostBuffer_Args) == 56, "D2H");
_Static_assert(offsetof(PJRT_Buffer_ToHostBuffer_Args, dst) == 32, "");
_Static_assert(offsetof(PJRT_Buffer_ToHostBuffer_Args, event) == 48, "");
_Static_assert(sizeof(PJRT_Event_Await_Args) == 24, "Await");
_Static_assert(sizeof(PJRT_Event_OnReady_Args) == 40, "OnReady");
_Static_assert(sizeof(PJRT_Client_Compile_Args) == 56, "Compile");
_Static_assert(offsetof(PJRT_Client_Compile_Args, executable) == 48, "");
_Static_assert(sizeof(PJRT_Program) == 48, "Program");
_Static_assert(offsetof(PJRT_Program, format) == 32, "");

#endif /* ACCELTRACE_SIM_PJRT_ABI_H */
