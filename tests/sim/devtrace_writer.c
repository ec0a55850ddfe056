// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One core's devtrace ring in a shared file mapping. The publication order is
 * the one docs/devtrace.md promises readers: header begin_seq := s, then the
 * slot (seq last), then header write_seq := s, each store ordered after the
 * one before.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "devtrace_writer.h"
#include <acceltrace/devtrace_publish.h>

_Static_assert(sizeof(struct devtrace_header) == 320, "devtrace header");
_Static_assert(sizeof(struct devtrace_record) == DEVTRACE_RECORD_SIZE, "record");
_Static_assert(sizeof(struct devtrace_name) == DEVTRACE_NAME_SIZE, "name");
_Static_assert(__builtin_offsetof(struct devtrace_header, write_seq) == 256, "write_seq");
_Static_assert(__builtin_offsetof(struct devtrace_header, name_count) == 192, "name_count");
_Static_assert(__builtin_offsetof(struct devtrace_header, begin_seq) == 264, "begin_seq");

struct devtrace_writer {
	int fd;
	void *map;
	__u64 size;
	struct devtrace_map m;	/* the publication order (devtrace_publish.h) */
	pthread_mutex_t names_lock;
};

static __u64 new_run_id(void)
{
	__u64 v = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &v, sizeof(v)) != sizeof(v))
			v = 0;
		close(fd);
	}
	return v ? v : ((__u64)getpid() << 32) ^ (__u64)(uintptr_t)&v;
}

struct devtrace_writer *devtrace_writer__new(const struct devtrace_writer_opts *o)
{
	struct devtrace_writer *w;
	struct devtrace_header *hdr;
	__u32 name_cap = o->name_capacity ? o->name_capacity : 256;
	int err;

	if (!o->record_capacity) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fd = -1;
	w->map = MAP_FAILED;
	pthread_mutex_init(&w->names_lock, NULL);
	w->size = devtrace_layout(name_cap, o->record_capacity, NULL, NULL);

	w->fd = open(o->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0)
		goto fail;
	if (ftruncate(w->fd, (off_t)w->size))
		goto fail;
	w->map = mmap(NULL, w->size, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0);
	if (w->map == MAP_FAILED)
		goto fail;
	hdr = w->map;
	devtrace_header__init_layout(hdr, name_cap, o->record_capacity);
	hdr->core = o->core;
	hdr->clock_rate_hz = o->clock_rate_hz;
	hdr->run_id = new_run_id();
	hdr->num_cores = o->num_cores;
	hdr->sync_host_ns = o->sync_host_ns;
	hdr->sync_device_ts = o->sync_device_ts;
	strncpy(hdr->device_kind, o->device_kind ? o->device_kind : "",
		sizeof(hdr->device_kind) - 1);
	hdr->device_id = o->device_id;
	hdr->owner_pid = o->owner_pid;
	devtrace_map__publish_header(&w->m, w->map);
	return w;
fail:
	err = errno;
	devtrace_writer__free(w);
	errno = err;
	return NULL;
}

void devtrace_writer__free(struct devtrace_writer *w)
{
	if (!w)
		return;
	if (w->map != MAP_FAILED) {
		devtrace_map__close(&w->m);
		munmap(w->map, w->size);
	}
	if (w->fd >= 0)
		close(w->fd);
	pthread_mutex_destroy(&w->names_lock);
	free(w);
}

__u32 devtrace_writer__name(struct devtrace_writer *w, int kind, const char *name)
{
	size_t len = strlen(name);
	__u32 id;
	__u64 n, i;

	if (len > DEVTRACE_NAME_MAX)
		len = DEVTRACE_NAME_MAX;
	pthread_mutex_lock(&w->names_lock);
	n = w->m.hdr->name_count;
	for (i = 0; i < n; i++) {
		struct devtrace_name *e = &w->m.names[i];

		if (e->kind == kind && e->len == len && !memcmp(e->name, name, len)) {
			pthread_mutex_unlock(&w->names_lock);
			return (__u32)i;
		}
	}
	id = devtrace_map__add_name(&w->m, kind, name, len);
	pthread_mutex_unlock(&w->names_lock);
	return id;
}

__u64 devtrace_writer__emit(struct devtrace_writer *w, const struct devtrace_record *rec)
{
	return devtrace_map__emit(&w->m, rec);
}

__u64 devtrace_writer__file_size(const struct devtrace_writer *w)
{
	return w->size;
}
