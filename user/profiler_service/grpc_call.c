// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The gRPC server's calls (grpc_server.h, grpc_conn.h): each held by its
 * stream and by the owner's side and freed when both let go, under the
 * server's lock; the owner's queue of whole requests (its eventfd readable
 * while one waits) and the queue of finished calls back to the server's
 * thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_CONTEXT "grpc"
#include "lib/clock.h"
#include "lib/log.h"
#include "profiler_service/grpc_conn.h"

void grpc_eventfd_raise(int fd)
{
	uint64_t one = 1;

	/* Fails only when the counter is full: then it is readable anyway. */
	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_debug("eventfd write: %s", strerror(errno));
}

void grpc_eventfd_clear(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_debug("eventfd read: %s", strerror(errno));
}

struct grpc_call *grpc_call__new(struct grpc_conn *conn, int32_t stream_id)
{
	struct grpc_server *s = conn->s;
	struct grpc_call *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->s = s;
	c->conn = conn;
	c->stream_id = stream_id;
	c->started_ns = mono_ns();
	c->stream_ref = true;
	atomic_init(&c->cancelled, false);
	snprintf(c->peer, sizeof(c->peer), "%s", conn->peer);
	snprintf(c->client, sizeof(c->client), "%s", conn->host);
	c->conn_next = conn->calls;
	if (conn->calls)
		conn->calls->conn_prev = c;
	conn->calls = c;
	pthread_mutex_lock(&s->lock);
	c->all_next = s->all;
	if (s->all)
		s->all->all_prev = c;
	s->all = c;
	pthread_mutex_unlock(&s->lock);
	return c;
}

/* Under s->lock: off the list of all calls; the caller frees it after. */
static void call_unlink(struct grpc_call *c)
{
	struct grpc_server *s = c->s;

	if (c->all_prev)
		c->all_prev->all_next = c->all_next;
	else
		s->all = c->all_next;
	if (c->all_next)
		c->all_next->all_prev = c->all_prev;
}

static void call_free(struct grpc_call *c)
{
	free(c->method);
	free(c->msg);
	free(c->status_msg);
	free(c->resp);
	free(c);
}

/* Under s->lock: out of the owner's queue. */
static void pending_remove(struct grpc_call *c)
{
	struct grpc_server *s = c->s;
	struct grpc_call **pp, *prev = NULL;

	for (pp = &s->pending; *pp; prev = *pp, pp = &(*pp)->q_next) {
		if (*pp != c)
			continue;
		*pp = c->q_next;
		if (s->pending_tail == c)
			s->pending_tail = prev;
		c->q_next = NULL;
		break;
	}
	if (!s->pending)
		grpc_eventfd_clear(s->ready_fd);
}

/* Appends @c to a queue (pending or done), under the server's lock. */
static void queue_append(struct grpc_call **head, struct grpc_call **tail, struct grpc_call *c)
{
	c->q_next = NULL;
	if (*tail)
		(*tail)->q_next = c;
	else
		*head = c;
	*tail = c;
}

void grpc_call__queue(struct grpc_call *c)
{
	struct grpc_server *s = c->s;

	pthread_mutex_lock(&s->lock);
	c->state = GRPC_CALL_QUEUED;
	c->owner_ref = true;
	queue_append(&s->pending, &s->pending_tail, c);
	grpc_eventfd_raise(s->ready_fd);
	pthread_mutex_unlock(&s->lock);
}

/* Off the connection's list: the server's thread only. */
static void conn_unlink(struct grpc_call *c)
{
	struct grpc_conn *conn = c->conn;

	if (!conn)
		return;
	if (c->conn_prev)
		c->conn_prev->conn_next = c->conn_next;
	else
		conn->calls = c->conn_next;
	if (c->conn_next)
		c->conn_next->conn_prev = c->conn_prev;
	c->conn = NULL;
	c->conn_prev = c->conn_next = NULL;
}

void grpc_call__stream_gone(struct grpc_call *c)
{
	struct grpc_server *s = c->s;
	bool free_it;

	conn_unlink(c);
	pthread_mutex_lock(&s->lock);
	c->stream_ref = false;
	if (c->state == GRPC_CALL_QUEUED) {
		pending_remove(c);
		c->owner_ref = false;
	}
	/* The client asked and left before the answer went out. */
	if (c->state != GRPC_CALL_ANSWERING)
		atomic_store(&c->cancelled, true);
	free_it = !c->owner_ref;
	if (free_it)
		call_unlink(c);
	pthread_mutex_unlock(&s->lock);
	if (free_it)
		call_free(c);
}

void grpc_call__abandon(struct grpc_call *c)
{
	struct grpc_server *s = c->s;

	pthread_mutex_lock(&s->lock);
	if (c->state == GRPC_CALL_QUEUED) {
		pending_remove(c);
		c->owner_ref = false;
	}
	atomic_store(&c->cancelled, true);
	pthread_mutex_unlock(&s->lock);
}

struct grpc_call *grpc_server__finished(struct grpc_server *s)
{
	struct grpc_call *list;

	pthread_mutex_lock(&s->lock);
	list = s->done;
	s->done = s->done_tail = NULL;
	pthread_mutex_unlock(&s->lock);
	return list;
}

void grpc_call__answered(struct grpc_call *c)
{
	struct grpc_server *s = c->s;
	bool free_it;

	pthread_mutex_lock(&s->lock);
	c->state = GRPC_CALL_ANSWERING;
	c->owner_ref = false;
	free_it = !c->stream_ref;
	if (free_it)
		call_unlink(c);
	pthread_mutex_unlock(&s->lock);
	if (free_it)
		call_free(c);
}

struct grpc_call *grpc_server__take(struct grpc_server *s)
{
	struct grpc_call *c;

	pthread_mutex_lock(&s->lock);
	c = s->pending;
	if (c) {
		s->pending = c->q_next;
		if (!s->pending)
			s->pending_tail = NULL;
		c->q_next = NULL;
		c->state = GRPC_CALL_TAKEN;
	}
	if (!s->pending)
		grpc_eventfd_clear(s->ready_fd);
	pthread_mutex_unlock(&s->lock);
	return c;
}

const char *grpc_call__method(const struct grpc_call *c)
{
	return c->method;
}

const uint8_t *grpc_call__message(const struct grpc_call *c, size_t *len)
{
	*len = c->msg_len;
	return c->msg ? c->msg : (const uint8_t *)"";
}

const char *grpc_call__peer(const struct grpc_call *c)
{
	return c->peer;
}

const char *grpc_call__client(const struct grpc_call *c)
{
	return c->client;
}

uint64_t grpc_call__deadline_ns(const struct grpc_call *c)
{
	return c->deadline_ns;
}

bool grpc_call__cancelled(const struct grpc_call *c)
{
	return atomic_load(&((struct grpc_call *)c)->cancelled);
}

void grpc_call__finish(struct grpc_call *c, enum grpc_status status, const char *message,
		       const uint8_t *response, size_t len)
{
	struct grpc_server *s = c->s;
	bool free_it;

	if (status == GRPC_STATUS_OK && len > UINT32_MAX) {
		status = GRPC_STATUS_INTERNAL;
		message = "response too large";
	}
	c->status = status;
	if (message)
		c->status_msg = strdup(message);
	if (status == GRPC_STATUS_OK) {
		c->resp = malloc(GRPC_FRAME_PREFIX + len);
		if (c->resp) {
			c->resp[0] = 0;
			c->resp[1] = len >> 24;
			c->resp[2] = len >> 16;
			c->resp[3] = len >> 8;
			c->resp[4] = len;
			if (len)
				memcpy(c->resp + GRPC_FRAME_PREFIX, response, len);
			c->resp_len = GRPC_FRAME_PREFIX + len;
		} else {
			c->status = GRPC_STATUS_RESOURCE_EXHAUSTED;
		}
	}
	pthread_mutex_lock(&s->lock);
	if (!c->stream_ref || atomic_load(&c->cancelled)) {
		/* Nobody to answer: let go; the stream's close frees it if it
		 * is still open (the server answered at the deadline). */
		c->owner_ref = false;
		free_it = !c->stream_ref;
		if (free_it)
			call_unlink(c);
		pthread_mutex_unlock(&s->lock);
		if (free_it)
			call_free(c);
		return;
	}
	c->state = GRPC_CALL_FINISHING;
	queue_append(&s->done, &s->done_tail, c);
	pthread_mutex_unlock(&s->lock);
	grpc_eventfd_raise(s->wake_fd);
}

void grpc_server__free_calls(struct grpc_server *s)
{
	struct grpc_call *c, *next;

	for (c = s->all; c; c = next) {
		next = c->all_next;
		call_free(c);
	}
	s->all = s->pending = s->pending_tail = s->done = s->done_tail = NULL;
}
