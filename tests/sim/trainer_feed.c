// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Moving batches to the device.
 *
 * buffer mode (JAX-like): "pt_data_pin" takes batches from the prefetch
 *   queue, splits each across the devices and copies the slices with
 *   Client_BufferFromHostBuffer; the step loop takes the buffers from a
 *   small queue and passes them to Execute.
 * infeed modes (TF-on-TPU-like): "infeed_enqueue" pushes each slice into
 *   its core's infeed queue through the TPU C API, and "outfeed_dequeue"
 *   takes every step's outfeed from each core, blocking until the device
 *   has produced it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "simtruth.h"
#include "trainer.h"

struct dev_batch {
	PJRT_Buffer *bufs[SIM_MAX_CORES];
};

struct feeder {
	const struct trainer_config *cfg;
	struct pjrt *p;
	struct input *in;
	int ndev;
	struct bqueue *devq;
	pthread_t in_thread, out_thread;
	bool in_started, out_started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t expected, dequeued;
	bool finished;
};

static size_t slice_bytes(const struct feeder *f)
{
	return f->cfg->batch_bytes / (size_t)f->ndev;
}

static void free_dev_batch(struct feeder *f, struct dev_batch *db)
{
	int d;

	for (d = 0; d < f->ndev; d++)
		pjrt__buffer_free(f->p, db->bufs[d], d, slice_bytes(f));
	free(db);
}

static void *h2d_main(void *arg)
{
	struct feeder *f = arg;
	size_t slice = slice_bytes(f);
	uint64_t waited;
	struct batch *b;

	while ((b = input__next(f->in, &waited))) {
		struct dev_batch *db = calloc(1, sizeof(*db));
		int d, err = db ? 0 : -ENOMEM;

		for (d = 0; d < f->ndev && !err; d++)
			err = pjrt__h2d(f->p, b->data + (size_t)d * slice, slice, d,
					&db->bufs[d]);
		input__batch_free(b);
		if (err || bqueue__push(f->devq, db)) {
			if (db)
				free_dev_batch(f, db);
			break;
		}
	}
	return NULL;
}

static void *infeed_main(void *arg)
{
	struct feeder *f = arg;
	bool raw = f->cfg->feed == FEED_INFEED_RAW;
	size_t slice = slice_bytes(f);
	uint64_t waited;
	struct batch *b;

	while ((b = input__next(f->in, &waited))) {
		int d, err = 0;

		for (d = 0; d < f->ndev && !err; d++)
			err = pjrt__infeed(f->p, d, b->data + (size_t)d * slice, slice, raw);
		input__batch_free(b);
		if (err)
			break;
	}
	return NULL;
}

static void *outfeed_main(void *arg)
{
	struct feeder *f = arg;
	bool raw = f->cfg->feed == FEED_INFEED_RAW;
	unsigned char *buf = malloc(TRAINER_OUTFEED_BYTES);
	int d, err = buf ? 0 : -ENOMEM;

	while (!err) {
		pthread_mutex_lock(&f->lock);
		while (f->dequeued >= f->expected && !f->finished)
			pthread_cond_wait(&f->cond, &f->lock);
		if (f->dequeued >= f->expected) {
			pthread_mutex_unlock(&f->lock);
			break;
		}
		pthread_mutex_unlock(&f->lock);
		for (d = 0; d < f->ndev && !err; d++)
			err = pjrt__outfeed(f->p, d, buf, TRAINER_OUTFEED_BYTES, raw);
		pthread_mutex_lock(&f->lock);
		if (!err)
			f->dequeued++;
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_lock(&f->lock);
	f->finished = true;		/* nobody waits for more */
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
	free(buf);
	return NULL;
}

struct feeder *feeder__start(const struct trainer_config *cfg, struct pjrt *p,
			     struct input *in)
{
	struct feeder *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return NULL;
	f->cfg = cfg;
	f->p = p;
	f->in = in;
	f->ndev = pjrt__num_devices(p);
	pthread_mutex_init(&f->lock, NULL);
	pthread_cond_init(&f->cond, NULL);
	if (cfg->feed == FEED_BUFFER) {
		f->devq = bqueue__new(2);
		if (!f->devq)
			goto fail;
		err = tthread_start(&f->in_thread, "pt_data_pin", "feeder", h2d_main, f);
		if (err)
			goto fail;
		f->in_started = true;
		return f;
	}
	err = tthread_start(&f->in_thread, "infeed_enqueue", "infeed", infeed_main, f);
	if (err)
		goto fail;
	f->in_started = true;
	err = tthread_start(&f->out_thread, "outfeed_dequeue", "outfeed", outfeed_main, f);
	if (err)
		goto fail;
	f->out_started = true;
	return f;
fail:
	input__close(in);
	feeder__drain(f);
	pjrt__shutdown(p);
	feeder__free(f);
	return NULL;
}

int feeder__next(struct feeder *f, PJRT_Buffer **bufs, uint64_t *waited_ns)
{
	struct dev_batch *db;
	int err;

	err = bqueue__pop(f->devq, (void **)&db, waited_ns);
	if (err)
		return err;
	memcpy(bufs, db->bufs, sizeof(db->bufs[0]) * (size_t)f->ndev);
	free(db);
	return 0;
}

void feeder__expect_outfeed(struct feeder *f)
{
	pthread_mutex_lock(&f->lock);
	f->expected++;
	pthread_cond_broadcast(&f->cond);
	pthread_mutex_unlock(&f->lock);
}

void feeder__drain(struct feeder *f)
{
	struct dev_batch *db;
	uint64_t deadline;

	if (!f)
		return;
	if (f->devq) {
		bqueue__close(f->devq);
		if (f->in_started)
			pthread_join(f->in_thread, NULL);
		f->in_started = false;
		while (!bqueue__pop(f->devq, (void **)&db, NULL))
			free_dev_batch(f, db);
	}
	if (f->out_started) {
		/* Completed steps' outfeed is already on the device: take it. */
		deadline = truth_now() + 5000000000ull;
		pthread_mutex_lock(&f->lock);
		while (f->dequeued < f->expected && !f->finished && truth_now() < deadline) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 50000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&f->cond, &f->lock, &ts);
		}
		f->finished = true;
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
	}
}

void feeder__free(struct feeder *f)
{
	if (!f)
		return;
	if (f->in_started)
		pthread_join(f->in_thread, NULL);
	if (f->out_started)
		pthread_join(f->out_thread, NULL);
	bqueue__free(f->devq);
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	free(f);
}
