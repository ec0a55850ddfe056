// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The unary gRPC server's socket and thread (grpc_server.h): a poll() loop
 * over the listening socket, the connections and a wake eventfd. One
 * connection's HTTP/2 is grpc_conn.c, the calls and their queues
 * grpc_call.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "grpc"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/tcp_listen.h"
#include "discover/peer_uid.h"
#include "profiler_service/grpc_conn.h"

/* Bytes read from one connection in one turn, so that one busy client
 * cannot starve the others. */
#define READ_PER_TURN (256u * 1024)
/* How long stop waits for the last answers and GOAWAYs to leave. */
#define STOP_FLUSH_MS 1000


unsigned int grpc_server__request_timeout_s(const struct grpc_server *s)
{
	return s->o.request_timeout_s;
}

unsigned int grpc_server__idle_timeout_s(const struct grpc_server *s)
{
	return s->o.idle_timeout_s;
}

struct grpc_server *grpc_server__bind(const struct grpc_server_opts *opts)
{
	struct grpc_server *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	s->listen_fd = s->wake_fd = s->ready_fd = -1;
	memcpy(&s->o, opts, opts->sz < sizeof(s->o) ? opts->sz : sizeof(s->o));
	s->o.sz = sizeof(s->o);
	if (!s->o.per_ip_limit)
		s->o.per_ip_limit = GRPC_SERVER_PER_IP_LIMIT;
	if (!s->o.request_timeout_s)
		s->o.request_timeout_s = GRPC_SERVER_REQUEST_TIMEOUT_S;
	if (!s->o.idle_timeout_s)
		s->o.idle_timeout_s = GRPC_SERVER_IDLE_TIMEOUT_S;
	atomic_init(&s->stopping, false);
	pthread_mutex_init(&s->lock, NULL);
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->ready_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0 || s->ready_fd < 0) {
		err = -errno;
		goto fail;
	}
	s->listen_fd = tcp_listen(s->o.addr, s->o.port, 64, &s->port, NULL);
	if (s->listen_fd < 0) {
		err = s->listen_fd;
		if (err == -EINVAL)
			log_err("'%s' is not an IP address", s->o.addr ? s->o.addr : "");
		goto fail;
	}
	return s;
fail:
	grpc_server__stop(s, NULL);
	errno = -err;
	return NULL;
}

uint16_t grpc_server__port(const struct grpc_server *s)
{
	return s->port;
}

int grpc_server__fd(const struct grpc_server *s)
{
	return s->ready_fd;
}

/* "ADDR" and "ADDR:PORT" ("[ADDR]:PORT" for IPv6) of @ss. */
static void format_peer(const struct sockaddr_storage *ss, char *host, size_t hlen,
			char *peer, size_t plen)
{
	const struct sockaddr_in *sin = (const void *)ss;
	const struct sockaddr_in6 *sin6 = (const void *)ss;
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		snprintf(peer, plen, "[%s]:%u", a, ntohs(sin6->sin6_port));
	} else {
		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(peer, plen, "%s:%u", a, ntohs(sin->sin_port));
	}
	snprintf(host, hlen, "%s", a);
}

/* On loopback every client is 127.0.0.1: the peer a limit means something
 * for is the local user owning the client's socket ("uid N"). */
static void loopback_user(int fd, const struct sockaddr_storage *ss, char *host, size_t len)
{
	struct sockaddr_storage local;
	socklen_t llen = sizeof(local);
	uid_t uid;

	if (peer_is_loopback((const struct sockaddr *)ss) &&
	    !getsockname(fd, (struct sockaddr *)&local, &llen) &&
	    !peer_uid((struct sockaddr *)&local, (const struct sockaddr *)ss, &uid))
		snprintf(host, len, "uid %u", (unsigned int)uid);
}

static void conn_close(struct grpc_server *s, struct grpc_conn *conn)
{
	if (conn->prev)
		conn->prev->next = conn->next;
	else
		s->conns = conn->next;
	if (conn->next)
		conn->next->prev = conn->prev;
	s->nconns--;
	grpc_conn__free(conn);
}

/*
 * Takes every waiting connection. One over a limit is closed at once: a
 * client at its peer's limit (a stuck tool, a scan, a local user holding
 * connections: per local user on loopback, per address elsewhere) holds
 * no more slots, and the others keep theirs.
 */
static void accept_all(struct grpc_server *s)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		char host[48], peer[64];
		struct grpc_conn *conn;
		unsigned int same = 0;
		int fd;

		fd = accept4(s->listen_fd, (struct sockaddr *)&ss, &len,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				log_debug("accept: %s", strerror(errno));
			return;
		}
		format_peer(&ss, host, sizeof(host), peer, sizeof(peer));
		loopback_user(fd, &ss, host, sizeof(host));
		for (conn = s->conns; conn; conn = conn->next)
			same += !strcmp(conn->host, host);
		if (s->nconns >= GRPC_SERVER_CONNECTION_LIMIT || same >= s->o.per_ip_limit) {
			log_debug("%s refused: %u connections open, %u from its address",
				  peer, s->nconns, same);
			close(fd);
			continue;
		}
		conn = grpc_conn__new(s, fd, peer, host);
		if (!conn) {
			log_warn("%s: %s", peer, strerror(errno));
			close(fd);
			continue;
		}
		conn->next = s->conns;
		if (s->conns)
			s->conns->prev = conn;
		s->conns = conn;
		s->nconns++;
	}
}

/* Reads what @conn has for us (a bounded amount) into its session. */
static void conn_read(struct grpc_conn *conn)
{
	uint8_t buf[16384];
	size_t total = 0;

	while (total < READ_PER_TURN && !conn->dead) {
		ssize_t n = recv(conn->fd, buf, sizeof(buf), 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			conn->dead = true;	/* closed by the client, or reset */
			return;
		}
		total += n;
		if (grpc_conn__input(conn, buf, n))
			conn->dead = true;
	}
}

void grpc_server__answer_finished(struct grpc_server *s)
{
	struct grpc_call *c = grpc_server__finished(s), *next;

	for (; c; c = next) {
		next = c->q_next;
		c->q_next = NULL;
		/* Not cancelled when finish queued it; the stream may have
		 * gone since, or the server answered at the deadline. */
		if (c->stream_ref && c->conn && !c->answered)
			grpc_conn__answer(c);
		grpc_call__answered(c);
	}
}

/* The ms poll may sleep before some connection has something to expire. */
static int poll_timeout_ms(struct grpc_server *s, uint64_t now)
{
	uint64_t next = UINT64_MAX, t;
	struct grpc_conn *conn;

	for (conn = s->conns; conn; conn = conn->next) {
		t = grpc_conn__next_expiry(conn);
		if (t < next)
			next = t;
	}
	if (next == UINT64_MAX)
		return -1;
	if (next <= now)
		return 0;
	t = (next - now + 999999) / 1000000;
	return t > 60000 ? 60000 : (int)t;
}

static void *serve_thread(void *arg)
{
	struct grpc_server *s = arg;
	struct pollfd pfds[2 + GRPC_SERVER_CONNECTION_LIMIT];
	struct grpc_conn *which[2 + GRPC_SERVER_CONNECTION_LIMIT];
	struct grpc_conn *conn, *next;
	uint64_t deadline;

	while (!atomic_load(&s->stopping)) {
		unsigned int n = 2, i;
		int ready;

		pfds[0] = (struct pollfd){ .fd = s->wake_fd, .events = POLLIN };
		pfds[1] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
		for (conn = s->conns; conn && n < 2 + GRPC_SERVER_CONNECTION_LIMIT;
		     conn = conn->next) {
			short ev = 0;

			if (grpc_conn__wants_read(conn))
				ev |= POLLIN;
			if (grpc_conn__wants_write(conn))
				ev |= POLLOUT;
			which[n] = conn;
			pfds[n++] = (struct pollfd){ .fd = conn->fd, .events = ev };
		}
		ready = poll(pfds, n, poll_timeout_ms(s, mono_ns()));
		if (ready < 0 && errno != EINTR) {
			log_err("poll: %s", strerror(errno));
			break;
		}
		if (ready > 0 && (pfds[0].revents & POLLIN))
			grpc_eventfd_clear(s->wake_fd);
		grpc_server__answer_finished(s);
		if (ready > 0 && (pfds[1].revents & POLLIN))
			accept_all(s);
		for (i = 2; ready > 0 && i < n; i++) {
			if (pfds[i].revents & (POLLIN | POLLHUP | POLLERR))
				conn_read(which[i]);
		}
		for (conn = s->conns; conn; conn = next) {
			uint64_t now = mono_ns();

			next = conn->next;
			if (!conn->dead)
				grpc_conn__expire(conn, now);
			if (!conn->dead && conn->idle_since_ns &&
			    now - conn->idle_since_ns >= grpc_conn__idle_limit_ns(conn)) {
				log_debug("%s: idle for %.0fs%s, closed", conn->peer,
					  grpc_conn__idle_limit_ns(conn) / 1e9,
					  conn->called ? "" : " from its connect, no call made");
				grpc_conn__shutdown(conn, "idle");
				grpc_conn__output(conn);
				conn->dead = true;
			}
			if (!conn->dead && grpc_conn__output(conn))
				conn->dead = true;
			/* nghttp2 is done with it: GOAWAY both ways, or an error. */
			if (!conn->dead && !grpc_conn__wants_read(conn) &&
			    !grpc_conn__wants_write(conn))
				conn->dead = true;
			if (conn->dead)
				conn_close(s, conn);
		}
	}

	/* Stopping: the owner's last answers, UNAVAILABLE to the rest, GOAWAY. */
	grpc_server__answer_finished(s);
	for (conn = s->conns; conn; conn = conn->next) {
		grpc_conn__shutdown(conn, s->why);
		if (grpc_conn__output(conn))
			conn->dead = true;
	}
	deadline = mono_ns() + STOP_FLUSH_MS * 1000000ull;
	for (;;) {
		unsigned int n = 0;
		uint64_t now = mono_ns();

		for (conn = s->conns; conn; conn = conn->next) {
			if (!conn->dead && grpc_conn__wants_write(conn)) {
				which[n] = conn;
				pfds[n++] = (struct pollfd){ .fd = conn->fd, .events = POLLOUT };
			}
		}
		if (!n || now >= deadline)
			break;
		if (poll(pfds, n, (int)((deadline - now) / 1000000 + 1)) <= 0)
			break;
		for (unsigned int i = 0; i < n; i++) {
			if (pfds[i].revents && grpc_conn__output(which[i]))
				which[i]->dead = true;
		}
	}
	while (s->conns)
		conn_close(s, s->conns);
	return NULL;
}

int grpc_server__serve(struct grpc_server *s)
{
	int err;

	err = -pthread_create(&s->thread, NULL, serve_thread, s);
	if (err)
		return err;
	s->running = true;
	return 0;
}

void grpc_server__stop(struct grpc_server *s, const char *why)
{
	if (!s)
		return;
	snprintf(s->why, sizeof(s->why), "%s", why ? why : "server stopping");
	if (s->running) {
		atomic_store(&s->stopping, true);
		grpc_eventfd_raise(s->wake_fd);
		pthread_join(s->thread, NULL);
		s->running = false;
	}
	/* What is left the owner took or finished: every stream is gone, and
	 * the owner forgets the calls it holds when it stops the server. */
	grpc_server__free_calls(s);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->wake_fd >= 0)
		close(s->wake_fd);
	if (s->ready_fd >= 0)
		close(s->ready_fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
