// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * XProf's profile layout: <logdir>/plugins/profile/<session>/<host>.xplane.pb
 * named as XProf's own writer names it, the directory chain created, a
 * symlinked or bad session directory refused, the capture file opened
 * there atomically with its path reported, never over another capture
 * (a second one, or one committed second, goes to "<session>-2"), and the
 * logdir checked before a capture is taken.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void commit_one(struct xprof_profile *p, const char *what)
{
	fputs(what, xprof_profile__stream(p));
	ASSERT_OK(xprof_profile__commit(p, strlen(what)), "commit");
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, len - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

static void test_profile_open(void)
{
	char logdir[512], path[1024], buf[64];
	struct xprof_profile *p, *q;
	struct stat st;

	snprintf(logdir, sizeof(logdir), "%s/open", dir);
	p = xprof_profile__open(logdir, "s1", "host:1");
	if (!ASSERT_OK_PTR(p, "opened"))
		return;
	ASSERT_STRCONTAINS(xprof_profile__path(p), "/open/plugins/profile/s1/host_1.xplane.pb",
			   "path");
	commit_one(p, "first");
	snprintf(path, sizeof(path), "%s", xprof_profile__path(p));
	xprof_profile__free(p);
	ASSERT_OK(stat(path, &st), "file there");

	/* The same session and host again: never over the first. */
	p = xprof_profile__open(logdir, "s1", "host:1");
	if (ASSERT_OK_PTR(p, "opened again")) {
		ASSERT_STREQ(xprof_profile__session(p), "s1-2", "the next free session");
		commit_one(p, "second");
		ASSERT_STRCONTAINS(xprof_profile__path(p), "/plugins/profile/s1-2/host_1.xplane.pb",
				   "its path");
		read_file(xprof_profile__path(p), buf, sizeof(buf));
		ASSERT_STREQ(buf, "second", "the second capture there");
		xprof_profile__free(p);
	}
	read_file(path, buf, sizeof(buf));
	ASSERT_STREQ(buf, "first", "the first capture untouched");

	/* Another host in the same session: the session is shared, as a
	 * fleet's is. */
	p = xprof_profile__open(logdir, "s1", "other");
	if (ASSERT_OK_PTR(p, "another host")) {
		ASSERT_STREQ(xprof_profile__session(p), "s1", "its own file in the same session");
		xprof_profile__free(p);
	}

	/* Two writers opened at once (two records in the same second): both
	 * choose s2; the one committing second goes to s2-2. */
	p = xprof_profile__open(logdir, "s2", "h");
	q = xprof_profile__open(logdir, "s2", "h");
	if (ASSERT_OK_PTR(p, "writer one") && ASSERT_OK_PTR(q, "writer two")) {
		ASSERT_STREQ(xprof_profile__session(q), "s2", "both chose the same at the open");
		commit_one(p, "one");
		commit_one(q, "two");
		ASSERT_STREQ(xprof_profile__session(q), "s2-2", "the second moved on at its commit");
		read_file(xprof_profile__path(p), buf, sizeof(buf));
		ASSERT_STREQ(buf, "one", "the first writer's file kept");
		read_file(xprof_profile__path(q), buf, sizeof(buf));
		ASSERT_STREQ(buf, "two", "the second's beside it");
	}
	xprof_profile__free(p);
	xprof_profile__free(q);

	errno = 0;
	p = xprof_profile__open(logdir, "..", "h");
	ASSERT_TRUE(!p && errno == EINVAL, "bad session");
	errno = 0;
	p = xprof_profile__open(logdir, "s1", "");
	ASSERT_TRUE(!p && errno == EINVAL, "empty host");
}

/* The logdir check: writable passes and leaves nothing behind; a logdir
 * under a regular file, or in a read-only directory, fails at once. */
static void test_logdir_check(void)
{
	char logdir[512], path[600], cmd[700];
	int fd;

	snprintf(logdir, sizeof(logdir), "%s/check", dir);
	ASSERT_OK(xprof_logdir_check(logdir), "a writable logdir");
	snprintf(path, sizeof(path), "%s/plugins/profile", logdir);
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", path);
	ASSERT_OK(system(cmd), "nothing left in it");
	snprintf(path, sizeof(path), "%s/a-file", dir);
	fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	close(fd);
	snprintf(logdir, sizeof(logdir), "%s/a-file/logs", dir);
	ASSERT_EQ(xprof_logdir_check(logdir), -ENOTDIR, "a logdir under a file");
	if (geteuid()) {
		/* Root writes anywhere it may: tests/e2e use a read-only mount. */
		snprintf(logdir, sizeof(logdir), "%s/ro", dir);
		mkdir(logdir, 0500);
		ASSERT_EQ(xprof_logdir_check(logdir), -EACCES, "a read-only logdir");
	}
}

int main(void)
{
	char cmd[600];

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	test_paths();
	test_session_dir();
	test_profile_open();
	test_logdir_check();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return test_exit();
}
