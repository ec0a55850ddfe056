// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuda-app: a training loop over the simulated CUDA pair (cuda_sim.h),
 * writing ground truth (docs/simulator.md). Each step launches K kernels,
 * copies to and from the device, launches a graph and synchronises:
 *
 *   --mode runtime   through the runtime API only (PyTorch's way)
 *   --mode driver    through the driver API only (XLA's, cuBLAS's way)
 *   --mode mixed     both: the runtime step plus K driver launches, a
 *                    driver copy and a driver stream synchronize
 *
 * Every call is one truth record, {"type":"cuda","api","op","a","b",
 * "t_call","t_return"}: launches carry grid (a, b) = (step + 1, index + 1)
 * and copies (bytes, 0) = step * 8 + 1 (H2D), + 2 (D2H), + 3 (driver H2D
 * in mixed mode), memsets (step * 8 + 4, 0), so a capture's spans match
 * their calls one to one; synchronisations and graph launches carry
 * (stream, 0), the stream being 0x5000000 + step (0x6000000 + step for
 * mixed mode's driver sync).
 *
 * The driver is initialised by main's cuInit (and again, a no-op, by the
 * runtime's first use): with CUDA_INJECTION64_PATH set, that is where an
 * injected tool starts, before any other CUDA call. While a tool (the
 * simulated CUPTI) watches, the device work gets "cuda_device" truth
 * records of its own (cupti_sim.c).
 *
 * With --alloc-mode, each step also allocates its tensors when it begins
 * and frees them when it ends, through one of four allocators
 * (cuda_app_mem.c), with mem_alloc/mem_free/mem_tensor truth.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cuda_app_mem.h"
#include "cuda_sim.h"
#include "simtruth.h"

enum mode { MODE_RUNTIME, MODE_DRIVER, MODE_MIXED };

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void kernel(void)
{
}

static void truth_call(const char *api, const char *op, uint64_t a, uint64_t b,
		       uint64_t t_call)
{
	struct truth_line l;
	uint64_t t_return = truth_now();

	if (!truth_enabled())
		return;
	tl_begin(&l, "cuda");
	tl_str(&l, "api", api);
	tl_str(&l, "op", op);
	tl_u64(&l, "a", a);
	tl_u64(&l, "b", b);
	tl_u64(&l, "t_call", t_call);
	tl_u64(&l, "t_return", t_return);
	truth_commit(&l);
}

#define CALL(api, op, a, b, expr) do {					\
	uint64_t t0_ = truth_now();					\
	int r_ = (expr);						\
	if (r_) {							\
		fprintf(stderr, "cuda-app: %s failed: %d\n", api, r_);	\
		return -EIO;						\
	}								\
	truth_call(api, op, a, b, t0_);					\
} while (0)

static int runtime_step(uint64_t s, unsigned int k_launches)
{
	cudaStream_t stream = (cudaStream_t)(uintptr_t)(0x5000000 + s);
	cudaEvent_t event = (cudaEvent_t)(uintptr_t)0x7100;
	dim3 block = { 128, 1, 1 };
	static char host[64];

	for (unsigned int k = 0; k < k_launches; k++) {
		dim3 grid = { (unsigned int)s + 1, k + 1, 1 };
		cudaLaunchConfig_t cfg = { .gridDim = grid, .blockDim = block,
					   .dynamicSmemBytes = 256, .stream = stream };

		switch (k % 3) {
		case 0:
			CALL("cudaLaunchKernel", "launch", s + 1, k + 1,
			     cudaLaunchKernel((const void *)kernel, grid, block, NULL, 0, stream));
			break;
		case 1:
			CALL("cudaLaunchKernel_ptsz", "launch", s + 1, k + 1,
			     cudaLaunchKernel_ptsz((const void *)kernel, grid, block, NULL, 0,
						   stream));
			break;
		default:
			CALL("cudaLaunchKernelExC", "launch", s + 1, k + 1,
			     cudaLaunchKernelExC(&cfg, (const void *)kernel, NULL));
			break;
		}
	}
	CALL("cudaMemcpyAsync", "h2d", s * 8 + 1, 0,
	     cudaMemcpyAsync((void *)0x10000, host, s * 8 + 1, cudaMemcpyHostToDevice, stream));
	CALL("cudaMemsetAsync", "memset", s * 8 + 4, 0,
	     cudaMemsetAsync((void *)0x20000, 0, s * 8 + 4, stream));
	CALL("cudaGraphLaunch", "graph", 0x5000000 + s, 0,
	     cudaGraphLaunch((cudaGraphExec_t)0x7000, stream));
	CALL("cudaEventRecord", "event_record", 0x5000000 + s, 0,
	     cudaEventRecord(event, stream));
	CALL("cudaMemcpy", "d2h", s * 8 + 2, 0,
	     cudaMemcpy(host, (void *)0x10000, s * 8 + 2, cudaMemcpyDeviceToHost));
	CALL("cudaStreamSynchronize", "stream_sync", 0x5000000 + s, 0,
	     cudaStreamSynchronize(stream));
	CALL("cudaEventSynchronize", "event_sync", 0, 0, cudaEventSynchronize(event));
	CALL("cudaDeviceSynchronize", "device_sync", 0, 0, cudaDeviceSynchronize());
	return 0;
}

static int driver_step(uint64_t s, unsigned int k_launches, unsigned int first,
		       bool mixed)
{
	CUstream stream = (CUstream)(uintptr_t)((mixed ? 0x6000000 : 0x5000000) + s);
	static char host[64];

	for (unsigned int k = 0; k < k_launches; k++)
		CALL("cuLaunchKernel", "launch", s + 1, first + k + 1,
		     cuLaunchKernel((CUfunction)kernel, (unsigned int)s + 1, first + k + 1, 1,
				    128, 1, 1, 0, stream, NULL, NULL));
	CALL("cuMemcpyHtoDAsync_v2", "h2d", s * 8 + (mixed ? 3 : 1), 0,
	     cuMemcpyHtoDAsync_v2(0x10000, host, s * 8 + (mixed ? 3 : 1), stream));
	if (!mixed) {
		CALL("cuMemsetD8Async", "memset", s * 8 + 4, 0,
		     cuMemsetD8Async(0x20000, 0, s * 8 + 4, stream));
		CALL("cuGraphLaunch", "graph", 0x5000000 + s, 0,
		     cuGraphLaunch((CUgraphExec)0x7000, stream));
		CALL("cuMemcpyDtoHAsync_v2", "d2h", s * 8 + 2, 0,
		     cuMemcpyDtoHAsync_v2(host, 0x10000, s * 8 + 2, stream));
	}
	CALL("cuStreamSynchronize", "stream_sync", (mixed ? 0x6000000 : 0x5000000) + s, 0,
	     cuStreamSynchronize(stream));
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: cuda-app [--mode runtime|driver|mixed] [--steps N (0: no limit)]\n"
		"                [--duration SECONDS] [--launches K] [--step-time US]\n"
		"                [--truth PATH] [--alloc-mode none|direct|caching|vmm|pool]\n"
		"                [--allocs-per-step N] [--mem-leak BYTES] [--devices N]\n"
		"                [--alloc-rate N] [--device-memory BYTES] [--oom-step S]\n");
}

int main(int argc, char **argv)
{
	unsigned int k_launches = 4;
	uint64_t steps = 100, step_ns = 1000000, deadline = 0, last_flush;
	enum mode mode = MODE_RUNTIME;
	struct app_mem_config mem = { .allocs_per_step = 4, .devices = 1, .oom_step = -1,
				      .device_memory = SIMDRV_DEFAULT_MEMORY };
	uint64_t alloc_rate = 0, t_first;
	const char *truth = NULL;
	char num[32];
	int err = 0;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v) {
			usage();
			return 2;
		}
		if (!strcmp(argv[i], "--mode")) {
			if (!strcmp(v, "runtime"))
				mode = MODE_RUNTIME;
			else if (!strcmp(v, "driver"))
				mode = MODE_DRIVER;
			else if (!strcmp(v, "mixed"))
				mode = MODE_MIXED;
			else {
				usage();
				return 2;
			}
		} else if (!strcmp(argv[i], "--steps")) {
			steps = strtoull(v, NULL, 0);
		} else if (!strcmp(argv[i], "--duration")) {
			deadline = truth_now() + (uint64_t)(strtod(v, NULL) * 1e9);
		} else if (!strcmp(argv[i], "--launches")) {
			k_launches = (unsigned int)strtoul(v, NULL, 0);
		} else if (!strcmp(argv[i], "--step-time")) {
			step_ns = strtoull(v, NULL, 0) * 1000;
		} else if (!strcmp(argv[i], "--truth")) {
			truth = v;
		} else if (!strcmp(argv[i], "--alloc-mode")) {
			int m = app_mem__parse_mode(v);

			if (m < 0) {
				usage();
				return 2;
			}
			mem.mode = (enum alloc_mode)m;
		} else if (!strcmp(argv[i], "--allocs-per-step")) {
			mem.allocs_per_step = (unsigned int)strtoul(v, NULL, 0);
		} else if (!strcmp(argv[i], "--mem-leak")) {
			mem.leak_bytes = strtoull(v, NULL, 0);
		} else if (!strcmp(argv[i], "--devices")) {
			mem.devices = (int)strtol(v, NULL, 0);
		} else if (!strcmp(argv[i], "--alloc-rate")) {
			alloc_rate = strtoull(v, NULL, 0);
		} else if (!strcmp(argv[i], "--device-memory")) {
			mem.device_memory = strtoull(v, NULL, 0);
		} else if (!strcmp(argv[i], "--oom-step")) {
			mem.oom_step = strtoll(v, NULL, 0);
		} else {
			usage();
			return 2;
		}
		i++;
	}
	mem.driver = mode == MODE_DRIVER;
	if (!mem.device_memory || (err = app_mem__init(&mem))) {
		fprintf(stderr, "cuda-app: --allocs-per-step is at most 256, --devices 1 to %d, "
			"--device-memory more than 0\n", SIMDRV_DEVICES);
		return 2;
	}
	/* --alloc-rate paces steps by their allocations (all devices'). */
	if (alloc_rate && mem.mode != ALLOC_NONE)
		step_ns = 1000000000ull * (mem.allocs_per_step * (uint64_t)mem.devices +
					   (mem.leak_bytes ? 1 : 0)) / alloc_rate;
	snprintf(num, sizeof(num), "%llu", (unsigned long long)mem.device_memory);
	setenv("SIMDRV_DEVICE_MEMORY", num, 1);
	if (truth && (err = truth_open(truth))) {
		fprintf(stderr, "cuda-app: %s: %s\n", truth, strerror(-err));
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	if (cuInit(0)) {
		fprintf(stderr, "cuda-app: cuInit failed\n");
		return 1;
	}
	fprintf(stderr, "cuda-app: pid=%d running mode=%s\n", getpid(),
		mode == MODE_RUNTIME ? "runtime" : mode == MODE_DRIVER ? "driver" : "mixed");
	last_flush = t_first = truth_now();
	for (uint64_t s = 0; !stop && (!steps || s < steps); s++) {
		uint64_t t0 = truth_now(), now;

		if (deadline && t0 >= deadline)
			break;
		err = app_mem__step_begin(s);
		if (!err && mode != MODE_DRIVER)
			err = runtime_step(s, k_launches);
		if (!err && mode != MODE_RUNTIME)
			err = driver_step(s, k_launches, mode == MODE_MIXED ? k_launches : 0,
					  mode == MODE_MIXED);
		if (!err)
			err = app_mem__step_end(s);
		if (err)
			break;
		now = truth_now();
		if (now - last_flush > 200000000ull) {
			truth_flush();
			last_flush = now;
		}
		if (alloc_rate && mem.mode != ALLOC_NONE) {
			/* A rate holds over the run: steps on a fixed schedule,
			 * a late one followed at once by the next. */
			uint64_t due = t_first + (s + 1) * step_ns;
			struct timespec ts = { (time_t)(due / 1000000000ull),
					       (long)(due % 1000000000ull) };

			if (due > now)
				clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		} else if (now - t0 < step_ns) {
			struct timespec ts = { 0, (long)(step_ns - (now - t0)) };

			nanosleep(&ts, NULL);
		}
	}
	if (!err)
		err = app_mem__finish();
	if (truth && truth_close())
		err = err ? err : -EIO;
	return err ? 1 : 0;
}
