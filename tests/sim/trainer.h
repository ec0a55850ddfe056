/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * tpu-trainer: a training loop that uses the simulated TPU the way a
 * framework uses libtpu (docs/simulator.md has the flags and scenarios).
 */
#ifndef ACCELTRACE_SIM_TRAINER_H
#define ACCELTRACE_SIM_TRAINER_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pjrt_abi.h"
#include "sim_program.h"

enum feed_mode {
	FEED_BUFFER,		/* Client_BufferFromHostBuffer, like JAX */
	FEED_INFEED,		/* TpuTransferManager_TransferLiteral{To,From}*feed */
	FEED_INFEED_RAW,	/* TpuExecutor_EnqueueInfeed / DequeueOutfeed */
};

struct trainer_config {
	const char *plugin;
	uint64_t steps;			/* 0: no step limit */
	uint64_t duration_ns;		/* 0: no time limit */
	uint64_t step_ns;		/* device time of one step */
	int cores;
	double input_bound;		/* wanted fraction of device time waiting */
	int readers;			/* 0: no input pipeline */
	size_t batch_bytes;
	int prefetch;
	const char *data_dir;
	int shards;
	size_t shard_bytes;
	enum feed_mode feed;
	int max_inflight;
	uint64_t fetch_every;		/* 0: never fetch the loss */
	uint64_t long_device_op_ns;
	uint64_t long_device_op_step;
	uint64_t long_host_op_ns;
	uint64_t long_host_op_step;
	uint64_t late_load_ns;
	double churn_rate;		/* short-lived threads per second */
	uint64_t crash_after;		/* abort() after this many steps; 0: never */
	bool submit_ioctl;
	uint64_t trace_records;		/* 0: the plugin's default */
	const char *trace_dir;
	bool no_devtrace;		/* sim_no_devtrace: no devtrace buffers */
	const char *profile;		/* XSpace from the profiler extension; may contain %p */
	const char *device_dir;		/* may contain %p */
	bool no_device_node;
	const char *truth;
	bool truth_ops;
	int trainers;
	int64_t compile_ms;		/* -1: the plugin's default */
	int init_programs;		/* one-off programs run before the first step */
	uint64_t eval_every;		/* an eval program after every N train steps (0 = never) */
	uint64_t eval_ns;		/* its device time (0 = the step time) */
	uint64_t eval_steps;		/* eval executions per eval phase (default 1) */
	uint64_t eval_mem;		/* bytes per device held during an eval phase */
	uint64_t mem_leak;		/* bytes kept on device 0 each train step */
	uint64_t output_bytes;		/* each execution output's size (default 1024) */
	uint64_t device_memory;		/* sim_device_memory (0: the plugin's) */
	uint64_t clock_rate_hz;		/* 0: the plugin's default */
	int64_t clock_drift_ppb;
	bool clock_drift_set;
	uint64_t clock_offset;
	bool keep_files;
	const char *main_thread_name;	/* NULL: pt_main_thread */
};

/* Parses argv into cfg. Returns 0, 1 when --help was printed, or -EINVAL
 * after printing why. */
int trainer_flags_parse(int argc, char **argv, struct trainer_config *cfg);
/* Parses "250us", "2ms", "1.5s", "3m" or plain seconds. */
int trainer_parse_duration(const char *s, uint64_t *ns);

/* Set by SIGTERM/SIGINT. */
extern volatile sig_atomic_t trainer_stop;

static inline bool stopping(void)
{
	return trainer_stop != 0;
}

/* ---------------------------------------------------------------- threads */

/* Starts a thread named `name` (as frameworks name theirs) that records its
 * start and end in the ground truth and leaves signals to the main thread. */
int tthread_start(pthread_t *t, const char *name, const char *role,
		  void *(*fn)(void *), void *arg);
/* Blocks or restores SIGTERM/SIGINT for the calling thread, so threads the
 * plugin creates during a call inherit a blocked mask. */
void tthread_block_signals(sigset_t *old);
void tthread_restore_signals(const sigset_t *old);
/* Sleeps up to ns; returns early (false) when stopping. */
bool tsleep(uint64_t ns);

struct churn;
struct churn *churn__start(double rate, const char *data_dir);
void churn__stop(struct churn *c);

/* ---------------------------------------------------------------- queues */

/* A bounded blocking queue of pointers; close() wakes everyone. */
struct bqueue;
struct bqueue *bqueue__new(size_t cap);
void bqueue__free(struct bqueue *q);
/* 0, or -EPIPE once closed. */
int bqueue__push(struct bqueue *q, void *item);
/* 0, -EPIPE when closed and empty, -EAGAIN when stopping; *waited_ns gets
 * the time spent blocked. */
int bqueue__pop(struct bqueue *q, void **item, uint64_t *waited_ns);
void bqueue__close(struct bqueue *q);

/* ---------------------------------------------------------------- pjrt */

/* The framework side of PJRT: loads the plugin, calls through its table by
 * the slot numbers of the minor the plugin reports. */
struct pjrt;

struct pjrt *pjrt__load(const char *path);
/* Client_Destroy: cancels what runs, wakes blocked feed calls. */
void pjrt__shutdown(struct pjrt *p);
void pjrt__free(struct pjrt *p);		/* shutdown if needed; no dlclose */
int pjrt__minor(const struct pjrt *p);
int pjrt__create_client(struct pjrt *p, const PJRT_NamedValue *opts, size_t n);
int pjrt__num_devices(const struct pjrt *p);
PJRT_Device *pjrt__device(const struct pjrt *p, int i);
int pjrt__compile(struct pjrt *p, const char *code, PJRT_LoadedExecutable **exe);
void pjrt__executable_free(struct pjrt *p, PJRT_LoadedExecutable *exe);

typedef void (*pjrt_ready_fn)(void *ctx, PJRT_Error *err);
/* Asks each output's size (Buffer_OnDeviceSizeInBytes) into out_bytes. */
int pjrt__execute(struct pjrt *p, PJRT_LoadedExecutable *exe, int launch_id,
		  int ndev, PJRT_Buffer *const *args /* [ndev] or NULL */,
		  PJRT_Buffer **outs /* [ndev] */, PJRT_Event **events /* [ndev] */,
		  size_t *out_bytes /* [ndev] */);
/* Event_OnReady with the one static callback; fn(ctx, err) runs once. */
int pjrt__on_ready(struct pjrt *p, PJRT_Event *ev, pjrt_ready_fn fn, void *ctx);
int pjrt__h2d(struct pjrt *p, const void *data, size_t bytes, int device,
	      PJRT_Buffer **out);
/* Size query, ToHostBuffer, Event_Await: blocks until the bytes arrive. */
int pjrt__d2h(struct pjrt *p, PJRT_Buffer *b, void *dst, size_t cap);
/* A buffer of `bytes` with no contents yet: Client_CreateUninitializedBuffer
 * (BufferFromHostBuffer of zeros at minor 26, which lacks it). -ENOMEM when
 * the device's memory is full (said once on stderr, and in the truth). */
int pjrt__create_buffer(struct pjrt *p, size_t bytes, int device, PJRT_Buffer **out);
/* Buffer_Destroy of a buffer of `bytes` on `device` (for the truth). */
void pjrt__buffer_free(struct pjrt *p, PJRT_Buffer *b, int device, size_t bytes);
/* Buffer_Delete (the memory goes), then Buffer_Destroy (the handle). */
void pjrt__buffer_delete(struct pjrt *p, PJRT_Buffer *b, int device, size_t bytes);
void pjrt__event_free(struct pjrt *p, PJRT_Event *ev);
void pjrt__error_free(struct pjrt *p, PJRT_Error *err);
/* The plugin's PJRT profiler extension, as XLA's PluginTracer uses it:
 * created with ProfileOptions (host 2, device 1, version 1) and started;
 * NULL (said on stderr) when the plugin has none or it failed. */
struct pjrt_profiler;
struct pjrt_profiler *pjrt__profiler_start(struct pjrt *p);
/* Stops, collects, writes the XSpace to `path` (without the zero byte
 * the plugin appends) and destroys the profiler; accepts NULL. Returns 0
 * or -errno; *bytes gets the XSpace's size. */
int pjrt__profiler_finish(struct pjrt *p, struct pjrt_profiler *pr, const char *path,
			  size_t *bytes);
/* The TPU C API feed functions, looked up with dlsym. */
int pjrt__infeed(struct pjrt *p, int device, const void *data, size_t bytes, bool raw);
int pjrt__outfeed(struct pjrt *p, int device, void *data, size_t bytes, bool raw);

/* ---------------------------------------------------------------- memory */

/* The train step in progress for the memory truth (-1: none). */
void trainer_mem_set_step(int64_t step);
/* A failed "mem_alloc" line: result = the PJRT error code. */
void trainer_mem_failed(const char *api, int device, size_t bytes, uint64_t t_call,
			uint64_t t_return, const char *size_from, int code);
/* A "mem_alloc" (size_from not NULL) or "mem_free" line, layer pjrt_buffers. */
void trainer_mem_truth(const char *type, const char *api, int device, const PJRT_Buffer *b,
		       size_t bytes, uint64_t t_call, uint64_t t_return, const char *size_from);

/* ---------------------------------------------------------------- input */

struct batch {
	uint64_t seq;
	size_t bytes;
	unsigned char *data;
};

/* Reader threads that pread the data files, preprocess, and fill a bounded
 * prefetch queue (or, with no readers, synthetic batches on demand). */
struct input;
struct input *input__start(const struct trainer_config *cfg, const char *data_dir);
/* Next batch, blocking; NULL when the pipeline is closed. waited_ns gets
 * the time the caller blocked. */
struct batch *input__next(struct input *in, uint64_t *waited_ns);
void input__batch_free(struct batch *b);
/* Wakes and ends the readers and input__next() callers; keeps the object. */
void input__close(struct input *in);
void input__stop(struct input *in);

/* ---------------------------------------------------------------- feeding */

/* Moves batches to the device: H2D buffers handed to the step loop (buffer
 * mode), or infeed/outfeed threads (infeed modes). */
struct feeder;
struct feeder *feeder__start(const struct trainer_config *cfg, struct pjrt *p,
			     struct input *in);
/* Buffer mode: the next step's per-device input buffers. */
int feeder__next(struct feeder *f, PJRT_Buffer **bufs, uint64_t *waited_ns);
/* Infeed modes: one more step will produce outfeed data. */
void feeder__expect_outfeed(struct feeder *f);
/* Before Client_Destroy: waits (briefly) for the outfeed thread to take
 * what the finished steps produced, stops the H2D thread and frees the
 * buffers it queued. The input pipeline must be closed first. */
void feeder__drain(struct feeder *f);
/* After Client_Destroy, which wakes threads blocked in infeed/outfeed. */
void feeder__free(struct feeder *f);

#define TRAINER_OUTFEED_BYTES 1024

/* ---------------------------------------------------------------- loop */

struct loop_result {
	uint64_t steps;
	const char *reason;
};

/* The training loop with its scenarios; returns 0 or -errno. */
int trainer_loop(const struct trainer_config *cfg, struct pjrt *p,
		 struct input *in, struct feeder *f, const char *work_dir,
		 struct loop_result *res);
/* The HLO-like program text for a step (and for the long device op). */
char *trainer_program_text(const struct trainer_config *cfg, bool long_op);
/* A one-off start-up program (parameter initialisation): "jit_init_<i>". */
char *trainer_init_program_text(const struct trainer_config *cfg, int i);
/* The eval program (eval_step) of --eval-every. */
char *trainer_eval_program_text(const struct trainer_config *cfg);

#endif /* ACCELTRACE_SIM_TRAINER_H */
