// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * /proc/PID/maps parsing, address -> (file, offset) translation, the mapped
 * objects, process_read, and the mapped file opened by its mapping
 * (proc_map__open): the mapped inode after its name was taken by another
 * file, refused once the range maps another, refused for a device node,
 * found in another mount namespace. Synthetic lines cover the odd shapes; the live checks map files with
 * spaces in their names and deleted files in this process. The container
 * and chroot checks need root (unshare, pivot_root, chroot) and are skipped
 * without it; everything else runs unprivileged.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "test.h"
#include "discover/proc_maps.h"

static char tmpdir[4096];

static bool make_tmpdir(void)
{
	const char *bases[] = { getenv("TMPDIR"), "/tmp" };

	for (size_t i = 0; i < 2; i++) {
		if (!bases[i])
			continue;
		snprintf(tmpdir, sizeof(tmpdir), "%s/maps-test.XXXXXX", bases[i]);
		if (mkdtemp(tmpdir))
			return true;
	}
	return false;
}

static const char synthetic[] =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 fd:01 1054812                    /usr/bin/true\n"
	"55d0c0a02000-55d0c0a06000 r-xp 00002000 fd:01 1054812                    /usr/bin/true\n"
	"55d0c1e3a000-55d0c1e5b000 rw-p 00000000 00:00 0                          [heap]\n"
	"7f1a2b000000-7f1a2b001000 r--p 00000000 103:02 98765                     /opt/my libs/lib tpu.so\n"
	"7f1a2b001000-7f1a2b003000 r-xp 00001000 103:02 98765                     /opt/my libs/lib tpu.so\n"
	"7f1a2b003000-7f1a2b004000 rw-p 00003000 103:02 98765                     /opt/my libs/lib tpu.so\n"
	"7f1a2b004000-7f1a2b104000 rw-p 00000000 00:00 0 \n"
	"7f1a2c000000-7f1a2c001000 r-xs 00000000 00:05 4242                       /memfd:jit (deleted)\n"
	"7f1a2d000000-7f1a2d001000 r--p 00010000 08:11 18446744073709551615       /data/a\\012b.so\n"
	"7f1a2e000000-7f1a2e001000 rw-p 00000000 00:00 0                          [anon:pjrt arena]\n"
	"7ffd5e9e1000-7ffd5ea02000 rw-p 00000000 00:00 0                          [stack]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

static void test_synthetic(void)
{
	struct proc_maps *maps = proc_maps__parse(synthetic, strlen(synthetic));
	const struct proc_map *m;
	const struct proc_object *o;
	uint64_t off;

	if (!ASSERT_OK_PTR(maps, "parse synthetic"))
		return;
	ASSERT_EQ(proc_maps__count(maps), 12, "12 mappings");

	m = proc_maps__get(maps, 1);
	ASSERT_EQ(m->start, 0x55d0c0a02000ULL, "start");
	ASSERT_EQ(m->end, 0x55d0c0a06000ULL, "end");
	ASSERT_EQ(m->offset, 0x2000, "offset");
	ASSERT_EQ(m->dev_major, 0xfd, "dev major");
	ASSERT_EQ(m->dev_minor, 1, "dev minor");
	ASSERT_EQ(m->inode, 1054812, "inode");
	ASSERT_TRUE(m->r && !m->w && m->x && !m->shared, "perms r-xp");
	ASSERT_STREQ(m->path, "/usr/bin/true", "path");

	m = proc_maps__get(maps, 2);
	ASSERT_STREQ(m->path, "[heap]", "heap name");
	ASSERT_FALSE(proc_map__is_file(m), "heap is not a file");

	m = proc_maps__get(maps, 4);
	ASSERT_STREQ(m->path, "/opt/my libs/lib tpu.so", "path with spaces");
	ASSERT_EQ(m->dev_major, 0x103, "3-digit dev major");
	ASSERT_TRUE(proc_map__is_file(m), "file mapping");

	m = proc_maps__get(maps, 6);
	ASSERT_STREQ(m->path, "", "anonymous: empty name");
	ASSERT_EQ(m->inode, 0, "anonymous: inode 0");

	m = proc_maps__get(maps, 7);
	ASSERT_STREQ(m->path, "/memfd:jit", "deleted suffix removed");
	ASSERT_TRUE(m->deleted, "deleted");
	ASSERT_TRUE(m->shared, "shared mapping");

	m = proc_maps__get(maps, 8);
	ASSERT_STREQ(m->path, "/data/a\nb.so", "newline restored");
	ASSERT_EQ(m->inode, UINT64_MAX, "64-bit inode");

	ASSERT_STREQ(proc_maps__get(maps, 9)->path, "[anon:pjrt arena]", "named anonymous");
	m = proc_maps__get(maps, 11);
	ASSERT_EQ(m->start, 0xffffffffff600000ULL, "64-bit start");
	ASSERT_TRUE(!m->r && m->x, "--xp");
	ASSERT_TRUE(proc_maps__get(maps, 12) == NULL, "past the end");

	/* find: inside, at the first byte, at end (exclusive), in a gap. */
	ASSERT_TRUE(proc_maps__find(maps, 0x7f1a2b001000ULL) == proc_maps__get(maps, 4), "find first byte");
	ASSERT_TRUE(proc_maps__find(maps, 0x7f1a2b002fffULL) == proc_maps__get(maps, 4), "find last byte");
	ASSERT_TRUE(proc_maps__find(maps, 0x7f1a2b003000ULL) == proc_maps__get(maps, 5), "end is exclusive");
	ASSERT_TRUE(proc_maps__find(maps, 0x1000) == NULL, "below everything");
	ASSERT_TRUE(proc_maps__find(maps, 0x7f1a2b900000ULL) == NULL, "in a gap");

	/* addr -> file offset */
	ASSERT_OK(proc_maps__addr_to_file_offset(maps, 0x7f1a2b001234ULL, &m, &off), "to offset");
	ASSERT_EQ(off, 0x1234, "offset = addr - start + map offset");
	ASSERT_STREQ(m->path, "/opt/my libs/lib tpu.so", "its file");
	ASSERT_OK(proc_maps__addr_to_file_offset(maps, 0x7f1a2d000010ULL, NULL, &off), "offset base");
	ASSERT_EQ(off, 0x10010, "mapping offset added");
	ASSERT_EQ(proc_maps__addr_to_file_offset(maps, 0x55d0c1e3a010ULL, NULL, &off), -ENXIO, "heap: ENXIO");
	ASSERT_EQ(proc_maps__addr_to_file_offset(maps, 0x7f1a2b004100ULL, NULL, &off), -ENXIO, "anon: ENXIO");
	ASSERT_EQ(proc_maps__addr_to_file_offset(maps, 0x10, NULL, &off), -ENOENT, "unmapped: ENOENT");

	/* objects: true, lib tpu.so (3 mappings), memfd, a\nb.so */
	ASSERT_EQ(proc_maps__object_count(maps), 4, "4 objects");
	o = proc_maps__object(maps, 1);
	if (ASSERT_OK_PTR(o, "object 1")) {
		ASSERT_STREQ(o->path, "/opt/my libs/lib tpu.so", "object path");
		ASSERT_EQ(o->nmaps, 3, "three mappings");
		ASSERT_EQ(o->first, 3, "first mapping");
		ASSERT_EQ(o->last, 5, "last mapping");
		ASSERT_EQ(o->start, 0x7f1a2b000000ULL, "object start");
		ASSERT_EQ(o->end, 0x7f1a2b004000ULL, "object end");
		ASSERT_TRUE(proc_maps__object_of(maps, proc_maps__get(maps, 4)) == o, "object_of");
	}
	ASSERT_TRUE(proc_maps__object_of(maps, proc_maps__get(maps, 6)) == NULL, "anon: no object");
	ASSERT_TRUE(proc_maps__object(maps, 2)->deleted, "deleted object");
	proc_maps__free(maps);

	/* Unsorted input is sorted; bad lines are refused. */
	{
		const char *two = "7f0000002000-7f0000003000 r--p 00000000 00:00 0\n"
				  "7f0000000000-7f0000001000 r--p 00000000 00:00 0\n";

		maps = proc_maps__parse(two, strlen(two));
		if (ASSERT_OK_PTR(maps, "parse unsorted"))
			ASSERT_EQ(proc_maps__get(maps, 0)->start, 0x7f0000000000ULL, "sorted");
		proc_maps__free(maps);
	}
	{
		const char *bad[] = {
			"7f0000002000 r--p 00000000 00:00 0\n",
			"7f0000002000-7f0000003000 rqxp 00000000 00:00 0\n",
			"7f0000002000-7f0000003000 r--z 00000000 00:00 0\n",
			"7f0000003000-7f0000002000 r--p 00000000 00:00 0\n",
			"garbage\n",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			errno = 0;
			maps = proc_maps__parse(bad[i], strlen(bad[i]));
			ASSERT_TRUE(!maps && errno == EINVAL, bad[i]);
			proc_maps__free(maps);
		}
	}
	maps = proc_maps__parse("", 0);
	if (ASSERT_OK_PTR(maps, "empty"))
		ASSERT_EQ(proc_maps__count(maps), 0, "no mappings");
	proc_maps__free(maps);
	proc_maps__free(NULL);
}

/* A file of npages pages, byte i = (i * 7 + page) & 0xff. */
static int make_file(const char *path, int npages)
{
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *buf = malloc(pg);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || !buf) {
		free(buf);
		return -1;
	}
	for (int p = 0; p < npages; p++) {
		for (long i = 0; i < pg; i++)
			buf[i] = (i * 7 + p) & 0xff;
		if (write(fd, buf, pg) != pg) {
			close(fd);
			free(buf);
			return -1;
		}
	}
	free(buf);
	return fd;
}

/* The file an O_PATH descriptor names, for reading. */
static int open_self_fd(int pfd)
{
	char self[64];

	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	return open(self, O_RDONLY | O_CLOEXEC);
}

/*
 * Root only: the file behind a mapping is opened by the mapping, never by
 * its name. With another file renamed over the name after maps was read,
 * the mapped inode is still what opens, and its bytes are the mapped ones;
 * with the range remapped to another file, the old snapshot's mapping is
 * refused (the uprobe offsets it gave would be another file's).
 */
static void check_open_by_mapping(const struct proc_map *m, const char *name,
				  const unsigned char *mapped, uint64_t off)
{
	char swapped[4300];
	unsigned char byte = 0;
	struct stat st;
	int pfd, fd, other;
	void *again;

	snprintf(swapped, sizeof(swapped), "%s.new", name);
	static unsigned char fill[4 * 65536];

	memset(fill, 0xee, sizeof(fill));
	other = make_file(swapped, 4);
	if (!ASSERT_GE(other, 0, "a second file") ||
	    !ASSERT_EQ(pwrite(other, fill, 4 * sysconf(_SC_PAGESIZE), 0),
		       4 * sysconf(_SC_PAGESIZE), "other bytes in it") ||
	    !ASSERT_OK(rename(swapped, name), "rename it over the mapped name"))
		return;
	pfd = proc_map__open(0, m, &st);
	if (ASSERT_GE(pfd, 0, "open by the mapping after the swap")) {
		ASSERT_EQ(st.st_ino, m->inode, "the mapped inode, not the one named now");
		fd = open_self_fd(pfd);
		ASSERT_EQ(pread(fd, &byte, 1, off), 1, "read it");
		ASSERT_EQ(byte, *mapped, "its bytes are the mapped ones");
		close(fd);
		close(pfd);
	}
	/* The same range, now mapping the file that took the name. */
	again = mmap((void *)(uintptr_t)m->start, m->end - m->start, PROT_READ,
		     MAP_PRIVATE | MAP_FIXED, other, 0);
	if (ASSERT_TRUE(again != MAP_FAILED, "remap the range"))
		ASSERT_EQ(proc_map__open(0, m, &st), -ESTALE,
			  "a snapshot's mapping that maps another file now: refused");
	close(other);
}

/* Root only: a device node mapped (as a hostile process could name one as
 * its library) is refused, with no open of it run. */
static void check_device_mapping(void)
{
	struct proc_maps *maps;
	const struct proc_map *m;
	struct stat st;
	void *p;
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);

	if (!ASSERT_GE(fd, 0, "open /dev/zero"))
		return;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (!ASSERT_TRUE(p != MAP_FAILED, "map /dev/zero"))
		return;
	maps = proc_maps__read(0);
	m = maps ? proc_maps__find(maps, (uintptr_t)p) : NULL;
	if (m && proc_map__is_file(m))
		ASSERT_EQ(proc_map__open(0, m, &st), -ENOTSUP, "a device node's mapping: refused");
	else
		printf("note: /dev/zero's private mapping shows no file here; not checked\n");
	proc_maps__free(maps);
	munmap(p, 4096);
}

static void test_live(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char spaced[4200], gone[4200], exe[4096];
	const struct proc_map *m;
	const struct proc_object *o;
	struct proc_maps *maps;
	unsigned char *a, *b, byte;
	struct stat st, ds;
	uint64_t off;
	int stack_var = 1, fd, fd2;
	ssize_t n;

	snprintf(spaced, sizeof(spaced), "%s/my lib (v1) .so", tmpdir);
	snprintf(gone, sizeof(gone), "%s/gone.so", tmpdir);
	fd = make_file(spaced, 4);
	fd2 = make_file(gone, 2);
	if (!ASSERT_TRUE(fd >= 0 && fd2 >= 0, "make files"))
		return;
	/* Map pages 1-2 of the spaced file, and the deleted one whole. */
	a = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE, fd, pg);
	b = mmap(NULL, 2 * pg, PROT_READ, MAP_PRIVATE, fd2, 0);
	if (!ASSERT_TRUE(a != MAP_FAILED && b != MAP_FAILED, "mmap files"))
		return;
	fstat(fd, &st);
	unlink(gone);

	maps = proc_maps__read(0);
	if (!ASSERT_OK_PTR(maps, "read own maps"))
		return;

	m = proc_maps__find(maps, (uintptr_t)a + 100);
	if (ASSERT_OK_PTR(m, "spaced mapping")) {
		ASSERT_STREQ(m->path, spaced, "path with spaces and parentheses");
		ASSERT_FALSE(m->deleted, "not deleted");
		ASSERT_EQ(m->offset, pg, "mapping offset");
		ASSERT_EQ(m->inode, st.st_ino, "inode = stat");
		ASSERT_EQ(makedev(m->dev_major, m->dev_minor), st.st_dev, "dev = stat");
		ASSERT_TRUE(m->r && !m->w && !m->x && !m->shared, "r--p");
	}
	/* Round trip: address -> file offset -> the same byte in the file. */
	ASSERT_OK(proc_maps__addr_to_file_offset(maps, (uintptr_t)a + pg + 123, &m, &off), "to offset");
	ASSERT_EQ(off, 2 * pg + 123, "file offset");
	ASSERT_EQ(pread(fd, &byte, 1, off), 1, "pread");
	ASSERT_EQ(byte, a[pg + 123], "file byte = mapped byte");
	if (geteuid() == 0)
		check_open_by_mapping(m, spaced, a + pg + 123, off);

	m = proc_maps__find(maps, (uintptr_t)b);
	if (ASSERT_OK_PTR(m, "deleted mapping")) {
		ASSERT_STREQ(m->path, gone, "deleted: path without the suffix");
		ASSERT_TRUE(m->deleted, "deleted flag");
		if (geteuid() == 0) {
			int pfd = proc_map__open(0, m, &ds);

			if (ASSERT_GE(pfd, 0, "open a deleted file by its mapping"))
				close(pfd);
			ASSERT_EQ(ds.st_ino, m->inode, "map_files reaches the deleted inode");
		}
	}

	/* The stack and anonymous memory. */
	m = proc_maps__find(maps, (uintptr_t)&stack_var);
	if (ASSERT_OK_PTR(m, "stack mapping"))
		ASSERT_STREQ(m->path, "[stack]", "stack");
	ASSERT_EQ(proc_map__open(0, m, &ds), -ENXIO, "stack: no file");
	if (geteuid() == 0)
		check_device_mapping();

	/* Objects: this binary once, files distinct by inode. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (ASSERT_GE(n, 1, "readlink exe")) {
		size_t seen = 0;

		exe[n] = '\0';
		for (size_t i = 0; i < proc_maps__object_count(maps); i++) {
			o = proc_maps__object(maps, i);
			if (!strcmp(o->path, exe))
				seen++;
			for (size_t j = 0; j < i; j++) {
				const struct proc_object *p = proc_maps__object(maps, j);

				ASSERT_FALSE(p->inode == o->inode && p->dev_major == o->dev_major &&
					     p->dev_minor == o->dev_minor, "objects distinct");
			}
		}
		ASSERT_EQ(seen, 1, "the test binary is one object");
		m = proc_maps__find(maps, (uintptr_t)&test_live);
		if (ASSERT_OK_PTR(m, "own text")) {
			ASSERT_TRUE(m->x, "text is executable");
			o = proc_maps__object_of(maps, m);
			ASSERT_TRUE(o && !strcmp(o->path, exe), "text belongs to the test binary");
		}
	}

	proc_maps__free(maps);
	munmap(a, 2 * pg);
	munmap(b, 2 * pg);
	close(fd);
	close(fd2);
	unlink(spaced);
}

static void test_read(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char buf[64], want[64] = "acceltrace reads process memory";
	unsigned char *two, tail[32];
	int pipefd[2];
	pid_t child;

	ASSERT_OK(process_read(0, (uintptr_t)want, buf, sizeof(want)), "read self");
	ASSERT_TRUE(!memcmp(buf, want, sizeof(want)), "same bytes");
	ASSERT_OK(process_read(getpid(), (uintptr_t)want, buf, 0), "zero bytes");
	ASSERT_EQ(process_read(0, 16, buf, 8), -EFAULT, "unmapped: EFAULT");

	/* A read that runs off the end of a mapping stops short: EFAULT. */
	two = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ASSERT_TRUE(two != MAP_FAILED, "mmap two pages")) {
		memset(two, 0xab, 2 * pg);
		munmap(two + pg, pg);
		ASSERT_OK(process_read(0, (uintptr_t)two + pg - 16, tail, 16), "up to the edge");
		ASSERT_EQ(process_read(0, (uintptr_t)two + pg - 16, tail, 32), -EFAULT,
			  "across the edge: EFAULT");
		munmap(two, pg);
	}

	/* Another process: a child changes its copy, we read the child's. */
	if (!ASSERT_OK(pipe(pipefd), "pipe"))
		return;
	child = fork();
	if (child == 0) {
		strcpy(want, "the child's own bytes");
		if (write(pipefd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (ASSERT_GE(child, 1, "fork")) {
		char c;

		ASSERT_EQ(read(pipefd[0], &c, 1), 1, "child ready");
		if (ASSERT_OK(process_read(child, (uintptr_t)want, buf, sizeof(want)), "read child"))
			ASSERT_STREQ(buf, "the child's own bytes", "child's bytes");
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		/* Gone: no such process. */
		ASSERT_TRUE(process_read(child, (uintptr_t)want, buf, 8) < 0, "dead child");
		errno = 0;
		ASSERT_TRUE(!proc_maps__read(child) && errno == ENOENT, "maps of a dead process");
	}
	close(pipefd[0]);
	close(pipefd[1]);
}

/*
 * Root only: a child in its own mount namespace with its own root (as in a
 * container: unshare, tmpfs, pivot_root) maps a file; we must open it through
 * /proc/CHILD/root. A second child chroots inside our namespace: the kernel
 * prints its paths from our root, so the plain path is right.
 */
static int container_child(int ready_fd, const char *newroot, bool pivot)
{
	char path[4200];
	void *p;
	int fd;

	if (pivot) {
		char old[4300];

		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", newroot, "tmpfs", 0, "size=1m"))
			return 10;
		snprintf(old, sizeof(old), "%s/old", newroot);
		if (mkdir(old, 0700) || syscall(SYS_pivot_root, newroot, old) ||
		    chdir("/") || umount2("/old", MNT_DETACH))
			return 11;
		snprintf(path, sizeof(path), "/lib in container.so");
	} else {
		if (chroot(newroot) || chdir("/"))
			return 12;
		snprintf(path, sizeof(path), "/lib in chroot.so");
	}
	fd = make_file(path, 1);
	if (fd < 0)
		return 13;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 14;
	if (write(ready_fd, &p, sizeof(p)) != sizeof(p))
		return 15;
	pause();
	return 0;
}

static void check_other_root(bool pivot)
{
	char newroot[4200], path[4300], want[4300];
	const struct proc_map *m;
	struct proc_maps *maps;
	int pipefd[2], status;
	struct stat st;
	void *addr = NULL;
	pid_t child;

	snprintf(newroot, sizeof(newroot), "%s/root-%s", tmpdir, pivot ? "pivot" : "chroot");
	if (mkdir(newroot, 0755) || pipe(pipefd))
		return;
	child = fork();
	if (child == 0) {
		close(pipefd[0]);
		_exit(container_child(pipefd[1], newroot, pivot));
	}
	close(pipefd[1]);
	if (read(pipefd[0], &addr, sizeof(addr)) != sizeof(addr)) {
		waitpid(child, &status, 0);
		test_skip_part("%s child could not set up (exit %d); check skipped",
		       pivot ? "pivot_root" : "chroot", WEXITSTATUS(status));
		close(pipefd[0]);
		rmdir(newroot);
		return;
	}
	close(pipefd[0]);

	ASSERT_EQ(proc_root_differs(child), 1, "child's root differs");
	maps = proc_maps__read(child);
	m = maps ? proc_maps__find(maps, (uintptr_t)addr) : NULL;
	if (ASSERT_OK_PTR(m, "child's file mapping")) {
		int pfd, fd;
		char head[8] = "";

		if (pivot) {
			/* The kernel prints the container's own path. */
			ASSERT_STREQ(m->path, "/lib in container.so", "path as the container sees it");
		} else {
			snprintf(want, sizeof(want), "%s/lib in chroot.so", newroot);
			ASSERT_STREQ(m->path, want, "chroot: path from our root");
		}
		/* By the mapping, in whichever mount namespace it lies (a
		 * tmpfs only the container's namespace has). */
		pfd = proc_map__open(child, m, &st);
		if (ASSERT_GE(pfd, 0, pivot ? "container: opened by its mapping"
					    : "chroot: opened by its mapping")) {
			ASSERT_EQ(st.st_ino, m->inode, "the mapped inode");
			fd = open_self_fd(pfd);
			ASSERT_EQ(pread(fd, head, sizeof(head), 0), (ssize_t)sizeof(head), "read it");
			ASSERT_TRUE(head[1] == 7 && head[2] == 14, "its bytes (make_file's)");
			close(fd);
			close(pfd);
		}
	}
	proc_maps__free(maps);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	if (!pivot) {
		snprintf(path, sizeof(path), "%s/lib in chroot.so", newroot);
		unlink(path);
	}
	rmdir(newroot);
}

int main(void)
{
	test_synthetic();
	if (!make_tmpdir()) {
		printf("SKIP: cannot make a temporary directory\n");
		return TEST_SKIP;
	}
	test_live();
	test_read();
	ASSERT_EQ(proc_root_differs(0), 0, "our own root");
	ASSERT_EQ(proc_root_differs(getpid()), 0, "our own root by pid");
	if (geteuid() == 0) {
		check_other_root(true);
		check_other_root(false);
	} else {
		test_skip_part("not root; the container and chroot checks did not run");
	}
	rmdir(tmpdir);
	return test_exit();
}
