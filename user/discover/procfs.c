// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/{comm,task/TID/comm,fd,stat,mountinfo}: small reads, no caching here. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "discover/procfs.h"

int procfs_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[80];
	ssize_t n;
	int fd;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0) {
		buf[0] = '\0';
		return -EIO;
	}
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int procfs_parse_ppid(const char *line, pid_t *ppid)
{
	const char *close = strrchr(line, ')');
	char state;
	int parent;

	if (!close || sscanf(close + 1, " %c %d", &state, &parent) != 2 || parent < 0)
		return -EINVAL;
	*ppid = parent;
	return 0;
}

int procfs_ppid(pid_t pid, pid_t *ppid)
{
	char path[64], line[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -EIO : -EINVAL;
	line[n] = '\0';
	return procfs_parse_ppid(line, ppid);
}

int procfs_cgroup(pid_t pid, char *buf, size_t len)
{
	char path[64], line[4096], *first = NULL;
	int err = -ENOENT;
	FILE *f;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, ':');

		p = p ? strchr(p + 1, ':') : NULL;
		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		/* "0::PATH" is the unified (v2) hierarchy: the one to name. */
		if (!strncmp(line, "0::", 3)) {
			snprintf(buf, len, "%s", p + 1);
			err = 0;
			break;
		}
		if (!first) {
			snprintf(buf, len, "%s", p + 1);
			first = buf;
			err = 0;
		}
	}
	fclose(f);
	return err;
}

int procfs_owner_uid(pid_t pid, uid_t *uid)
{
	char dir[32];
	struct stat st;

	snprintf(dir, sizeof(dir), "/proc/%d", (int)pid);
	if (stat(dir, &st))
		return -errno;
	*uid = st.st_uid;
	return 0;
}

int procfs_reopen_own_fd(int fd, int flags)
{
	char self[64];
	int nfd;

	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	nfd = open(self, flags);
	return nfd < 0 ? -errno : nfd;
}

void procfs_root_path(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/%d/root", pid);
}

void procfs_map_file_path(pid_t pid, uint64_t start, uint64_t end, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/%d/map_files/%llx-%llx", pid, (unsigned long long)start,
		 (unsigned long long)end);
}

int procfs_read_file(const char *path, size_t max, char **buf, size_t *len)
{
	char *text = NULL;
	size_t cap = 0, used = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* A /proc file's size is known only once read. */
	while (used < max) {
		ssize_t n;

		if (used == cap && ARRAY_GROW(text, cap, cap ? 2 * cap : 16384)) {
			err = -ENOMEM;
			break;
		}
		n = read(fd, text + used, (cap < max ? cap : max) - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (!n)
			break;
		used += (size_t)n;
	}
	close(fd);
	if (err) {
		free(text);
		return err;
	}
	*buf = text;
	*len = used;
	return 0;
}

int procfs_environ(pid_t pid, char **env, size_t *len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/environ", pid);
	return procfs_read_file(path, PROCFS_ENVIRON_MAX, env, len);
}

int procfs_fd_path(pid_t pid, int fd, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	if (len < 2)
		return -EINVAL;
	snprintf(link, sizeof(link), "/proc/%d/fd/%d", pid, fd);
	n = readlink(link, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return n ? 0 : -ENOENT;
}

int procfs_for_each_fd(pid_t pid, int (*fn)(void *ctx, int fd, const char *target),
		       void *ctx)
{
	char dir[64], target[320];
	struct dirent *de;
	int ret = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while (!ret && (de = readdir(d))) {
		int fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		fd = atoi(de->d_name);
		if (procfs_fd_path(pid, fd, target, sizeof(target)))
			continue;
		ret = fn(ctx, fd, target);
	}
	closedir(d);
	return ret;
}

int procfs_io_reads(pid_t pid, uint64_t *calls, uint64_t *bytes)
{
	unsigned long long v;
	char path[64], line[128];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/io", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "rchar: %llu", &v) == 1) {
			*bytes = v;
			found |= 1;
		} else if (sscanf(line, "syscr: %llu", &v) == 1) {
			*calls = v;
			found |= 2;
		}
	}
	fclose(f);
	return found == 3 ? 0 : -EINVAL;
}

struct mount {
	uint64_t id;
	char type[48];
};

struct mount_table {
	struct mount *v;
	size_t n, cap;
};

/*
 * One line: "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE
 * SOURCE SUPER_OPTIONS"; the optional fields end at a lone "-". False for
 * a line that does not parse (or a type too long to be one we know).
 */
static bool mountinfo_line(const char *line, size_t len, struct mount *m)
{
	const char *sep, *type, *end = line + len;
	char *num_end;

	errno = 0;
	m->id = strtoull(line, &num_end, 10);
	if (errno || num_end == line || num_end >= end || *num_end != ' ')
		return false;
	for (sep = num_end; sep + 3 <= end; sep++)
		if (!memcmp(sep, " - ", 3))
			break;
	if (sep + 3 > end)
		return false;
	type = sep + 3;
	len = 0;
	while (type + len < end && type[len] != ' ')
		len++;
	if (!len || len >= sizeof(m->type))
		return false;
	memcpy(m->type, type, len);
	m->type[len] = '\0';
	return true;
}

struct mount_table *procfs_mount_table_parse(const char *text, size_t len)
{
	struct mount_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t line_len = nl ? (size_t)(nl - text) : len;
		struct mount m;

		if (mountinfo_line(text, line_len, &m)) {
			if (ARRAY_GROW(t->v, t->cap, t->n + 1)) {
				mount_table__free(t);
				errno = ENOMEM;
				return NULL;
			}
			t->v[t->n++] = m;
		}
		if (!nl)
			break;
		len -= line_len + 1;
		text = nl + 1;
	}
	return t;
}

struct mount_table *procfs_mount_table(pid_t pid)
{
	char path[64], *text = NULL;
	struct mount_table *t = NULL;
	size_t used = 0;
	int err;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/mountinfo");
	/* A host with thousands of mounts has a mountinfo of some hundreds
	 * of KiB. */
	err = procfs_read_file(path, PROCFS_READ_MAX, &text, &used);
	if (!err)
		t = procfs_mount_table_parse(text, used);
	free(text);
	if (err)
		errno = -err;
	return t;
}

void mount_table__free(struct mount_table *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}

const char *mount_table__type(const struct mount_table *t, uint64_t mnt_id)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (t->v[i].id == mnt_id)
			return t->v[i].type;
	return NULL;
}

bool procfs_pid_alive(pid_t pid)
{
	char path[64], buf[256], *close_paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) S ...": the state follows the last ')'. */
	close_paren = strrchr(buf, ')');
	return close_paren && close_paren[1] == ' ' &&
	       close_paren[2] != 'Z' && close_paren[2] != 'X';
}

pid_t procfs_ns_pid(pid_t pid, pid_t tid)
{
	char path[80], line[512];
	pid_t id = -ENOENT;
	FILE *f;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;
		long v;

		if (strncmp(line, "NSpid:", 6))
			continue;
		/* One id per nested namespace, outermost first: the last. */
		for (p = line + 6;; p = end) {
			v = strtol(p, &end, 10);
			if (end == p)
				break;
			if (v > 0 && v <= INT32_MAX)
				id = (pid_t)v;
		}
		break;
	}
	fclose(f);
	return id;
}

int procfs_for_each_ns_tid(pid_t pid, void (*fn)(void *ctx, pid_t tid, pid_t ns_tid),
			   void *ctx)
{
	char dir[64];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		pid_t ns;

		if (*end || tid <= 0 || tid > INT32_MAX)
			continue;
		ns = procfs_ns_pid(pid, (pid_t)tid);
		if (ns > 0)
			fn(ctx, (pid_t)tid, ns);
	}
	closedir(d);
	return 0;
}

int procfs_for_each_tid(pid_t pid, int (*fn)(void *ctx, pid_t tid), void *ctx)
{
	char dir[64];
	struct dirent *de;
	int ret = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while (!ret && (de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0 || tid > INT32_MAX)
			continue;
		ret = fn(ctx, (pid_t)tid);
	}
	closedir(d);
	return ret;
}

int procfs_self_run_delay(uint64_t *ns)
{
	unsigned long long on_cpu, delay;
	FILE *f = fopen("/proc/self/schedstat", "re");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%llu %llu", &on_cpu, &delay);
	fclose(f);
	if (n != 2)
		return -EINVAL;
	*ns = delay;
	return 0;
}

int procfs_parse_cpu_pressure(const char *text, double *some_avg10)
{
	double v;

	if (sscanf(text, "some avg10=%lf", &v) != 1 || !(v >= 0 && v <= 100))
		return -EINVAL;
	*some_avg10 = v;
	return 0;
}

int procfs_cpu_pressure(double *some_avg10)
{
	char buf[256];
	FILE *f = fopen("/proc/pressure/cpu", "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return procfs_parse_cpu_pressure(buf, some_avg10);
}

int procfs_self_exe(char *buf, size_t len)
{
	ssize_t n;

	if (!len)
		return -EINVAL;
	n = readlink("/proc/self/exe", buf, len - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n == len - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}
