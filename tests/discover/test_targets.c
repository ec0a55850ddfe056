// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * discover/targets.c finds and writes nothing: what it finds is queued as
 * visits for the attach controller. A --pid target and its child
 * (--children), a process gone at a rescan, a launched command held until
 * released; then the attach controller (without a probe session) taking
 * every visit.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/types.h>

#include "test.h"
#include "acceltrace/events.h"
#include "discover/targets.h"
#include "attach/attach_control.h"

static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static const struct target_visit *visit_of(const struct target_visit *v, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].pid == pid)
			return &v[i];
	return NULL;
}

static void test_pid_and_children(void)
{
	pid_t self = getpid(), child = sleeper();
	struct targets_opts opts = { .sz = sizeof(opts), .pids = &self, .n_pids = 1,
				     .children = true };
	const struct target_visit *v, *c;
	struct targets *t;
	size_t n;

	if (!ASSERT_TRUE(child > 0, "fork"))
		return;
	t = targets__new(&opts, NULL);
	if (!ASSERT_OK_PTR(t, "targets"))
		goto out;
	ASSERT_OK(targets__start(t), "start");
	v = targets__take_visits(t, &n);
	ASSERT_EQ(n, 2, "two visits: the target and its child");
	c = visit_of(v, n, self);
	if (ASSERT_OK_PTR(c, "the target visited"))
		ASSERT_TRUE(c->flags == TRACED_TARGET && !c->gone, "as a target, to examine");
	c = visit_of(v, n, child);
	if (ASSERT_OK_PTR(c, "the child visited"))
		ASSERT_TRUE(c->flags == TRACED_CHILD && !c->gone, "as a child, to examine");
	targets__take_visits(t, &n);
	ASSERT_EQ(n, 0, "taken: none left");
	ASSERT_OK_PTR(targets__report_of(t, child), "a report for the attach controller to fill");
	ASSERT_TRUE(targets__report_of(t, 1) == NULL, "no report for another process");

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	targets__rescan(t, false);
	v = targets__take_visits(t, &n);
	ASSERT_EQ(n, 2, "a rescan visits both again");
	c = visit_of(v, n, child);
	ASSERT_TRUE(c && c->gone, "the child gone: to forget");
	c = visit_of(v, n, self);
	ASSERT_TRUE(c && !c->gone, "the target: to examine again (libraries loaded late)");
	targets__rescan(t, false);
	v = targets__take_visits(t, &n);
	ASSERT_EQ(n, 1, "a gone process is forgotten once");
	ASSERT_TRUE(targets__alive(t), "the target lives");
	targets__free(t);
	return;
out:
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static void test_command_held(void)
{
	char *cmd[] = { "true", NULL };
	struct targets_opts opts = { .sz = sizeof(opts), .command = cmd };
	struct attach_control *ac = attach_control__new(NULL, NULL);
	const struct target_visit *v;
	struct targets *t;
	int status = -1;
	size_t n;

	t = targets__new(&opts, NULL);
	if (!ASSERT_OK_PTR(t, "targets") || !ASSERT_OK_PTR(ac, "controller"))
		goto out;
	ASSERT_OK(targets__start(t), "start");
	usleep(50000);
	ASSERT_OK(waitpid(targets__command_pid(t), &status, WNOHANG), "held before exec");
	v = targets__take_visits(t, &n);
	ASSERT_TRUE(n == 1 && v[0].pid == targets__command_pid(t) && !v[0].gone,
		    "the command visited before it runs");
	/* What the record loop does: the visits acted on, then the release. */
	targets__rescan(t, false);
	attach_control__visit_targets(ac, t);
	targets__take_visits(t, &n);
	ASSERT_EQ(n, 0, "the controller took every visit");
	ASSERT_OK(targets__release_command(t), "released");
	ASSERT_OK(targets__wait_command(t, &status), "waited");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "ran: true exited 0");
	ASSERT_OK(targets__release_command(t), "released once only");
out:
	targets__free(t);
	attach_control__free(ac);
}

int main(void)
{
	test_pid_and_children();
	test_command_held();
	return test_exit();
}
