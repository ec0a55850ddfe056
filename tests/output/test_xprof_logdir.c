// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * XProf's profile layout: <logdir>/plugins/profile/<session>/<host>.xplane.pb
 * named as XProf's own writer names it, the directory chain created, a
 * symlinked or bad session directory refused, and the capture file opened
 * there atomically with its path reported.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "test.h"
#include "lib/atomic_file.h"
#include "output/xprof_logdir.h"

static char dir[] = "/tmp/test_xprof_logdir.XXXXXX";

static void test_paths(void)
{
	char buf[256], tiny[16];

	ASSERT_OK(xprof_profile_path(buf, sizeof(buf), "/logs", "2026_01_01_00_00_00",
				     "host:8470"), "path");
	ASSERT_STREQ(buf, "/logs/plugins/profile/2026_01_01_00_00_00/host_8470.xplane.pb",
		     "XProf layout, ':' replaced");
	ASSERT_OK(xprof_profile_path(buf, sizeof(buf), "l", "s", "a/b"), "slash in host");
	ASSERT_STREQ(buf, "l/plugins/profile/s/a_b.xplane.pb", "'/' replaced too");
	ASSERT_EQ(xprof_profile_path(buf, sizeof(buf), "l", "..", "h"), -EINVAL, "session ..");
	ASSERT_EQ(xprof_profile_path(buf, sizeof(buf), "l", "a/b", "h"), -EINVAL, "session a/b");
	ASSERT_EQ(xprof_profile_path(buf, sizeof(buf), "l", "", "h"), -EINVAL, "empty session");
	ASSERT_EQ(xprof_profile_path(buf, sizeof(buf), "l", "s", ""), -EINVAL, "empty host");
	ASSERT_EQ(xprof_profile_path(tiny, sizeof(tiny), "l", "s", "h"), -ENAMETOOLONG,
		  "too long");
	ASSERT_OK(xprof_profile_file_name(buf, sizeof(buf), "h:1"), "file name");
	ASSERT_STREQ(buf, "h_1.xplane.pb", "file name value");
}

static void test_session_dir(void)
{
	char logdir[512], p[600], elsewhere[512];
	struct stat st;
	int fd;

	snprintf(logdir, sizeof(logdir), "%s/logs/deeper", dir);
	fd = xprof_session_dir_open(logdir, "run1");
	ASSERT_GE(fd, 0, "creates logdir/plugins/profile/run1");
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/plugins/profile/run1", logdir);
	if (ASSERT_OK(stat(p, &st), "session dir exists")) {
		ASSERT_TRUE(S_ISDIR(st.st_mode), "is a directory");
		ASSERT_EQ(st.st_mode & 0777, 0750 & ~0022, "mode 0750");
	}
	fd = xprof_session_dir_open(logdir, "run1");
	ASSERT_GE(fd, 0, "existing session dir reopened");
	if (fd >= 0)
		close(fd);

	/* A session directory that is a symlink is refused. */
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", dir);
	ASSERT_OK(mkdir(elsewhere, 0700), "mkdir elsewhere");
	snprintf(p, sizeof(p), "%s/plugins/profile/run2", logdir);
	ASSERT_OK(symlink(elsewhere, p), "symlink session");
	ASSERT_EQ(xprof_session_dir_open(logdir, "run2"), -ELOOP, "symlinked session refused");
	ASSERT_EQ(xprof_session_dir_open(logdir, "../x"), -EINVAL, "bad session refused");

	/* A file where a directory should be. */
	snprintf(p, sizeof(p), "%s/plugins/profile/run3", logdir);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	ASSERT_EQ(xprof_session_dir_open(logdir, "run3"), -ENOTDIR, "file as session dir");
}

static void test_profile_open(void)
{
	char logdir[512], path[1024], tiny[8];
	struct atomic_file *af;
	struct stat st;

	snprintf(logdir, sizeof(logdir), "%s/open", dir);
	af = xprof_profile_open(logdir, "s1", "host:1", path, sizeof(path));
	if (!ASSERT_OK_PTR(af, "opened"))
		return;
	ASSERT_STRCONTAINS(path, "/open/plugins/profile/s1/host_1.xplane.pb", "path out");
	fputs("x", atomic_file__stream(af));
	ASSERT_OK(atomic_file__commit(af, 1), "commit");
	atomic_file__free(af);
	ASSERT_OK(stat(path, &st), "file there");

	errno = 0;
	af = xprof_profile_open(logdir, "s1", "h", tiny, sizeof(tiny));
	ASSERT_TRUE(!af && errno == ENAMETOOLONG, "path buffer too small");
	errno = 0;
	af = xprof_profile_open(logdir, "..", "h", NULL, 0);
	ASSERT_TRUE(!af && errno == EINVAL, "bad session");
	errno = 0;
	af = xprof_profile_open(logdir, "s1", "", NULL, 0);
	ASSERT_TRUE(!af && errno == EINVAL, "empty host");
}

int main(void)
{
	char cmd[600];

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	test_paths();
	test_session_dir();
	test_profile_open();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return test_exit();
}
