// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * PJRT_Event: a one-shot completion with callbacks. The producer (the
 * runtime thread, or the caller for work done synchronously) holds a
 * reference until it makes the event ready; the caller's reference goes with
 * Event_Destroy, which a callback may call on its own event.
 */
#include <stdlib.h>

#include "plugin.h"

struct event_cb {
	struct event_cb *next;
	sim_event_fn fn;
	void *arg;
};

/* Each event has its own lock: the runtime thread completing events and
 * the threads registering callbacks on others never wait for each other. */
struct PJRT_Event {
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* Event_Await */
	int refs;
	bool ready;
	PJRT_Error *error;
	struct event_cb *cbs, **cbs_tail;
};

PJRT_Event *sim_event_new(void)
{
	PJRT_Event *ev = calloc(1, sizeof(*ev));

	if (!ev)
		return NULL;
	pthread_mutex_init(&ev->lock, NULL);
	pthread_cond_init(&ev->cond, NULL);
	ev->refs = 1;
	ev->cbs_tail = &ev->cbs;
	return ev;
}

PJRT_Event *sim_event_ref(PJRT_Event *ev)
{
	__atomic_add_fetch(&ev->refs, 1, __ATOMIC_RELAXED);
	return ev;
}

void sim_event_unref(PJRT_Event *ev)
{
	if (!ev || __atomic_sub_fetch(&ev->refs, 1, __ATOMIC_ACQ_REL))
		return;
	while (ev->cbs) {
		struct event_cb *cb = ev->cbs;

		ev->cbs = cb->next;
		free(cb);
	}
	sim_error_free(ev->error);
	pthread_cond_destroy(&ev->cond);
	pthread_mutex_destroy(&ev->lock);
	free(ev);
}

void sim_event_set_ready(PJRT_Event *ev, PJRT_Error *error)
{
	struct event_cb *cbs, *cb;

	sim_event_ref(ev);	/* callbacks may drop the caller's reference */
	pthread_mutex_lock(&ev->lock);
	ev->ready = true;
	ev->error = error;
	cbs = ev->cbs;
	ev->cbs = NULL;
	ev->cbs_tail = &ev->cbs;
	pthread_cond_broadcast(&ev->cond);
	pthread_mutex_unlock(&ev->lock);
	while (cbs) {
		cb = cbs;
		cbs = cb->next;
		cb->fn(sim_error_copy(error), cb->arg);
		free(cb);
	}
	sim_event_unref(ev);
}

bool sim_event_is_ready(PJRT_Event *ev)
{
	bool ready;

	pthread_mutex_lock(&ev->lock);
	ready = ev->ready;
	pthread_mutex_unlock(&ev->lock);
	return ready;
}

void sim_event_on_ready(PJRT_Event *ev, sim_event_fn fn, void *arg)
{
	struct event_cb *cb = malloc(sizeof(*cb));
	PJRT_Error *err;

	pthread_mutex_lock(&ev->lock);
	if (!ev->ready && cb) {
		cb->next = NULL;
		cb->fn = fn;
		cb->arg = arg;
		*ev->cbs_tail = cb;
		ev->cbs_tail = &cb->next;
		pthread_mutex_unlock(&ev->lock);
		return;
	}
	if (!ev->ready) {
		/* No memory for the callback: say so through the callback. */
		pthread_mutex_unlock(&ev->lock);
		fn(sim_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory"), arg);
		return;
	}
	err = sim_error_copy(ev->error);
	pthread_mutex_unlock(&ev->lock);
	free(cb);
	fn(err, arg);
}

PJRT_Error *sim_event_await(PJRT_Event *ev)
{
	PJRT_Error *err;

	pthread_mutex_lock(&ev->lock);
	while (!ev->ready)
		pthread_cond_wait(&ev->cond, &ev->lock);
	err = sim_error_copy(ev->error);
	pthread_mutex_unlock(&ev->lock);
	return err;
}

PJRT_Error *sim_event_error(PJRT_Event *ev)
{
	PJRT_Error *err;

	pthread_mutex_lock(&ev->lock);
	err = ev->ready ? sim_error_copy(ev->error) : NULL;
	pthread_mutex_unlock(&ev->lock);
	return err;
}

/* ---------------------------------------------------------------- slots */

PJRT_Error *sim_PJRT_Event_Destroy(void *args)
{
	PJRT_Event_Destroy_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Event_Destroy_Args, event);
	sim_event_unref(a->event);
	return NULL;
}

PJRT_Error *sim_PJRT_Event_IsReady(void *args)
{
	PJRT_Event_IsReady_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Event_IsReady_Args, is_ready);
	if (!a->event)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "event is NULL");
	a->is_ready = sim_event_is_ready(a->event);
	return NULL;
}

PJRT_Error *sim_PJRT_Event_Error(void *args)
{
	PJRT_Event_Error_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Event_Error_Args, event);
	if (!a->event)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "event is NULL");
	return sim_event_error(a->event);
}

PJRT_Error *sim_PJRT_Event_Await(void *args)
{
	PJRT_Event_Await_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Event_Await_Args, event);
	if (!a->event)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT, "event is NULL");
	return sim_event_await(a->event);
}

PJRT_Error *sim_PJRT_Event_OnReady(void *args)
{
	PJRT_Event_OnReady_Args *a = args;

	SIM_CHECK_ARGS(a, PJRT_Event_OnReady_Args, user_arg);
	if (!a->event || !a->callback)
		return sim_error(PJRT_Error_Code_INVALID_ARGUMENT,
				 "event and callback are required");
	sim_event_on_ready(a->event, (sim_event_fn)a->callback, a->user_arg);
	return NULL;
}
