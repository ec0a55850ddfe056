// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The framework's side of PJRT, after XLA's C-API client: dlopen the plugin,
 * dlsym GetPjrtApi, call it once, check the version, Plugin_Initialize, then
 * every call through the table at the slot the plugin's minor puts it.
 *
 * Completions are registered like ConvertCEventToCppFuture does: one static
 * callback function for every event, with a heap user_arg that it runs and
 * frees.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simtruth.h"
#include "tpu_capi.h"
#include "trainer.h"

struct pjrt {
	void *lib;
	const PJRT_Api *api;
	int minor;
	PJRT_Client *client;
	PJRT_Device *const *devices;
	int ndev;
	TpuTransferManager_TransferLiteralToInfeed_Fn to_infeed;
	TpuTransferManager_TransferLiteralFromOutfeed_Fn from_outfeed;
	TpuExecutor_EnqueueInfeed_Fn enqueue_infeed;
	TpuExecutor_DequeueOutfeed_Fn dequeue_outfeed;
};

static PJRT_Fn fn(const struct pjrt *p, int slot94)
{
	int s = pjrt_slot_for_minor(slot94, p->minor);

	return s < 0 ? NULL : p->api->fns[s];
}

/* Prints and frees a PJRT_Error; returns -EIO (or 0 for NULL). */
static int report(struct pjrt *p, const char *what, PJRT_Error *err)
{
	PJRT_Error_Message_Args m = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Error_Message_Args, message_size),
		.error = err,
	};

	if (!err)
		return 0;
	fn(p, PJRT_SLOT_Error_Message)(&m);
	fprintf(stderr, "tpu-trainer: %s: %.*s\n", what, (int)m.message_size, m.message);
	pjrt__error_free(p, err);
	return -EIO;
}

static int error_code(struct pjrt *p, PJRT_Error *err)
{
	PJRT_Error_GetCode_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Error_GetCode_Args, code),
		.error = err,
	};

	return fn(p, PJRT_SLOT_Error_GetCode)(&a) ? PJRT_Error_Code_UNKNOWN : a.code;
}

/*
 * A buffer-making call's error: out of memory is recorded as a failed
 * allocation and said once (a leak runs into it every step), -ENOMEM;
 * anything else is reported, -EIO.
 */
static int buffer_error(struct pjrt *p, const char *api, PJRT_Error *err, int device,
			size_t bytes, uint64_t t0)
{
	static bool said;
	int code = error_code(p, err);

	trainer_mem_failed(api, device, bytes, t0, truth_now(), "shape", code);
	if (code != PJRT_Error_Code_RESOURCE_EXHAUSTED)
		return report(p, api, err);
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		report(p, api, err);
	else
		pjrt__error_free(p, err);
	return -ENOMEM;
}

void pjrt__error_free(struct pjrt *p, PJRT_Error *err)
{
	PJRT_Error_Destroy_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Error_Destroy_Args, error),
		.error = err,
	};

	if (err)
		fn(p, PJRT_SLOT_Error_Destroy)(&a);
}

struct pjrt *pjrt__load(const char *path)
{
	PJRT_Plugin_Initialize_Args init = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Plugin_Initialize_Args, extension_start),
	};
	const PJRT_Api *(*get_api)(void);
	struct truth_line l;
	struct pjrt *p;
	uint64_t t0, t1;

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	t0 = truth_now();
	p->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	t1 = truth_now();
	if (!p->lib) {
		fprintf(stderr, "tpu-trainer: dlopen: %s\n", dlerror());
		goto fail;
	}
	if (truth_enabled()) {
		tl_begin(&l, "plugin_load");
		tl_str(&l, "path", path);
		tl_u64(&l, "t", t1);
		tl_u64(&l, "t_call", t0);
		truth_commit(&l);
	}
	get_api = (const PJRT_Api *(*)(void))dlsym(p->lib, "GetPjrtApi");
	if (!get_api) {
		fprintf(stderr, "tpu-trainer: %s has no GetPjrtApi\n", path);
		goto fail;
	}
	p->api = get_api();
	if (!p->api || p->api->hdr.pjrt_api_version.struct_size != sizeof(PJRT_Api_Version) ||
	    p->api->hdr.pjrt_api_version.major_version != PJRT_API_MAJOR) {
		fprintf(stderr, "tpu-trainer: %s: not a PJRT 0.x plugin\n", path);
		goto fail;
	}
	p->minor = p->api->hdr.pjrt_api_version.minor_version;
	if (p->api->hdr.struct_size < sizeof(PJRT_Api_Header) +
	    (size_t)pjrt_num_slots(p->minor) * sizeof(PJRT_Fn) ||
	    (p->minor != 26 && p->minor < 29)) {
		fprintf(stderr, "tpu-trainer: %s: PJRT 0.%d with struct_size %zu is not "
			"supported\n", path, p->minor, p->api->hdr.struct_size);
		goto fail;
	}
	if (truth_enabled()) {
		tl_begin(&l, "api_table");
		tl_u64(&l, "t", truth_now());
		tl_u64(&l, "addr", (uint64_t)(uintptr_t)p->api);
		tl_u64(&l, "major", PJRT_API_MAJOR);
		tl_u64(&l, "minor", (uint64_t)p->minor);
		tl_u64(&l, "struct_size", p->api->hdr.struct_size);
		truth_commit(&l);
	}
	if (report(p, "PJRT_Plugin_Initialize", fn(p, PJRT_SLOT_Plugin_Initialize)(&init)))
		goto fail;
	p->to_infeed = (TpuTransferManager_TransferLiteralToInfeed_Fn)
		dlsym(p->lib, "TpuTransferManager_TransferLiteralToInfeed");
	p->from_outfeed = (TpuTransferManager_TransferLiteralFromOutfeed_Fn)
		dlsym(p->lib, "TpuTransferManager_TransferLiteralFromOutfeed");
	p->enqueue_infeed = (TpuExecutor_EnqueueInfeed_Fn)
		dlsym(p->lib, "TpuExecutor_EnqueueInfeed");
	p->dequeue_outfeed = (TpuExecutor_DequeueOutfeed_Fn)
		dlsym(p->lib, "TpuExecutor_DequeueOutfeed");
	return p;
fail:
	free(p);
	return NULL;
}

void pjrt__shutdown(struct pjrt *p)
{
	PJRT_Client_Destroy_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Client_Destroy_Args, client),
	};

	if (!p || !p->client)
		return;
	a.client = p->client;
	report(p, "PJRT_Client_Destroy", fn(p, PJRT_SLOT_Client_Destroy)(&a));
	p->client = NULL;
}

void pjrt__free(struct pjrt *p)
{
	if (!p)
		return;
	pjrt__shutdown(p);
	/* Frameworks keep plugins loaded until exit; so do we. */
	free(p);
}

int pjrt__minor(const struct pjrt *p)
{
	return p->minor;
}

int pjrt__create_client(struct pjrt *p, const PJRT_NamedValue *opts, size_t n)
{
	PJRT_Client_Create_Args a = {
		.struct_size = p->minor >= 94 ? PJRT_Client_Create_Args_SIZE_94 :
						PJRT_Client_Create_Args_SIZE_26,
		.create_options = opts,
		.num_options = n,
	};
	PJRT_Client_AddressableDevices_Args d = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Client_AddressableDevices_Args, num_devices),
	};
	int err;

	err = report(p, "PJRT_Client_Create", fn(p, PJRT_SLOT_Client_Create)(&a));
	if (err)
		return err;
	p->client = a.client;
	d.client = p->client;
	err = report(p, "PJRT_Client_AddressableDevices",
		     fn(p, PJRT_SLOT_Client_AddressableDevices)(&d));
	if (err)
		return err;
	p->devices = d.devices;
	p->ndev = (int)d.num_devices;
	return 0;
}

int pjrt__num_devices(const struct pjrt *p)
{
	return p->ndev;
}

PJRT_Device *pjrt__device(const struct pjrt *p, int i)
{
	return i >= 0 && i < p->ndev ? p->devices[i] : NULL;
}

int pjrt__compile(struct pjrt *p, const char *code, PJRT_LoadedExecutable **exe)
{
	PJRT_Program prog = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Program, format_size),
		.code = (char *)code,
		.code_size = strlen(code),
		.format = "hlo",
		.format_size = 3,
	};
	PJRT_Client_Compile_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Client_Compile_Args, executable),
		.client = p->client,
		.program = &prog,
		.compile_options = "",
		.compile_options_size = 0,
	};
	int err;

	err = report(p, "PJRT_Client_Compile", fn(p, PJRT_SLOT_Client_Compile)(&a));
	if (!err)
		*exe = a.executable;
	return err;
}

void pjrt__executable_free(struct pjrt *p, PJRT_LoadedExecutable *exe)
{
	PJRT_LoadedExecutable_Destroy_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_LoadedExecutable_Destroy_Args, executable),
		.executable = exe,
	};

	if (exe)
		report(p, "PJRT_LoadedExecutable_Destroy",
		       fn(p, PJRT_SLOT_LoadedExecutable_Destroy)(&a));
}

int pjrt__execute(struct pjrt *p, PJRT_LoadedExecutable *exe, int launch_id,
		  int ndev, PJRT_Buffer *const *args, PJRT_Buffer **outs,
		  PJRT_Event **events, size_t *out_bytes)
{
	PJRT_Buffer *const *arg_lists[SIM_MAX_CORES];
	PJRT_Buffer **out_lists[SIM_MAX_CORES];
	PJRT_ExecuteOptions opts = {
		.struct_size = p->minor >= 94 ? PJRT_ExecuteOptions_SIZE_94 :
						PJRT_ExecuteOptions_SIZE_26,
		.launch_id = launch_id,
	};
	PJRT_LoadedExecutable_Execute_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_LoadedExecutable_Execute_Args, execute_device),
		.executable = exe,
		.options = &opts,
		.argument_lists = arg_lists,
		.num_devices = (size_t)ndev,
		.num_args = args ? 1 : 0,
		.output_lists = out_lists,
		.device_complete_events = events,
	};

	uint64_t t0, t1;
	int d, err;

	for (d = 0; d < ndev; d++) {
		arg_lists[d] = args ? &args[d] : NULL;
		out_lists[d] = &outs[d];
	}
	t0 = truth_now();
	err = report(p, "PJRT_LoadedExecutable_Execute",
		     fn(p, PJRT_SLOT_LoadedExecutable_Execute)(&a));
	t1 = truth_now();
	if (err)
		return err;
	/* A framework asks each output's size once: the call gives none. */
	for (d = 0; d < ndev; d++) {
		PJRT_Buffer_OnDeviceSizeInBytes_Args sz = {
			.struct_size = PJRT_STRUCT_SIZE(PJRT_Buffer_OnDeviceSizeInBytes_Args,
							on_device_size_in_bytes),
			.buffer = outs[d],
		};

		err = report(p, "PJRT_Buffer_OnDeviceSizeInBytes",
			     fn(p, PJRT_SLOT_Buffer_OnDeviceSizeInBytes)(&sz));
		out_bytes[d] = err ? 0 : sz.on_device_size_in_bytes;
		trainer_mem_truth("mem_alloc", "PJRT_LoadedExecutable_Execute", d, outs[d],
				  out_bytes[d], t0, t1, "size_query");
	}
	return 0;
}

/* What the one callback runs: the caller's function and context. */
struct ready_arg {
	pjrt_ready_fn fn;
	void *ctx;
};

/* The single completion callback for every event, as in XLA's C-API client
 * (a tracer attaches to it once). noinline keeps it a real function. */
static __attribute__((noinline)) void pjrt_on_ready_callback(PJRT_Error *err,
							     void *user_arg)
{
	struct ready_arg *ra = user_arg;

	ra->fn(ra->ctx, err);
	free(ra);
}

int pjrt__on_ready(struct pjrt *p, PJRT_Event *ev, pjrt_ready_fn f, void *ctx)
{
	struct ready_arg *ra = malloc(sizeof(*ra));
	PJRT_Event_OnReady_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Event_OnReady_Args, user_arg),
		.event = ev,
		.callback = pjrt_on_ready_callback,
		.user_arg = ra,
	};
	int err;

	if (!ra)
		return -ENOMEM;
	ra->fn = f;
	ra->ctx = ctx;
	err = report(p, "PJRT_Event_OnReady", fn(p, PJRT_SLOT_Event_OnReady)(&a));
	if (err)
		free(ra);
	return err;
}

void pjrt__event_free(struct pjrt *p, PJRT_Event *ev)
{
	PJRT_Event_Destroy_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Event_Destroy_Args, event),
		.event = ev,
	};

	if (ev)
		report(p, "PJRT_Event_Destroy", fn(p, PJRT_SLOT_Event_Destroy)(&a));
}

static void buffer_destroy(struct pjrt *p, PJRT_Buffer *b, int device, size_t bytes,
			   bool freed)
{
	PJRT_Buffer_Destroy_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Buffer_Destroy_Args, buffer),
		.buffer = b,
	};
	uint64_t t0 = truth_now();

	if (b && !report(p, "PJRT_Buffer_Destroy", fn(p, PJRT_SLOT_Buffer_Destroy)(&a)) &&
	    !freed)
		trainer_mem_truth("mem_free", "PJRT_Buffer_Destroy", device, b, bytes, t0,
				  truth_now(), NULL);
}

void pjrt__buffer_free(struct pjrt *p, PJRT_Buffer *b, int device, size_t bytes)
{
	buffer_destroy(p, b, device, bytes, false);
}

void pjrt__buffer_delete(struct pjrt *p, PJRT_Buffer *b, int device, size_t bytes)
{
	PJRT_Buffer_Delete_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Buffer_Delete_Args, buffer),
		.buffer = b,
	};
	uint64_t t0 = truth_now();
	bool deleted;

	if (!b)
		return;
	deleted = !report(p, "PJRT_Buffer_Delete", fn(p, PJRT_SLOT_Buffer_Delete)(&a));
	if (deleted)
		trainer_mem_truth("mem_free", "PJRT_Buffer_Delete", device, b, bytes, t0,
				  truth_now(), NULL);
	/* Destroying a deleted buffer frees the handle only. */
	buffer_destroy(p, b, device, bytes, deleted);
}

int pjrt__create_buffer(struct pjrt *p, size_t bytes, int device, PJRT_Buffer **out)
{
	static const unsigned char zeros[65536];
	int64_t dims[1] = { (int64_t)bytes };
	PJRT_Client_CreateUninitializedBuffer_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Client_CreateUninitializedBuffer_Args,
						buffer),
		.client = p->client,
		.shape_dims = dims,
		.shape_num_dims = 1,
		.shape_element_type = PJRT_Buffer_Type_U8,
		.device = pjrt__device(p, device),
	};
	PJRT_Fn create = fn(p, PJRT_SLOT_Client_CreateUninitializedBuffer);
	unsigned char *host;
	PJRT_Error *perr;
	uint64_t t0;
	int err;

	if (!create) {
		/* Minor 26: a copy of zeros, from a host buffer as big. */
		if (bytes <= sizeof(zeros))
			return pjrt__h2d(p, zeros, bytes, device, out);
		host = calloc(1, bytes);
		if (!host)
			return -ENOMEM;
		err = pjrt__h2d(p, host, bytes, device, out);
		free(host);
		return err;
	}
	t0 = truth_now();
	perr = create(&a);
	if (perr)
		return buffer_error(p, "PJRT_Client_CreateUninitializedBuffer", perr, device,
				    bytes, t0);
	trainer_mem_truth("mem_alloc", "PJRT_Client_CreateUninitializedBuffer", device,
			  a.buffer, bytes, t0, truth_now(), "shape");
	*out = a.buffer;
	return 0;
}

int pjrt__h2d(struct pjrt *p, const void *data, size_t bytes, int device,
	      PJRT_Buffer **out)
{
	int64_t dims[1] = { (int64_t)bytes };
	PJRT_Client_BufferFromHostBuffer_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Client_BufferFromHostBuffer_Args, buffer),
		.client = p->client,
		.data = data,
		.type = PJRT_Buffer_Type_U8,
		.dims = dims,
		.num_dims = 1,
		.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall,
		.device = pjrt__device(p, device),
	};
	uint64_t t0 = truth_now(), t1;
	PJRT_Error *perr;

	perr = fn(p, PJRT_SLOT_Client_BufferFromHostBuffer)(&a);
	t1 = truth_now();
	if (perr)
		return buffer_error(p, "PJRT_Client_BufferFromHostBuffer", perr, device, bytes,
				    t0);
	trainer_mem_truth("mem_alloc", "PJRT_Client_BufferFromHostBuffer", device, a.buffer,
			  bytes, t0, t1, "shape");
	pjrt__event_free(p, a.done_with_host_buffer);
	*out = a.buffer;
	return 0;
}

int pjrt__d2h(struct pjrt *p, PJRT_Buffer *b, void *dst, size_t cap)
{
	PJRT_Buffer_ToHostBuffer_Args a = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Buffer_ToHostBuffer_Args, event),
		.src = b,
	};
	PJRT_Event_Await_Args w = {
		.struct_size = PJRT_STRUCT_SIZE(PJRT_Event_Await_Args, event),
	};
	int err;

	/* First the size, as frameworks do, then the copy. */
	err = report(p, "PJRT_Buffer_ToHostBuffer",
		     fn(p, PJRT_SLOT_Buffer_ToHostBuffer)(&a));
	if (err)
		return err;
	if (a.dst_size > cap)
		return -ENOSPC;
	a.dst = dst;
	err = report(p, "PJRT_Buffer_ToHostBuffer",
		     fn(p, PJRT_SLOT_Buffer_ToHostBuffer)(&a));
	if (err)
		return err;
	w.event = a.event;
	err = report(p, "PJRT_Event_Await", fn(p, PJRT_SLOT_Event_Await)(&w));
	pjrt__event_free(p, a.event);
	return err;
}

int pjrt__infeed(struct pjrt *p, int device, const void *data, size_t bytes, bool raw)
{
	SE_StreamExecutor *ex = (SE_StreamExecutor *)pjrt__device(p, device);
	TF_Status st = { 0 };

	if (raw) {
		if (!p->enqueue_infeed)
			return -ENOSYS;
		p->enqueue_infeed(ex, 0, data, (int64_t)bytes, &st);
	} else {
		char *bufs[1] = { (char *)data };
		size_t sizes[1] = { bytes };
		XLA_Literal lit = { .buffers = bufs, .sizes = sizes, .count = 1 };

		if (!p->to_infeed)
			return -ENOSYS;
		p->to_infeed(NULL, ex, &lit, &st);
	}
	if (st.code && st.code != PJRT_Error_Code_CANCELLED)
		fprintf(stderr, "tpu-trainer: infeed: %s\n", st.message);
	return st.code == PJRT_Error_Code_CANCELLED ? -ECANCELED : st.code ? -EIO : 0;
}

int pjrt__outfeed(struct pjrt *p, int device, void *data, size_t bytes, bool raw)
{
	SE_StreamExecutor *ex = (SE_StreamExecutor *)pjrt__device(p, device);
	TF_Status st = { 0 };

	if (raw) {
		if (!p->dequeue_outfeed)
			return -ENOSYS;
		p->dequeue_outfeed(ex, 0, data, (int64_t)bytes, &st);
	} else {
		char *bufs[1] = { data };
		size_t sizes[1] = { bytes };
		XLA_Literal lit = { .buffers = bufs, .sizes = sizes, .count = 1 };

		if (!p->from_outfeed)
			return -ENOSYS;
		p->from_outfeed(NULL, ex, NULL, &lit, &st);
	}
	if (st.code && st.code != PJRT_Error_Code_CANCELLED)
		fprintf(stderr, "tpu-trainer: outfeed: %s\n", st.message);
	return st.code == PJRT_Error_Code_CANCELLED ? -ECANCELED : st.code ? -EIO : 0;
}

/* ---------------------------------------------------------------- profiler */

struct pjrt_profiler {
	const PLUGIN_Profiler_Api *api;
	PLUGIN_Profiler *prof;
};

/* Prints and frees a profiler API error; returns -EIO (or 0 for NULL). */
static int prof_report(const PLUGIN_Profiler_Api *api, const char *what,
		       PLUGIN_Profiler_Error *err)
{
	PLUGIN_Profiler_Error_Message_Args m = { .struct_size = sizeof(m), .error = err };
	PLUGIN_Profiler_Error_Destroy_Args d = { .struct_size = sizeof(d), .error = err };

	if (!err)
		return 0;
	api->error_message(&m);
	fprintf(stderr, "tpu-trainer: PLUGIN_Profiler_%s: %.*s\n", what,
		(int)m.message_size, m.message);
	api->error_destroy(&d);
	return -EIO;
}

struct pjrt_profiler *pjrt__profiler_start(struct pjrt *p)
{
	/* tensorflow.ProfileOptions: host_tracer_level 2, device_tracer_level 1,
	 * python_tracer_level 0, version 1, as ProfilerSession sends them. */
	static const uint8_t options[] = { 0x10, 0x02, 0x18, 0x01, 0x28, 0x01 };
	const PJRT_Profiler_Extension *ext;
	PLUGIN_Profiler_Create_Args c = {
		.struct_size = sizeof(c), .options = (const char *)options,
		.options_size = sizeof(options),
	};
	PLUGIN_Profiler_Start_Args s = { .struct_size = sizeof(s) };
	PLUGIN_Profiler_Destroy_Args d = { .struct_size = sizeof(d) };
	struct pjrt_profiler *pr;

	ext = (const PJRT_Profiler_Extension *)pjrt_find_extension(
		p->api->hdr.extension_start, PJRT_Extension_Type_Profiler);
	if (!ext || !ext->profiler_api) {
		fprintf(stderr, "tpu-trainer: the plugin has no PJRT profiler extension\n");
		return NULL;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return NULL;
	pr->api = ext->profiler_api;
	if (prof_report(pr->api, "Create", pr->api->create(&c)))
		goto fail;
	pr->prof = c.profiler;
	s.profiler = pr->prof;
	if (prof_report(pr->api, "Start", pr->api->start(&s))) {
		d.profiler = pr->prof;
		prof_report(pr->api, "Destroy", pr->api->destroy(&d));
		goto fail;
	}
	return pr;
fail:
	free(pr);
	return NULL;
}

int pjrt__profiler_finish(struct pjrt *p, struct pjrt_profiler *pr, const char *path,
			  size_t *bytes)
{
	PLUGIN_Profiler_Stop_Args s = { .struct_size = sizeof(s) };
	PLUGIN_Profiler_CollectData_Args c = { .struct_size = sizeof(c) };
	PLUGIN_Profiler_Destroy_Args d = { .struct_size = sizeof(d) };
	size_t n = 0;
	FILE *f = NULL;
	int err;

	(void)p;
	if (!pr)
		return 0;
	s.profiler = c.profiler = d.profiler = pr->prof;
	err = prof_report(pr->api, "Stop", pr->api->stop(&s));
	if (!err)
		err = prof_report(pr->api, "CollectData", pr->api->collect_data(&c));
	if (err)
		goto out;
	/* XLA's plugins return the XSpace and one zero byte after it. */
	n = c.buffer_size_in_bytes;
	if (n && c.buffer[n - 1] == 0)
		n--;
	f = fopen(path, "wb");
	if (!f) {
		err = -errno;
		goto out;
	}
	if (n && fwrite(c.buffer, 1, n, f) != n)
		err = -EIO;
	if (fclose(f) && !err)
		err = errno ? -errno : -EIO;
	*bytes = n;
out:
	prof_report(pr->api, "Destroy", pr->api->destroy(&d));
	free(pr);
	return err;
}
