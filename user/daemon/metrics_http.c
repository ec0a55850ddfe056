// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* GET /metrics through libmicrohttpd; the published text behind a mutex,
 * the connections counted per peer and swept past their time. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "metrics"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/tcp_listen.h"
#include "daemon/metrics_http.h"
#include "discover/peer_uid.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A connection the server holds: who, and since when its request has been
 * coming (its connect, or its last request's start). */
struct held {
	struct MHD_Connection *conn;	/* NULL: a free slot */
	int fd;
	uint64_t peer;			/* loopback: PEER_UID | uid; else the address */
	uint64_t since_ns;
};

#define PEER_UID (1ull << 63)

struct metrics_http {
	struct metrics_http_opts o;
	int listen_fd;			/* ours until the server runs */
	bool ipv6;
	uint16_t port;
	struct MHD_Daemon *mhd;
	pthread_mutex_t lock;
	char *text;
	size_t len;
	/* The connections, under held_lock (the server's thread and the
	 * daemon's loop, which sweeps them at each publish). */
	pthread_mutex_t held_lock;
	struct held held[METRICS_HTTP_CONNECTION_LIMIT];
};


/* Who a connection is: on loopback (where every client is 127.0.0.1) the
 * local user that owns the client's socket; elsewhere its address. */
static uint64_t peer_of(int fd, const struct sockaddr *peer)
{
	struct sockaddr_storage local;
	socklen_t len = sizeof(local);
	uint64_t h = 1469598103934665603ull;	/* FNV-1a of the address */
	uid_t uid;

	if (peer_is_loopback(peer) && !getsockname(fd, (struct sockaddr *)&local, &len) &&
	    !peer_uid((struct sockaddr *)&local, peer, &uid))
		return PEER_UID | uid;
	if (peer->sa_family == AF_INET) {
		const uint8_t *b = (const void *)&((const struct sockaddr_in *)peer)->sin_addr;

		for (int i = 0; i < 4; i++)
			h = (h ^ b[i]) * 1099511628211ull;
	} else if (peer->sa_family == AF_INET6) {
		const uint8_t *b = ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr;

		for (int i = 0; i < 16; i++)
			h = (h ^ b[i]) * 1099511628211ull;
	}
	return h & ~PEER_UID;
}

/* Lets go of connections whose request has been coming for longer than the
 * timeout, however slowly it trickles (the idle timeout restarts on every
 * byte). Under held_lock: a slot is freed before its fd is closed, so the
 * fd shut here is the connection's. */
static void sweep(struct metrics_http *h, uint64_t now)
{
	uint64_t limit = (uint64_t)h->o.timeout_s * 1000000000ull;

	for (size_t i = 0; i < METRICS_HTTP_CONNECTION_LIMIT; i++) {
		struct held *c = &h->held[i];

		if (c->conn && now - c->since_ns > limit) {
			shutdown(c->fd, SHUT_RDWR);
			c->since_ns = now;	/* once: the server closes it */
		}
	}
}

/* A connection opened or closed: counted per peer, refused past the
 * per-peer limit (shut at once: the server closes it). */
static void on_connection(void *cls, struct MHD_Connection *conn, void **ctx,
			  enum MHD_ConnectionNotificationCode what)
{
	struct metrics_http *h = cls;
	const union MHD_ConnectionInfo *fdi, *ai;
	struct held *free_slot = NULL;
	unsigned int same = 0;
	uint64_t peer, now = mono_ns();

	if (what == MHD_CONNECTION_NOTIFY_CLOSED) {
		pthread_mutex_lock(&h->held_lock);
		if (*ctx)
			((struct held *)*ctx)->conn = NULL;
		pthread_mutex_unlock(&h->held_lock);
		return;
	}
	*ctx = NULL;
	fdi = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	ai = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (!fdi || !ai || !ai->client_addr)
		return;
	peer = peer_of(fdi->connect_fd, ai->client_addr);
	pthread_mutex_lock(&h->held_lock);
	sweep(h, now);
	for (size_t i = 0; i < METRICS_HTTP_CONNECTION_LIMIT; i++) {
		if (!h->held[i].conn && !free_slot)
			free_slot = &h->held[i];
		same += h->held[i].conn && h->held[i].peer == peer;
	}
	if (same >= h->o.per_ip_limit || !free_slot) {
		shutdown(fdi->connect_fd, SHUT_RDWR);
	} else {
		*free_slot = (struct held){ .conn = conn, .fd = fdi->connect_fd, .peer = peer,
					    .since_ns = now };
		*ctx = free_slot;
	}
	pthread_mutex_unlock(&h->held_lock);
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned int status,
			      const char *type, char *body, size_t len)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_size, void **con_cls)
{
	struct metrics_http *h = cls;
	char *body;
	size_t len;

	const union MHD_ConnectionInfo *ci;

	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (*upload_size)
		return MHD_NO;
	/* Its request is whole: the next one has the timeout from now. */
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	pthread_mutex_lock(&h->held_lock);
	if (ci && ci->socket_context)
		((struct held *)ci->socket_context)->since_ns = mono_ns();
	pthread_mutex_unlock(&h->held_lock);
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		body = strdup("only GET\n");
		return body ? answer(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", body,
				     strlen(body)) : MHD_NO;
	}
	if (strcmp(url, "/metrics")) {
		body = strdup("acceltrace daemon: metrics at /metrics\n");
		return body ? answer(conn, MHD_HTTP_NOT_FOUND, "text/plain", body,
				     strlen(body)) : MHD_NO;
	}
	pthread_mutex_lock(&h->lock);
	len = h->len;
	body = malloc(len ? len : 1);
	if (body)
		memcpy(body, h->text, len);
	pthread_mutex_unlock(&h->lock);
	if (!body)
		return MHD_NO;
	return answer(conn, MHD_HTTP_OK, CONTENT_TYPE, body, len);
}


struct metrics_http *metrics_http__bind(const struct metrics_http_opts *opts)
{
	struct metrics_http *h = calloc(1, sizeof(*h));
	int err;

	if (!h)
		return NULL;
	h->listen_fd = -1;
	memcpy(&h->o, opts, opts->sz < sizeof(h->o) ? opts->sz : sizeof(h->o));
	h->o.sz = sizeof(h->o);
	if (!h->o.per_ip_limit)
		h->o.per_ip_limit = METRICS_HTTP_PER_IP_LIMIT;
	if (!h->o.timeout_s)
		h->o.timeout_s = METRICS_HTTP_TIMEOUT_S;
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->held_lock, NULL);
	/* An IPv6 address is IPv6 only, as libmicrohttpd's own socket was. */
	h->listen_fd = tcp_listen(h->o.addr, h->o.port, 32, &h->port, &h->ipv6);
	if (h->listen_fd < 0) {
		err = h->listen_fd;
		if (err == -EINVAL)
			log_err("metrics: '%s' is not an IP address", h->o.addr ? h->o.addr : "");
		goto fail;
	}
	return h;
fail:
	metrics_http__stop(h);
	errno = -err;
	return NULL;
}

uint16_t metrics_http__port(const struct metrics_http *h)
{
	return h->port;
}

unsigned int metrics_http__connections(const struct metrics_http *h)
{
	const union MHD_DaemonInfo *info;

	if (!h->mhd)
		return 0;
	info = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
	return info ? info->num_connections : 0;
}

int metrics_http__serve(struct metrics_http *h)
{
	/* epoll or poll, not select(): the daemon holds many fds (a uprobe
	 * link each), and select() cannot watch one numbered past 1023. */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;

	if (h->ipv6)
		flags |= MHD_USE_IPv6;
	/*
	 * Scrapers need one connection each: a per-peer limit (per local user
	 * on loopback, per address elsewhere: on_connection) keeps one client
	 * (a stuck scraper, a port scan, a local user holding connections)
	 * from holding every slot; the idle timeout lets go of connections
	 * that stay idle, and the sweep of those whose request trickles in.
	 */
	errno = 0;
	h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
				  MHD_OPTION_LISTEN_SOCKET, h->listen_fd,
				  MHD_OPTION_CONNECTION_LIMIT, METRICS_HTTP_CONNECTION_LIMIT,
				  MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
				  MHD_OPTION_CONNECTION_TIMEOUT, h->o.timeout_s,
				  MHD_OPTION_END);
	if (!h->mhd)
		return errno ? -errno : -EIO;
	/* Closed by MHD_stop_daemon from now on. */
	h->listen_fd = -1;
	return 0;
}

int metrics_http__publish(struct metrics_http *h, const char *text, size_t len)
{
	char *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	pthread_mutex_lock(&h->lock);
	free(h->text);
	h->text = copy;
	h->len = len;
	pthread_mutex_unlock(&h->lock);
	/* The daemon publishes twice a second: requests past their time go. */
	pthread_mutex_lock(&h->held_lock);
	sweep(h, mono_ns());
	pthread_mutex_unlock(&h->held_lock);
	return 0;
}

void metrics_http__stop(struct metrics_http *h)
{
	if (!h)
		return;
	if (h->mhd)
		MHD_stop_daemon(h->mhd);
	if (h->listen_fd >= 0)
		close(h->listen_fd);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->held_lock);
	free(h->text);
	free(h);
}
