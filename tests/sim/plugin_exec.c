// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Client_Compile, LoadedExecutable_Execute and _Destroy. Execute is
 * asynchronous like the real one: it checks its arguments, creates the
 * output buffers and completion events, hands the work to the device and
 * returns; completion arrives later on the runtime thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugin.h"
#include "simtruth.h"

#if SIM_PJRT_MINOR >= 94
#define EXECUTE_OPTIONS_SIZE PJRT_ExecuteOptions_SIZE_94
#else
#define EXECUTE_OPTIONS_SIZE PJRT_ExecuteOptions_SIZE_26
#endif

void sim_executable_unref(PJRT_LoadedExecutable *exe)
{
	if (exe && __atomic_sub_fetch(&exe->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(exe);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000ull),
		.tv_nsec = (long)(ns % 1000000000ull),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

PJRT_Error *sim_PJRT_Client_Compile(void *args)
{
	PJRT_Client_Compile_Args *a = args;
	const PJRT_Program *prog;
	PJRT_LoadedExecutable *exe;
	uint64_t t0 = truth_now();
	struct truth_line l;
	char msg[256];
	int err;

	SIM_CHECK_ARGS(a, PJRT_Client_Compile_Args, executable);
	prog = a->program;
	if (!a->client || !prog)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
				 "client and program are required");
	if (prog->struct_size < PJRT_STRUCT_SIZE(PJRT_Program, format_size))
		return sim_check_size("PJRT_Program",
				      PJRT_STRUCT_SIZE(PJRT_Program, format_size),
				      prog->struct_size);
	if (!prog->format || prog->format_size != 3 || memcmp(prog->format, "hlo", 3))
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
				 "unsupported program format '%.*s': the simulated TPU "
				 "compiles \"hlo\" text", (int)(prog->format ? prog->format_size : 0),
				 prog->format ? prog->format : "");
	if (!prog->code)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "program code is NULL");
	exe = calloc(1, sizeof(*exe));
	if (!exe)
		return sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
	exe->client = a->client;
	exe->refs = 1;
	err = sim_program_parse(prog->code, prog->code_size, &exe->prog, msg, sizeof(msg));
	if (err) {
		free(exe);
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "compile: %s", msg);
	}
	/* Compiling takes time on a real TPU too; the trace shows the gap. */
	sleep_ns(a->client->opt.compile_ns);
	simdev__load(a->client->dev, &exe->prog);
	a->executable = exe;

	if (truth_enabled()) {
		tl_begin(&l, "compile");
		tl_u64(&l, "t_call", t0);
		tl_u64(&l, "t_return", truth_now());
		tl_str(&l, "module", exe->prog.module);
		tl_u64(&l, "num_ops", (uint64_t)exe->prog.nops);
		tl_u64(&l, "code_size", prog->code_size);
		tl_u64(&l, "executable", (uint64_t)(uintptr_t)exe);
		truth_commit(&l);
	}
	return NULL;
}

PJRT_Error *sim_PJRT_LoadedExecutable_Destroy(void *args)
{
	PJRT_LoadedExecutable_Destroy_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_LoadedExecutable_Destroy_Args, executable);
	sim_executable_unref(a->executable);
	return NULL;
}

static void exec_free(struct sim_exec *e)
{
	int d;

	for (d = 0; d < e->ndev; d++) {
		sim_buffer_unref(e->out[d]);
		sim_event_unref(e->done[d]);
	}
	sim_executable_unref(e->exe);
	free(e);
}

void sim_exec_core_done(struct sim_exec *e, int core)
{
	PJRT_Error *err = NULL;
	int d;

	for (d = 0; d < e->ndev; d++)
		if (e->core_of[d] == core)
			break;
	if (d == e->ndev)
		return;
	if (e->dev.status)
		err = sim_error(PJRT_Error_Code_CANCELLED,
				"execution %llu was cancelled: the TPU client was destroyed",
				(unsigned long long)e->dev.launch_id);
	/* Outputs first, so a completion callback can read them. */
	sim_event_set_ready(e->out[d]->ready, sim_error_copy(err));
	sim_buffer_unref(e->out[d]);
	e->out[d] = NULL;
	if (e->done[d]) {
		sim_event_set_ready(e->done[d], err);
		sim_event_unref(e->done[d]);
		e->done[d] = NULL;
	} else {
		sim_error_free(err);
	}
	if (__atomic_sub_fetch(&e->pending, 1, __ATOMIC_ACQ_REL) == 0)
		exec_free(e);
}

/* The caller gets nothing when Execute fails: take its references back. */
static void drop_caller_refs(PJRT_LoadedExecutable_Execute_Args *a, struct sim_exec *e)
{
	int d;

	for (d = 0; d < e->ndev; d++) {
		sim_buffer_unref(e->out[d]);
		a->output_lists[d][0] = NULL;
		if (a->device_complete_events) {
			sim_event_unref(a->device_complete_events[d]);
			a->device_complete_events[d] = NULL;
		}
	}
}

static PJRT_Error *check_execute(PJRT_LoadedExecutable_Execute_Args *a, int *core_of)
{
	PJRT_LoadedExecutable *exe = a->executable;
	PJRT_Client *c;
	size_t d, i;

	if (!exe)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "executable is NULL");
	c = exe->client;
	if (!a->options)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "options is NULL");
	if (a->options->struct_size < EXECUTE_OPTIONS_SIZE)
		return sim_check_size("PJRT_ExecuteOptions", EXECUTE_OPTIONS_SIZE,
				      a->options->struct_size);
	if (!a->output_lists)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "output_lists is NULL");
	if (a->execute_device) {
		if (a->num_devices != 1)
			return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
					 "execute_device needs num_devices 1, got %zu",
					 a->num_devices);
		core_of[0] = sim_device_core(c, a->execute_device);
		if (core_of[0] < 0)
			return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
					 "execute_device is not a device of this client");
	} else {
		if (a->num_devices < 1 || a->num_devices > (size_t)c->cores)
			return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
					 "num_devices %zu: the executable runs on 1 to %d "
					 "devices", a->num_devices, c->cores);
		for (d = 0; d < a->num_devices; d++)
			core_of[d] = (int)d;
	}
	if (a->num_args && !a->argument_lists)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "argument_lists is NULL");
	for (d = 0; d < a->num_devices; d++) {
		if (!a->output_lists[d])
			return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
					 "output_lists[%zu] is NULL", d);
		for (i = 0; i < a->num_args; i++) {
			PJRT_Buffer *b = a->argument_lists[d][i];

			if (!b || b->client != c)
				return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
						 "argument %zu of device %zu is not a "
						 "buffer of this client", i, d);
			if (b->deleted)
				return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
						 "argument %zu of device %zu has been deleted",
						 i, d);
			if (b->core != core_of[d])
				return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
						 "argument %zu of device %zu is on device %d",
						 i, d, b->core);
		}
	}
	return NULL;
}

PJRT_Error *sim_PJRT_LoadedExecutable_Execute(void *args)
{
	PJRT_LoadedExecutable_Execute_Args *a = args;
	uint64_t t0 = truth_now(), launch_id;
	int core_of[SIM_MAX_CORES];
	PJRT_LoadedExecutable *exe;
	PJRT_Error *perr;
	struct truth_line l;
	struct sim_exec *e;
	PJRT_Client *c;
	int d, ndev, err;

	SIM_CHECK_ARGS(a, PJRT_LoadedExecutable_Execute_Args, execute_device);
	perr = check_execute(a, core_of);
	if (perr)
		return perr;
	exe = a->executable;
	c = exe->client;
	ndev = (int)a->num_devices;
	launch_id = (uint64_t)(int64_t)a->options->launch_id;

	e = calloc(1, sizeof(*e));
	if (!e)
		return sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
	__atomic_add_fetch(&exe->refs, 1, __ATOMIC_ACQ_REL);
	e->exe = exe;
	e->ndev = ndev;
	e->pending = ndev;
	e->dev.prog = &exe->prog;
	e->dev.launch_id = launch_id;
	/* launch_id 0 means "none": correlate by a sequence of our own. */
	e->dev.correlation_id = launch_id ? launch_id :
		(1ull << 63) | __atomic_add_fetch(&c->exec_seq, 1, __ATOMIC_RELAXED);
	for (d = 0; d < ndev; d++) {
		PJRT_Buffer *out = sim_buffer_new(c, core_of[d], exe->prog.output_bytes, false);
		PJRT_Event *ev = NULL;

		if (!out || (a->device_complete_events && !(ev = sim_event_new()))) {
			PJRT_Error *oom = out ? sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
							  "out of memory") :
				sim_buffer_error(core_of[d], exe->prog.output_bytes);

			sim_buffer_unref(out);
			e->ndev = d;
			drop_caller_refs(a, e);
			exec_free(e);
			return oom;
		}
		e->core_of[d] = core_of[d];
		e->dev.core_mask |= 1u << core_of[d];
		/* The caller's references, and the ones completion drops. */
		__atomic_add_fetch(&out->refs, 1, __ATOMIC_ACQ_REL);
		e->out[d] = out;
		a->output_lists[d][0] = out;
		if (ev) {
			e->done[d] = sim_event_ref(ev);
			a->device_complete_events[d] = ev;
		}
	}

	devnode__submit(c->node, launch_id, (uint32_t)(a->num_args * (size_t)ndev + 1));
	err = simdev__submit(c->dev, &e->dev);
	if (err) {
		drop_caller_refs(a, e);
		exec_free(e);
		return sim_error(PJRT_Error_Code_CANCELLED, "the TPU client is shutting down");
	}

	if (truth_enabled()) {
		tl_begin(&l, "execute");
		tl_u64(&l, "launch_id", launch_id);
		tl_str(&l, "module", exe->prog.module);
		tl_u64(&l, "num_devices", (uint64_t)ndev);
		tl_u64(&l, "num_args", a->num_args);
		tl_u64(&l, "t_call", t0);
		tl_u64(&l, "t_return", truth_now());
		truth_commit(&l);
	}
	return NULL;
}
