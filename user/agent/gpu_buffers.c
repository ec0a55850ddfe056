// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Devtrace buffers of the process's GPUs (gpu_buffers.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/types.h>

#include "acceltrace/devtrace.h"
#include "acceltrace/devtrace_publish.h"
#include "agent/agent_files.h"
#include "agent/gpu_buffers.h"
#include "agent/name_index.h"

/* 8 MiB of records a device: at 30k records/s (a PyTorch loop's kernels,
 * copies and launches) four seconds between reads before any is lost. */
#define RING_RECORDS (128u << 10)
#define NAME_ENTRIES 16384u
#define CUPTI_CLOCK_HZ 1000000000ull	/* CUPTI's timestamps are ns */

struct gpu_buffer {
	void *map;
	uint64_t size;
	struct devtrace_map m;
	struct name_index index;
};

struct gpu_buffers {
	pthread_mutex_t lock;	/* one writer a buffer at a time */
	unsigned int n;
	struct gpu_buffer *bufs;
	uint64_t records;
	char *(*demangle)(const char *, char *, size_t *, int *);
};

static int buffer_init(struct gpu_buffer *g, unsigned int device,
		       const struct gpu_device_info *info, uint64_t dev_ts, uint64_t host_ns)
{
	struct devtrace_header *h;
	char what[32];

	g->size = devtrace_layout(NAME_ENTRIES, RING_RECORDS, NULL, NULL);
	if (name_index__init(&g->index, NAME_ENTRIES))
		return -ENOMEM;
	snprintf(what, sizeof(what), "gpu%u.devtrace", device);
	g->map = agent_map_new_file(what, g->size);
	if (!g->map)
		return -errno;
	h = g->map;
	devtrace_header__init_layout(h, NAME_ENTRIES, RING_RECORDS);
	h->core = 0;
	h->num_cores = 1;
	h->clock_rate_hz = CUPTI_CLOCK_HZ;
	/* A new run each time a process makes its buffers. */
	h->run_id = ((uint64_t)getpid() << 32) ^ host_ns ^ ((uint64_t)device << 56);
	if (!h->run_id)
		h->run_id = 1;
	h->flags = DEVTRACE_F_STREAMS;
	h->sync_host_ns = host_ns;
	h->sync_device_ts = dev_ts;
	memcpy(h->device_kind, info->name, sizeof(h->device_kind) - 1);
	memcpy(h->platform, "GPU", 4);
	h->device_id = device;
	h->owner_pid = (__u32)getpid();
	devtrace_map__publish_header(&g->m, g->map);
	return 0;
}

struct gpu_buffers *gpu_buffers__new(unsigned int n, const struct gpu_device_info *info,
				     uint64_t sync_device_ts, uint64_t sync_host_ns)
{
	struct gpu_buffers *b;
	void *cxx;
	int err;

	if (!n) {
		errno = ENODEV;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	pthread_mutex_init(&b->lock, NULL);
	b->bufs = calloc(n, sizeof(*b->bufs));
	if (!b->bufs) {
		err = ENOMEM;
		goto fail;
	}
	b->n = n;
	for (unsigned int i = 0; i < n; i++) {
		err = -buffer_init(&b->bufs[i], i, &info[i], sync_device_ts, sync_host_ns);
		if (err)
			goto fail;
	}
	/* Demangled as the framework's profilers show kernels, by the
	 * process's own C++ runtime if it has one (CUDA processes do; often
	 * loaded RTLD_LOCAL, so asked by name). */
	cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_NOLOAD);
	*(void **)&b->demangle = dlsym(cxx ? cxx : RTLD_DEFAULT, "__cxa_demangle");
	if (cxx)
		dlclose(cxx);	/* a reference dropped: it stays loaded */
	return b;
fail:
	gpu_buffers__free(b);
	errno = err;
	return NULL;
}

void gpu_buffers__free(struct gpu_buffers *b)
{
	if (!b)
		return;
	for (unsigned int i = 0; b->bufs && i < b->n; i++) {
		struct gpu_buffer *g = &b->bufs[i];

		if (g->map) {
			devtrace_map__close(&g->m);
			munmap(g->map, g->size);
		}
		name_index__free(&g->index);
	}
	free(b->bufs);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

void gpu_buffers__drop(struct gpu_buffers *b)
{
	if (!b)
		return;
	for (unsigned int i = 0; i < b->n; i++) {
		if (b->bufs[i].map)
			munmap(b->bufs[i].map, b->bufs[i].size);
		b->bufs[i].map = NULL;
	}
	gpu_buffers__free(b);
}

/* The id of @name (kind @kind) in @g, published on first sight; under
 * the lock. */
static uint32_t name_id(struct gpu_buffers *b, struct gpu_buffer *g, int kind, const char *name)
{
	uint64_t hash = name_index__hash(kind, name, strlen(name));
	struct name_slot *slot;
	char *demangled = NULL;
	const char *text = name;
	int status = -1;
	bool found;

	slot = name_index__slot(&g->index, hash, &found);
	if (!slot)
		return DEVTRACE_NO_NAME;	/* the table is full anyway */
	if (found)
		return slot->id;
	if (kind == DEVTRACE_NAME_OP && b->demangle && name[0] == '_' && name[1] == 'Z') {
		demangled = b->demangle(name, NULL, NULL, &status);
		if (status == 0 && demangled)
			text = demangled;
	}
	/* Kept, found or refused (the table full): a name is tried once. */
	slot->hash = hash;
	slot->id = devtrace_map__add_name(&g->m, kind, text, strlen(text));
	name_index__filled(&g->index);
	free(demangled);
	return slot->id;
}

static bool emit(struct gpu_buffers *b, unsigned int device, struct devtrace_record *r,
		 int name_kind, const char *name)
{
	struct gpu_buffer *g;

	if (device >= b->n)
		return false;
	g = &b->bufs[device];
	pthread_mutex_lock(&b->lock);
	r->name_id = name ? name_id(b, g, name_kind, name) : DEVTRACE_NO_NAME;
	devtrace_map__emit(&g->m, r);
	b->records++;
	pthread_mutex_unlock(&b->lock);
	return true;
}

bool gpu_buffers__kernel(struct gpu_buffers *b, unsigned int device, uint32_t stream,
			 uint64_t corr, uint64_t start, uint64_t end, const char *name)
{
	struct devtrace_record r = {
		.ts = start, .arg = end, .kind = DEVTRACE_KERNEL,
		.correlation_id = corr, .step = stream,
	};

	return emit(b, device, &r, DEVTRACE_NAME_OP, name ? name : "kernel");
}

bool gpu_buffers__transfer(struct gpu_buffers *b, unsigned int device, uint32_t stream,
			   uint64_t corr, uint64_t start, uint64_t end, uint64_t bytes,
			   const char *name)
{
	struct devtrace_record r = {
		.ts = start, .arg = end, .kind = DEVTRACE_TRANSFER,
		.category = DEVTRACE_CAT_COPY, .correlation_id = corr, .step = stream,
		.bytes = bytes,
	};

	return emit(b, device, &r, DEVTRACE_NAME_OP, name);
}

bool gpu_buffers__launch(struct gpu_buffers *b, uint32_t tid, uint64_t corr, uint64_t start,
			 uint64_t end, const char *api)
{
	struct devtrace_record r = {
		.ts = start, .arg = end, .kind = DEVTRACE_LAUNCH,
		.correlation_id = corr, .step = tid,
	};

	return emit(b, 0, &r, DEVTRACE_NAME_API, api);
}

void gpu_buffers__clock_sync(struct gpu_buffers *b, uint64_t device_ts, uint64_t host_ns)
{
	struct devtrace_record r = { .ts = device_ts, .kind = DEVTRACE_CLOCK_SYNC, .arg = host_ns };

	for (unsigned int i = 0; i < b->n; i++)
		emit(b, i, &r, 0, NULL);
}

uint64_t gpu_buffers__records(const struct gpu_buffers *b)
{
	return b ? __atomic_load_n(&b->records, __ATOMIC_RELAXED) : 0;
}
