// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Complete-or-absent output files: a committed file has the bytes and mode
 * 0640; a failed size check, an abandoned write or a stream whose fd broke
 * leaves nothing (no temporary either); a symlink at the final name is
 * replaced, not written through. (XProf's directory layout is
 * tests/output/test_xprof_logdir.c.)
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "test.h"
#include "lib/atomic_file.h"

static char dir[] = "/tmp/test_atomic_file.XXXXXX";

/* Entries in d other than . and .. */
static int count_entries(const char *d)
{
	DIR *dp = opendir(d);
	struct dirent *e;
	int n = 0;

	if (!dp)
		return -1;
	while ((e = readdir(dp))) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	}
	closedir(dp);
	return n;
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void test_commit(void)
{
	char path[512];
	struct atomic_file *af;
	struct stat st;
	mode_t old = umask(022);

	snprintf(path, sizeof(path), "%s/out.txt", dir);
	af = atomic_file__open(path);
	if (ASSERT_OK_PTR(af, "open")) {
		ASSERT_STREQ(atomic_file__path(af), path, "path for messages");
		fputs("hello\n", atomic_file__stream(af));
		ASSERT_TRUE(access(path, F_OK) != 0, "nothing at the final name before commit");
		ASSERT_EQ(count_entries(dir), 1, "one temporary while writing");
		ASSERT_OK(atomic_file__commit(af, 6), "commit");
	}
	atomic_file__free(af);
	ASSERT_STREQ(slurp(path), "hello\n", "content");
	if (ASSERT_OK(stat(path, &st), "stat"))
		ASSERT_EQ(st.st_mode & 0777, 0640, "mode 0640");
	ASSERT_EQ(count_entries(dir), 1, "only the file, no temporary");

	/* Replacing: the old content stays until the new one is complete. */
	af = atomic_file__open(path);
	if (ASSERT_OK_PTR(af, "reopen")) {
		fputs("second version\n", atomic_file__stream(af));
		ASSERT_STREQ(slurp(path), "hello\n", "old content while writing");
		ASSERT_OK(atomic_file__commit(af, 15), "commit replacement");
	}
	atomic_file__free(af);
	ASSERT_STREQ(slurp(path), "second version\n", "replaced");
	unlink(path);
	umask(old);
}

static void test_error_paths(void)
{
	char path[512], target[512];
	struct atomic_file *af;

	snprintf(path, sizeof(path), "%s/bad.txt", dir);

	/* Size check. */
	af = atomic_file__open(path);
	if (ASSERT_OK_PTR(af, "open")) {
		fputs("12345", atomic_file__stream(af));
		ASSERT_EQ(atomic_file__commit(af, 4), -EIO, "size mismatch refused");
		ASSERT_EQ(atomic_file__commit(af, 5), -EINVAL, "no second commit");
	}
	atomic_file__free(af);
	ASSERT_EQ(count_entries(dir), 0, "size mismatch leaves nothing");

	/* Abandoned. */
	af = atomic_file__open(path);
	if (ASSERT_OK_PTR(af, "open"))
		fputs("partial", atomic_file__stream(af));
	atomic_file__free(af);
	ASSERT_EQ(count_entries(dir), 0, "abandoned write leaves nothing");

	/* The fd broke under the stream: the flush fails. */
	af = atomic_file__open(path);
	if (ASSERT_OK_PTR(af, "open")) {
		FILE *f = atomic_file__stream(af);

		fputs("data", f);
		close(fileno(f));
		ASSERT_EQ(atomic_file__commit(af, 4), -EBADF, "bad fd reported");
	}
	atomic_file__free(af);
	ASSERT_EQ(count_entries(dir), 0, "I/O error leaves nothing");

	/* No directory. */
	snprintf(target, sizeof(target), "%s/missing/x", dir);
	errno = 0;
	ASSERT_TRUE(!atomic_file__open(target) && errno == ENOENT, "missing directory");
	errno = 0;
	ASSERT_TRUE(!atomic_file__open("") && errno == EINVAL, "empty path");

	/* A symlink at the final name is replaced, its target untouched. */
	snprintf(target, sizeof(target), "%s/target.txt", dir);
	FILE *t = fopen(target, "w");

	if (ASSERT_OK_PTR(t, "target")) {
		fputs("keep", t);
		fclose(t);
	}
	ASSERT_OK(symlink(target, path), "symlink");
	af = atomic_file__open(path);
	if (ASSERT_OK_PTR(af, "open over symlink")) {
		fputs("new", atomic_file__stream(af));
		ASSERT_OK(atomic_file__commit(af, 3), "commit over symlink");
	}
	atomic_file__free(af);
	ASSERT_STREQ(slurp(target), "keep", "symlink target not written through");
	struct stat st;

	ASSERT_TRUE(!lstat(path, &st) && S_ISREG(st.st_mode), "the link became the file");
	unlink(path);
	unlink(target);
}

int main(void)
{
	char cmd[600];

	if (!ASSERT_OK_PTR(mkdtemp(dir), "mkdtemp"))
		return test_exit();
	test_commit();
	test_error_paths();
	ASSERT_STREQ(io_error_reason(-ENOSPC), "disk full (no space left on device)",
		     "ENOSPC wording");
	ASSERT_STREQ(io_error_reason(EDQUOT), "disk quota exceeded", "EDQUOT wording");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return test_exit();
}
