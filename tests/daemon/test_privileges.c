// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's privileges after start-up (daemon/privileges.h), in a child
 * process of the test: only the kept capabilities stay, in every set and in
 * threads created after; the work of those dropped (CAP_CHOWN, CAP_SETUID)
 * is refused; no_new_privs is set. As root only.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <unistd.h>

#include "test.h"
#include "daemon/privileges.h"

struct caps {
	uint64_t effective, permitted, inheritable;
};

static struct caps caps_now(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};
	struct caps c = {};

	if (!syscall(SYS_capget, &hdr, d)) {
		c.effective = d[0].effective | (uint64_t)d[1].effective << 32;
		c.permitted = d[0].permitted | (uint64_t)d[1].permitted << 32;
		c.inheritable = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	}
	return c;
}

static void *thread_caps(void *arg)
{
	*(struct caps *)arg = caps_now();
	return NULL;
}

/* Whether giving a new file to nobody is refused (CAP_CHOWN gone). */
static bool chown_refused(void)
{
	char path[] = "/tmp/at-privileges-XXXXXX";
	int fd = mkstemp(path);
	bool refused;

	if (fd < 0)
		return false;
	refused = fchown(fd, 65534, 65534) && errno == EPERM;
	close(fd);
	unlink(path);
	return refused;
}

/* In the child: drop, then check. Its exit status: the failures. */
static int child(void)
{
	uint64_t kept = 0, expect = 0;
	const struct privilege *p;
	struct caps before = caps_now(), after, in_thread = {};
	pthread_t t;
	size_t n;

	if (!ASSERT_TRUE(before.effective >> CAP_SYS_ADMIN & 1, "root has CAP_SYS_ADMIN"))
		return 1;
	if (!ASSERT_OK(privileges_drop(&kept), "drop"))
		return 1;
	p = privileges_kept(&n);
	for (size_t i = 0; i < n; i++)
		expect |= 1ull << p[i].cap;
	expect &= before.permitted;
	after = caps_now();
	ASSERT_EQ(kept, expect, "the kept mask is the kept list that root had");
	ASSERT_EQ(after.effective, expect, "effective: the kept ones only");
	ASSERT_EQ(after.permitted, expect, "permitted: the kept ones only");
	ASSERT_EQ(after.inheritable, 0, "inheritable: none");
	ASSERT_TRUE(expect >> CAP_BPF & 1 && expect >> CAP_PERFMON & 1 &&
		    expect >> CAP_SYS_ADMIN & 1 && expect >> CAP_SYS_PTRACE & 1 &&
		    expect >> CAP_SYS_NICE & 1,
		    "BPF, PERFMON, SYS_ADMIN (uprobes), SYS_PTRACE and SYS_NICE kept");
	ASSERT_EQ(prctl(PR_CAPBSET_READ, CAP_SYS_MODULE, 0, 0, 0), 0,
		  "CAP_SYS_MODULE out of the bounding set");
	ASSERT_EQ(prctl(PR_CAPBSET_READ, CAP_SETUID, 0, 0, 0), 0,
		  "CAP_SETUID out of the bounding set");
	ASSERT_EQ(prctl(PR_CAPBSET_READ, CAP_BPF, 0, 0, 0), 1, "CAP_BPF still bounded in");
	ASSERT_EQ(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 1, "no_new_privs");
	ASSERT_TRUE(chown_refused(), "CAP_CHOWN's work refused (a file given to nobody)");
	ASSERT_TRUE(setuid(65534) == 0 || errno == EPERM, "setuid ran");
	ASSERT_EQ(getuid(), 0, "CAP_SETUID's work refused (still uid 0)");
	if (ASSERT_OK(pthread_create(&t, NULL, thread_caps, &in_thread), "thread")) {
		pthread_join(t, NULL);
		ASSERT_EQ(in_thread.effective, expect, "a later thread has the same");
	}
	return test_failures;
}

int main(void)
{
	int status;
	pid_t pid;

	test_require_root("dropping capabilities");
	pid = fork();
	if (pid == 0)
		_exit(child() ? 1 : 0);
	ASSERT_EQ(waitpid(pid, &status, 0), pid, "wait");
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's checks held");
	return test_exit();
}
