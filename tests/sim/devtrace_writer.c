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
	struct devtrace_header *hdr;
	struct devtrace_name *names;
	struct devtrace_record *ring;
	__u64 capacity;
	__u64 seq;
	pthread_mutex_t names_lock;
};

static __u64 page_align(__u64 v)
{
	return (v + 4095) & ~4095ULL;
}

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
	__u32 name_cap = o->name_capacity ? o->name_capacity : 256;
	__u64 names_off = DEVTRACE_HEADER_SIZE;
	__u64 rec_off = page_align(names_off + (__u64)name_cap * DEVTRACE_NAME_SIZE);
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
	w->capacity = o->record_capacity;
	w->size = rec_off + w->capacity * DEVTRACE_RECORD_SIZE;

	w->fd = open(o->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0)
		goto fail;
	if (ftruncate(w->fd, (off_t)w->size))
		goto fail;
	w->map = mmap(NULL, w->size, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, 0);
	if (w->map == MAP_FAILED)
		goto fail;
	w->hdr = w->map;
	w->names = (void *)((char *)w->map + names_off);
	w->ring = (void *)((char *)w->map + rec_off);

	w->hdr->version = DEVTRACE_VERSION;
	w->hdr->header_size = DEVTRACE_HEADER_SIZE;
	w->hdr->record_size = DEVTRACE_RECORD_SIZE;
	w->hdr->name_size = DEVTRACE_NAME_SIZE;
	w->hdr->name_capacity = name_cap;
	w->hdr->core = o->core;
	w->hdr->names_offset = names_off;
	w->hdr->records_offset = rec_off;
	w->hdr->record_capacity = w->capacity;
	w->hdr->clock_rate_hz = o->clock_rate_hz;
	w->hdr->run_id = new_run_id();
	w->hdr->num_cores = o->num_cores;
	w->hdr->sync_host_ns = o->sync_host_ns;
	w->hdr->sync_device_ts = o->sync_device_ts;
	strncpy(w->hdr->device_kind, o->device_kind ? o->device_kind : "",
		sizeof(w->hdr->device_kind) - 1);
	w->hdr->device_id = o->device_id;
	w->hdr->owner_pid = o->owner_pid;
	/* The magic goes last: a reader that sees it sees a whole header. */
	__atomic_store_n(&w->hdr->magic, DEVTRACE_MAGIC, __ATOMIC_RELEASE);
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
		__atomic_fetch_or(&w->hdr->flags, DEVTRACE_F_CLOSED, __ATOMIC_RELEASE);
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
	__u32 id = DEVTRACE_NO_NAME;
	__u64 n, i;

	if (len > DEVTRACE_NAME_MAX)
		len = DEVTRACE_NAME_MAX;
	pthread_mutex_lock(&w->names_lock);
	n = w->hdr->name_count;
	for (i = 0; i < n; i++) {
		struct devtrace_name *e = &w->names[i];

		if (e->kind == kind && e->len == len && !memcmp(e->name, name, len)) {
			id = (__u32)i;
			goto out;
		}
	}
	if (n >= w->hdr->name_capacity) {
		w->hdr->names_dropped++;
		goto out;
	}
	w->names[n].id = (__u32)n;
	w->names[n].kind = (__u16)kind;
	w->names[n].len = (__u16)len;
	memset(w->names[n].name, 0, DEVTRACE_NAME_MAX);
	memcpy(w->names[n].name, name, len);
	__atomic_store_n(&w->hdr->name_count, n + 1, __ATOMIC_RELEASE);
	id = (__u32)n;
out:
	pthread_mutex_unlock(&w->names_lock);
	return id;
}

__u64 devtrace_writer__emit(struct devtrace_writer *w, const struct devtrace_record *rec)
{
	__u64 s = ++w->seq;
	struct devtrace_record *slot = &w->ring[(s - 1) % w->capacity];

	/* Claim the slot first: a reader that copied it meanwhile will see
	 * begin_seq past it and drop the copy. */
	__atomic_store_n(&w->hdr->begin_seq, s, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	memcpy((char *)slot + 8, (const char *)rec + 8, sizeof(*rec) - 8);
	__atomic_store_n(&slot->seq, s, __ATOMIC_RELEASE);
	__atomic_store_n(&w->hdr->write_seq, s, __ATOMIC_RELEASE);
	return s;
}

__u64 devtrace_writer__file_size(const struct devtrace_writer *w)
{
	return w->size;
}
