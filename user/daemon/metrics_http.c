// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* GET /metrics through libmicrohttpd; the published text behind a mutex. */
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
#include <unistd.h>

#define LOG_CONTEXT "metrics"
#include "lib/log.h"
#include "lib/tcp_listen.h"
#include "daemon/metrics_http.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct metrics_http {
	struct metrics_http_opts o;
	int listen_fd;			/* ours until the server runs */
	bool ipv6;
	uint16_t port;
	struct MHD_Daemon *mhd;
	pthread_mutex_t lock;
	char *text;
	size_t len;
};

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

	(void)version;
	(void)upload_data;
	(void)con_cls;
	if (*upload_size)
		return MHD_NO;
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
	 * Scrapers need one connection each: a per-address limit keeps one
	 * client (a stuck scraper, a port scan) from holding every slot, and
	 * the timeout lets go of connections that stay idle.
	 */
	errno = 0;
	h->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h,
				  MHD_OPTION_LISTEN_SOCKET, h->listen_fd,
				  MHD_OPTION_CONNECTION_LIMIT, METRICS_HTTP_CONNECTION_LIMIT,
				  MHD_OPTION_PER_IP_CONNECTION_LIMIT, h->o.per_ip_limit,
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
	free(h->text);
	free(h);
}
