// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The control socket: the protocol's round trip and refusals, the socket's
 * mode, a stale socket replaced and a live one left alone, a request
 * answered once the daemon replies, a client of another user refused
 * (SO_PEERCRED; as root only), and clients that never finish their line
 * (silent, trickling, too long) told so and let go by their deadline.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "daemon/control.h"

static void test_protocol(void)
{
	struct control_request rq = { .duration_ns = 5000000000ull,
				      .at_realtime_ns = 1700000000123456789ull };
	struct control_request back;
	char line[CONTROL_MAX_LINE], err[160];

	snprintf(rq.session, sizeof(rq.session), "fleet_run-7.a");
	ASSERT_OK(control_format_request(&rq, line, sizeof(line)), "format");
	line[strcspn(line, "\n")] = '\0';
	ASSERT_OK(control_parse_request(line, &back, err, sizeof(err)), "parse");
	ASSERT_EQ(back.duration_ns, rq.duration_ns, "duration");
	ASSERT_EQ(back.at_realtime_ns, rq.at_realtime_ns, "at");
	ASSERT_STREQ(back.session, "fleet_run-7.a", "session");
	ASSERT_OK(control_parse_request("trigger duration_ns=0 at_ns=0 session=-", &back,
					err, sizeof(err)), "default session");
	ASSERT_STREQ(back.session, "", "'-' is the default");
	ASSERT_EQ(back.pid, 0, "no pid= field: about no process");
	rq.pid = 4711;
	ASSERT_OK(control_format_request(&rq, line, sizeof(line)), "format with a pid");
	line[strcspn(line, "\n")] = '\0';
	ASSERT_OK(control_parse_request(line, &back, err, sizeof(err)), "parse with a pid");
	ASSERT_EQ(back.pid, 4711, "pid");
	ASSERT_STREQ(back.session, "fleet_run-7.a", "session beside the pid");
	ASSERT_NEQ(control_parse_request("trigger duration_ns=1 at_ns=0 session=- pid=0", &back,
					 err, sizeof(err)), 0, "pid 0");
	ASSERT_NEQ(control_parse_request("trigger duration_ns=1 at_ns=0 session=- pid=4294967296",
					 &back, err, sizeof(err)), 0, "a pid past int32");
	ASSERT_NEQ(control_parse_request("trigger duration_ns=1 at_ns=0 session=- pid=1 pid=2",
					 &back, err, sizeof(err)), 0, "pid twice");
	ASSERT_NEQ(control_parse_request("stop", &back, err, sizeof(err)), 0, "unknown verb");
	ASSERT_NEQ(control_parse_request("trigger duration_ns=x at_ns=0 session=-", &back,
					 err, sizeof(err)), 0, "bad number");
	ASSERT_NEQ(control_parse_request("trigger duration_ns=1 at_ns=0 session=../x", &back,
					 err, sizeof(err)), 0, "a session with '/'");
	ASSERT_NEQ(control_parse_request("trigger duration_ns=1 at_ns=0", &back,
					 err, sizeof(err)), 0, "a field missing");
	ASSERT_NEQ(control_parse_request("trigger duration_ns=1 duration_ns=2 at_ns=0 session=-",
					 &back, err, sizeof(err)), 0, "a field twice");
	ASSERT_FALSE(control_valid_session(".."), "'..' is no session");
	ASSERT_FALSE(control_valid_session("a b"), "nor one with a space");
}

static int asked;
static struct control_request last;

static void on_request(void *ctx, int client, const struct control_request *rq)
{
	(void)ctx;
	asked = client + 1;
	last = *rq;
}

/* A child asks; the parent polls until it has the request, answers, and
 * reads the child's exit status: 0 when it got @expect back. */
static int ask(struct control_server *s, const char *path, const char *expect, uid_t as)
{
	struct control_request rq = { .duration_ns = 7 };
	int status = -1;
	pid_t pid = fork();

	if (pid == 0) {
		char reply[CONTROL_MAX_LINE];

		if (as && setuid(as))
			_exit(3);
		if (control_request(path, &rq, reply, sizeof(reply), 5000))
			_exit(2);
		_exit(strcmp(reply, expect) ? 1 : 0);
	}
	asked = 0;
	for (int i = 0; i < 2000 && waitpid(pid, &status, WNOHANG) == 0; i++) {
		control_server__poll(s, on_request, NULL);
		if (asked) {
			control_server__reply(s, asked - 1, "ok /logs/x.xplane.pb");
			asked = 0;
		}
		usleep(1000);
	}
	if (waitpid(pid, &status, 0) != pid && status == -1)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_server(void)
{
	char dir[] = "/tmp/at-control-XXXXXX", path[128];
	struct control_server *s, *again;
	struct stat st;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "temp dir"))
		return;
	snprintf(path, sizeof(path), "%s/sub/daemon.sock", dir);
	s = control_server__new(path);
	if (!ASSERT_OK_PTR(s, "server"))
		return;
	ASSERT_OK(stat(path, &st), "socket exists");
	ASSERT_EQ(st.st_mode & 0777, 0600, "socket mode 0600");
	again = control_server__new(path);
	ASSERT_TRUE(!again && errno == EADDRINUSE, "a live socket is not taken over");
	ASSERT_EQ(ask(s, path, "ok /logs/x.xplane.pb", 0), 0, "request answered");
	ASSERT_EQ(last.duration_ns, 7, "the request as sent");
	if (geteuid() == 0) {
		/* Another user may not even connect (0600); with the mode
		 * opened, SO_PEERCRED still refuses it. */
		char sub[128];

		snprintf(sub, sizeof(sub), "%s/sub", dir);
		chmod(dir, 0711);
		chmod(sub, 0711);
		ASSERT_EQ(ask(s, path, "", 65534), 2, "nobody cannot connect");
		chmod(path, 0666);
		ASSERT_EQ(ask(s, path, "error permission denied", 65534), 0,
			  "nobody refused by its credentials");
		chmod(path, 0600);
		chmod(sub, 0700);
	}
	control_server__free(s, NULL);
	ASSERT_NEQ(stat(path, &st), 0, "socket removed at the end");
	/* A stale socket (its server gone without cleaning up) is replaced. */
	s = control_server__new(path);
	if (ASSERT_OK_PTR(s, "server again")) {
		/* Leave the file behind as a crashed daemon would. */
		char keep[140];

		snprintf(keep, sizeof(keep), "%s.keep", path);
		ASSERT_OK(link(path, keep), "keep the socket file");
		control_server__free(s, NULL);
		ASSERT_OK(rename(keep, path), "put it back, stale");
		s = control_server__new(path);
		ASSERT_OK_PTR(s, "a stale socket is replaced");
		control_server__free(s, NULL);
	}
	rmdir(strrchr(path, '/') ? (*strrchr(path, '/') = '\0', path) : path);
	rmdir(dir);
}

static int ids[4], n_ids;

static void note_id(void *ctx, int client, const struct control_request *rq)
{
	(void)ctx;
	(void)rq;
	if (n_ids < 4)
		ids[n_ids++] = client;
}

/* A raw client in this process: connect, send a request, no waiting. */
static int raw_client(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *line = "trigger duration_ns=0 at_ns=0 session=-\n";
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, line, strlen(line)) != (ssize_t)strlen(line))
		return -1;
	return fd;
}

/* A reply meant for a client that left does not reach the next client
 * given its slot. */
static void test_slot_reuse(void)
{
	char dir[] = "/tmp/at-control-XXXXXX", path[128], buf[64];
	struct control_server *s;
	int a, b;
	ssize_t n;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "temp dir"))
		return;
	snprintf(path, sizeof(path), "%s/d.sock", dir);
	s = control_server__new(path);
	if (!ASSERT_OK_PTR(s, "server"))
		return;
	n_ids = 0;
	a = raw_client(path);
	for (int i = 0; i < 100 && n_ids < 1; i++, usleep(1000))
		control_server__poll(s, note_id, NULL);
	close(a);
	for (int i = 0; i < 10; i++, usleep(1000))
		control_server__poll(s, note_id, NULL);	/* notices it left */
	b = raw_client(path);
	for (int i = 0; i < 100 && n_ids < 2; i++, usleep(1000))
		control_server__poll(s, note_id, NULL);
	if (ASSERT_EQ(n_ids, 2, "both requests arrived")) {
		ASSERT_NEQ(ids[0], ids[1], "the second client has an id of its own");
		control_server__reply(s, ids[0], "ok /for/the/first");
		n = recv(b, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		ASSERT_TRUE(n < 0 && errno == EAGAIN, "the first's reply does not reach the second");
		control_server__reply(s, ids[1], "ok /for/the/second");
		n = recv(b, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		ASSERT_STREQ(buf, "ok /for/the/second\n", "the second gets its own");
	}
	close(b);
	control_server__free(s, NULL);
	rmdir(dir);
}

/* A connected client that sends @line (no newline: never whole). */
static int partial_client(const char *path, const char *line)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* What the server said to @fd ("" if nothing within 2 s), turning the
 * server meanwhile (a loaded host, a sanitizer build: its answer may take
 * more than one turn). */
static void reply_of(struct control_server *s, int fd, char *buf, size_t len)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n = -1;

	for (int i = 0; i < 200; i++) {
		if (poll(&pfd, 1, 10) == 1) {
			n = recv(fd, buf, len - 1, MSG_DONTWAIT);
			break;
		}
		control_server__poll(s, note_id, NULL);
	}
	buf[n > 0 ? n : 0] = '\0';
}

/* Whether the server closed @fd (the reply read, then end of stream). */
static bool closed_by_server(int fd)
{
	char buf[CONTROL_MAX_LINE + 2];

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n == 0)
			return true;
		if (n < 0)
			return false;
	}
}

/*
 * Clients that never finish their request line: one silent, one sending a
 * byte every 50 ms (each byte in time, the line never whole), every slot
 * held by silent ones. Each is answered "error timed out" at its deadline
 * and its slot freed for the next client; nothing reaches the daemon.
 */
static void test_request_deadline(void)
{
	char dir[] = "/tmp/at-control-XXXXXX", path[128], buf[CONTROL_MAX_LINE + 2];
	const uint64_t timeout_ns = 300 * 1000000ull;
	int silent, trickle, hogs[64], late, busy;
	struct control_server *s;
	struct timespec t0, t;
	double waited;

	if (!ASSERT_OK_PTR(mkdtemp(dir), "temp dir"))
		return;
	snprintf(path, sizeof(path), "%s/d.sock", dir);
	s = control_server__new(path);
	if (!ASSERT_OK_PTR(s, "server"))
		return;
	control_server__set_request_timeout(s, timeout_ns);
	n_ids = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	silent = partial_client(path, "");
	trickle = partial_client(path, "t");
	ASSERT_TRUE(silent >= 0 && trickle >= 0, "clients connected");
	/* Until both are let go, or twice the deadline. */
	for (int i = 0; i < 120; i++) {
		control_server__poll(s, note_id, NULL);
		if (closed_by_server(silent) && closed_by_server(trickle))
			break;
		if (i % 10 == 0 && write(trickle, "r", 1) != 1)
			break;
		usleep(5000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t);
	waited = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
	ASSERT_TRUE(closed_by_server(silent), "the silent client let go");
	ASSERT_TRUE(closed_by_server(trickle), "the trickling client let go");
	ASSERT_TRUE(waited >= 0.3 && waited < 1.5, "at its deadline (not before; load may delay)");
	ASSERT_EQ(n_ids, 0, "no request reached the daemon");
	close(silent);
	close(trickle);

	/* Every slot held by a silent client: the next one is turned away
	 * now, and served once the deadline has freed them. */
	for (int i = 0; i < 64; i++) {
		hogs[i] = partial_client(path, "trigger");
		control_server__poll(s, note_id, NULL);	/* the backlog is short */
	}
	busy = partial_client(path, "");
	control_server__poll(s, note_id, NULL);
	usleep(10000);
	reply_of(s, busy, buf, sizeof(buf));
	ASSERT_STREQ(buf, "error busy: too many clients waiting\n", "all slots held");
	close(busy);
	for (int i = 0; i < 100; i++, usleep(5000))
		control_server__poll(s, note_id, NULL);
	reply_of(s, hogs[0], buf, sizeof(buf));
	ASSERT_STRCONTAINS(buf, "error timed out", "a holder told why");
	for (int i = 0; i < 64; i++)
		close(hogs[i]);
	late = raw_client(path);
	for (int i = 0; i < 2000 && n_ids < 1; i++, usleep(1000))
		control_server__poll(s, note_id, NULL);
	ASSERT_EQ(n_ids, 1, "a client after them is served");
	close(late);

	/* A line longer than CONTROL_MAX_LINE: refused at once. */
	memset(buf, 'x', CONTROL_MAX_LINE);
	buf[CONTROL_MAX_LINE] = '\0';
	late = partial_client(path, buf);
	for (int i = 0; i < 50 && !closed_by_server(late); i++, usleep(2000))
		control_server__poll(s, note_id, NULL);
	ASSERT_TRUE(closed_by_server(late), "a too long line let go before the deadline");
	close(late);

	/* A NUL in the line: said at once, not timed out at the deadline. */
	late = partial_client(path, "");
	if (ASSERT_GE(late, 0, "client") &&
	    ASSERT_EQ(write(late, "trigger\0 x\n", 11), 11, "a line with a NUL")) {
		for (int i = 0; i < 20; i++, usleep(2000))
			control_server__poll(s, note_id, NULL);
		reply_of(s, late, buf, sizeof(buf));
		ASSERT_STREQ(buf, "error malformed request: a NUL byte in it\n",
			     "a NUL said as such, before the deadline");
	}
	if (late >= 0)
		close(late);
	control_server__free(s, NULL);
	rmdir(dir);
}

int main(void)
{
	test_protocol();
	test_server();
	test_slot_reuse();
	test_request_deadline();
	return test_exit();
}
