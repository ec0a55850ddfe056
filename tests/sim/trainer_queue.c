// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A bounded blocking queue of pointers (the prefetch queue and the device
 * input queue). Pops wake every 100 ms to notice SIGTERM.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "simtruth.h"
#include "trainer.h"

struct bqueue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	void **items;
	size_t cap, head, count;
	bool closed;
};

struct bqueue *bqueue__new(size_t cap)
{
	struct bqueue *q = calloc(1, sizeof(*q));
	pthread_condattr_t ca;

	if (!q)
		return NULL;
	q->items = calloc(cap, sizeof(*q->items));
	if (!q->items) {
		free(q);
		return NULL;
	}
	q->cap = cap;
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->not_empty, &ca);
	pthread_cond_init(&q->not_full, &ca);
	pthread_condattr_destroy(&ca);
	return q;
}

void bqueue__free(struct bqueue *q)
{
	if (!q)
		return;
	pthread_cond_destroy(&q->not_empty);
	pthread_cond_destroy(&q->not_full);
	pthread_mutex_destroy(&q->lock);
	free(q->items);
	free(q);
}

int bqueue__push(struct bqueue *q, void *item)
{
	int err = 0;

	pthread_mutex_lock(&q->lock);
	while (q->count == q->cap && !q->closed)
		pthread_cond_wait(&q->not_full, &q->lock);
	if (q->closed) {
		err = -EPIPE;
	} else {
		q->items[(q->head + q->count) % q->cap] = item;
		q->count++;
		pthread_cond_signal(&q->not_empty);
	}
	pthread_mutex_unlock(&q->lock);
	return err;
}

int bqueue__pop(struct bqueue *q, void **item, uint64_t *waited_ns)
{
	uint64_t t0 = truth_now();
	int err = 0;

	pthread_mutex_lock(&q->lock);
	while (!q->count && !q->closed && !stopping()) {
		uint64_t wake = truth_now() + 100000000ull;
		struct timespec ts = {
			.tv_sec = (time_t)(wake / 1000000000ull),
			.tv_nsec = (long)(wake % 1000000000ull),
		};

		pthread_cond_timedwait(&q->not_empty, &q->lock, &ts);
	}
	if (q->count) {
		*item = q->items[q->head];
		q->head = (q->head + 1) % q->cap;
		q->count--;
		pthread_cond_signal(&q->not_full);
	} else {
		err = q->closed ? -EPIPE : -EAGAIN;
	}
	pthread_mutex_unlock(&q->lock);
	if (waited_ns)
		*waited_ns = truth_now() - t0;
	return err;
}

void bqueue__close(struct bqueue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	pthread_cond_broadcast(&q->not_empty);
	pthread_cond_broadcast(&q->not_full);
	pthread_mutex_unlock(&q->lock);
}
