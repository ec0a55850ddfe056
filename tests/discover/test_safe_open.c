// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * safe_open: what a traced process names is looked at through O_PATH and
 * opened only when it is a regular file on a local file system. A FIFO
 * with no writer (an open that would never return) and a device node (a
 * driver's open) are refused at once; so is a regular file of a mount
 * type outside the local list (cgroup2's and proc's files here: a FUSE or
 * NFS mount is refused the same way, by the type its mountinfo line
 * names); the type is read from mountinfo, whose parsing is checked on
 * lines as the kernel writes them. A path resolved in a process's root
 * stays in it: an absolute symbolic link there does not reach our files.
 * The (dev, inode) asked for is checked, and a reopen through the O_PATH
 * descriptor reads that same inode after its name changed hands.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "test.h"
#include "discover/procfs.h"
#include "discover/safe_open.h"

static char dir[4096];

static const char *at(const char *name)
{
	static char buf[4][4300];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static bool write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok;
}

static void on_alarm(int sig)
{
	(void)sig;
	fprintf(stderr, "FAIL: an open hung\n");
	_exit(1);
}

static void test_mountinfo(void)
{
	static const char text[] =
		"22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
		"23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw\n"
		"40 22 0:35 / /mnt/sshfs rw,nosuid,nodev,relatime shared:20 master:3 - fuse.sshfs "
		"me@host:/ rw,user_id=0,group_id=0\n"
		"41 22 0:36 / /mnt/nfs rw,relatime - nfs4 server:/export rw,vers=4.2\n"
		"42 22 0:37 / /var/lib/docker/overlay2/x/merged rw - overlay overlay rw,lowerdir=a\n"
		"43 22 0:38 / /odd\\040name rw - tmpfs tmpfs rw";
	struct mount_table *t = procfs_mount_table_parse(text, strlen(text));
	struct statx root;
	struct mount_table *bad = procfs_mount_table_parse("7 1 0:1 / / rw", 14);

	if (ASSERT_OK_PTR(t, "parse") && ASSERT_OK_PTR(bad, "parse a bad line")) {
		ASSERT_STREQ(mount_table__type(t, 22), "ext4", "root's type");
		ASSERT_STREQ(mount_table__type(t, 40), "fuse.sshfs",
			     "optional fields skipped up to the lone '-'");
		ASSERT_STREQ(mount_table__type(t, 43), "tmpfs", "the last line, without a newline");
		ASSERT_TRUE(!mount_table__type(t, 4), "no such mount (4 is not 40's prefix)");
		ASSERT_TRUE(!mount_table__type(bad, 7), "a line without its type");
	}
	mount_table__free(t);
	mount_table__free(bad);
	/* This process's own table knows the mount "/" is on. */
	t = procfs_mount_table(0);
	if (ASSERT_OK_PTR(t, "this process's mounts") &&
	    ASSERT_OK(statx(AT_FDCWD, "/", 0, STATX_MNT_ID, &root), "statx /"))
		ASSERT_OK_PTR(mount_table__type(t, root.stx_mnt_id), "the root's mount in it");
	mount_table__free(t);
	ASSERT_TRUE(safe_open_fstype_local("ext4"), "ext4 is local");
	ASSERT_TRUE(safe_open_fstype_local("overlay"), "overlay is local");
	ASSERT_TRUE(safe_open_fstype_local("tmpfs"), "tmpfs is local");
	ASSERT_FALSE(safe_open_fstype_local("fuse.sshfs"), "FUSE is not");
	ASSERT_FALSE(safe_open_fstype_local("fuse"), "FUSE is not");
	ASSERT_FALSE(safe_open_fstype_local("nfs4"), "NFS is not");
	ASSERT_FALSE(safe_open_fstype_local("virtiofs"), "virtiofs is not");
	ASSERT_FALSE(safe_open_fstype_local("proc"), "proc is not a place for files");
}

static void test_refusals(void)
{
	struct safe_open_want small = { .min_size = 100 };
	struct stat st;
	int fd;

	signal(SIGALRM, on_alarm);
	alarm(10);
	ASSERT_OK(mkfifo(at("fifo"), 0644), "mkfifo");
	ASSERT_EQ(safe_open(0, at("fifo"), NULL, &st), -ENOTSUP, "a FIFO: refused, at once");
	ASSERT_EQ(safe_open(0, "/dev/null", NULL, &st), -ENOTSUP, "a device node: refused");
	ASSERT_EQ(safe_open(0, "/proc/self/status", NULL, &st), -ENOTSUP,
		  "a regular file on proc: refused");
	if (!access("/sys/fs/cgroup/cgroup.procs", F_OK))
		ASSERT_EQ(safe_open(0, "/sys/fs/cgroup/cgroup.procs", NULL, &st), -ENOTSUP,
			  "a regular file of a mount type not in the list (cgroup2): refused");
	ASSERT_EQ(safe_open(0, at("missing"), NULL, &st), -ENOENT, "missing");
	ASSERT_TRUE(write_file(at("short"), "tiny"), "a short file");
	ASSERT_EQ(safe_open(0, at("short"), &small, &st), -ENOTSUP, "shorter than asked");
	fd = safe_open(0, at("short"), NULL, &st);
	if (ASSERT_GE(fd, 0, "a regular local file: opened"))
		close(fd);
	alarm(0);
}

static void test_identity(void)
{
	struct safe_open_want want = { .same_file = true };
	struct stat st, first;
	char buf[16] = "";
	int pfd, fd;

	if (!ASSERT_TRUE(write_file(at("lib.so"), "first file"), "a file") ||
	    !ASSERT_OK(stat(at("lib.so"), &first), "stat"))
		return;
	want.dev = first.st_dev;
	want.ino = first.st_ino;
	pfd = safe_open(0, at("lib.so"), &want, &st);
	if (!ASSERT_GE(pfd, 0, "the file asked for"))
		return;
	/* Another file takes the name: the descriptor still reads the first. */
	ASSERT_TRUE(write_file(at("new.so"), "other file") && !rename(at("new.so"), at("lib.so")),
		    "another file takes the name");
	fd = safe_reopen(pfd, O_RDONLY);
	if (ASSERT_GE(fd, 0, "reopened")) {
		ASSERT_EQ(read(fd, buf, sizeof(buf) - 1), 10, "read");
		ASSERT_STREQ(buf, "first file", "the same inode, not the name's");
		close(fd);
	}
	close(pfd);
	ASSERT_EQ(safe_open(0, at("lib.so"), &want, &st), -ESTALE,
		  "the name now names another file: refused");
}

/* A child chrooted into dir/root: its "/etc/passwd" is a symbolic link to
 * the real /etc/passwd's absolute path, which inside its root names its
 * own (absent) file. */
static void test_in_root(void)
{
	struct stat st;
	pid_t child;
	int fd;

	if (mkdir(at("root"), 0755) || mkdir(at("root/etc"), 0755) ||
	    symlink("/etc/hostname", at("root/etc/passwd")) ||
	    !write_file(at("root/plugin.so"), "in the root"))
		return (void)ASSERT_TRUE(false, "make a root");
	child = fork();
	if (child == 0) {
		if (chroot(at("root")) || chdir("/"))
			_exit(1);
		pause();
		_exit(0);
	}
	if (!ASSERT_GE(child, 1, "fork"))
		return;
	for (int i = 0; i < 500; i++) {
		char link[64], target[4300] = "";

		snprintf(link, sizeof(link), "/proc/%d/root", (int)child);
		if (readlink(link, target, sizeof(target) - 1) > 0 && strstr(target, "/root"))
			break;
		usleep(10 * 1000);
	}
	fd = safe_open_in_root(child, "/plugin.so", NULL, &st);
	if (ASSERT_GE(fd, 0, "a file in its root"))
		close(fd);
	ASSERT_EQ(safe_open_in_root(child, "/etc/passwd", NULL, &st), -ENOENT,
		  "an absolute link stays in its root");
	ASSERT_EQ(safe_open_in_root(child, "/../../../../etc/hostname", NULL, &st), -ENOENT,
		  "'..' stays in its root");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

int main(void)
{
	char cmd[4200];

	snprintf(dir, sizeof(dir), "%s/safe-open.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		printf("SKIP: cannot make a temporary directory\n");
		return TEST_SKIP;
	}
	test_mountinfo();
	test_refusals();
	test_identity();
	if (geteuid() == 0)
		test_in_root();
	else
		printf("note: not root; the chroot check did not run\n");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "note: could not remove %s\n", dir);
	return test_exit();
}
