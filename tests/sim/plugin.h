/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internals of the simulated PJRT plugin (libtpu.so). Everything here has
 * hidden visibility: the library exports GetPjrtApi and the four TPU C API
 * feed functions only (plugin.map). SIM_PJRT_MINOR (26 or 94) is set by the
 * build and decides the table layout and the Args sizes checked.
 */
#ifndef ACCELTRACE_SIM_PLUGIN_H
#define ACCELTRACE_SIM_PLUGIN_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "device.h"
#include "devnode.h"
#include "pjrt_abi.h"

#ifndef SIM_PJRT_MINOR
#error "build with -DSIM_PJRT_MINOR=26 or 94"
#endif

#define SIM_EXPORT __attribute__((visibility("default")))

/* ---------------------------------------------------------------- options */

struct sim_options {
	int cores;
	char device_dir[PATH_MAX];
	char trace_dir[PATH_MAX];	/* "" = <device_dir>/devtrace */
	bool no_devtrace;		/* write no devtrace buffers */
	uint64_t trace_records;
	bool submit_ioctl;
	char truth_path[PATH_MAX];	/* "" = no ground truth from the plugin */
	bool truth_ops;
	uint64_t clock_rate_hz;
	int64_t clock_drift_ppb;
	uint64_t clock_offset;
	uint64_t compile_ns;
	uint64_t device_memory;		/* bytes of each core's memory */
};

/* Defaults, then ACCELTRACE_SIM_* environment, then create_options. */
int sim_options_parse(struct sim_options *o, const PJRT_NamedValue *v, size_t n,
		      char *err, size_t err_len);

/* ---------------------------------------------------------------- errors */

struct PJRT_Error {
	PJRT_Error_Code code;
	char message[];
};

PJRT_Error *sim_error(PJRT_Error_Code code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
PJRT_Error *sim_error_copy(const PJRT_Error *e);
void sim_error_free(PJRT_Error *e);
/* InvalidArgument when the caller's Args struct is smaller than ours, as
 * XLA's wrapper (ActualStructSizeIsGreaterOrEqual) answers. */
PJRT_Error *sim_check_size(const char *name, size_t expected, size_t actual);

#define SIM_CHECK_ARGS(args, type, last) do { \
	PJRT_Error *__e = sim_check_size(#type, PJRT_STRUCT_SIZE(type, last), \
					 (args) ? ((type *)(args))->struct_size : 0); \
	if (__e) \
		return __e; \
} while (0)

/* ---------------------------------------------------------------- events */

typedef void (*sim_event_fn)(PJRT_Error *error, void *arg);

/* A new event with one reference, the caller's. */
PJRT_Event *sim_event_new(void);
PJRT_Event *sim_event_ref(PJRT_Event *ev);
void sim_event_unref(PJRT_Event *ev);
/* Makes `ev` ready with `error` (taken; NULL = OK) and runs its callbacks
 * on this thread, in registration order, each with its own error copy. */
void sim_event_set_ready(PJRT_Event *ev, PJRT_Error *error);
bool sim_event_is_ready(PJRT_Event *ev);
/* Runs fn at once if ready, else later from sim_event_set_ready(). */
void sim_event_on_ready(PJRT_Event *ev, sim_event_fn fn, void *arg);
/* Blocks until ready; returns a copy of its error. */
PJRT_Error *sim_event_await(PJRT_Event *ev);
PJRT_Error *sim_event_error(PJRT_Event *ev);

/* ---------------------------------------------------------------- client */

struct sim_runtime;

struct PJRT_Device {
	PJRT_Client *client;
	int core;
};

struct PJRT_Client {
	struct sim_options opt;
	int cores;
	struct devnode *node;
	struct sim_runtime *rt;
	struct simdev *dev;
	PJRT_Device devices[SIM_MAX_CORES];
	PJRT_Device *device_ptrs[SIM_MAX_CORES];
	uint64_t exec_seq;
	bool ready;			/* fully created, under sim_client_lock */
	int feed_users;			/* feed calls inside, under sim_client_lock */
};

struct PJRT_LoadedExecutable {
	PJRT_Client *client;
	int refs;			/* the caller's and one per execution */
	struct sim_program prog;
};

struct PJRT_Buffer {
	PJRT_Client *client;
	int core;
	int refs;
	size_t bytes;
	PJRT_Buffer_Type type;
	void *data;			/* NULL: never written (reads give zeros) */
	bool deleted;			/* Buffer_Delete: its memory is gone */
	bool charged;			/* its bytes count against its core */
	PJRT_Event *ready;		/* ready once the contents are defined */
};

/* An execution as the runtime tracks it; dev is what the device runs. */
struct sim_exec {
	struct simdev_exec dev;
	PJRT_LoadedExecutable *exe;
	int ndev;
	int core_of[SIM_MAX_CORES];
	PJRT_Event *done[SIM_MAX_CORES];	/* device_complete_events, or NULL */
	PJRT_Buffer *out[SIM_MAX_CORES];
	int pending;				/* cores still running */
};

extern pthread_mutex_t sim_client_lock;
extern PJRT_Client *sim_client;		/* one per process, like libtpu */

/* The process's client, held for a TPU C API call, or NULL; and release. */
PJRT_Client *sim_client_get(void);
void sim_client_put(PJRT_Client *c);
/* The core of `dev` in `c`, or -1 if it is not one of c's devices. */
int sim_device_core(PJRT_Client *c, const void *dev);
/* A buffer of `bytes` on `core`; `backed` gives it host memory for its
 * contents (an H2D copy's), else it reads as zeros. NULL with errno ENOSPC
 * when the core's memory (sim_device_memory) cannot hold it, else ENOMEM. */
PJRT_Buffer *sim_buffer_new(PJRT_Client *c, int core, size_t bytes, bool backed);
/* RESOURCE_EXHAUSTED for a failed sim_buffer_new, saying which memory. */
PJRT_Error *sim_buffer_error(int core, size_t bytes);
/* Each core's memory from now on (Client_Create sets it). */
void sim_buffer_set_capacity(uint64_t bytes);
void sim_buffer_unref(PJRT_Buffer *b);
void sim_executable_unref(PJRT_LoadedExecutable *exe);
/* The device finished `core` of `e`; runs on the runtime thread. */
void sim_exec_core_done(struct sim_exec *e, int core);

/* ---------------------------------------------------------------- runtime */

/* Eventfds per core registered with the device node, and the thread that
 * waits on them and completes executions. */
struct sim_runtime *sim_runtime__new(PJRT_Client *c);
/* Drains completions still queued, then stops; accepts NULL. */
void sim_runtime__free(struct sim_runtime *rt);
/* Device side: queue the completion and signal the core's eventfd. */
void sim_runtime__interrupt(void *rt, struct simdev_exec *e, int core);

/* ---------------------------------------------------------------- profiler */

/* The PJRT profiler extension (plugin_profiler.c): the head of the chain
 * PJRT_Api.extension_start points to. */
PJRT_Extension_Base *sim_profiler_extension(void);
/* The device's tap (simdev_opts.tap): records into started profilers. */
void sim_profiler_tap(void *ctx, const struct simdev_tap_event *ev);

/* ---------------------------------------------------------------- slots */

#define SIM_DECLARE_SLOT(n, name) PJRT_Error *sim_PJRT_##name(void *args);
PJRT_SLOTS(SIM_DECLARE_SLOT)
#undef SIM_DECLARE_SLOT

#endif /* ACCELTRACE_SIM_PLUGIN_H */
