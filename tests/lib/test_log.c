// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Logging leaves errno as it found it (lib/log.h): an error path logs and
 * then returns -errno, so a message whose write fails (stderr a full disk,
 * here /dev/full) must not change the error returned. Plain and JSON.
 * And one message is one line: control bytes from outside (a client's
 * path, a process's name) cannot forge a line of their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_CONTEXT "test"
#include "test.h"
#include "lib/log.h"

int main(void)
{
	int saved_stderr = dup(STDERR_FILENO), full = open("/dev/full", O_WRONLY | O_CLOEXEC);
	int after_plain, after_json, after_ok;

	if (full < 0 || saved_stderr < 0) {
		printf("SKIP: no /dev/full\n");
		return TEST_SKIP;
	}
	/* A write that fails: stderr on a full device. */
	dup2(full, STDERR_FILENO);
	errno = EXDEV;
	log_err("cannot do it: %s", "a reason");
	after_plain = errno;
	log_set_json(true);
	errno = EXDEV;
	log_err("cannot do it: %s", "a reason");
	after_json = errno;
	log_set_json(false);
	dup2(saved_stderr, STDERR_FILENO);
	/* And one that succeeds. */
	errno = EXDEV;
	log_info("a message that is written");
	after_ok = errno;
	{
		char path[] = "/tmp/acceltrace-log-test.XXXXXX", buf[512] = "";
		int fd = mkstemp(path);
		ssize_t n;

		if (ASSERT_GE(fd, 0, "mkstemp")) {
			dup2(fd, STDERR_FILENO);
			log_warn("root %s", "/tb/run\nacceltrace: daemon: capture written: /etc/shadow\r\x7f\tend");
			dup2(saved_stderr, STDERR_FILENO);
			n = pread(fd, buf, sizeof(buf) - 1, 0);
			buf[n > 0 ? n : 0] = '\0';
			ASSERT_STREQ(buf, "acceltrace: warning: test: root /tb/run\\x0aacceltrace: "
				     "daemon: capture written: /etc/shadow\\x0d\\x7f\tend\n",
				     "one line, its control bytes escaped (a tab kept)");
			close(fd);
			unlink(path);
		}
	}
	ASSERT_EQ(after_plain, EXDEV, "errno kept when the message cannot be written");
	ASSERT_EQ(after_json, EXDEV, "errno kept in JSON mode too");
	ASSERT_EQ(after_ok, EXDEV, "errno kept when it is written");
	close(full);
	close(saved_stderr);
	return test_exit();
}
