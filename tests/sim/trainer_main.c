// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tpu-trainer: sets up the simulated device (directory, node), starts the
 * input pipeline, loads the PJRT plugin as a framework does, trains, and
 * tears everything down in an order that lets each part finish. With
 * --trainers N it forks N-1 more trainers first, each with its own pid,
 * device directory and node, all appending to the same ground truth.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devnode_setup.h"
#include "simtruth.h"
#include "trainer.h"
#include "sim_fs.h"

#define MAX_TRAINERS 64

struct paths {
	char device_dir[PATH_MAX];
	char trace_dir[PATH_MAX];
	char data_dir[PATH_MAX];
	char node[PATH_MAX];
	char profile[PATH_MAX];		/* "" = no --profile */
	bool own_device_dir;		/* the default, ours to remove */
};

static void on_signal(int sig)
{
	(void)sig;
	trainer_stop = 1;
}

/* `tmpl` with each %p replaced by the pid. */
static void expand(const char *tmpl, char *out, size_t len)
{
	size_t n = 0;

	for (; *tmpl && n + 12 < len; tmpl++) {
		if (tmpl[0] == '%' && tmpl[1] == 'p') {
			n += (size_t)snprintf(out + n, len - n, "%d", (int)getpid());
			tmpl++;
		} else {
			out[n++] = *tmpl;
		}
	}
	out[n] = 0;
}

static int remove_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int setup_paths(const struct trainer_config *cfg, struct paths *ps)
{
	bool is_default = !strcmp(cfg->device_dir, "/run/acceltrace-sim/%p");
	int err;

	expand(cfg->device_dir, ps->device_dir, sizeof(ps->device_dir));
	err = sim_make_dirs(ps->device_dir);
	if (err && is_default && (err == -EACCES || err == -EPERM || err == -EROFS)) {
		/* Not root: /run is not ours. */
		const char *tmp = getenv("TMPDIR");

		snprintf(ps->device_dir, sizeof(ps->device_dir), "%s/acceltrace-sim-%d/%d",
			 tmp && *tmp ? tmp : "/tmp", (int)getuid(), (int)getpid());
		err = sim_make_dirs(ps->device_dir);
	}
	if (err) {
		fprintf(stderr, "tpu-trainer: cannot create %s: %s\n", ps->device_dir,
			strerror(-err));
		return err;
	}
	ps->own_device_dir = is_default;
	{
		/* Absolute, so the plugin and the printed paths mean the same. */
		char abs[PATH_MAX];

		if (realpath(ps->device_dir, abs))
			snprintf(ps->device_dir, sizeof(ps->device_dir), "%s", abs);
	}
	if (cfg->trace_dir)
		expand(cfg->trace_dir, ps->trace_dir, sizeof(ps->trace_dir));
	else
		snprintf(ps->trace_dir, sizeof(ps->trace_dir), "%.4000s/devtrace",
			 ps->device_dir);
	if (cfg->no_devtrace)
		snprintf(ps->trace_dir, sizeof(ps->trace_dir), "(none)");
	ps->profile[0] = 0;
	if (cfg->profile)
		expand(cfg->profile, ps->profile, sizeof(ps->profile));
	if (cfg->data_dir)
		expand(cfg->data_dir, ps->data_dir, sizeof(ps->data_dir));
	else
		snprintf(ps->data_dir, sizeof(ps->data_dir), "%.4000s/data", ps->device_dir);

	ps->node[0] = 0;
	if (!cfg->no_device_node) {
		err = devnode_setup_create(ps->device_dir, cfg->submit_ioctl, ps->node,
					   sizeof(ps->node));
		if (err) {
			fprintf(stderr, "tpu-trainer: no device node (mknod in %s: %s); "
				"running without one\n", ps->device_dir, strerror(-err));
			ps->node[0] = 0;
		}
	}
	return 0;
}

static void truth_run(const char *type, const struct trainer_config *cfg, int index,
		      const struct loop_result *res)
{
	static const char *const feeds[] = { "buffer", "infeed", "infeed-raw" };
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, type);
	tl_u64(&l, "t", truth_now());
	if (res) {
		tl_u64(&l, "steps", res->steps);
		tl_str(&l, "reason", res->reason);
	} else {
		tl_u64(&l, "index", (uint64_t)index);
		tl_u64(&l, "cores", (uint64_t)cfg->cores);
		tl_u64(&l, "step_ns", cfg->step_ns);
		tl_str(&l, "feed", feeds[cfg->feed]);
		tl_str(&l, "plugin", cfg->plugin);
	}
	truth_commit(&l);
}

static void truth_main_thread(bool start)
{
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, start ? "thread_start" : "thread_end");
	tl_str(&l, "name", "pt_main_thread");
	if (start)
		tl_str(&l, "role", "main");
	tl_u64(&l, "t", truth_now());
	truth_commit(&l);
}

/* Plugin configuration, passed the way frameworks pass theirs. */
static size_t client_options(const struct trainer_config *cfg, const struct paths *ps,
			     PJRT_NamedValue *v)
{
	size_t n = 0;

#define OPT_STR(k, s) v[n++] = (PJRT_NamedValue){ .struct_size = sizeof(PJRT_NamedValue), \
	.name = k, .name_size = strlen(k), .type = PJRT_NamedValue_kString, \
	.string_value = s, .value_size = strlen(s) }
#define OPT_INT(k, i) v[n++] = (PJRT_NamedValue){ .struct_size = sizeof(PJRT_NamedValue), \
	.name = k, .name_size = strlen(k), .type = PJRT_NamedValue_kInt64, \
	.int64_value = (int64_t)(i), .value_size = 1 }
#define OPT_BOOL(k, b) v[n++] = (PJRT_NamedValue){ .struct_size = sizeof(PJRT_NamedValue), \
	.name = k, .name_size = strlen(k), .type = PJRT_NamedValue_kBool, \
	.bool_value = (b), .value_size = 1 }

	OPT_STR("ml_framework_name", "tpu-trainer");
	OPT_INT("sim_cores", cfg->cores);
	OPT_STR("sim_device_dir", ps->device_dir);
	if (cfg->no_devtrace)
		OPT_BOOL("sim_no_devtrace", true);
	else
		OPT_STR("sim_trace_dir", ps->trace_dir);
	OPT_BOOL("sim_submit_ioctl", cfg->submit_ioctl);
	OPT_BOOL("sim_truth_ops", cfg->truth_ops);
	if (cfg->truth)
		OPT_STR("sim_truth_path", cfg->truth);
	if (cfg->trace_records)
		OPT_INT("sim_trace_records", cfg->trace_records);
	if (cfg->compile_ms >= 0)
		OPT_INT("sim_compile_ns", cfg->compile_ms * 1000000);
	if (cfg->clock_rate_hz)
		OPT_INT("sim_clock_rate_hz", cfg->clock_rate_hz);
	if (cfg->clock_drift_set)
		OPT_INT("sim_clock_drift_ppb", cfg->clock_drift_ppb);
	if (cfg->clock_offset)
		OPT_INT("sim_clock_offset", cfg->clock_offset);
	if (cfg->device_memory)
		OPT_INT("sim_device_memory", cfg->device_memory);
	return n;
}

static int run_trainer(const struct trainer_config *cfg, int index)
{
	struct loop_result res = { .steps = 0, .reason = "error" };
	struct input *in = NULL;
	struct feeder *f = NULL;
	struct churn *churn = NULL;
	struct pjrt *p = NULL;
	struct pjrt_profiler *prof = NULL;
	PJRT_NamedValue opts[16];
	struct paths ps;
	sigset_t old;
	int err;

	err = setup_paths(cfg, &ps);
	if (err)
		return 1;
	if (cfg->truth) {
		err = truth_open(cfg->truth);
		if (err) {
			fprintf(stderr, "tpu-trainer: cannot open %s: %s\n", cfg->truth,
				strerror(-err));
			goto out;
		}
	}
	/* Names are the process's to choose, any bytes (acceltrace's tests
	 * give one that is not UTF-8); the kernel keeps 15. */
	prctl(PR_SET_NAME, cfg->main_thread_name ? cfg->main_thread_name : "pt_main_thread");
	fprintf(stderr, "tpu-trainer: pid=%d index=%d plugin=%s device_dir=%s node=%s "
		"trace_dir=%s data_dir=%s truth=%s\n", (int)getpid(), index, cfg->plugin,
		ps.device_dir, ps.node[0] ? ps.node : "(none)", ps.trace_dir, ps.data_dir,
		cfg->truth ? cfg->truth : "(none)");
	truth_run("run_start", cfg, index, NULL);
	truth_main_thread(true);

	err = -EIO;
	in = input__start(cfg, ps.data_dir);
	if (!in)
		goto out;
	churn = churn__start(cfg->churn_rate, ps.data_dir);
	if (cfg->late_load_ns && !tsleep(cfg->late_load_ns)) {
		res.reason = "signal";
		err = 0;
		goto out;
	}

	/* Threads the plugin starts inherit a mask that leaves signals to us. */
	tthread_block_signals(&old);
	p = pjrt__load(cfg->plugin);
	if (p)
		err = pjrt__create_client(p, opts, client_options(cfg, &ps, opts));
	tthread_restore_signals(&old);
	if (!p || err)
		goto out;
	if (pjrt__num_devices(p) != cfg->cores) {
		fprintf(stderr, "tpu-trainer: the plugin has %d devices, wanted %d\n",
			pjrt__num_devices(p), cfg->cores);
		err = -EINVAL;
		goto out;
	}
	f = feeder__start(cfg, p, in);
	if (!f)
		goto out;
	if (ps.profile[0]) {
		prof = pjrt__profiler_start(p);
		if (!prof) {
			err = -EIO;
			goto out;
		}
	}
	err = trainer_loop(cfg, p, in, f, ps.device_dir, &res);
out:
	/* Consumers first, then the client (which wakes blocked feed calls). */
	input__close(in);
	feeder__drain(f);
	pjrt__shutdown(p);
	if (prof) {
		/* After the client: executions it cancelled are in the profile. */
		size_t bytes = 0;
		int perr = pjrt__profiler_finish(p, prof, ps.profile, &bytes);

		if (perr) {
			fprintf(stderr, "tpu-trainer: writing the profile %s failed: %s\n",
				ps.profile, strerror(-perr));
			if (!err)
				err = perr;
		} else {
			fprintf(stderr, "tpu-trainer: pid=%d profile=%s bytes=%zu\n",
				(int)getpid(), ps.profile, bytes);
		}
	}
	feeder__free(f);
	input__stop(in);
	churn__stop(churn);
	pjrt__free(p);
	if (stopping() && !err)
		res.reason = "signal";
	truth_run("run_end", cfg, index, &res);
	truth_main_thread(false);
	if (ps.node[0])
		devnode_setup_remove(ps.device_dir, cfg->submit_ioctl);
	if (ps.own_device_dir && !cfg->keep_files) {
		char *slash;

		nftw(ps.device_dir, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
		/* The parent goes too once no other trainer uses it. */
		slash = strrchr(ps.device_dir, '/');
		if (slash && slash != ps.device_dir) {
			*slash = 0;
			rmdir(ps.device_dir);
		}
	}
	fprintf(stderr, "tpu-trainer: pid=%d done steps=%llu reason=%s\n", (int)getpid(),
		(unsigned long long)res.steps, res.reason);
	if (truth_close() && !err) {
		fprintf(stderr, "tpu-trainer: writing %s failed\n", cfg->truth);
		err = -EIO;
	}
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct trainer_config cfg;
	struct sigaction sa = { .sa_handler = on_signal };
	pid_t children[MAX_TRAINERS];
	int i, n = 0, rc, status;

	rc = trainer_flags_parse(argc, argv, &cfg);
	if (rc)
		return rc > 0 ? 0 : 2;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	/* Fork before any thread exists. */
	for (i = 1; i < cfg.trainers; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			fprintf(stderr, "tpu-trainer: fork: %s\n", strerror(errno));
			break;
		}
		if (pid == 0)
			_exit(run_trainer(&cfg, i));
		children[n++] = pid;
	}
	rc = run_trainer(&cfg, 0);
	for (i = 0; i < n; i++) {
		if (stopping())
			kill(children[i], SIGTERM);
		while (waitpid(children[i], &status, 0) < 0 && errno == EINTR)
			if (stopping())
				kill(children[i], SIGTERM);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			rc = 1;
	}
	return rc;
}
