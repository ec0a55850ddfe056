// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cgroup_scope: the daemon's --cgroup. A path that does not exist or is
 * not a cgroup v2 directory is refused, the message naming it; a
 * directory's subtree holds its own path and those below it, never a
 * sibling that shares its prefix ("/a/b" holds "/a/b/c", not "/a/bc").
 * With root and a cgroup2 mount: a child cgroup is found by its path
 * relative to the mount and absolute alike, and holds a process moved in.
 */
#include <errno.h>
#include <signal.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "test.h"
#include "discover/cgroup_scope.h"

static const char *v2_mount(void)
{
	static const char *const m[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	struct statfs sf;

	for (size_t i = 0; i < 2; i++)
		if (!statfs(m[i], &sf) && sf.f_type == CGROUP2_SUPER_MAGIC)
			return m[i];
	return NULL;
}

static void test_refused(void)
{
	char err[512];
	struct cgroup_scope *s;

	s = cgroup_scope__open("/nonexistent/acceltrace-x", err, sizeof(err));
	ASSERT_TRUE(!s && errno == ENOENT, "a missing path is refused");
	ASSERT_STRCONTAINS(err, "/nonexistent/acceltrace-x", "the message names it");
	ASSERT_STRCONTAINS(err, "no such cgroup", "and says why");
	s = cgroup_scope__open("/tmp", err, sizeof(err));
	ASSERT_TRUE(!s && errno == ENOTDIR, "a directory of another file system is refused");
	ASSERT_STRCONTAINS(err, "not a cgroup v2 directory", "and said so");
	s = cgroup_scope__open("", err, sizeof(err));
	ASSERT_TRUE(!s && errno == EINVAL, "an empty path is refused");
}

static void test_live(const char *mount)
{
	char dir[256], rel[64], err[512], path[300];
	struct cgroup_scope *s, *r;
	pid_t child;
	FILE *f;

	snprintf(rel, sizeof(rel), "acceltrace-test-scope-%d", getpid());
	snprintf(dir, sizeof(dir), "%s/%s", mount, rel);
	if (!ASSERT_OK(mkdir(dir, 0755), "a child cgroup made"))
		return;
	s = cgroup_scope__open(dir, err, sizeof(err));
	r = cgroup_scope__open(rel, err, sizeof(err));
	if (ASSERT_OK_PTR(s, "opened by its absolute path") &&
	    ASSERT_OK_PTR(r, "and relative to the mount")) {
		snprintf(path, sizeof(path), "/%s", rel);
		ASSERT_STREQ(cgroup_scope__path(s), path, "its path in the hierarchy");
		ASSERT_STREQ(cgroup_scope__path(r), path, "the same either way");
		ASSERT_TRUE(cgroup_scope__holds_path(s, path), "it holds itself");
		snprintf(path, sizeof(path), "/%s/job/task", rel);
		ASSERT_TRUE(cgroup_scope__holds_path(s, path), "and what is below it");
		snprintf(path, sizeof(path), "/%sx", rel);
		ASSERT_FALSE(cgroup_scope__holds_path(s, path), "not a sibling sharing its prefix");
		ASSERT_FALSE(cgroup_scope__holds_path(s, "/"), "nor its parent");
		ASSERT_FALSE(cgroup_scope__holds(s, getpid()), "the test itself is outside");
		child = fork();
		if (child == 0) {
			pause();
			_exit(0);
		}
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		f = fopen(path, "w");
		ASSERT_TRUE(f && fprintf(f, "%d\n", child) > 0 && !fclose(f), "a child moved in");
		ASSERT_TRUE(cgroup_scope__holds(s, child), "a process inside is held");
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		ASSERT_FALSE(cgroup_scope__holds(s, child), "a process gone is not");
	}
	cgroup_scope__free(s);
	cgroup_scope__free(r);
	rmdir(dir);
}

int main(void)
{
	struct cgroup_scope *s;
	char err[256];
	const char *mount = v2_mount();

	test_refused();
	if (!mount) {
		printf("SKIP-PART: no cgroup v2 mount\n");
		return test_exit();
	}
	/* The root: it holds every path. */
	s = cgroup_scope__open(mount, err, sizeof(err));
	if (ASSERT_OK_PTR(s, "the mount's root opens")) {
		ASSERT_STREQ(cgroup_scope__path(s), "/", "the root's path");
		ASSERT_TRUE(cgroup_scope__holds_path(s, "/x/y"), "the root holds every path");
		ASSERT_TRUE(cgroup_scope__holds(s, getpid()), "and this process");
	}
	cgroup_scope__free(s);
	if (geteuid() == 0)
		test_live(mount);
	else
		printf("SKIP-PART: not root; no child cgroup made\n");
	return test_exit();
}
