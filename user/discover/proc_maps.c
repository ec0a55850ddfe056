// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* /proc/PID/maps and process memory reads: see proc_maps.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#define LOG_CONTEXT "maps"
#include "lib/log.h"
#include "discover/proc_maps.h"
#include "discover/safe_open.h"

#define DELETED_SUFFIX " (deleted)"

struct proc_maps {
	struct proc_map *maps;
	size_t n;
	struct proc_object *objs;
	size_t nobjs;
	/* For each mapping, its object's index + 1 (0: not a file). */
	size_t *obj_of;
};

bool proc_map__is_file(const struct proc_map *m)
{
	return m->inode != 0 && m->path[0] == '/';
}

void proc_maps__free(struct proc_maps *maps)
{
	if (!maps)
		return;
	for (size_t i = 0; i < maps->n; i++)
		free((char *)maps->maps[i].path);
	free(maps->maps);
	free(maps->objs);
	free(maps->obj_of);
	free(maps);
}

/* The kernel escapes only '\n' in map names, as "\012". */
static void unescape_newlines(char *s)
{
	char *w = s;

	for (const char *r = s; *r; ) {
		if (r[0] == '\\' && r[1] == '0' && r[2] == '1' && r[3] == '2') {
			*w++ = '\n';
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

/*
 * One line: "START-END PERMS OFFSET MAJ:MIN INODE[ spaces PATH]". The path
 * is the rest of the line, spaces and all.
 */
static int parse_line(const char *line, size_t len, struct proc_map *m)
{
	char perms[5] = {};
	char *path;
	int pos = -1;
	size_t plen;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4c %" SCNx64 " %" SCNx32
		   ":%" SCNx32 " %" SCNu64 "%n", &m->start, &m->end, perms,
		   &m->offset, &m->dev_major, &m->dev_minor, &m->inode,
		   &pos) != 7 || pos < 0 || (size_t)pos > len)
		return -EINVAL;
	if (m->end < m->start)
		return -EINVAL;
	for (int i = 0; i < 3; i++)
		if (perms[i] != "rwx"[i] && perms[i] != '-')
			return -EINVAL;
	if (perms[3] != 'p' && perms[3] != 's')
		return -EINVAL;
	m->r = perms[0] == 'r';
	m->w = perms[1] == 'w';
	m->x = perms[2] == 'x';
	m->shared = perms[3] == 's';

	line += pos;
	len -= pos;
	/* Padding between the inode and the name; a file name starts at '/'. */
	while (len && *line == ' ') {
		line++;
		len--;
	}
	path = strndup(line, len);
	if (!path)
		return -ENOMEM;
	plen = strlen(path);
	m->deleted = false;
	if (m->inode && plen > strlen(DELETED_SUFFIX) &&
	    !strcmp(path + plen - strlen(DELETED_SUFFIX), DELETED_SUFFIX)) {
		path[plen - strlen(DELETED_SUFFIX)] = '\0';
		m->deleted = true;
	}
	unescape_newlines(path);
	m->path = path;
	return 0;
}

static int cmp_start(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int build_objects(struct proc_maps *maps)
{
	maps->obj_of = calloc(maps->n ? maps->n : 1, sizeof(*maps->obj_of));
	maps->objs = calloc(maps->n ? maps->n : 1, sizeof(*maps->objs));
	if (!maps->obj_of || !maps->objs)
		return -ENOMEM;

	for (size_t i = 0; i < maps->n; i++) {
		const struct proc_map *m = &maps->maps[i];
		struct proc_object *o = NULL;
		size_t j;

		if (!proc_map__is_file(m))
			continue;
		/* Recently seen objects first: mappings of one file are near. */
		for (j = maps->nobjs; j-- > 0; ) {
			struct proc_object *c = &maps->objs[j];

			if (c->inode == m->inode && c->dev_major == m->dev_major &&
			    c->dev_minor == m->dev_minor) {
				o = c;
				break;
			}
		}
		if (!o) {
			j = maps->nobjs++;
			o = &maps->objs[j];
			*o = (struct proc_object){
				.path = m->path,
				.inode = m->inode,
				.dev_major = m->dev_major,
				.dev_minor = m->dev_minor,
				.deleted = m->deleted,
				.start = m->start,
				.end = m->end,
				.first = i,
			};
		}
		if (m->end > o->end)
			o->end = m->end;
		o->last = i;
		o->nmaps++;
		maps->obj_of[i] = j + 1;
	}
	return 0;
}

struct proc_maps *proc_maps__parse(const char *text, size_t len)
{
	struct proc_maps *maps;
	size_t cap = 0;
	int err = 0;

	maps = calloc(1, sizeof(*maps));
	if (!maps)
		return NULL;

	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t line_len = nl ? (size_t)(nl - text) : len;

		if (line_len) {
			char *line;

			if (maps->n == cap) {
				size_t ncap = cap ? 2 * cap : 64;
				struct proc_map *n = realloc(maps->maps,
							     ncap * sizeof(*n));

				if (!n) {
					err = -ENOMEM;
					goto cleanup;
				}
				maps->maps = n;
				cap = ncap;
			}
			/* sscanf needs a terminated string. */
			line = strndup(text, line_len);
			if (!line) {
				err = -ENOMEM;
				goto cleanup;
			}
			err = parse_line(line, line_len, &maps->maps[maps->n]);
			if (err) {
				log_debug("cannot parse maps line '%s'", line);
				free(line);
				goto cleanup;
			}
			free(line);
			maps->n++;
		}
		if (!nl)
			break;
		len -= line_len + 1;
		text = nl + 1;
	}
	if (maps->n)
		qsort(maps->maps, maps->n, sizeof(*maps->maps), cmp_start);
	err = build_objects(maps);
	if (err)
		goto cleanup;
	return maps;

cleanup:
	proc_maps__free(maps);
	errno = -err;
	return NULL;
}

/* Reads a whole /proc file; its size is unknown until read. */
static int read_all(const char *path, char **out, size_t *out_len)
{
	size_t cap = 64 * 1024, len = 0;
	char *buf = NULL;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				err = -ENOMEM;
				goto cleanup;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto cleanup;
		}
		if (n == 0)
			break;
		len += n;
	}
	*out = buf;
	*out_len = len;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

struct proc_maps *proc_maps__read(pid_t pid)
{
	struct proc_maps *maps;
	char path[64];
	char *text = NULL;
	size_t len = 0;
	int err;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	err = read_all(path, &text, &len);
	if (err) {
		log_debug("cannot read %s: %s", path, strerror(-err));
		errno = -err;
		return NULL;
	}
	maps = proc_maps__parse(text, len);
	err = maps ? 0 : -errno;
	free(text);
	if (err)
		errno = -err;
	return maps;
}

size_t proc_maps__count(const struct proc_maps *maps)
{
	return maps->n;
}

const struct proc_map *proc_maps__get(const struct proc_maps *maps, size_t i)
{
	return i < maps->n ? &maps->maps[i] : NULL;
}

size_t proc_maps__index(const struct proc_maps *maps, const struct proc_map *m)
{
	return m - maps->maps;
}

const struct proc_map *proc_maps__find(const struct proc_maps *maps,
				       uint64_t addr)
{
	size_t lo = 0, hi = maps->n;

	/* The last mapping starting at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (addr < maps->maps[lo - 1].end)
		return &maps->maps[lo - 1];
	return NULL;
}

int proc_maps__addr_to_file_offset(const struct proc_maps *maps, uint64_t addr,
				   const struct proc_map **map,
				   uint64_t *offset)
{
	const struct proc_map *m = proc_maps__find(maps, addr);

	if (!m)
		return -ENOENT;
	if (!proc_map__is_file(m))
		return -ENXIO;
	if (map)
		*map = m;
	*offset = addr - m->start + m->offset;
	return 0;
}

size_t proc_maps__object_count(const struct proc_maps *maps)
{
	return maps->nobjs;
}

const struct proc_object *proc_maps__object(const struct proc_maps *maps,
					    size_t i)
{
	return i < maps->nobjs ? &maps->objs[i] : NULL;
}

const struct proc_object *proc_maps__object_of(const struct proc_maps *maps,
					       const struct proc_map *m)
{
	size_t i = m - maps->maps;

	if (i >= maps->n || !maps->obj_of[i])
		return NULL;
	return &maps->objs[maps->obj_of[i] - 1];
}

/* ---------------------------------------------------------------- roots */

int proc_root_differs(pid_t pid)
{
	struct stat theirs, ours;
	char path[64];

	if (!pid || pid == getpid())
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	if (stat(path, &theirs))
		return -errno;
	if (stat("/", &ours))
		return -errno;
	return theirs.st_dev != ours.st_dev || theirs.st_ino != ours.st_ino;
}

int proc_map__open(pid_t pid, const struct proc_map *m, struct stat *st)
{
	struct safe_open_want want = {
		.same_file = true,
		.dev = makedev(m->dev_major, m->dev_minor),
		.ino = m->inode,
	};
	char path[96];

	if (!proc_map__is_file(m))
		return -ENXIO;
	if (!pid)
		pid = getpid();
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 m->start, m->end);
	return safe_open(pid, path, &want, st);
}

/* ---------------------------------------------------------------- memory */

int process_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	size_t done = 0;
	char path[64];
	int fd, vm_err = 0, err = 0;
	ssize_t n;

	if (!len)
		return 0;
	if (!pid)
		pid = getpid();

	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		vm_err = errno;
	else
		done = n;
	if (done == len)
		return 0;

	/*
	 * Refused (seccomp often blocks process_vm_readv in containers), or
	 * stopped at an unreadable page: /proc/PID/mem says which.
	 */
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (vm_err == EFAULT || (vm_err == 0 && done))
			return -EFAULT;
		return vm_err && vm_err != ENOSYS ? -vm_err : err;
	}
	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, (off_t)(addr + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = errno == EIO ? -EFAULT : -errno;
			break;
		}
		if (n == 0) {
			err = -EFAULT;
			break;
		}
		done += n;
	}
	close(fd);
	return err;
}
