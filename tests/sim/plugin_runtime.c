// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The runtime's completion thread ("tpu_runtime"): one eventfd per core,
 * registered with the device node as that core's completion interrupt. The
 * device queues a completion and writes the eventfd; this thread blocks in
 * poll(), read()s the eventfd, takes the core's completions and finishes
 * them, which runs the caller's Event_OnReady callbacks on this thread.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

#include "plugin.h"
#include "simtruth.h"

struct completion {
	struct completion *next;
	struct simdev_exec *e;
};

struct core_queue {
	struct completion *head, *tail;
};

struct sim_runtime {
	PJRT_Client *client;
	int cores;
	int efd[SIM_MAX_CORES];
	int stop_fd;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	struct core_queue q[SIM_MAX_CORES];
};

static struct completion *take_all(struct sim_runtime *rt, int core)
{
	struct completion *c;

	pthread_mutex_lock(&rt->lock);
	c = rt->q[core].head;
	rt->q[core].head = rt->q[core].tail = NULL;
	pthread_mutex_unlock(&rt->lock);
	return c;
}

static void truth_read(int core, int fd, uint64_t count)
{
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, "interrupt_read");
	tl_u64(&l, "core", (uint64_t)core);
	tl_u64(&l, "event_fd", (uint64_t)fd);
	tl_u64(&l, "count", count);
	tl_u64(&l, "t", truth_now());
	truth_commit(&l);
}

static void finish(struct sim_runtime *rt, int core)
{
	struct completion *c = take_all(rt, core), *next;

	for (; c; c = next) {
		next = c->next;
		sim_exec_core_done((struct sim_exec *)c->e, core);
		free(c);
	}
}

static void thread_truth(bool start)
{
	struct truth_line l;

	if (!truth_enabled())
		return;
	tl_begin(&l, start ? "thread_start" : "thread_end");
	tl_str(&l, "name", "tpu_runtime");
	if (start)
		tl_str(&l, "role", "runtime");
	tl_u64(&l, "t", truth_now());
	truth_commit(&l);
}

static void *runtime_main(void *arg)
{
	struct sim_runtime *rt = arg;
	struct pollfd pfd[SIM_MAX_CORES + 1];
	uint64_t v;
	int c, n;

	prctl(PR_SET_NAME, "tpu_runtime");
	thread_truth(true);
	for (c = 0; c < rt->cores; c++) {
		pfd[c].fd = rt->efd[c];
		pfd[c].events = POLLIN;
	}
	pfd[rt->cores].fd = rt->stop_fd;
	pfd[rt->cores].events = POLLIN;
	for (;;) {
		n = poll(pfd, (nfds_t)rt->cores + 1, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "libtpu(sim): poll: %s\n", strerror(errno));
			break;
		}
		for (c = 0; c < rt->cores; c++) {
			if (!(pfd[c].revents & POLLIN))
				continue;
			if (read(rt->efd[c], &v, sizeof(v)) != sizeof(v))
				continue;
			truth_read(c, rt->efd[c], v);
			finish(rt, c);
		}
		if (pfd[rt->cores].revents & POLLIN)
			break;
	}
	/* The device is stopped by now: whatever it queued is final. */
	for (c = 0; c < rt->cores; c++)
		finish(rt, c);
	thread_truth(false);
	return NULL;
}

void sim_runtime__interrupt(void *arg, struct simdev_exec *e, int core)
{
	struct sim_runtime *rt = arg;
	struct completion *c = malloc(sizeof(*c));
	uint64_t one = 1;
	struct truth_line l;

	if (!c) {
		/* Nowhere to queue it: finish it here rather than lose it. */
		sim_exec_core_done((struct sim_exec *)e, core);
		return;
	}
	c->next = NULL;
	c->e = e;
	pthread_mutex_lock(&rt->lock);
	if (rt->q[core].tail)
		rt->q[core].tail->next = c;
	else
		rt->q[core].head = c;
	rt->q[core].tail = c;
	pthread_mutex_unlock(&rt->lock);
	if (truth_enabled()) {
		tl_begin_dev(&l, "interrupt");
		tl_u64(&l, "core", (uint64_t)core);
		tl_u64(&l, "event_fd", (uint64_t)rt->efd[core]);
		tl_u64(&l, "launch_id", e->launch_id);
		tl_u64(&l, "t", truth_now());
		truth_commit(&l);
	}
	if (write(rt->efd[core], &one, sizeof(one)) != sizeof(one))
		fprintf(stderr, "libtpu(sim): eventfd write: %s\n", strerror(errno));
}

struct sim_runtime *sim_runtime__new(PJRT_Client *client)
{
	struct sim_runtime *rt = calloc(1, sizeof(*rt));
	int c, err;

	if (!rt)
		return NULL;
	rt->client = client;
	rt->cores = client->cores;
	rt->stop_fd = -1;
	for (c = 0; c < SIM_MAX_CORES; c++)
		rt->efd[c] = -1;
	pthread_mutex_init(&rt->lock, NULL);
	for (c = 0; c < rt->cores; c++) {
		rt->efd[c] = eventfd(0, EFD_CLOEXEC);
		if (rt->efd[c] < 0)
			goto fail;
		devnode__register_interrupt(client->node, c, rt->efd[c]);
	}
	rt->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (rt->stop_fd < 0)
		goto fail;
	err = pthread_create(&rt->thread, NULL, runtime_main, rt);
	if (err) {
		errno = err;
		goto fail;
	}
	rt->started = true;
	return rt;
fail:
	err = errno;
	sim_runtime__free(rt);
	errno = err;
	return NULL;
}

void sim_runtime__free(struct sim_runtime *rt)
{
	uint64_t one = 1;
	int c;

	if (!rt)
		return;
	if (rt->started) {
		if (write(rt->stop_fd, &one, sizeof(one)) != sizeof(one))
			fprintf(stderr, "libtpu(sim): eventfd write: %s\n", strerror(errno));
		pthread_join(rt->thread, NULL);
	}
	for (c = 0; c < SIM_MAX_CORES; c++) {
		if (rt->efd[c] < 0)
			continue;
		devnode__unregister_interrupt(rt->client->node, c);
		close(rt->efd[c]);
	}
	if (rt->stop_fd >= 0)
		close(rt->stop_fd);
	pthread_mutex_destroy(&rt->lock);
	free(rt);
}
