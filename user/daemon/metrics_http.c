// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* GET /metrics through libmicrohttpd; the published text behind a mutex. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define LOG_CONTEXT "metrics"
#include "lib/log.h"
#include "daemon/metrics_http.h"

#define CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct metrics_http {
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

struct metrics_http *metrics_http__start(const char *addr, uint16_t port)
{
	struct sockaddr_storage ss = {};
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	/* epoll or poll, not select(): the daemon holds many fds (a uprobe
	 * link each), and select() cannot watch one numbered past 1023. */
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO;
	struct metrics_http *h;
	char a[64];
	size_t n = strlen(addr);

	/* "[::1]" as well as "::1" for IPv6. */
	if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']' && n - 2 < sizeof(a)) {
		memcpy(a, addr + 1, n - 2);
		a[n - 2] = '\0';
	} else {
		snprintf(a, sizeof(a), "%s", addr);
	}
	if (inet_pton(AF_INET, a, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, a, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		flags |= MHD_USE_IPv6;
	} else {
		log_err("metrics: '%s' is not an IP address", addr);
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	pthread_mutex_init(&h->lock, NULL);
	errno = 0;
	h->mhd = MHD_start_daemon(flags, port, NULL, NULL, on_request, h,
				  MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				  MHD_OPTION_CONNECTION_LIMIT, 64u,
				  MHD_OPTION_CONNECTION_TIMEOUT, 10u,
				  MHD_OPTION_END);
	if (!h->mhd) {
		int err = errno ? errno : EADDRINUSE;

		pthread_mutex_destroy(&h->lock);
		free(h);
		errno = err;
		return NULL;
	}
	return h;
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
	MHD_stop_daemon(h->mhd);
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	free(h);
}
