// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Named threads with ground-truth lifetimes, interruptible sleeps, and the
 * thread-churn scenario: short-lived "pt_thread_pool" threads that read a
 * little and exit.
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

volatile sig_atomic_t trainer_stop;

struct tthread_arg {
	char name[16];
	const char *role;
	void *(*fn)(void *);
	void *arg;
};

void tthread_block_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

void tthread_restore_signals(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void *tthread_main(void *p)
{
	struct tthread_arg a = *(struct tthread_arg *)p;
	struct truth_line l;
	void *ret;

	free(p);
	pthread_setname_np(pthread_self(), a.name);
	if (truth_enabled()) {
		tl_begin(&l, "thread_start");
		tl_str(&l, "name", a.name);
		tl_str(&l, "role", a.role);
		tl_u64(&l, "t", truth_now());
		truth_commit(&l);
	}
	ret = a.fn(a.arg);
	if (truth_enabled()) {
		tl_begin(&l, "thread_end");
		tl_str(&l, "name", a.name);
		tl_u64(&l, "t", truth_now());
		truth_commit(&l);
	}
	return ret;
}

int tthread_start(pthread_t *t, const char *name, const char *role,
		  void *(*fn)(void *), void *arg)
{
	struct tthread_arg *a = calloc(1, sizeof(*a));
	sigset_t old;
	int err;

	if (!a)
		return -ENOMEM;
	snprintf(a->name, sizeof(a->name), "%s", name);
	a->role = role;
	a->fn = fn;
	a->arg = arg;
	/* The new thread inherits a blocked mask: signals go to main. */
	tthread_block_signals(&old);
	err = -pthread_create(t, NULL, tthread_main, a);
	tthread_restore_signals(&old);
	if (err)
		free(a);
	return err;
}

bool tsleep(uint64_t ns)
{
	uint64_t end = truth_now() + ns, now;

	while (!stopping() && (now = truth_now()) < end) {
		uint64_t step = end - now < 50000000ull ? end - now : 50000000ull;
		struct timespec ts = {
			.tv_sec = (time_t)(step / 1000000000ull),
			.tv_nsec = (long)(step % 1000000000ull),
		};

		nanosleep(&ts, NULL);
	}
	return !stopping();
}

/* ---------------------------------------------------------------- churn */

struct churn {
	double rate;
	char path[PATH_MAX];
	pthread_t spawner;
	bool started;
	volatile bool stop;
};

static void *churn_worker(void *arg)
{
	struct churn *c = arg;
	char buf[4096];
	uint64_t t0, t1;
	struct truth_line l;
	ssize_t n;
	int fd;

	fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	t0 = truth_now();
	n = pread(fd, buf, sizeof(buf), 0);
	t1 = truth_now();
	close(fd);
	if (n >= 0 && truth_enabled()) {
		tl_begin(&l, "file_read");
		tl_str(&l, "path", c->path);
		tl_u64(&l, "offset", 0);
		tl_u64(&l, "bytes", (uint64_t)n);
		tl_u64(&l, "t_call", t0);
		tl_u64(&l, "t_return", t1);
		truth_commit(&l);
	}
	return NULL;
}

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	uint64_t period = (uint64_t)(1e9 / c->rate);
	uint64_t next = truth_now();

	while (!c->stop && !stopping()) {
		pthread_t t;

		if (!tthread_start(&t, "pt_thread_pool", "churn", churn_worker, c))
			pthread_join(t, NULL);
		next += period;
		while (!c->stop && !stopping() && truth_now() < next)
			tsleep(next - truth_now() < 50000000ull ? next - truth_now() : 50000000ull);
	}
	return NULL;
}

struct churn *churn__start(double rate, const char *data_dir)
{
	struct churn *c;

	if (rate <= 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->rate = rate;
	snprintf(c->path, sizeof(c->path), "%s/shard-00000.rec", data_dir);
	if (tthread_start(&c->spawner, "churn_spawner", "churn", churn_main, c)) {
		free(c);
		return NULL;
	}
	c->started = true;
	return c;
}

void churn__stop(struct churn *c)
{
	if (!c)
		return;
	c->stop = true;
	if (c->started)
		pthread_join(c->spawner, NULL);
	free(c);
}
