// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The control socket's protocol, its server (non-blocking, polled from the
 * daemon's loop: clients wait for their capture without a thread) and its
 * client.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define LOG_CONTEXT "control"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/units.h"
#include "daemon/control.h"
#include "output/xprof_logdir.h"

#define MAX_CLIENTS 64
#define NS_PER_MS 1000000ull

/* ---------------------------------------------------------------- protocol */

int control_valid_session(const char *s)
{
	/* The same rules as a ProfilerService request's session. */
	return xprof_valid_name(s, CONTROL_MAX_SESSION, false);
}

int control_format_request(const struct control_request *rq, char *buf, size_t len)
{
	int n;

	/* pid= only when asked: a daemon before it parses the rest as ever. */
	if (rq->pid)
		n = snprintf(buf, len, "trigger duration_ns=%" PRIu64 " at_ns=%" PRIu64
			     " session=%s pid=%" PRIu32 "\n", rq->duration_ns, rq->at_realtime_ns,
			     rq->session[0] ? rq->session : "-", rq->pid);
	else
		n = snprintf(buf, len, "trigger duration_ns=%" PRIu64 " at_ns=%" PRIu64
			     " session=%s\n", rq->duration_ns, rq->at_realtime_ns,
			     rq->session[0] ? rq->session : "-");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int control_parse_request(const char *line, struct control_request *rq,
			  char *err, size_t err_len)
{
	char copy[CONTROL_MAX_LINE], *save = NULL, *tok;
	bool seen_d = false, seen_at = false, seen_s = false, seen_pid = false;

	memset(rq, 0, sizeof(*rq));
	snprintf(copy, sizeof(copy), "%s", line);
	tok = strtok_r(copy, " ", &save);
	if (!tok || strcmp(tok, "trigger")) {
		snprintf(err, err_len, "unknown request (expected \"trigger\")");
		return -EINVAL;
	}
	while ((tok = strtok_r(NULL, " ", &save))) {
		if (!strncmp(tok, "duration_ns=", 12) && !seen_d) {
			seen_d = true;
			if (parse_uint(tok + 12, &rq->duration_ns))
				goto bad;
		} else if (!strncmp(tok, "at_ns=", 6) && !seen_at) {
			seen_at = true;
			if (parse_uint(tok + 6, &rq->at_realtime_ns))
				goto bad;
		} else if (!strncmp(tok, "pid=", 4) && !seen_pid) {
			uint64_t v;

			seen_pid = true;
			if (parse_uint(tok + 4, &v) || !v || v > INT32_MAX)
				goto bad;
			rq->pid = (uint32_t)v;
		} else if (!strncmp(tok, "session=", 8) && !seen_s) {
			seen_s = true;
			if (strcmp(tok + 8, "-")) {
				if (!control_valid_session(tok + 8))
					goto bad;
				snprintf(rq->session, sizeof(rq->session), "%s", tok + 8);
			}
		} else {
			goto bad;
		}
		continue;
bad:
		snprintf(err, err_len, "malformed field \"%.64s\"", tok);
		return -EINVAL;
	}
	if (!seen_d || !seen_at || !seen_s) {
		snprintf(err, err_len, "a trigger needs duration_ns, at_ns and session");
		return -EINVAL;
	}
	return 0;
}

/* ---------------------------------------------------------------- server */

struct client {
	int fd;			/* -1: free */
	/* Bumped each time the slot is taken: a reply meant for a client that
	 * left never reaches the next one in its slot. */
	unsigned int gen;
	bool asked;		/* its request went to the daemon: await reply */
	uint64_t accepted_ns;	/* CLOCK_MONOTONIC: its request line is due
				 * within the server's request timeout */
	size_t len;
	char buf[CONTROL_MAX_LINE];
};

struct control_server {
	int fd;
	char *path;
	uint64_t request_timeout_ns;
	struct client clients[MAX_CLIENTS];
};

/* A socket at @path that nobody answers is a dead daemon's: remove it. */
static int clear_stale(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, err;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_err("%s exists and is not a socket: not replacing it", path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) ? -errno : 0;
	close(fd);
	if (!err) {
		log_err("another daemon answers on %s", path);
		return -EADDRINUSE;
	}
	return unlink(path) ? -errno : 0;
}

static int make_parent(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct stat st;
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	/* Nobody else may swap the socket for theirs: its directory is ours
	 * and writable by us alone. */
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022)) {
		log_err("the control socket's directory %s must be a directory owned by "
			"this user and writable by no one else", dir);
		return -EPERM;
	}
	return 0;
}

struct control_server *control_server__new(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct control_server *s;
	mode_t old_mask;
	int err;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->fd = -1;
	s->request_timeout_ns = CONTROL_REQUEST_TIMEOUT_MS * NS_PER_MS;
	for (int i = 0; i < MAX_CLIENTS; i++)
		s->clients[i].fd = -1;
	s->path = strdup(path);
	err = s->path ? 0 : -ENOMEM;
	if (!err)
		err = make_parent(path);
	if (!err)
		err = clear_stale(path, &sa);
	if (err)
		goto fail;
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->fd < 0) {
		err = -errno;
		goto fail;
	}
	/* Owner-only from its first moment, not after a chmod race. */
	old_mask = umask(0177);
	err = bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old_mask);
	if (!err && listen(s->fd, 16))
		err = -errno;
	if (err)
		goto fail;
	return s;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
	errno = -err;
	return NULL;
}

void control_server__set_request_timeout(struct control_server *s, uint64_t timeout_ns)
{
	s->request_timeout_ns = timeout_ns;
}


static void drop(struct client *c)
{
	close(c->fd);
	c->fd = -1;
	c->asked = false;
	c->len = 0;
}

static void say(struct client *c, const char *line)
{
	char buf[CONTROL_MAX_LINE + 2];
	int n = snprintf(buf, sizeof(buf), "%s\n", line);

	/* A client gone meanwhile is no error of ours. */
	if (send(c->fd, buf, n > 0 && (size_t)n < sizeof(buf) ? n : 0, MSG_NOSIGNAL) < 0)
		log_debug("a client left before its reply: %s", strerror(errno));
	drop(c);
}

/* Only root, or the user the daemon runs as, may ask. */
static bool allowed(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return false;
	return cr.uid == 0 || cr.uid == geteuid();
}

static void accept_clients(struct control_server *s)
{
	for (;;) {
		int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), i;

		if (fd < 0)
			return;
		for (i = 0; i < MAX_CLIENTS && s->clients[i].fd >= 0; i++)
			;
		if (i == MAX_CLIENTS) {
			struct client tmp = { .fd = fd };

			say(&tmp, "error busy: too many clients waiting");
			continue;
		}
		s->clients[i].fd = fd;
		s->clients[i].gen++;
		s->clients[i].accepted_ns = mono_ns();
		if (!allowed(fd)) {
			log_warn("refused a control client that is neither root nor the daemon's user");
			say(&s->clients[i], "error permission denied");
		}
	}
}

static void read_client(struct control_server *s, int i, control_request_fn fn, void *ctx)
{
	struct client *c = &s->clients[i];
	struct control_request rq;
	char err[160], msg[200];
	ssize_t n;
	char *nl;

	n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, 0);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		drop(c);
		return;
	}
	if (n < 0)
		return;
	/* A request is text: a NUL (which strchr would stop at, waiting for
	 * a newline already sent) is said at once, not timed out. */
	if (memchr(c->buf + c->len, '\0', (size_t)n)) {
		say(c, "error malformed request: a NUL byte in it");
		return;
	}
	c->len += n;
	c->buf[c->len] = '\0';
	nl = strchr(c->buf, '\n');
	if (!nl) {
		if (c->len == sizeof(c->buf) - 1)
			say(c, "error request too long");
		return;
	}
	*nl = '\0';
	if (control_parse_request(c->buf, &rq, err, sizeof(err))) {
		snprintf(msg, sizeof(msg), "error %s", err);
		say(c, msg);
		return;
	}
	c->asked = true;
	fn(ctx, (int)(c->gen % (INT_MAX / MAX_CLIENTS)) * MAX_CLIENTS + i, &rq);
}

/*
 * A client that has not sent its whole line by the deadline (one that sends
 * nothing, or a byte now and then) is told so and let go: the slots are
 * few and the daemon's loop reads them all.
 */
static bool too_slow(const struct control_server *s, struct client *c, uint64_t now)
{
	char msg[96];

	if (now - c->accepted_ns < s->request_timeout_ns)
		return false;
	log_warn("a control client sent no whole request line within %.1f s: dropped",
		 s->request_timeout_ns / 1e9);
	snprintf(msg, sizeof(msg), "error timed out: no whole request line within %.1f s",
		 s->request_timeout_ns / 1e9);
	say(c, msg);
	return true;
}

void control_server__poll(struct control_server *s, control_request_fn fn, void *ctx)
{
	uint64_t now;

	accept_clients(s);
	now = mono_ns();
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct client *c = &s->clients[i];
		char probe;

		if (c->fd < 0)
			continue;
		if (!c->asked) {
			read_client(s, i, fn, ctx);
			if (c->fd >= 0 && !c->asked)
				too_slow(s, c, now);
			continue;
		}
		/* Waiting for its capture: notice a client that gave up. */
		if (recv(c->fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
			drop(c);
	}
}

void control_server__reply(struct control_server *s, int client, const char *line)
{
	struct client *c;

	if (client < 0)
		return;
	c = &s->clients[client % MAX_CLIENTS];
	if (c->fd < 0 || !c->asked ||
	    (int)(c->gen % (INT_MAX / MAX_CLIENTS)) != client / MAX_CLIENTS)
		return;
	say(c, line);
}

void control_server__free(struct control_server *s, const char *last_words)
{
	if (!s)
		return;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (s->clients[i].fd >= 0)
			say(&s->clients[i], last_words ? last_words : "error the daemon stopped");
	if (s->fd >= 0) {
		close(s->fd);
		unlink(s->path);
	}
	free(s->path);
	free(s);
}

/* ---------------------------------------------------------------- client */

int control_request(const char *path, const struct control_request *rq,
		    char *reply, size_t len, int timeout_ms)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char line[CONTROL_MAX_LINE];
	size_t got = 0;
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	err = control_format_request(rq, line, sizeof(line));
	if (err)
		return err;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, line, strlen(line), MSG_NOSIGNAL) < 0) {
		err = -errno;
		goto out;
	}
	while (got + 1 < len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int n = poll(&pfd, 1, timeout_ms);
		ssize_t r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n ? -errno : -ETIMEDOUT;
			goto out;
		}
		r = recv(fd, reply + got, len - 1 - got, 0);
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (r == 0)
			break;
		got += r;
		reply[got] = '\0';
		if (strchr(reply, '\n'))
			break;
	}
	reply[got] = '\0';
	reply[strcspn(reply, "\n")] = '\0';
	err = got ? 0 : -ECONNRESET;
out:
	close(fd);
	return err;
}
