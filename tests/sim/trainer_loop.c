// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The training loop, JAX-style: take the step's input, Execute (launch_id =
 * step number), register completion with Event_OnReady, keep at most
 * --max-inflight executions in flight, fetch the loss now and then with
 * ToHostBuffer + Event_Await. The scenarios hook in here: a long host op
 * (a checkpoint), a long device op (a second program), a crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "simtruth.h"
#include "trainer.h"

struct step_slot {
	uint64_t step;
	bool used;
	const char *module;
	uint64_t t_start, t_end, input_wait_ns;
	int remaining;			/* device completions still to come */
	bool failed;
	int ndev;
	PJRT_Buffer *inputs[SIM_MAX_CORES];
	PJRT_Buffer *outputs[SIM_MAX_CORES];
	size_t output_bytes[SIM_MAX_CORES];
	PJRT_Event *events[SIM_MAX_CORES];
	struct loop *loop;
	struct dev_ctx {
		struct step_slot *slot;
		int device;
	} ctx[SIM_MAX_CORES];
};

struct loop {
	const struct trainer_config *cfg;
	struct pjrt *p;
	struct feeder *f;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct step_slot *slots;
	int nslots;
	uint64_t launched;		/* slots used */
	uint64_t reaped;		/* steps whose records are written */
	uint64_t last_flush;
};

/* The truth on disk is at most a second old, so a run killed outright
 * (SIGKILL) still leaves nearly all of it. */
static void maybe_flush(struct loop *l)
{
	uint64_t now = truth_now();

	if (now - l->last_flush >= 1000000000ull) {
		truth_flush();
		l->last_flush = now;
	}
}

char *trainer_program_text(const struct trainer_config *cfg, bool long_op)
{
	bool feed = cfg->feed != FEED_BUFFER;
	uint64_t t = cfg->step_ns, in_ns = 0, out_ns = 0, conv, fus, ar;
	size_t slice = cfg->batch_bytes / (size_t)cfg->cores, n = 4096;
	char *s = malloc(n);
	int len = 0;

	if (!s)
		return NULL;
	if (long_op) {
		uint64_t d = cfg->long_device_op_ns;

		snprintf(s, n,
			 "HloModule long_step, entry_computation_layout={(u8[%zu]{0})->f32[256]{0}}\n\n"
			 "ENTRY %%long_step (batch: u8[%zu]) -> f32[256] {\n"
			 "  %%convolution.77 = f32[4096,4096]{1,0} convolution(%%batch, %%w), "
			 "window={size=7x7}, sim_ns=%llu, sim_flops=%llu, sim_bytes=%llu\n"
			 "  ROOT %%reduce.78 = f32[256]{0} reduce(%%convolution.77), sim_output_bytes=%llu\n"
			 "}\n", slice, slice, (unsigned long long)d,
			 (unsigned long long)(d / 1000 * 275000),
			 (unsigned long long)(d / 1000 * 1200),
			 (unsigned long long)cfg->output_bytes);
		return s;
	}
	if (feed) {
		in_ns = t / 50;
		out_ns = t / 20;
	}
	conv = (t - in_ns - out_ns) * 55 / 100;
	fus = (t - in_ns - out_ns) * 30 / 100;
	ar = t - in_ns - out_ns - conv - fus;
	len += snprintf(s + len, n - (size_t)len,
			"HloModule train_step, entry_computation_layout={(u8[%zu]{0})->f32[256]{0}}\n\n"
			"ENTRY %%train_step (batch: u8[%zu]) -> f32[256] {\n", slice, slice);
	if (feed)
		len += snprintf(s + len, n - (size_t)len,
				"  %%infeed.0 = (u8[%zu]{0}, token[]) infeed(token[] %%after-all), "
				"sim_ns=%llu, sim_bytes=%zu\n", slice,
				(unsigned long long)in_ns, slice);
	len += snprintf(s + len, n - (size_t)len,
			"  %%convolution.1 = f32[128,56,56,64]{3,2,1,0} convolution(%%batch, %%w), "
			"window={size=3x3 pad=1_1x1_1}, sim_ns=%llu, sim_flops=%llu, sim_bytes=%llu\n"
			"  %%fusion.2 = f32[128,56,56,64]{3,2,1,0} fusion(%%convolution.1), kind=kLoop, "
			"sim_ns=%llu, sim_flops=%llu, sim_bytes=%llu\n"
			"  %%all-reduce.3 = f32[256]{0} all-reduce(%%fusion.2), "
			"replica_groups={}, sim_ns=%llu, sim_flops=0, sim_bytes=%llu\n",
			(unsigned long long)conv, (unsigned long long)(conv * 275),
			(unsigned long long)(conv * 1200 / 1000),
			(unsigned long long)fus, (unsigned long long)(fus * 20),
			(unsigned long long)(fus * 1200 / 1000),
			(unsigned long long)ar, (unsigned long long)(ar * 100 / 1000));
	if (feed)
		len += snprintf(s + len, n - (size_t)len,
				"  %%outfeed.4 = token[] outfeed(%%all-reduce.3), sim_ns=%llu, "
				"sim_bytes=%d\n", (unsigned long long)out_ns,
				TRAINER_OUTFEED_BYTES);
	snprintf(s + len, n - (size_t)len,
		 "  ROOT %%tuple.5 = (f32[256]{0}) tuple(%%all-reduce.3), sim_output_bytes=%llu\n}\n",
		 (unsigned long long)cfg->output_bytes);
	return s;
}

char *trainer_eval_program_text(const struct trainer_config *cfg)
{
	size_t slice = cfg->batch_bytes / (size_t)cfg->cores, n = 1024;
	uint64_t t = cfg->eval_ns ? cfg->eval_ns : cfg->step_ns;
	char *s = malloc(n);

	if (!s)
		return NULL;
	snprintf(s, n,
		 "HloModule eval_step, entry_computation_layout={(u8[%zu]{0})->f32[256]{0}}\n\n"
		 "ENTRY %%eval_step (batch: u8[%zu]) -> f32[256] {\n"
		 "  %%convolution.11 = f32[128,56,56,64]{3,2,1,0} convolution(%%batch, %%w), "
		 "window={size=3x3 pad=1_1x1_1}, sim_ns=%llu, sim_flops=%llu, sim_bytes=%llu\n"
		 "  ROOT %%tuple.12 = (f32[256]{0}) tuple(%%convolution.11), sim_output_bytes=%llu\n"
		 "}\n", slice, slice, (unsigned long long)t, (unsigned long long)(t * 275),
		 (unsigned long long)(t * 1200 / 1000), (unsigned long long)cfg->output_bytes);
	return s;
}

char *trainer_init_program_text(const struct trainer_config *cfg, int i)
{
	size_t slice = cfg->batch_bytes / (size_t)cfg->cores, n = 1024;
	char *s = malloc(n);

	if (!s)
		return NULL;
	snprintf(s, n,
		 "HloModule jit_init_%d, entry_computation_layout={(u8[%zu]{0})->f32[256]{0}}\n\n"
		 "ENTRY %%jit_init_%d (batch: u8[%zu]) -> f32[256] {\n"
		 "  %%rng.1 = f32[256]{0} rng(%%batch), distribution=rng_uniform, "
		 "sim_ns=500000, sim_flops=256, sim_bytes=1024\n"
		 "  ROOT %%tuple.2 = (f32[256]{0}) tuple(%%rng.1), sim_output_bytes=1024\n"
		 "}\n", i, slice, i, slice);
	return s;
}

/* ---------------------------------------------------------------- completion */

static void on_device_done(void *arg, PJRT_Error *err)
{
	struct dev_ctx *dc = arg;
	struct step_slot *s = dc->slot;
	struct loop *l = s->loop;
	struct truth_line tl;
	uint64_t now = truth_now();

	if (err) {
		s->failed = true;
		pjrt__error_free(l->p, err);
	}
	/* The framework drops the event once its future is set. */
	pjrt__event_free(l->p, s->events[dc->device]);
	if (truth_enabled()) {
		tl_begin(&tl, "completion");
		tl_u64(&tl, "launch_id", s->step);
		tl_u64(&tl, "device", (uint64_t)dc->device);
		tl_u64(&tl, "t", now);
		if (err)
			tl_bool(&tl, "error", true);
		truth_commit(&tl);
	}
	pthread_mutex_lock(&l->lock);
	s->events[dc->device] = NULL;
	if (--s->remaining == 0) {
		s->t_end = now;
		pthread_cond_broadcast(&l->cond);
	}
	pthread_mutex_unlock(&l->lock);
}

static void write_step(struct step_slot *s)
{
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, "step");
	tl_u64(&l, "step", s->step);
	tl_str(&l, "module", s->module);
	tl_u64(&l, "t_start", s->t_start);
	tl_u64(&l, "t_end", s->t_end);
	tl_u64(&l, "input_wait_ns", s->input_wait_ns);
	if (s->failed)
		tl_bool(&l, "cancelled", true);
	truth_commit(&l);
}

/* Writes and frees every finished step, oldest first. */
static void reap(struct loop *l)
{
	for (;;) {
		struct step_slot *s = &l->slots[(l->reaped) % (uint64_t)l->nslots];
		int d;

		pthread_mutex_lock(&l->lock);
		if (!s->used || s->remaining) {
			pthread_mutex_unlock(&l->lock);
			return;
		}
		pthread_mutex_unlock(&l->lock);
		write_step(s);
		for (d = 0; d < s->ndev; d++) {
			pjrt__buffer_free(l->p, s->inputs[d], d,
					  l->cfg->batch_bytes / (size_t)s->ndev);
			pjrt__buffer_free(l->p, s->outputs[d], d, s->output_bytes[d]);
		}
		memset(s, 0, sizeof(*s));
		l->reaped++;
	}
}

/* Waits until fewer than `max` steps are in flight; false when stopping. */
static bool wait_inflight(struct loop *l, uint64_t launched, uint64_t max)
{
	for (;;) {
		struct timespec ts;

		reap(l);
		if (launched - l->reaped < max)
			return true;
		if (stopping())
			return false;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&l->lock);
		{
			struct step_slot *s = &l->slots[l->reaped % (uint64_t)l->nslots];

			if (s->used && s->remaining)
				pthread_cond_timedwait(&l->cond, &l->lock, &ts);
		}
		pthread_mutex_unlock(&l->lock);
		/* Keep what happened on disk while waiting, e.g. on a long op. */
		maybe_flush(l);
	}
}

/* ---------------------------------------------------------------- scenarios */

/* A checkpoint the main thread writes for `ns`: the long host op. */
static void long_host_op(const char *work_dir, uint64_t ns)
{
	char path[PATH_MAX], chunk[65536];
	uint64_t t0 = truth_now();
	struct truth_line l;
	off_t off = 0;
	int fd;

	snprintf(path, sizeof(path), "%.4000s/checkpoint.bin", work_dir);
	memset(chunk, 0x42, sizeof(chunk));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	while (truth_now() - t0 < ns && !stopping()) {
		if (fd >= 0 && pwrite(fd, chunk, sizeof(chunk), off) > 0)
			off = (off + (off_t)sizeof(chunk)) % (16 << 20);
		if ((off >> 16) % 100 == 0)
			truth_flush();	/* about once a second */
		tsleep(10000000ull < ns - (truth_now() - t0) ?
		       10000000ull : ns - (truth_now() - t0));
	}
	if (fd >= 0)
		close(fd);
	if (truth_enabled()) {
		tl_begin(&l, "host_op");
		tl_str(&l, "name", "checkpoint");
		tl_u64(&l, "t_start", t0);
		tl_u64(&l, "t_end", truth_now());
		truth_commit(&l);
	}
}

static void crash(uint64_t step)
{
	struct truth_line l;

	if (truth_enabled()) {
		tl_begin(&l, "crash");
		tl_u64(&l, "step", step);
		tl_u64(&l, "t", truth_now());
		truth_commit(&l);
	}
	fprintf(stderr, "tpu-trainer: pid=%d crashing after %llu steps (--crash-after)\n",
		(int)getpid(), (unsigned long long)step);
	truth_flush();
	abort();
}

/* ---------------------------------------------------------------- loop */

static int launch(struct loop *l, struct step_slot *s, PJRT_LoadedExecutable *exe,
		  bool with_args)
{
	int d, err;

	s->loop = l;
	s->ndev = pjrt__num_devices(l->p);
	s->remaining = s->ndev;
	s->used = true;
	l->launched++;
	err = pjrt__execute(l->p, exe, (int)s->step, s->ndev,
			    with_args ? s->inputs : NULL, s->outputs, s->events,
			    s->output_bytes);
	if (err) {
		s->remaining = 0;
		s->failed = true;
		return err;
	}
	for (d = 0; d < s->ndev; d++) {
		s->ctx[d].slot = s;
		s->ctx[d].device = d;
		err = pjrt__on_ready(l->p, s->events[d], on_device_done, &s->ctx[d]);
		if (err)
			return err;
	}
	return 0;
}

/* Launch ids of start-up programs: apart from the steps' (1, 2, ...). */
#define INIT_LAUNCH_BASE 1000000000ull
/* Launch ids of eval executions: apart from both (PJRT takes an int). */
#define EVAL_LAUNCH_BASE 1500000000ull

/*
 * Train/eval alternation: an eval phase runs the eval program K times
 * (--eval-steps), without input (its batch is the train step's, as a
 * held-out set would be), each in a slot of its own; its truth records are
 * steps of module eval_step with launch ids EVAL_LAUNCH_BASE + 1, + 2, ...
 * across phases, so the train steps stay 1, 2, ... With --eval-mem each
 * device holds a working set of that many bytes from before the phase's
 * first execution until its last has completed, then deletes it
 * (Buffer_Delete, then Buffer_Destroy, as JAX's Array.delete()).
 */
static int run_eval(struct loop *l, PJRT_LoadedExecutable *evalx, uint64_t phase)
{
	const struct trainer_config *cfg = l->cfg;
	PJRT_Buffer *work[SIM_MAX_CORES] = { 0 };
	int ndev = pjrt__num_devices(l->p), d, err = 0;
	struct step_slot *s;
	uint64_t k;

	/* A device too full for its working set evaluates without it. */
	for (d = 0; cfg->eval_mem && d < ndev && (!err || err == -ENOMEM); d++)
		err = pjrt__create_buffer(l->p, cfg->eval_mem, d, &work[d]);
	if (err == -ENOMEM)
		err = 0;
	for (k = 0; k < cfg->eval_steps && !err; k++) {
		if (!wait_inflight(l, l->launched, (uint64_t)cfg->max_inflight))
			break;
		s = &l->slots[l->launched % (uint64_t)l->nslots];
		memset(s, 0, sizeof(*s));
		s->step = EVAL_LAUNCH_BASE + (phase - 1) * cfg->eval_steps + k + 1;
		s->module = "eval_step";
		s->t_start = truth_now();
		err = launch(l, s, evalx, false);
	}
	if (cfg->eval_mem) {
		wait_inflight(l, l->launched, 1);
		for (d = 0; d < ndev; d++)
			pjrt__buffer_delete(l->p, work[d], d, cfg->eval_mem);
	}
	return err;
}

/*
 * Start-up as frameworks do it: one-off programs (parameter
 * initialisation), each compiled and executed once, completion awaited,
 * before the training step is compiled. Their truth records are steps of
 * module jit_init_<i> with launch id INIT_LAUNCH_BASE + i.
 */
static int run_init_programs(struct loop *l)
{
	for (int i = 0; i < l->cfg->init_programs && !stopping(); i++) {
		PJRT_LoadedExecutable *init = NULL;
		char *text = trainer_init_program_text(l->cfg, i);
		struct step_slot *s;
		int err;

		err = text ? pjrt__compile(l->p, text, &init) : -ENOMEM;
		free(text);
		if (err)
			return err;
		s = &l->slots[l->launched % (uint64_t)l->nslots];
		memset(s, 0, sizeof(*s));
		s->step = INIT_LAUNCH_BASE + (uint64_t)i;
		s->module = "jit_init";
		s->t_start = truth_now();
		err = launch(l, s, init, false);
		if (!err)
			wait_inflight(l, l->launched, 1);
		pjrt__executable_free(l->p, init);
		if (err)
			return err;
	}
	return 0;
}

int trainer_loop(const struct trainer_config *cfg, struct pjrt *p,
		 struct input *in, struct feeder *f, const char *work_dir,
		 struct loop_result *res)
{
	PJRT_LoadedExecutable *train = NULL, *longx = NULL, *evalx = NULL;
	struct loop l = { .cfg = cfg, .p = p, .f = f, .last_flush = truth_now() };
	uint64_t t_begin = truth_now(), step;
	size_t loss_size = cfg->output_bytes > 4096 ? cfg->output_bytes : 4096;
	unsigned char *loss = NULL;
	char *text;
	int err;

	pthread_mutex_init(&l.lock, NULL);
	pthread_cond_init(&l.cond, NULL);
	l.nslots = cfg->max_inflight + 1;
	l.slots = calloc((size_t)l.nslots, sizeof(*l.slots));
	loss = malloc(loss_size);
	res->steps = 0;
	res->reason = "error";
	if (!l.slots || !loss) {
		err = -ENOMEM;
		goto out;
	}
	err = run_init_programs(&l);
	if (err)
		goto out;
	text = trainer_program_text(cfg, false);
	err = text ? pjrt__compile(p, text, &train) : -ENOMEM;
	free(text);
	if (!err && cfg->long_device_op_ns) {
		text = trainer_program_text(cfg, true);
		err = text ? pjrt__compile(p, text, &longx) : -ENOMEM;
		free(text);
	}
	if (!err && cfg->eval_every) {
		text = trainer_eval_program_text(cfg);
		err = text ? pjrt__compile(p, text, &evalx) : -ENOMEM;
		free(text);
	}
	if (err)
		goto out;
	fprintf(stderr, "tpu-trainer: pid=%d running minor=%d cores=%d\n", (int)getpid(),
		pjrt__minor(p), pjrt__num_devices(p));

	for (step = 1; ; step++) {
		struct step_slot *s;
		bool is_long = longx && step == cfg->long_device_op_step;

		if (stopping()) {
			res->reason = "signal";
			break;
		}
		if (cfg->steps && step > cfg->steps) {
			res->reason = "steps";
			break;
		}
		if (cfg->duration_ns && truth_now() - t_begin >= cfg->duration_ns) {
			res->reason = "duration";
			break;
		}
		if (cfg->crash_after && step > cfg->crash_after)
			crash(step - 1);
		if (cfg->long_host_op_ns && step == cfg->long_host_op_step)
			long_host_op(work_dir, cfg->long_host_op_ns);
		if (!wait_inflight(&l, l.launched, (uint64_t)cfg->max_inflight)) {
			res->reason = "signal";
			break;
		}

		s = &l.slots[l.launched % (uint64_t)l.nslots];
		memset(s, 0, sizeof(*s));
		s->step = step;
		s->module = is_long ? "long_step" : "train_step";
		s->t_start = truth_now();
		trainer_mem_set_step((int64_t)step);
		if (cfg->mem_leak) {
			PJRT_Buffer *leaked;

			/* Kept and never freed: the reference is dropped. A
			 * full device fails it (in the truth) and the run goes on. */
			err = pjrt__create_buffer(p, cfg->mem_leak, 0, &leaked);
			if (err && err != -ENOMEM)
				break;
			err = 0;
		}
		if (cfg->feed == FEED_BUFFER) {
			err = feeder__next(f, s->inputs, &s->input_wait_ns);
			if (err) {
				res->reason = stopping() ? "signal" : "input";
				err = stopping() ? 0 : err;
				break;
			}
		}
		err = launch(&l, s, is_long ? longx : train, cfg->feed == FEED_BUFFER);
		if (err)
			break;
		if (cfg->feed != FEED_BUFFER && !is_long)
			feeder__expect_outfeed(f);
		res->steps = step;
		/* Never Await behind a minutes-long op: SIGTERM could not stop it. */
		if (cfg->fetch_every && step % cfg->fetch_every == 0 &&
		    !(longx && step >= cfg->long_device_op_step &&
		      step < cfg->long_device_op_step + (uint64_t)cfg->max_inflight)) {
			err = pjrt__d2h(p, s->outputs[0], loss, loss_size);
			if (err && !stopping())
				break;
			err = 0;
		}
		if (evalx && step % cfg->eval_every == 0) {
			err = run_eval(&l, evalx, step / cfg->eval_every);
			if (err)
				break;
		}
		maybe_flush(&l);
	}
	/* Let what is in flight finish (a signal cancels it instead). */
	wait_inflight(&l, l.launched, 1);
out:
	trainer_mem_set_step(-1);
	if (err)
		res->reason = "error";
	if (l.slots && l.reaped < l.launched) {
		/* Cancel what still runs, in the teardown order, so its
		 * callbacks arrive (with errors) and its steps are written. */
		input__close(in);
		feeder__drain(f);
		pjrt__shutdown(p);
		reap(&l);
	}
	pjrt__executable_free(p, train);
	pjrt__executable_free(p, longx);
	pjrt__executable_free(p, evalx);
	free(l.slots);
	free(loss);
	pthread_cond_destroy(&l.cond);
	pthread_mutex_destroy(&l.lock);
	return err;
}
