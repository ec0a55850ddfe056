// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* tpu-trainer's command line: one table gives the options and the help. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trainer.h"

enum {
	OPT_PLUGIN = 256, OPT_STEPS, OPT_DURATION, OPT_STEP_TIME, OPT_STEP_RATE,
	OPT_CORES, OPT_INPUT_BOUND, OPT_READERS, OPT_BATCH_BYTES, OPT_PREFETCH,
	OPT_DATA_DIR, OPT_SHARDS, OPT_SHARD_BYTES, OPT_FEED, OPT_MAX_INFLIGHT,
	OPT_FETCH_EVERY, OPT_LONG_DEV, OPT_LONG_DEV_STEP, OPT_LONG_HOST,
	OPT_LONG_HOST_STEP, OPT_LATE_LOAD, OPT_CHURN, OPT_CRASH_AFTER,
	OPT_SUBMIT_IOCTL, OPT_TRACE_RECORDS, OPT_TRACE_DIR, OPT_NO_DEVTRACE, OPT_PROFILE,
	OPT_DEVICE_DIR,
	OPT_NO_NODE, OPT_TRUTH, OPT_NO_TRUTH_OPS, OPT_TRAINERS, OPT_COMPILE_MS, OPT_INIT_PROGRAMS,
	OPT_EVAL_EVERY, OPT_EVAL_TIME, OPT_EVAL_STEPS, OPT_EVAL_MEM, OPT_MEM_LEAK,
	OPT_OUTPUT_BYTES, OPT_DEVICE_MEMORY,
	OPT_CLOCK_RATE, OPT_CLOCK_DRIFT, OPT_CLOCK_OFFSET, OPT_KEEP_FILES,
	OPT_MAIN_THREAD_NAME,
};

struct flag {
	struct option opt;
	const char *arg;
	const char *help;
};

static const struct flag flags[] = {
	{ { "plugin", 1, 0, OPT_PLUGIN }, "PATH", "PJRT plugin to dlopen (default $TPU_LIBRARY_PATH, else pjrt-0.94/libtpu.so beside this binary)" },
	{ { "steps", 1, 0, OPT_STEPS }, "N", "stop after N steps (default 100; 0 = no limit)" },
	{ { "duration", 1, 0, OPT_DURATION }, "DUR", "stop after DUR (e.g. 10s); with no --steps, steps are unlimited" },
	{ { "step-time", 1, 0, OPT_STEP_TIME }, "DUR", "device time of one step (default 1ms; down to 10us)" },
	{ { "step-rate", 1, 0, OPT_STEP_RATE }, "HZ", "steps per second: --step-time 1/HZ" },
	{ { "cores", 1, 0, OPT_CORES }, "N", "TPU cores, each running every step (default 4, max 16)" },
	{ { "input-bound", 1, 0, OPT_INPUT_BOUND }, "F", "slow the readers so the device waits for input about F of the time (0..0.95)" },
	{ { "readers", 1, 0, OPT_READERS }, "N", "reader threads (default 2; 0 = no input pipeline, synthetic batches)" },
	{ { "batch-bytes", 1, 0, OPT_BATCH_BYTES }, "N", "bytes read and fed per step (default 65536)" },
	{ { "prefetch", 1, 0, OPT_PREFETCH }, "N", "prefetch queue depth in batches (default 4)" },
	{ { "data-dir", 1, 0, OPT_DATA_DIR }, "DIR", "data files (created if missing; default <device-dir>/data)" },
	{ { "shards", 1, 0, OPT_SHARDS }, "N", "data files to read (default 4)" },
	{ { "shard-bytes", 1, 0, OPT_SHARD_BYTES }, "N", "size of each data file (default 1048576)" },
	{ { "feed", 1, 0, OPT_FEED }, "MODE", "buffer (BufferFromHostBuffer, default), infeed (TransferLiteral*feed), infeed-raw (TpuExecutor_*)" },
	{ { "max-inflight", 1, 0, OPT_MAX_INFLIGHT }, "N", "executions in flight before the loop waits (default 4)" },
	{ { "fetch-every", 1, 0, OPT_FETCH_EVERY }, "N", "copy the loss to the host every N steps (default 10; 0 = never)" },
	{ { "long-device-op", 1, 0, OPT_LONG_DEV }, "DUR", "one step runs a program with a device op lasting DUR" },
	{ { "long-device-op-step", 1, 0, OPT_LONG_DEV_STEP }, "N", "the step that runs it (default 3)" },
	{ { "long-host-op", 1, 0, OPT_LONG_HOST }, "DUR", "before one step the main thread checkpoints for DUR" },
	{ { "long-host-op-step", 1, 0, OPT_LONG_HOST_STEP }, "N", "the step it precedes (default 3)" },
	{ { "late-load", 1, 0, OPT_LATE_LOAD }, "DUR", "dlopen the plugin only after DUR (the input pipeline runs meanwhile)" },
	{ { "thread-churn", 1, 0, OPT_CHURN }, "RATE", "start RATE short-lived threads per second" },
	{ { "crash-after", 1, 0, OPT_CRASH_AFTER }, "N", "abort() after N steps" },
	{ { "submit-ioctl", 0, 0, OPT_SUBMIT_IOCTL }, NULL, "DRM accel node, one submit ioctl per execution" },
	{ { "trace-records", 1, 0, OPT_TRACE_RECORDS }, "N", "devtrace ring slots per core (default 65536); small values overflow" },
	{ { "trace-dir", 1, 0, OPT_TRACE_DIR }, "DIR", "devtrace buffers (default <device-dir>/devtrace)" },
	{ { "no-devtrace", 0, 0, OPT_NO_DEVTRACE }, NULL, "write no devtrace buffers (plugin option sim_no_devtrace)" },
	{ { "profile", 1, 0, OPT_PROFILE }, "PATH", "profile the run through the plugin's PJRT profiler extension and write the XSpace to PATH (%p = pid)" },
	{ { "device-dir", 1, 0, OPT_DEVICE_DIR }, "DIR", "device node directory, %p = pid (default /run/acceltrace-sim/%p)" },
	{ { "no-device-node", 0, 0, OPT_NO_NODE }, NULL, "do not create the device node" },
	{ { "truth", 1, 0, OPT_TRUTH }, "PATH", "append ground truth (JSON lines) to PATH" },
	{ { "no-truth-ops", 0, 0, OPT_NO_TRUTH_OPS }, NULL, "leave per-op records out of the ground truth" },
	{ { "trainers", 1, 0, OPT_TRAINERS }, "N", "run N trainer processes at once (default 1)" },
	{ { "compile-ms", 1, 0, OPT_COMPILE_MS }, "N", "compile time (default 20)" },
	{ { "init-programs", 1, 0, OPT_INIT_PROGRAMS }, "N", "start-up: N one-off programs (jit_init_<i>), each compiled and run once before the training step is compiled (default 0)" },
	{ { "eval-every", 1, 0, OPT_EVAL_EVERY }, "N", "train/eval alternation: after every N train steps run the eval program (eval_step) once (default 0 = never)" },
	{ { "eval-time", 1, 0, OPT_EVAL_TIME }, "DUR", "device time of one eval execution (default: the step time)" },
	{ { "eval-steps", 1, 0, OPT_EVAL_STEPS }, "K", "eval executions per eval phase (default 1)" },
	{ { "eval-mem", 1, 0, OPT_EVAL_MEM }, "BYTES", "each device holds an extra working set of BYTES during an eval phase (default 0)" },
	{ { "mem-leak", 1, 0, OPT_MEM_LEAK }, "BYTES", "each train step keeps one more buffer of BYTES on device 0, never freed (default 0)" },
	{ { "output-bytes", 1, 0, OPT_OUTPUT_BYTES }, "BYTES", "size of each execution output buffer (default 1024)" },
	{ { "device-memory", 1, 0, OPT_DEVICE_MEMORY }, "BYTES", "each TPU core's memory (plugin option sim_device_memory; default 32 GiB)" },
	{ { "clock-rate", 1, 0, OPT_CLOCK_RATE }, "HZ", "device clock rate (default 940000000)" },
	{ { "clock-drift-ppb", 1, 0, OPT_CLOCK_DRIFT }, "N", "device clock drift against CLOCK_MONOTONIC (default 37000)" },
	{ { "clock-offset", 1, 0, OPT_CLOCK_OFFSET }, "TICKS", "device clock reading at client creation (default 5e12)" },
	{ { "keep-files", 0, 0, OPT_KEEP_FILES }, NULL, "keep the default device directory at exit" },
	{ { "main-thread-name", 1, 0, OPT_MAIN_THREAD_NAME }, "NAME", "name the main thread (and so the process) NAME, bytes as given, not UTF-8 checked (default pt_main_thread)" },
	{ { "help", 0, 0, 'h' }, NULL, "this help" },
};

#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: tpu-trainer [options]\n\n"
		"Trains on the simulated TPU (docs/simulator.md).\n\n");
	for (i = 0; i < NFLAGS; i++) {
		char left[48];

		snprintf(left, sizeof(left), "--%s%s%s", flags[i].opt.name,
			 flags[i].arg ? " " : "", flags[i].arg ? flags[i].arg : "");
		fprintf(f, "  %-28s %s\n", left, flags[i].help);
	}
}

int trainer_parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);
	double scale = 1e9;

	if (end == s || v < 0)
		return -EINVAL;
	if (!strcmp(end, "ns"))
		scale = 1;
	else if (!strcmp(end, "us"))
		scale = 1e3;
	else if (!strcmp(end, "ms"))
		scale = 1e6;
	else if (!strcmp(end, "s") || !*end)
		scale = 1e9;
	else if (!strcmp(end, "m"))
		scale = 60e9;
	else
		return -EINVAL;
	*ns = (uint64_t)(v * scale + 0.5);
	return 0;
}

static int parse_u64(const char *name, const char *s, uint64_t min, uint64_t max,
		     uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v < min || v > max) {
		fprintf(stderr, "tpu-trainer: --%s: '%s' is not a number in [%llu, %llu]\n",
			name, s, (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_double(const char *name, const char *s, double min, double max,
			double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < min || v > max) {
		fprintf(stderr, "tpu-trainer: --%s: '%s' is not a number in [%g, %g]\n",
			name, s, min, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_dur(const char *name, const char *s, uint64_t *ns)
{
	if (trainer_parse_duration(s, ns)) {
		fprintf(stderr, "tpu-trainer: --%s: '%s' is not a duration (250us, 2ms, 1.5s, 3m)\n",
			name, s);
		return -EINVAL;
	}
	return 0;
}

static const char *default_plugin(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("TPU_LIBRARY_PATH");
	ssize_t n;
	char *slash;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	if (n <= 0)
		return "libtpu.so";
	path[n] = 0;
	slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "pjrt-0.94/libtpu.so");
	return path;
}

int trainer_flags_parse(int argc, char **argv, struct trainer_config *cfg)
{
	struct option opts[NFLAGS + 1];
	bool steps_set = false;
	uint64_t u;
	double d;
	size_t i;
	int c, err = 0;

	memset(cfg, 0, sizeof(*cfg));
	cfg->steps = 100;
	cfg->step_ns = 1000000;
	cfg->cores = 4;
	cfg->readers = 2;
	cfg->batch_bytes = 65536;
	cfg->prefetch = 4;
	cfg->shards = 4;
	cfg->shard_bytes = 1 << 20;
	cfg->feed = FEED_BUFFER;
	cfg->max_inflight = 4;
	cfg->fetch_every = 10;
	cfg->long_device_op_step = 3;
	cfg->long_host_op_step = 3;
	cfg->device_dir = "/run/acceltrace-sim/%p";
	cfg->truth_ops = true;
	cfg->trainers = 1;
	cfg->compile_ms = -1;
	cfg->eval_steps = 1;
	cfg->output_bytes = 1024;

	for (i = 0; i < NFLAGS; i++)
		opts[i] = flags[i].opt;
	memset(&opts[NFLAGS], 0, sizeof(opts[NFLAGS]));
	optind = 1;
	while (!err && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *name = "";

		for (i = 0; i < NFLAGS; i++)
			if (flags[i].opt.val == c)
				name = flags[i].opt.name;
		switch (c) {
		case 'h':
			usage(stdout);
			return 1;
		case OPT_PLUGIN: cfg->plugin = optarg; break;
		case OPT_STEPS:
			err = parse_u64(name, optarg, 0, UINT64_MAX, &cfg->steps);
			steps_set = true;
			break;
		case OPT_DURATION: err = parse_dur(name, optarg, &cfg->duration_ns); break;
		case OPT_STEP_TIME: err = parse_dur(name, optarg, &cfg->step_ns); break;
		case OPT_STEP_RATE:
			err = parse_double(name, optarg, 0.001, 1e6, &d);
			cfg->step_ns = (uint64_t)(1e9 / d + 0.5);
			break;
		case OPT_CORES:
			err = parse_u64(name, optarg, 1, SIM_MAX_CORES, &u);
			cfg->cores = (int)u;
			break;
		case OPT_INPUT_BOUND: err = parse_double(name, optarg, 0, 0.95, &cfg->input_bound); break;
		case OPT_READERS:
			err = parse_u64(name, optarg, 0, 64, &u);
			cfg->readers = (int)u;
			break;
		case OPT_BATCH_BYTES:
			err = parse_u64(name, optarg, 16, 64 << 20, &u);
			cfg->batch_bytes = (size_t)u;
			break;
		case OPT_PREFETCH:
			err = parse_u64(name, optarg, 1, 1024, &u);
			cfg->prefetch = (int)u;
			break;
		case OPT_DATA_DIR: cfg->data_dir = optarg; break;
		case OPT_SHARDS:
			err = parse_u64(name, optarg, 1, 1024, &u);
			cfg->shards = (int)u;
			break;
		case OPT_SHARD_BYTES:
			err = parse_u64(name, optarg, 4096, 1ull << 34, &u);
			cfg->shard_bytes = (size_t)u;
			break;
		case OPT_FEED:
			if (!strcmp(optarg, "buffer"))
				cfg->feed = FEED_BUFFER;
			else if (!strcmp(optarg, "infeed"))
				cfg->feed = FEED_INFEED;
			else if (!strcmp(optarg, "infeed-raw"))
				cfg->feed = FEED_INFEED_RAW;
			else {
				fprintf(stderr, "tpu-trainer: --feed: buffer, infeed or infeed-raw\n");
				err = -EINVAL;
			}
			break;
		case OPT_MAX_INFLIGHT:
			err = parse_u64(name, optarg, 1, 64, &u);
			cfg->max_inflight = (int)u;
			break;
		case OPT_FETCH_EVERY: err = parse_u64(name, optarg, 0, UINT64_MAX, &cfg->fetch_every); break;
		case OPT_LONG_DEV: err = parse_dur(name, optarg, &cfg->long_device_op_ns); break;
		case OPT_LONG_DEV_STEP: err = parse_u64(name, optarg, 1, UINT64_MAX, &cfg->long_device_op_step); break;
		case OPT_LONG_HOST: err = parse_dur(name, optarg, &cfg->long_host_op_ns); break;
		case OPT_LONG_HOST_STEP: err = parse_u64(name, optarg, 1, UINT64_MAX, &cfg->long_host_op_step); break;
		case OPT_LATE_LOAD: err = parse_dur(name, optarg, &cfg->late_load_ns); break;
		case OPT_CHURN: err = parse_double(name, optarg, 0, 10000, &cfg->churn_rate); break;
		case OPT_CRASH_AFTER: err = parse_u64(name, optarg, 1, UINT64_MAX, &cfg->crash_after); break;
		case OPT_SUBMIT_IOCTL: cfg->submit_ioctl = true; break;
		case OPT_TRACE_RECORDS: err = parse_u64(name, optarg, 1, 1 << 30, &cfg->trace_records); break;
		case OPT_TRACE_DIR: cfg->trace_dir = optarg; break;
		case OPT_NO_DEVTRACE: cfg->no_devtrace = true; break;
		case OPT_PROFILE: cfg->profile = optarg; break;
		case OPT_DEVICE_DIR: cfg->device_dir = optarg; break;
		case OPT_NO_NODE: cfg->no_device_node = true; break;
		case OPT_TRUTH: cfg->truth = optarg; break;
		case OPT_NO_TRUTH_OPS: cfg->truth_ops = false; break;
		case OPT_TRAINERS:
			err = parse_u64(name, optarg, 1, 64, &u);
			cfg->trainers = (int)u;
			break;
		case OPT_COMPILE_MS:
			err = parse_u64(name, optarg, 0, 600000, &u);
			cfg->compile_ms = (int64_t)u;
			break;
		case OPT_INIT_PROGRAMS:
			err = parse_u64(name, optarg, 0, 100, &u);
			cfg->init_programs = (int)u;
			break;
		case OPT_EVAL_EVERY: err = parse_u64(name, optarg, 0, 1000000000, &cfg->eval_every); break;
		case OPT_EVAL_TIME: err = parse_dur(name, optarg, &cfg->eval_ns); break;
		case OPT_EVAL_STEPS: err = parse_u64(name, optarg, 1, 1000000, &cfg->eval_steps); break;
		case OPT_EVAL_MEM: err = parse_u64(name, optarg, 0, 1ull << 40, &cfg->eval_mem); break;
		case OPT_MEM_LEAK: err = parse_u64(name, optarg, 0, 1ull << 40, &cfg->mem_leak); break;
		case OPT_DEVICE_MEMORY:
			err = parse_u64(name, optarg, 1, 1ull << 50, &cfg->device_memory);
			break;
		case OPT_OUTPUT_BYTES:
			err = parse_u64(name, optarg, 1, 1ull << 32, &cfg->output_bytes);
			break;
		case OPT_CLOCK_RATE: err = parse_u64(name, optarg, 1000, 10000000000ull, &cfg->clock_rate_hz); break;
		case OPT_CLOCK_DRIFT: {
			char *end;

			cfg->clock_drift_ppb = strtoll(optarg, &end, 0);
			cfg->clock_drift_set = true;
			if (end == optarg || *end || cfg->clock_drift_ppb < -1000000 ||
			    cfg->clock_drift_ppb > 1000000) {
				fprintf(stderr, "tpu-trainer: --clock-drift-ppb: -1000000..1000000\n");
				err = -EINVAL;
			}
			break;
		}
		case OPT_CLOCK_OFFSET: err = parse_u64(name, optarg, 0, 1ull << 62, &cfg->clock_offset); break;
		case OPT_KEEP_FILES: cfg->keep_files = true; break;
		case OPT_MAIN_THREAD_NAME: cfg->main_thread_name = optarg; break;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (err)
		return err;
	if (optind < argc) {
		fprintf(stderr, "tpu-trainer: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (cfg->duration_ns && !steps_set)
		cfg->steps = 0;
	if (!cfg->plugin)
		cfg->plugin = default_plugin();
	if (cfg->step_ns < 10000) {
		fprintf(stderr, "tpu-trainer: --step-time must be at least 10us\n");
		return -EINVAL;
	}
	if (cfg->batch_bytes < (size_t)cfg->cores || cfg->batch_bytes > cfg->shard_bytes) {
		fprintf(stderr, "tpu-trainer: --batch-bytes must be in [cores, shard-bytes]\n");
		return -EINVAL;
	}
	if (cfg->trainers > 1 && !strstr(cfg->device_dir, "%p")) {
		fprintf(stderr, "tpu-trainer: with --trainers, --device-dir needs %%p\n");
		return -EINVAL;
	}
	if (cfg->trainers > 1 && cfg->trace_dir && !strstr(cfg->trace_dir, "%p")) {
		fprintf(stderr, "tpu-trainer: with --trainers, --trace-dir needs %%p\n");
		return -EINVAL;
	}
	if (cfg->trainers > 1 && cfg->profile && !strstr(cfg->profile, "%p")) {
		fprintf(stderr, "tpu-trainer: with --trainers, --profile needs %%p\n");
		return -EINVAL;
	}
	return 0;
}
