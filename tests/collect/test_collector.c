// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The collector without the kernel: records built here are fed to it as
 * the probe session would, with a fake attach controller that maps probe
 * ids to pack entries and keeps the control records it is handed.
 *
 * - Execute -> OnReady -> callback: device work per device, named by the
 *   module Compile saw, linked by launch id; steps; the callback probed
 *   through a control record, not by the collector.
 * - ioctls: every decoded field of DRM_IOCTL_IVPU_SUBMIT (6) and
 *   GASKET_IOCTL_MAP_BUFFER's host and device addresses are in the span.
 * - an eventfd registered with a driver: a control record, and its reads
 *   are device waits carrying the interrupt.
 * - GetPjrtApi, exec, fork, exit: control records; exit ends work in flight.
 * - arming: transfers and one-off programs do not arm a window; the first
 *   execution of a program that runs again does; --from-start arms on any.
 * - malformed records and unknown probes are counted as losses.
 * - thread renames: the thread's name history, no span and no track; a
 *   thread with activity has one track, named by its latest name.
 * - allocation failures, injected one at a time: never a crash, and any
 *   difference from the run without failures is counted, never silent.
 * - a planned stop (the daemon's trigger): an execution read after the stop
 *   but before the close is the next window's, whole, not lost to both.
 * - record --windows: the records carried past a window's stop are handled
 *   before the interval's, which may reuse their pointers.
 */
#include <linux/types.h>

#include "test.h"
#include "alloc_fail.h"
#include "acceltrace/events.h"
#include "analyze/mlir_bytecode.h"
#include "capture/capture.h"
#include "collect/collector.h"
#include "collect/control.h"
#include "discover/probe_packs.h"

#define PID 3999990u
#define TID 3999991u
#define MS 1000000ull

enum { P_EXEC, P_ONREADY, P_CALLBACK, P_COMPILE, P_API, P_H2D,
       P_CUDART_LAUNCH, P_CU_LAUNCH, P_CUDART_MEMCPY, P_COMPILE_PROGRAM, P__COUNT };

static const struct rt_pack_entry entries[P__COUNT] = {
	[P_EXEC] = { .name = "PJRT_LoadedExecutable_Execute", .event = RT_EV_EXECUTE },
	[P_ONREADY] = { .name = "PJRT_Event_OnReady", .event = RT_EV_ON_READY },
	[P_CALLBACK] = { .name = "OnReady callback", .event = RT_EV_CALLBACK },
	[P_COMPILE] = { .name = "PJRT_Client_Compile", .event = RT_EV_COMPILE },
	[P_COMPILE_PROGRAM] = { .name = "PJRT_Client_Compile (program)",
				.event = RT_EV_COMPILE_PROGRAM },
	[P_API] = { .name = "GetPjrtApi", .event = RT_EV_GET_PJRT_API },
	[P_H2D] = { .name = "PJRT_Client_BufferFromHostBuffer", .event = RT_EV_H2D },
	[P_CUDART_LAUNCH] = { .name = "cudaLaunchKernel", .event = RT_EV_CUDART_LAUNCH },
	[P_CU_LAUNCH] = { .name = "cuLaunchKernel", .event = RT_EV_CUDA_LAUNCH },
	[P_CUDART_MEMCPY] = { .name = "cudaMemcpyAsync", .event = RT_EV_CUDART_MEMCPY,
			      .n_ops = 5 },
};

struct fake_controller {
	struct control_record recs[64];
	size_t n;
	const char *platform, *vendor;	/* what the runtimes drive */
	/* The target's memory: @mem_len bytes at @mem_addr. */
	const void *mem;
	uint64_t mem_addr, mem_len;
	unsigned int mem_reads;
};

static int fake_read_memory(void *ctx, uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct fake_controller *f = ctx;

	(void)pid;
	f->mem_reads++;
	if (!f->mem || addr < f->mem_addr || addr + len > f->mem_addr + f->mem_len)
		return -EFAULT;
	memcpy(buf, (const char *)f->mem + (addr - f->mem_addr), len);
	return 0;
}


static const struct rt_pack_entry *fake_entry(void *ctx, int probe_id)
{
	(void)ctx;
	return probe_id >= 0 && probe_id < P__COUNT ? &entries[probe_id] : NULL;
}

static const char *fake_platform(void *ctx, uint32_t pid, const char **vendor)
{
	struct fake_controller *f = ctx;

	(void)pid;
	*vendor = f->vendor;
	return f->platform;
}

struct rig {
	struct capture *cap;
	struct collector *col;
	struct fake_controller ctl;
};

/* What the record loop does after a poll: the collector's queued control
 * records taken (here, kept by the fake controller). */
static void take_control(struct rig *r)
{
	const struct control_record *recs;
	size_t n;

	recs = collector__take_control(r->col, &n);
	for (size_t i = 0; i < n && r->ctl.n < sizeof(r->ctl.recs) / sizeof(r->ctl.recs[0]); i++)
		r->ctl.recs[r->ctl.n++] = recs[i];
}

static const struct control_record *find_control(struct rig *r, enum control_kind kind)
{
	take_control(r);
	for (size_t i = 0; i < r->ctl.n; i++)
		if (r->ctl.recs[i].kind == kind)
			return &r->ctl.recs[i];
	return NULL;
}

/* 0, or -errno with nothing left to free. */
static int rig_open_opts(struct rig *r, bool from_start)
{
	struct capture_opts copts = {
		.sz = sizeof(copts), .hostname = "testhost", .session = "s",
	};
	struct collector_opts opts = { .sz = sizeof(opts) };
	struct control_lookups ops = {
		.ctx = &r->ctl, .probe_entry = fake_entry,
		.device_platform = fake_platform, .read_memory = fake_read_memory,
	};

	memset(r, 0, sizeof(*r));
	r->cap = capture__new(&copts);
	if (!r->cap)
		return -errno;
	opts.capture = r->cap;
	opts.arm_on_any_activity = from_start;
	r->col = collector__new(&opts);
	if (!r->col) {
		int err = -errno;

		capture__free(r->cap);
		return err;
	}
	collector__connect(r->col, NULL, &ops);
	return 0;
}

static int rig_open(struct rig *r)
{
	return rig_open_opts(r, false);
}

static void rig_close(struct rig *r)
{
	collector__free(r->col);
	capture__free(r->cap);
}

static void feed(struct rig *r, const void *rec, size_t size)
{
	collector__record(r->col, rec, size);
}

static void rt_call_on(struct rig *r, uint32_t tid, int probe, uint64_t start,
		       uint64_t end, const uint64_t *vals, size_t n, const char *payload)
{
	struct ev_rt_call rec = {
		.h = { .type = EV_RT_CALL, .pid = PID, .tid = tid,
		       .start_ns = start, .end_ns = end },
		.probe_id = probe,
		.n_vals = n,
	};
	size_t len = payload ? strlen(payload) : 0;

	/* Packed, as the kernel sends it: the payload right after vals[n). */
	memcpy(rec.vals, vals, n * sizeof(*vals));
	rec.payload_len = len;
	memcpy((char *)rec.vals + n * sizeof(*vals), payload ? payload : "", len);
	feed(r, &rec, RT_CALL_SIZE(n, len));
}

static void rt_call(struct rig *r, int probe, uint64_t start, uint64_t end,
		    const uint64_t *vals, size_t n, const char *payload)
{
	rt_call_on(r, TID, probe, start, end, vals, n, payload);
}

static void task(struct rig *r, enum task_event ev, uint32_t other, uint64_t t)
{
	struct ev_task rec = {
		.h = { .type = EV_TASK, .pid = PID, .tid = TID, .start_ns = t, .end_ns = t },
		.event = ev, .other = other,
	};

	strcpy(rec.comm, "trainer");
	feed(r, &rec, sizeof(rec));
}

/* Launch @launch runs executable 0x1000 on two devices, whose
 * completions come through OnReady callbacks; its events and callback
 * arguments are the pointers numbered @slot (a runtime reuses freed ones). */
static void execution_in(struct rig *r, uint64_t launch, uint64_t slot, uint64_t t,
			 bool complete)
{
	uint64_t exec[V_EXEC_EVENT0 + 2] = {
		[V_EXEC_EXECUTABLE] = 0x1000, [V_EXEC_LAUNCH_ID] = launch,
		[V_EXEC_NUM_DEVICES] = 2, [V_EXEC_EVENTS] = 0x5000,
		[V_EXEC_EVENT0] = 0xa0 + slot * 2, [V_EXEC_EVENT0 + 1] = 0xa1 + slot * 2,
	};

	rt_call(r, P_EXEC, t, t + 1 * MS, exec, V_EXEC_EVENT0 + 2, NULL);
	for (uint64_t d = 0; d < 2; d++) {
		uint64_t on_ready[] = { exec[V_EXEC_EVENT0 + d], 0xc0, 0x100 + slot * 2 + d };
		uint64_t cb[] = { 0, 0x100 + slot * 2 + d };

		rt_call(r, P_ONREADY, t + 1 * MS, t + 1 * MS, on_ready, 3, NULL);
		if (complete)
			rt_call(r, P_CALLBACK, t + 5 * MS + d, t + 5 * MS + d + 1000, cb, 2,
				NULL);
	}
}

/* Compile names executable 0x1000 jit_step; launch 7 runs it on two
 * devices, pointers of its own. */
static void execution(struct rig *r, uint64_t launch, uint64_t t, bool complete)
{
	execution_in(r, launch, launch, t, complete);
}

static uint64_t count_kind(const struct capture *c, enum span_kind kind)
{
	uint64_t n = 0;

	for (size_t t = 0; t < capture__num_tracks(c); t++) {
		size_t ns;
		const struct capture_span *s = capture__track_spans(c, t, &ns);

		for (size_t i = 0; s && i < ns; i++)
			n += s[i].kind == kind;
	}
	return n;
}

static const struct capture_span *first_of(const struct capture *c, enum span_kind kind)
{
	for (size_t t = 0; t < capture__num_tracks(c); t++) {
		size_t ns;
		const struct capture_span *s = capture__track_spans(c, t, &ns);

		for (size_t i = 0; s && i < ns; i++)
			if (s[i].kind == kind)
				return &s[i];
	}
	return NULL;
}

static bool arg_u64(const struct capture *c, const struct capture_span *s,
		    const char *key, uint64_t *v)
{
	for (uint32_t i = 0; i < s->nargs; i++)
		if (!strcmp(capture__string(c, s->args[i].key), key)) {
			*v = s->args[i].value.u;
			return true;
		}
	return false;
}

static void test_execution(void)
{
	const char *hlo = "HloModule jit_step, entry_computation_layout={}";
	uint64_t compile[V_COMPILE_EXECUTABLE + 1] = { [V_COMPILE_EXECUTABLE] = 0x1000 };
	const struct capture_span *s;
	const struct control_record *cr;
	struct rig r;
	uint64_t v;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	r.ctl.platform = "GPU";		/* a PJRT plugin that drives CUDA */
	r.ctl.vendor = "Nvidia";
	rt_call(&r, P_COMPILE, 1 * MS, 2 * MS, compile, V_COMPILE_EXECUTABLE + 1, hlo);
	execution(&r, 7, 10 * MS, true);
	ASSERT_OK(collector__open_window(r.col, 9 * MS), "open window");
	execution(&r, 8, 20 * MS, true);
	collector__begin_close(r.col, 40 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (!ASSERT_OK(capture__finalize(r.cap), "finalize"))
		goto out;
	ASSERT_EQ(count_kind(r.cap, SPAN_DEVICE_MODULE), 4, "device executions (2 launches x 2)");
	ASSERT_EQ(count_kind(r.cap, SPAN_DEVICE_STEP), 4, "steps: every execution of jit_step");
	ASSERT_EQ(count_kind(r.cap, SPAN_CALLBACK), 4, "callbacks");
	ASSERT_EQ(collector__stats(r.col)->completions, 4, "completions matched");
	s = first_of(r.cap, SPAN_DEVICE_MODULE);
	if (ASSERT_OK_PTR(s, "a device execution")) {
		ASSERT_STREQ(capture__string(r.cap, s->name), "jit_step", "named by Compile");
		ASSERT_EQ(s->correlation_id, 7, "linked to its launch");
		ASSERT_TRUE(arg_u64(r.cap, s, "launch_id", &v) && v == 7, "launch_id arg");
	}
	if (ASSERT_TRUE(capture__num_devices(r.cap) > 0, "devices")) {
		const struct capture_device *d = capture__device_info(r.cap, 0);

		ASSERT_STREQ(capture__string(r.cap, d->platform), "GPU",
			     "platform from the runtimes the process maps");
		ASSERT_STREQ(capture__string(r.cap, d->vendor), "Nvidia", "vendor");
	}
	cr = find_control(&r, CTL_CALLBACK_REGISTERED);
	if (ASSERT_OK_PTR(cr, "callback handed to the controller")) {
		ASSERT_EQ(cr->value, 0xc0, "callback address");
		ASSERT_EQ(cr->pid, PID, "callback pid");
	}
out:
	rig_close(&r);
}

static void ioctl_on(struct rig *r, uint32_t fd, uint32_t cmd, const void *arg,
		     size_t len, uint64_t t)
{
	struct ev_syscall rec = {
		.h = { .type = EV_SYSCALL, .pid = PID, .tid = TID, .start_ns = t,
		       .end_ns = t + 1000 },
		.sc = SC_IOCTL, .fd = fd, .args = { cmd }, .fd_kind = FD_DEVICE,
		.argbuf_len = len,
	};

	memcpy(rec.argbuf, arg, len);
	feed(r, &rec, sizeof(rec));
}

static void dev_open(struct rig *r, const char *path, int fd, uint64_t t)
{
	struct ev_dev_open rec = {
		.h = { .type = EV_DEV_OPEN, .pid = PID, .tid = TID, .start_ns = t,
		       .end_ns = t + 1000 },
		.fd = fd,
	};

	snprintf(rec.path, sizeof(rec.path), "%s", path);
	feed(r, &rec, sizeof(rec));
}

static const struct capture_span *span_named(const struct capture *c, const char *name)
{
	for (size_t t = 0; t < capture__num_tracks(c); t++) {
		size_t ns;
		const struct capture_span *s = capture__track_spans(c, t, &ns);

		for (size_t i = 0; s && i < ns; i++)
			if (!strcmp(capture__string(c, s[i].name), name))
				return &s[i];
	}
	return NULL;
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf = malloc(1 << 16);

	*len = f && buf ? fread(buf, 1, 1 << 16, f) : 0;
	if (f)
		fclose(f);
	if (!*len) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * Compile's program is read in the target while Compile runs: MLIR
 * bytecode names its module past the bytes a probe copies, and JAX frees
 * it as Compile returns (the fake memory is gone by the return here). It
 * is read after the drain that brought the entry, not in the ring
 * callback. The return names the executable with what was read; a program
 * that cannot be read falls back to the copied bytes.
 */
static void test_compile_program(void)
{
	const uint64_t addr = 0x7f0000001000ull;
	uint64_t entry[V_COMPILE_CODE_SIZE + 1] = { [V_COMPILE_PROGRAM] = 0x5000,
						    [V_COMPILE_CODE] = addr };
	uint64_t compile[V_COMPILE_EXECUTABLE + 1] = { [V_COMPILE_EXECUTABLE] = 0x1000 };
	uint64_t other[V_COMPILE_EXECUTABLE + 1] = { [V_COMPILE_EXECUTABLE] = 0x2000 };
	const struct capture_span *s;
	size_t len;
	void *bc = slurp("tests/analyze/data/jit_train_step.v6.mlirbc", &len);
	struct rig r;

	if (!ASSERT_OK_PTR(bc, "bytecode fixture") || !ASSERT_OK(rig_open(&r), "rig")) {
		free(bc);
		return;
	}
	entry[V_COMPILE_CODE_SIZE] = len;
	ASSERT_OK(collector__open_window(r.col, 1), "open window");
	r.ctl.mem = bc;
	r.ctl.mem_addr = addr;
	r.ctl.mem_len = len;
	rt_call(&r, P_COMPILE_PROGRAM, 1 * MS, 1 * MS, entry, V_COMPILE_CODE_SIZE + 1, NULL);
	ASSERT_EQ(r.ctl.mem_reads, 0, "not read in the ring callback");
	ASSERT_EQ(collector__name_programs(r.col), 1, "named after the drain");
	ASSERT_TRUE(r.ctl.mem_reads > 0, "read while Compile runs");
	r.ctl.mem = NULL;		/* freed as Compile returns */
	rt_call(&r, P_COMPILE, 1 * MS, 5 * MS, compile, V_COMPILE_EXECUTABLE + 1, NULL);
	/* Another thread's program is gone before it is read: the copied
	 * first bytes name it. */
	rt_call_on(&r, TID + 1, P_COMPILE_PROGRAM, 6 * MS, 6 * MS, entry,
		   V_COMPILE_CODE_SIZE + 1, NULL);
	rt_call_on(&r, TID + 1, P_COMPILE, 6 * MS, 7 * MS, other, V_COMPILE_EXECUTABLE + 1,
		   "HloModule jit_eval_step, entry_computation_layout={}");
	execution(&r, 7, 10 * MS, true);
	collector__begin_close(r.col, 40 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	ASSERT_EQ(collector__stats(r.col)->programs_read, 2, "programs read");
	ASSERT_EQ(collector__stats(r.col)->programs_unnamed, 1, "one could not be read");
	if (ASSERT_OK(capture__finalize(r.cap), "finalize")) {
		s = first_of(r.cap, SPAN_DEVICE_MODULE);
		if (ASSERT_OK_PTR(s, "a device execution"))
			ASSERT_STREQ(capture__string(r.cap, s->name), "jit_train_step",
				     "named from the bytecode read at Compile's entry");
		ASSERT_OK_PTR(span_named(r.cap, "PJRT_Client_Compile"), "Compile span");
		ASSERT_TRUE(!span_named(r.cap, "PJRT_Client_Compile (program)"),
			    "the entry record makes no span of its own");
	}
	rig_close(&r);
	free(bc);
}

/* The string of @s's arg @key, or NULL. */
static const char *arg_str(const struct capture *c, const struct capture_span *s,
			   const char *key)
{
	for (uint32_t i = 0; i < s->nargs; i++)
		if (s->args[i].type == ARG_STR &&
		    !strcmp(capture__string(c, s->args[i].key), key))
			return capture__string(c, s->args[i].value.str);
	return NULL;
}

/*
 * Compile's entry, its return and the executions of what it compiled all
 * in one drain: the return and the executions wait for the name (read
 * after the drain), then are handled in their order: the Compile span,
 * the Executes and the device executions carry the program's name, and
 * every completion still finds its execution.
 */
static void test_compile_program_one_drain(void)
{
	const uint64_t addr = 0x7f0000001000ull;
	uint64_t entry[V_COMPILE_CODE_SIZE + 1] = { [V_COMPILE_PROGRAM] = 0x5000,
						    [V_COMPILE_CODE] = addr };
	uint64_t compile[V_COMPILE_EXECUTABLE + 1] = { [V_COMPILE_EXECUTABLE] = 0x1000 };
	const struct capture_span *s;
	size_t len;
	void *bc = slurp("tests/analyze/data/jit_train_step.v6.mlirbc", &len);
	struct rig r;

	if (!ASSERT_OK_PTR(bc, "bytecode fixture") || !ASSERT_OK(rig_open(&r), "rig")) {
		free(bc);
		return;
	}
	entry[V_COMPILE_CODE_SIZE] = len;
	ASSERT_OK(collector__open_window(r.col, 1), "open window");
	r.ctl.mem = bc;
	r.ctl.mem_addr = addr;
	r.ctl.mem_len = len;
	rt_call(&r, P_COMPILE_PROGRAM, 1 * MS, 1 * MS, entry, V_COMPILE_CODE_SIZE + 1, NULL);
	rt_call(&r, P_COMPILE, 1 * MS, 5 * MS, compile, V_COMPILE_EXECUTABLE + 1, NULL);
	execution(&r, 7, 10 * MS, true);
	ASSERT_EQ(r.ctl.mem_reads, 0, "nothing read in the ring callbacks");
	ASSERT_EQ(collector__stats(r.col)->completions, 0, "the completions wait too");
	ASSERT_EQ(collector__name_programs(r.col), 1, "named after the drain");
	ASSERT_EQ(collector__name_programs(r.col), 0, "once");
	ASSERT_EQ(collector__stats(r.col)->completions, 2, "then handled, in order");
	collector__begin_close(r.col, 40 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (ASSERT_OK(capture__finalize(r.cap), "finalize")) {
		ASSERT_EQ(count_kind(r.cap, SPAN_DEVICE_MODULE), 2, "both devices' executions");
		s = first_of(r.cap, SPAN_DEVICE_MODULE);
		if (ASSERT_OK_PTR(s, "a device execution"))
			ASSERT_STREQ(capture__string(r.cap, s->name), "jit_train_step",
				     "the device execution named");
		s = span_named(r.cap, "PJRT_Client_Compile");
		if (ASSERT_OK_PTR(s, "Compile span"))
			ASSERT_STREQ(arg_str(r.cap, s, "module"), "jit_train_step",
				     "the Compile span named");
		s = first_of(r.cap, SPAN_EXECUTE);
		if (ASSERT_OK_PTR(s, "Execute span"))
			ASSERT_STREQ(arg_str(r.cap, s, "module"), "jit_train_step",
				     "the Execute named");
	}
	rig_close(&r);
	free(bc);
}

/* A bytecode program of more strings than are indexed: not read further,
 * named for what it is, and counted in the capture. */
static void test_program_too_large(void)
{
	const uint64_t addr = 0x7f0000001000ull, strings = MLIR_NAME_MAX_ENTRIES + 1;
	uint64_t entry[V_COMPILE_CODE_SIZE + 1] = { [V_COMPILE_PROGRAM] = 0x5000,
						    [V_COMPILE_CODE] = addr };
	uint64_t compile[V_COMPILE_EXECUTABLE + 1] = { [V_COMPILE_EXECUTABLE] = 0x1000 };
	/* Three-byte MLIR varints: (v << 3 | 0b100), little-endian. */
#define VARINT3(v) (uint8_t)((v) << 3 | 4), (uint8_t)((v) >> 5), (uint8_t)((v) >> 13)
	const uint8_t head[] = { 'M', 'L', 0xef, 'R', 0x03, 0,
				 0, VARINT3(strings + 3), VARINT3(strings) };
	const uint8_t tail[] = { 1, 1, 2, 1, 3, 1, 4, 9, 5, 1, 0, 1 };
	size_t len = sizeof(head) + strings + sizeof(tail), found = 0;
	uint8_t *bc = calloc(1, len);
	const struct capture_span *s;
	uint64_t n;
	struct rig r;

	if (!ASSERT_OK_PTR(bc, "program") || !ASSERT_OK(rig_open(&r), "rig")) {
		free(bc);
		return;
	}
	/* magic, version 1, producer "", strings (the count, a byte each),
	 * empty dialects and attributes, an IR of the root op alone */
	memcpy(bc, head, sizeof(head));
	memcpy(bc + sizeof(head) + strings, tail, sizeof(tail));
	entry[V_COMPILE_CODE_SIZE] = len;
	ASSERT_OK(collector__open_window(r.col, 1), "open window");
	r.ctl.mem = bc;
	r.ctl.mem_addr = addr;
	r.ctl.mem_len = len;
	rt_call(&r, P_COMPILE_PROGRAM, 1 * MS, 1 * MS, entry, V_COMPILE_CODE_SIZE + 1, NULL);
	rt_call(&r, P_COMPILE, 1 * MS, 5 * MS, compile, V_COMPILE_EXECUTABLE + 1, NULL);
	execution(&r, 7, 10 * MS, true);
	ASSERT_EQ(collector__name_programs(r.col), 1, "named after the drain");
	ASSERT_EQ(collector__stats(r.col)->programs_too_large, 1, "counted");
	collector__begin_close(r.col, 40 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (ASSERT_OK(capture__finalize(r.cap), "finalize")) {
		s = first_of(r.cap, SPAN_DEVICE_MODULE);
		if (ASSERT_OK_PTR(s, "a device execution"))
			ASSERT_STRCONTAINS(capture__string(r.cap, s->name),
					   "unnamed program (", "a fallback name");
		for (size_t i = 0; i < capture__num_losses(r.cap); i++)
			if (strstr(capture__loss(r.cap, i, &n), "naming bounds") && n == 1)
				found++;
		ASSERT_EQ(found, 1, "the capture says so");
	}
#undef VARINT3
	rig_close(&r);
	free(bc);
}

static void test_ioctls(void)
{
	/* struct drm_ivpu_submit: u64 buffers_ptr, u32 count, engine, flags,
	 * commands_offset, priority. */
	struct { __u64 ptr; __u32 count, engine, flags, off, prio; } submit = {
		0x7f0000001000, 3, 1, 0x2, 0x40, 2,
	};
	/* struct gasket_page_table_ioctl: index, size, host, device address. */
	__u64 map[4] = { 0, 0x200000, 0x7f0000200000, 0x10000000 };
	static const char *const submit_fields[] = {
		"buffers_ptr", "buffer_count", "engine", "flags", "commands_offset",
		"priority",
	};
	const uint64_t submit_values[] = { 0x7f0000001000, 3, 1, 0x2, 0x40, 2 };
	const struct capture_span *s;
	struct rig r;
	uint64_t v;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	ASSERT_OK(collector__open_window(r.col, 1 * MS), "open window");
	dev_open(&r, "/dev/accel/accel0", 5, 2 * MS);
	dev_open(&r, "/dev/accel0", 6, 2 * MS);
	ASSERT_OK_PTR(find_control(&r, CTL_DEVICE_OPENED), "device open handed over");
	ioctl_on(&r, 5, 0xc0206445, &submit, sizeof(submit), 3 * MS);
	ioctl_on(&r, 6, 0x4020dc08, map, sizeof(map), 4 * MS);
	collector__begin_close(r.col, 10 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (!ASSERT_OK(capture__finalize(r.cap), "finalize"))
		goto out;
	s = span_named(r.cap, "DRM_IOCTL_IVPU_SUBMIT");
	if (ASSERT_OK_PTR(s, "IVPU submit decoded"))
		for (size_t i = 0; i < 6; i++)
			ASSERT_TRUE(arg_u64(r.cap, s, submit_fields[i], &v) &&
				    v == submit_values[i], submit_fields[i]);
	s = span_named(r.cap, "GASKET_IOCTL_MAP_BUFFER");
	if (ASSERT_OK_PTR(s, "gasket map decoded")) {
		ASSERT_TRUE(arg_u64(r.cap, s, "host_address", &v) && v == map[2],
			    "host_address kept");
		ASSERT_TRUE(arg_u64(r.cap, s, "device_address", &v) && v == map[3],
			    "device_address kept");
		ASSERT_TRUE(arg_u64(r.cap, s, "size", &v) && v == map[1], "size kept");
	}
out:
	rig_close(&r);
}

static void test_eventfd(void)
{
	__u64 set_eventfd[2] = { 3, 9 };	/* interrupt 3 -> eventfd 9 */
	struct ev_syscall rd = {
		.h = { .type = EV_SYSCALL, .pid = PID, .tid = TID, .start_ns = 5 * MS,
		       .end_ns = 6 * MS },
		.sc = SC_READ, .fd = 9, .ret = 8, .fd_kind = FD_EVENTFD, .argbuf_len = 8,
	};
	const struct control_record *cr;
	const struct capture_span *s;
	struct rig r;
	uint64_t one = 1;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	ASSERT_OK(collector__open_window(r.col, 1 * MS), "open window");
	dev_open(&r, "/dev/accel0", 6, 2 * MS);
	ioctl_on(&r, 6, 0x4010dc01, set_eventfd, sizeof(set_eventfd), 3 * MS);
	cr = find_control(&r, CTL_EVENTFD_REGISTERED);
	if (ASSERT_OK_PTR(cr, "eventfd handed to the controller"))
		ASSERT_EQ(cr->fd, 9, "the eventfd");
	memcpy(rd.argbuf, &one, sizeof(one));
	feed(&r, &rd, sizeof(rd));
	collector__begin_close(r.col, 10 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (!ASSERT_OK(capture__finalize(r.cap), "finalize"))
		goto out;
	s = first_of(r.cap, SPAN_DEVICE_WAIT);
	if (ASSERT_OK_PTR(s, "eventfd read is a device wait")) {
		uint64_t v;

		ASSERT_TRUE(arg_u64(r.cap, s, "interrupt", &v) && v == 3, "interrupt");
	}
out:
	rig_close(&r);
}

/* A file mapped executable: a control record with the mapping and the
 * file's identity (the controller examines the process), and no span. */
static void test_code_mapped(void)
{
	struct ev_mapped m = {
		.h = { .type = EV_MAPPED, .pid = PID, .tid = TID, .start_ns = 2 * MS,
		       .end_ns = 2 * MS + 10 },
		.start = 0x7f0000001000, .end = 0x7f0000003000, .pgoff = 1,
		.dev = 0x803, .ino = 4242, .addr = 0x7f0000001000, .len = 0x2000,
		.sc = SC_MMAP, .prot = 5,
	};
	const struct control_record *cr;
	struct rig r;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	ASSERT_OK(collector__open_window(r.col, 1 * MS), "open window");
	feed(&r, &m, sizeof(m));
	cr = find_control(&r, CTL_MAPPED);
	if (ASSERT_OK_PTR(cr, "mapping handed to the controller")) {
		ASSERT_EQ(cr->pid, PID, "the process");
		ASSERT_EQ(cr->value, 0x7f0000001000, "mapping start");
		ASSERT_EQ(cr->map_end, 0x7f0000003000, "mapping end");
		ASSERT_EQ(cr->map_pgoff, 1, "file offset");
		ASSERT_EQ(cr->dev, 0x803, "file device");
		ASSERT_EQ(cr->ino, 4242, "file inode");
	}
	ASSERT_EQ(collector__stats(r.col)->records[EV_MAPPED], 1, "counted");
	/* Short: refused before it reaches the controller. */
	r.ctl.n = 0;
	feed(&r, &m, sizeof(m) - 8);
	ASSERT_TRUE(!find_control(&r, CTL_MAPPED), "short record refused");
	collector__begin_close(r.col, 10 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (ASSERT_OK(capture__finalize(r.cap), "finalize"))
		ASSERT_EQ(capture__spans_kept(r.cap), 0, "no span");
	rig_close(&r);
}

static void test_process_lifecycle(void)
{
	uint64_t api[] = { 0xfeed000 };
	const struct control_record *cr;
	const struct capture_span *s;
	struct rig r;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	ASSERT_OK(collector__open_window(r.col, 1 * MS), "open window");
	rt_call(&r, P_API, 2 * MS, 2 * MS + 100, api, 1, NULL);
	cr = find_control(&r, CTL_PJRT_API_RETURNED);
	if (ASSERT_OK_PTR(cr, "GetPjrtApi handed over"))
		ASSERT_EQ(cr->value, 0xfeed000, "table address");
	task(&r, TASK_EXEC, 0, 3 * MS);
	ASSERT_OK_PTR(find_control(&r, CTL_EXEC), "exec handed over");
	task(&r, TASK_FORK, PID + 5, 4 * MS);
	cr = find_control(&r, CTL_FORK);
	if (ASSERT_OK_PTR(cr, "fork handed over"))
		ASSERT_EQ(cr->value, PID + 5, "the child");
	execution(&r, 1, 5 * MS, false);
	task(&r, TASK_PROC_EXIT, 0, 8 * MS);
	ASSERT_OK_PTR(find_control(&r, CTL_EXIT), "exit handed over");
	collector__begin_close(r.col, 10 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (!ASSERT_OK(capture__finalize(r.cap), "finalize"))
		goto out;
	ASSERT_EQ(count_kind(r.cap, SPAN_DEVICE_MODULE), 2, "work in flight ended at exit");
	s = first_of(r.cap, SPAN_DEVICE_MODULE);
	if (ASSERT_OK_PTR(s, "device execution")) {
		ASSERT_TRUE(s->flags & SPAN_F_TARGET_EXITED, "marked: target exited");
		ASSERT_EQ(s->end_ns, 8 * MS, "ends at the exit");
	}
out:
	rig_close(&r);
}

/* Control records wait in the collector's queue, in order, for the record
 * loop to take them; a run of the same is one; past the bound they are
 * counted, and the capture says so. */
static void test_control_queue(void)
{
	const struct control_record *recs;
	uint64_t api[] = { 0xfeed000 };
	bool warned = false;
	size_t n;
	struct rig r;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	ASSERT_OK(collector__open_window(r.col, 1 * MS), "open window");
	rt_call(&r, P_API, 2 * MS, 2 * MS + 100, api, 1, NULL);
	task(&r, TASK_FORK, PID + 5, 3 * MS);
	task(&r, TASK_FORK, PID + 5, 3 * MS);
	task(&r, TASK_EXEC, 0, 4 * MS);
	recs = collector__take_control(r.col, &n);
	if (ASSERT_EQ(n, 3, "three queued: the repeated fork once")) {
		ASSERT_EQ(recs[0].kind, CTL_PJRT_API_RETURNED, "in order: the table");
		ASSERT_EQ(recs[1].kind, CTL_FORK, "the fork");
		ASSERT_EQ(recs[2].kind, CTL_EXEC, "the exec");
	}
	collector__take_control(r.col, &n);
	ASSERT_EQ(n, 0, "taken: the queue is empty");

	/* Untaken, the queue stops at its bound: the rest counted. */
	for (uint32_t i = 0; i < CONTROL_QUEUE_MAX + 10; i++)
		task(&r, TASK_FORK, 100000 + i, 5 * MS);
	collector__take_control(r.col, &n);
	ASSERT_EQ(n, CONTROL_QUEUE_MAX, "bounded");
	ASSERT_EQ(collector__stats(r.col)->control_dropped, 10, "the rest counted");
	collector__begin_close(r.col, 10 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (ASSERT_OK(capture__finalize(r.cap), "finalize"))
		for (size_t i = 0; i < capture__num_warnings(r.cap); i++)
			warned |= strstr(capture__warning(r.cap, i), "waited for a rescan") != NULL;
	ASSERT_TRUE(warned, "the capture says probes may be late");
	rig_close(&r);
}

static void test_bad_records(void)
{
	struct ev_header short_rec = { .type = EV_RT_CALL };
	uint64_t vals[1] = { 0 };
	struct rig r;
	uint64_t n;
	bool malformed = false, unknown = false;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	ASSERT_OK(collector__open_window(r.col, 1 * MS), "open window");
	feed(&r, &short_rec, sizeof(short_rec));
	short_rec.type = 999;
	feed(&r, &short_rec, sizeof(short_rec));
	/* Packed runtime calls whose counts describe more than was sent, or
	 * more than a record holds. */
	{
		struct ev_rt_call rt = { .h = { .type = EV_RT_CALL, .pid = PID },
					 .n_vals = 2, .payload_len = 8 };

		feed(&r, &rt, RT_CALL_SIZE(2, 8) - 1);
		rt.n_vals = AT_MAX_FETCH_OPS + 1;
		rt.payload_len = 0;
		feed(&r, &rt, sizeof(rt));
		rt.n_vals = 0;
		rt.payload_len = AT_RT_PAYLOAD + 1;
		feed(&r, &rt, sizeof(rt));
	}
	rt_call(&r, 77, 2 * MS, 3 * MS, vals, 1, NULL);
	ASSERT_EQ(collector__stats(r.col)->bad_records, 5, "malformed records counted");
	ASSERT_EQ(collector__stats(r.col)->unknown_probes, 1, "unknown probe counted");
	ASSERT_OK(collector__finish(r.col), "finish");
	ASSERT_OK(capture__finalize(r.cap), "finalize");
	for (size_t i = 0; i < capture__num_losses(r.cap); i++) {
		const char *what = capture__loss(r.cap, i, &n);

		malformed |= !strcmp(what, "malformed records") && n == 5;
		unknown |= !strcmp(what, "records from unknown probes") && n == 1;
	}
	ASSERT_TRUE(malformed, "capture says: malformed records");
	ASSERT_TRUE(unknown, "capture says: records from unknown probes");
	rig_close(&r);
}

static void task_of(struct rig *r, uint32_t tid, enum task_event ev, const char *comm,
		    const char *oldcomm, uint64_t t)
{
	struct ev_task rec = {
		.h = { .type = EV_TASK, .pid = PID, .tid = tid, .start_ns = t, .end_ns = t },
		.event = ev,
	};

	snprintf(rec.comm, sizeof(rec.comm), "%s", comm);
	snprintf(rec.oldcomm, sizeof(rec.oldcomm), "%s", oldcomm ? oldcomm : "");
	feed(r, &rec, sizeof(rec));
}

static void file_read_on(struct rig *r, uint32_t tid, uint64_t t)
{
	struct ev_syscall rec = {
		.h = { .type = EV_SYSCALL, .pid = PID, .tid = tid, .start_ns = t,
		       .end_ns = t + 1000 },
		.sc = SC_PREAD64, .fd = 5, .ret = 4096, .args = { 4096, 0 },
		.fd_kind = FD_UNKNOWN,
	};

	feed(r, &rec, sizeof(rec));
}

/* Thread (PID, tid)'s name history as "a@t b@t ..." (t "?" when unknown). */
static void history_of(const struct capture *c, uint32_t tid, char *buf, size_t size)
{
	const struct capture_thread_name *h;
	int i = capture__find_thread(c, PID, tid);
	size_t n, len = 0;
	uint64_t more;

	buf[0] = '\0';
	if (i < 0)
		return;
	h = capture__thread_names(c, i, &n, &more);
	for (size_t k = 0; k < n && len < size; k++) {
		if (h[k].ts_ns)
			len += snprintf(buf + len, size - len, "%s%s@%llu", k ? " " : "",
					capture__string(c, h[k].name),
					(unsigned long long)(h[k].ts_ns / MS));
		else
			len += snprintf(buf + len, size - len, "%s%s@?", k ? " " : "",
					capture__string(c, h[k].name));
	}
}

static bool has_track(const struct capture *c, uint32_t tid)
{
	for (size_t t = 0; t < capture__num_tracks(c); t++) {
		const struct capture_track *tr = capture__track(c, t);

		if (tr->kind == TRACK_HOST_THREAD && tr->pid == PID && tr->tid == tid)
			return true;
	}
	return false;
}

/*
 * A rename is the thread's name history, not an event: a thread that only
 * renames itself has no track (so no line); one with a file read has one
 * track named by its latest name; a thread first seen renaming had the old
 * name before.
 */
static void test_thread_renames(void)
{
	const uint32_t idle = TID + 1, reader = TID + 2, old = TID + 3;
	const struct capture_track *tr = NULL;
	char hist[256];
	struct rig r;
	int i;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	ASSERT_OK(collector__open_window(r.col, 1 * MS), "open window");
	task_of(&r, idle, TASK_NEW, "python3", NULL, 2 * MS);
	task_of(&r, idle, TASK_RENAME, "tf_foreach", "python3", 3 * MS);
	task_of(&r, idle, TASK_RENAME, "tf_foreach_2", "tf_foreach", 4 * MS);
	task_of(&r, reader, TASK_NEW, "python3", NULL, 2 * MS);
	task_of(&r, reader, TASK_RENAME, "pt_data_worker", "python3", 5 * MS);
	file_read_on(&r, reader, 6 * MS);
	task_of(&r, old, TASK_RENAME, "llvm-worker-0", "python3", 7 * MS);
	collector__begin_close(r.col, 10 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (!ASSERT_OK(capture__finalize(r.cap), "finalize"))
		goto out;

	ASSERT_EQ(count_kind(r.cap, SPAN_INSTANT_THREAD), 0, "a rename is not a span");
	ASSERT_FALSE(has_track(r.cap, idle), "renames alone make no track");
	ASSERT_FALSE(has_track(r.cap, old), "nor a rename of a thread seen first then");
	history_of(r.cap, idle, hist, sizeof(hist));
	ASSERT_STREQ(hist, "python3@2 tf_foreach@3 tf_foreach_2@4", "idle thread: 3 names");
	i = capture__find_thread(r.cap, PID, idle);
	if (ASSERT_GE(i, 0, "idle thread known"))
		ASSERT_STREQ(capture__string(r.cap, capture__thread(r.cap, i)->name),
			     "tf_foreach_2", "its latest name");
	history_of(r.cap, old, hist, sizeof(hist));
	ASSERT_STREQ(hist, "python3@? llvm-worker-0@7", "first seen renaming: the old name");

	for (size_t t = 0; t < capture__num_tracks(r.cap); t++) {
		const struct capture_track *x = capture__track(r.cap, t);

		if (x->kind == TRACK_HOST_THREAD && x->tid == reader)
			tr = x;
	}
	if (ASSERT_OK_PTR(tr, "the reader has a track")) {
		size_t n;
		const struct capture_span *sp = capture__track_spans(r.cap, tr->id, &n);

		ASSERT_STREQ(capture__string(r.cap, tr->name), "pt_data_worker",
			     "named by its latest name");
		ASSERT_EQ(n, 1, "holding its read only");
		if (sp && n)
			ASSERT_EQ(sp[0].kind, SPAN_FILE_READ, "a file read");
	}
	history_of(r.cap, reader, hist, sizeof(hist));
	ASSERT_STREQ(hist, "python3@2 pt_data_worker@5", "reader: 2 names");
out:
	rig_close(&r);
}

static void test_planned_stop(void)
{
	uint64_t compile[V_COMPILE_EXECUTABLE + 1] = { [V_COMPILE_EXECUTABLE] = 0x1000 };
	struct capture_opts copts = { .sz = sizeof(copts), .hostname = "testhost", .session = "s2" };
	const struct capture_span *s;
	struct capture *next = NULL;
	struct rig r;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	rt_call(&r, P_COMPILE, 1 * MS, 2 * MS, compile, V_COMPILE_EXECUTABLE + 1,
		"HloModule jit_step");
	ASSERT_OK(collector__open_window(r.col, 2 * MS), "open window");
	collector__plan_stop(r.col, 30 * MS);
	execution(&r, 1, 10 * MS, true);
	/* Read in the loop turn between the stop and the close. */
	execution(&r, 2, 35 * MS, true);
	collector__begin_close(r.col, 30 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (!ASSERT_OK(capture__finalize(r.cap), "finalize"))
		goto out;
	ASSERT_EQ(count_kind(r.cap, SPAN_EXECUTE), 1, "the first window: launch 1 only");
	ASSERT_EQ(count_kind(r.cap, SPAN_DEVICE_MODULE), 2, "and its device work");

	next = capture__new(&copts);
	if (!ASSERT_OK_PTR(next, "next capture") ||
	    !ASSERT_OK(collector__set_capture(r.col, next), "set capture"))
		goto out;
	ASSERT_OK(collector__open_window(r.col, 30 * MS), "the next window opens at the stop");
	collector__begin_close(r.col, 100 * MS);
	ASSERT_OK(collector__finish(r.col), "finish next");
	if (!ASSERT_OK(capture__finalize(next), "finalize next"))
		goto out;
	s = first_of(next, SPAN_EXECUTE);
	ASSERT_TRUE(s && s->start_ns == 35 * MS && count_kind(next, SPAN_EXECUTE) == 1,
		    "the next window holds launch 2, read before the close");
	ASSERT_EQ(count_kind(next, SPAN_DEVICE_MODULE), 2, "with its device work, completed");
	ASSERT_EQ(capture__span_count(next, SPAN_CALLBACK), 2, "and its callbacks");
out:
	rig_close(&r);
	capture__free(next);
}

/*
 * record --windows: a window's close reads records past its stop and
 * carries them to the next window; the next one is armed an interval
 * later. Launch 2, read during the close, completed long ago; launch 3,
 * issued between the windows on launch 2's freed events and callback
 * arguments, runs through the second window. Launch 2's records must be
 * handled before launch 3's (they came first): replayed when the second
 * window opened, they took launch 3's events and its device work was
 * lost on every device.
 */
static void test_carried_before_later_records(void)
{
	struct capture_opts copts = { .sz = sizeof(copts), .hostname = "testhost", .session = "s2" };
	uint64_t compile[V_COMPILE_EXECUTABLE + 1] = { [V_COMPILE_EXECUTABLE] = 0x1000 };
	const uint64_t start2 = 1500 * MS, stop2 = 1800 * MS;
	struct capture *next = NULL;
	uint64_t open = 0, mine = 0;
	struct rig r;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	rt_call(&r, P_COMPILE, 1 * MS, 2 * MS, compile, V_COMPILE_EXECUTABLE + 1,
		"HloModule jit_step");
	ASSERT_OK(collector__open_window(r.col, 2 * MS), "open window");
	execution(&r, 1, 10 * MS, true);
	collector__begin_close(r.col, 30 * MS);
	/* Read in the close's drain: past the stop, carried. */
	execution(&r, 2, 35 * MS, true);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (!ASSERT_OK(capture__finalize(r.cap), "finalize"))
		goto out;

	next = capture__new(&copts);
	if (!ASSERT_OK_PTR(next, "next capture") ||
	    !ASSERT_OK(collector__set_capture(r.col, next), "set capture"))
		goto out;
	/* The interval: launch 3 reuses launch 2's pointers, still running. */
	execution_in(&r, 3, 2, 100 * MS, false);
	ASSERT_OK(collector__open_window(r.col, start2), "the second window opens");
	collector__begin_close(r.col, stop2);
	ASSERT_OK(collector__finish(r.col), "finish next");
	if (!ASSERT_OK(capture__finalize(next), "finalize next"))
		goto out;
	for (size_t t = 0; t < capture__num_tracks(next); t++) {
		size_t ns;
		const struct capture_span *s = capture__track_spans(next, t, &ns);

		for (size_t i = 0; s && i < ns; i++) {
			if (s[i].kind != SPAN_DEVICE_MODULE)
				continue;
			mine += s[i].correlation_id == 3;
			open += s[i].correlation_id == 3 && s[i].start_ns == 101 * MS &&
				s[i].end_ns == stop2 && (s[i].flags & SPAN_F_OPEN_AT_STOP);
		}
	}
	ASSERT_EQ(mine, 2, "launch 3's device work, on both devices");
	ASSERT_EQ(open, 2, "from its true start, open at the stop");
	ASSERT_EQ(collector__stats(r.col)->unobserved_completions, 0,
		  "no live work taken for work that completed unseen");
out:
	rig_close(&r);
	capture__free(next);
}

/* What the allocation-failure runs are compared on. */
struct outcome {
	uint64_t modules, steps, callbacks;
};

static void run_workload(struct rig *r)
{
	const char *hlo = "HloModule jit_step";
	uint64_t compile[V_COMPILE_EXECUTABLE + 1] = { [V_COMPILE_EXECUTABLE] = 0x1000 };
	__u64 set_eventfd[2] = { 3, 9 };

	rt_call(r, P_COMPILE, 1 * MS, 2 * MS, compile, V_COMPILE_EXECUTABLE + 1, hlo);
	execution(r, 1, 3 * MS, true);
	collector__open_window(r->col, 2 * MS);
	dev_open(r, "/dev/accel0", 6, 3 * MS);
	ioctl_on(r, 6, 0x4010dc01, set_eventfd, sizeof(set_eventfd), 3 * MS);
	task_of(r, TID + 1, TASK_RENAME, "tf_foreach", "python3", 3 * MS);
	task_of(r, TID, TASK_RENAME, "pt_main_thread", "trainer", 3 * MS);
	/* 30 launches in flight at once: the correlation maps must grow. */
	for (uint64_t l = 2; l < 32; l++)
		execution(r, l, l * 10 * MS, false);
	for (uint64_t l = 2; l < 32; l++)
		for (uint64_t d = 0; d < 2; d++) {
			uint64_t cb[] = { 0, 0x100 + l * 2 + d };

			rt_call(r, P_CALLBACK, 400 * MS + l * MS + d, 400 * MS + l * MS + d + 1000,
				cb, 2, NULL);
		}
	execution(r, 40, 500 * MS, false);
	task(r, TASK_PROC_EXIT, 0, 600 * MS);
	collector__begin_close(r->col, 900 * MS);
}

static void test_allocation_failures(void)
{
	struct outcome ref = {}, got;
	unsigned long failures;
	struct rig r;
	int runs = 0;

	if (!ASSERT_OK(rig_open(&r), "reference rig"))
		return;
	run_workload(&r);
	ASSERT_OK(collector__finish(r.col), "reference finish");
	ASSERT_OK(capture__finalize(r.cap), "reference finalize");
	ref.modules = count_kind(r.cap, SPAN_DEVICE_MODULE);
	ref.steps = count_kind(r.cap, SPAN_DEVICE_STEP);
	ref.callbacks = count_kind(r.cap, SPAN_CALLBACK);
	rig_close(&r);
	ASSERT_EQ(ref.modules, 64, "reference: device executions");

	for (long n = 0; n < 100000; n++) {
		const struct collector_stats *st;
		int err_finish, err_final;
		long live = alloc_fail_live();
		bool counted;

		alloc_fail_at(n, false);
		if (rig_open(&r)) {
			alloc_fail_off();
			if (alloc_fail_live() != live)
				ASSERT_EQ(alloc_fail_live(), live, "a refused open leaks nothing");
			continue;
		}
		run_workload(&r);
		err_finish = collector__finish(r.col);
		err_final = capture__finalize(r.cap);
		failures = alloc_fail_off();
		runs++;
		if (!failures) {
			rig_close(&r);
			ASSERT_EQ(alloc_fail_live(), live, "nothing leaked");
			break;		/* past the last allocation */
		}
		st = collector__stats(r.col);
		got.modules = err_final ? 0 : count_kind(r.cap, SPAN_DEVICE_MODULE);
		got.steps = err_final ? 0 : count_kind(r.cap, SPAN_DEVICE_STEP);
		got.callbacks = err_final ? 0 : count_kind(r.cap, SPAN_CALLBACK);
		counted = st->out_of_memory || st->spans_refused || st->steps_unexamined ||
			  st->prearm_dropped || err_finish || err_final ||
			  capture__num_warnings(r.cap);
		/* A failure either changed nothing, or the capture says so. */
		if (memcmp(&got, &ref, sizeof(ref)) && !counted) {
			ASSERT_TRUE(false, "a loss from a failed allocation went uncounted");
			fprintf(stderr, "  allocation %ld: modules %llu steps %llu callbacks %llu\n",
				n, (unsigned long long)got.modules,
				(unsigned long long)got.steps,
				(unsigned long long)got.callbacks);
		}
		rig_close(&r);
		if (alloc_fail_live() != live) {
			ASSERT_EQ(alloc_fail_live(), live, "nothing leaked after a failure");
			fprintf(stderr, "  allocation %ld failed\n", n);
		}
	}
	ASSERT_GE(runs, 20, "allocations exercised");
}

static void h2d(struct rig *r, uint64_t t)
{
	uint64_t vals[V_H2D_DIM0 + 1] = { [V_H2D_NUM_DIMS] = 1, [V_H2D_DIM0] = 64 };

	rt_call(r, P_H2D, t, t + 1000, vals, V_H2D_DIM0 + 1, NULL);
}

static void execute_once(struct rig *r, uint64_t exe, uint64_t launch, uint64_t t)
{
	uint64_t exec[V_EXEC_EVENT0 + 1] = {
		[V_EXEC_EXECUTABLE] = exe, [V_EXEC_LAUNCH_ID] = launch,
		[V_EXEC_NUM_DEVICES] = 1,
	};

	rt_call(r, P_EXEC, t, t + 1000, exec, V_EXEC_EVENT0 + 1, NULL);
}

static void compile_named(struct rig *r, uint64_t exe, const char *name, uint64_t t)
{
	uint64_t compile[V_COMPILE_EXECUTABLE + 1] = { [V_COMPILE_EXECUTABLE] = exe };
	char hlo[96];

	snprintf(hlo, sizeof(hlo), "HloModule %s, entry_computation_layout={}", name);
	rt_call(r, P_COMPILE, t, t + 1000, compile, V_COMPILE_EXECUTABLE + 1, hlo);
}

/*
 * Arming: transfers and one-off programs (even one whose executable's
 * address the next program reuses, or two of one name) do not arm; the first execution of a
 * program that runs again does, at that first execution; --from-start
 * arms at the first transfer.
 */
static void test_arming(void)
{
	struct rig r;

	for (int from_start = 0; from_start < 2; from_start++) {
		if (!ASSERT_OK(rig_open_opts(&r, from_start), "rig"))
			return;
		collector__watch_activity(r.col, 1);
		h2d(&r, 1 * MS);
		compile_named(&r, 0x3000, "jit_init_0", 2 * MS);
		execute_once(&r, 0x3000, 100, 3 * MS);
		compile_named(&r, 0x3000, "jit_init_1", 4 * MS);	/* address reused */
		execute_once(&r, 0x3000, 101, 5 * MS);
		/* One name, another shape: another executable. */
		compile_named(&r, 0x4000, "jit_init_1", 5 * MS);
		execute_once(&r, 0x4000, 102, 5 * MS + 500000);
		if (from_start) {
			ASSERT_EQ(collector__first_activity(r.col), 1 * MS,
				  "--from-start: the first transfer arms");
			rig_close(&r);
			continue;
		}
		ASSERT_EQ(collector__first_activity(r.col), 0,
			  "transfers and one-off programs do not arm");
		compile_named(&r, 0x1000, "jit_step", 6 * MS);
		execute_once(&r, 0x1000, 1, 10 * MS);
		ASSERT_EQ(collector__first_activity(r.col), 0, "one step does not arm yet");
		execute_once(&r, 0x1000, 2, 12 * MS);
		ASSERT_EQ(collector__first_activity(r.col), 10 * MS,
			  "the second step arms, at the first");
		/* A later watch: a program first run before it arms at its next. */
		collector__watch_activity(r.col, 11 * MS);
		execute_once(&r, 0x1000, 3, 14 * MS);
		ASSERT_EQ(collector__first_activity(r.col), 14 * MS,
			  "a known program arms a later watch at its next execution");
		rig_close(&r);
	}
	/* The first watch began while the step ran (the callback probe came
	 * after its first runs): the window starts at its first run seen. */
	if (!ASSERT_OK(rig_open_opts(&r, 0), "rig"))
		return;
	collector__start_at_first_run(r.col, true);
	compile_named(&r, 0x1000, "jit_step", 1 * MS);
	execute_once(&r, 0x1000, 1, 2 * MS);
	execute_once(&r, 0x1000, 2, 3 * MS);
	collector__watch_activity(r.col, 4 * MS);
	ASSERT_EQ(collector__first_activity(r.col), 0, "nothing since the watch began yet");
	execute_once(&r, 0x1000, 3, 5 * MS);
	ASSERT_EQ(collector__first_activity(r.col), 2 * MS,
		  "the first watch arms at the step's first run before it");
	rig_close(&r);
	/* A runtime already loaded at the attach: the watch's next run. */
	if (!ASSERT_OK(rig_open_opts(&r, 0), "rig"))
		return;
	compile_named(&r, 0x1000, "jit_step", 1 * MS);
	execute_once(&r, 0x1000, 1, 2 * MS);
	execute_once(&r, 0x1000, 2, 3 * MS);
	collector__watch_activity(r.col, 4 * MS);
	execute_once(&r, 0x1000, 3, 5 * MS);
	ASSERT_EQ(collector__first_activity(r.col), 5 * MS,
		  "without it, the first run after the watch arms");
	rig_close(&r);
}

static uint64_t count_with_arg(const struct capture *c, const char *key)
{
	uint64_t n = 0, v;

	for (size_t t = 0; t < capture__num_tracks(c); t++) {
		size_t ns;
		const struct capture_span *s = capture__track_spans(c, t, &ns);

		for (size_t i = 0; s && i < ns; i++)
			n += arg_u64(c, &s[i], key, &v);
	}
	return n;
}

/*
 * CUDA's two layers: a driver launch on its own is a launch; one inside a
 * runtime launch on the same thread (its record comes first, or, from
 * another ring-buffer shard, after) is the same launch seen again: kept,
 * marked nested, not counted. Runtime copies take their direction from
 * their cudaMemcpyKind argument.
 */
static void test_cuda_layers(void)
{
	uint64_t cu[V_CU_STREAM + 1] = { 0xf, 1, 1, 1, 32, 1, 1, 0, 0x50 };
	uint64_t rt[V_CUDART_STREAM + 1] = {
		[V_CUDART_FUNC] = 0xf, [V_CUDART_GRID_XY] = 5 | 6ull << 32,
		[V_CUDART_GRID_Z] = 0xdeadbeef00000007ull, [V_CUDART_BLOCK_XY] = 32 | 2ull << 32,
		[V_CUDART_BLOCK_Z] = 1, [V_CUDART_STREAM] = 0x50,
	};
	uint64_t d2h[] = { 0x1, 0x2, 4096, CUDART_MEMCPY_D2H, 0x50 };
	uint64_t d2d[] = { 0x1, 0x2, 512, CUDART_MEMCPY_D2D, 0x50 };
	const struct capture_span *s;
	struct rig r;
	uint64_t v;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	ASSERT_OK(collector__open_window(r.col, 0), "open window");
	/* XLA's way: the driver alone (entry-only records). */
	rt_call(&r, P_CU_LAUNCH, 1 * MS, 1 * MS, cu, V_CU_STREAM + 1, NULL);
	/* A runtime launch reaching the exported driver: inner first. */
	rt_call(&r, P_CU_LAUNCH, 2 * MS + 500, 2 * MS + 500, cu, V_CU_STREAM + 1, NULL);
	rt_call(&r, P_CUDART_LAUNCH, 2 * MS, 3 * MS, rt, V_CUDART_STREAM + 1, NULL);
	/* The same, the records out of order. */
	rt_call(&r, P_CUDART_LAUNCH, 4 * MS, 5 * MS, rt, V_CUDART_STREAM + 1, NULL);
	rt_call(&r, P_CU_LAUNCH, 4 * MS + 500, 4 * MS + 500, cu, V_CU_STREAM + 1, NULL);
	/* A driver launch after the runtime call returned: its own. */
	rt_call(&r, P_CU_LAUNCH, 6 * MS, 6 * MS, cu, V_CU_STREAM + 1, NULL);
	rt_call(&r, P_CUDART_MEMCPY, 7 * MS, 8 * MS, d2h, 5, NULL);
	rt_call(&r, P_CUDART_MEMCPY, 9 * MS, 10 * MS, d2d, 5, NULL);
	collector__begin_close(r.col, 20 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (!ASSERT_OK(capture__finalize(r.cap), "finalize"))
		goto out;
	ASSERT_EQ(count_kind(r.cap, SPAN_EXECUTE), 4, "launches: 2 runtime, 2 driver alone");
	ASSERT_EQ(collector__stats(r.col)->executions, 4, "launches counted once");
	ASSERT_EQ(count_with_arg(r.cap, "nested_in_runtime_call"), 2,
		  "driver launches inside runtime launches marked nested");
	ASSERT_EQ(collector__stats(r.col)->rt_calls[RT_EV_CUDA_LAUNCH], 4, "driver calls seen");
	ASSERT_EQ(collector__stats(r.col)->rt_calls[RT_EV_CUDART_LAUNCH], 2,
		  "runtime calls seen");
	s = span_named(r.cap, "cudaLaunchKernel");
	if (ASSERT_OK_PTR(s, "a runtime launch")) {
		ASSERT_TRUE(arg_u64(r.cap, s, "grid_x", &v) && v == 5, "grid x from rsi's low half");
		ASSERT_TRUE(arg_u64(r.cap, s, "grid_y", &v) && v == 6, "grid y from rsi's high half");
		ASSERT_TRUE(arg_u64(r.cap, s, "grid_z", &v) && v == 7, "grid z: rdx's low half");
		ASSERT_TRUE(arg_u64(r.cap, s, "block_threads", &v) && v == 64, "threads a block");
		ASSERT_TRUE(arg_u64(r.cap, s, "stream", &v) && v == 0x50, "stream");
	}
	ASSERT_EQ(count_kind(r.cap, SPAN_D2H), 1, "cudaMemcpyDeviceToHost: a D2H copy");
	s = first_of(r.cap, SPAN_D2H);
	ASSERT_TRUE(s && arg_u64(r.cap, s, "bytes", &v) && v == 4096, "its bytes");
	ASSERT_EQ(count_kind(r.cap, SPAN_H2D), 0, "a device-to-device copy is no H2D");
out:
	rig_close(&r);
}

/*
 * Once-counting across threads and shards: two threads whose tids differ by
 * 64 (once one slot) each nest a driver launch in a runtime launch; a late
 * record of an older runtime call decides nothing about a driver launch
 * made after it.
 */
static void test_cuda_threads(void)
{
	uint64_t cu[V_CU_STREAM + 1] = { 0xf, 1, 1, 1, 32, 1, 1, 0, 0x50 };
	uint64_t rt[V_CUDART_STREAM + 1] = { [V_CUDART_FUNC] = 0xf };
	uint32_t a = TID, b = TID + 64;
	struct rig r;

	if (!ASSERT_OK(rig_open(&r), "rig"))
		return;
	ASSERT_OK(collector__open_window(r.col, 0), "open window");
	rt_call_on(&r, a, P_CU_LAUNCH, 1 * MS + 500, 1 * MS + 500, cu, V_CU_STREAM + 1, NULL);
	rt_call_on(&r, b, P_CU_LAUNCH, 1 * MS + 600, 1 * MS + 600, cu, V_CU_STREAM + 1, NULL);
	rt_call_on(&r, a, P_CUDART_LAUNCH, 1 * MS, 2 * MS, rt, V_CUDART_STREAM + 1, NULL);
	rt_call_on(&r, b, P_CUDART_LAUNCH, 1 * MS, 2 * MS, rt, V_CUDART_STREAM + 1, NULL);
	/* Thread a: launch 3's inner driver call arrives before launch 2's
	 * (older) record, then launch 3's own. */
	rt_call_on(&r, a, P_CU_LAUNCH, 5 * MS + 500, 5 * MS + 500, cu, V_CU_STREAM + 1, NULL);
	rt_call_on(&r, a, P_CUDART_LAUNCH, 3 * MS, 4 * MS, rt, V_CUDART_STREAM + 1, NULL);
	rt_call_on(&r, a, P_CUDART_LAUNCH, 5 * MS, 6 * MS, rt, V_CUDART_STREAM + 1, NULL);
	collector__begin_close(r.col, 20 * MS);
	ASSERT_OK(collector__finish(r.col), "finish");
	if (!ASSERT_OK(capture__finalize(r.cap), "finalize"))
		goto out;
	ASSERT_EQ(collector__stats(r.col)->executions, 4, "4 runtime launches, each once");
	ASSERT_EQ(collector__stats(r.col)->cuda_nested, 3, "3 driver calls nested");
out:
	rig_close(&r);
}

int main(void)
{
	test_cuda_layers();
	test_cuda_threads();
	test_execution();
	test_compile_program();
	test_compile_program_one_drain();
	test_program_too_large();
	test_arming();
	test_ioctls();
	test_eventfd();
	test_code_mapped();
	test_process_lifecycle();
	test_control_queue();
	test_bad_records();
	test_thread_renames();
	test_planned_stop();
	test_carried_before_later_records();
	test_allocation_failures();
	return test_exit();
}
