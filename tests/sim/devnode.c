// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Driver ioctls on the simulated device node (see devnode.h), each recorded
 * in the ground truth with its command, fd, times, result and decoded
 * argument fields.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "devnode.h"
#include "sim_ioctl.h"
#include "simtruth.h"

#define DEVICE_VA_BASE 0x100000000000ull

struct devnode {
	int fd;
	bool submit_mode;
	uint64_t next_va;
	char path[4096];
};

struct devnode *devnode__open(const char *dir, bool submit_mode)
{
	struct devnode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->submit_mode = submit_mode;
	n->next_va = DEVICE_VA_BASE;
	snprintf(n->path, sizeof(n->path), "%s/%s", dir,
		 submit_mode ? "accel/accel0" : "accel0");
	n->fd = open(n->path, O_RDWR | O_CLOEXEC);
	if (n->fd < 0)
		fprintf(stderr, "libtpu(sim): no device node %s (%s); running without "
			"driver ioctls\n", n->path, strerror(errno));
	return n;
}

void devnode__free(struct devnode *n)
{
	if (!n)
		return;
	if (n->fd >= 0)
		close(n->fd);
	free(n);
}

bool devnode__present(const struct devnode *n)
{
	return n && n->fd >= 0;
}

const char *devnode__path(const struct devnode *n)
{
	return n->path;
}

/* Issues one ioctl and starts its truth record; the caller adds fields. */
static int do_ioctl(struct devnode *n, unsigned long cmd, const char *name,
		    void *arg, struct truth_line *l)
{
	uint64_t t0 = truth_now(), t1;
	int rc, err;

	rc = ioctl(n->fd, cmd, arg);
	err = rc < 0 ? errno : 0;
	t1 = truth_now();
	if (truth_enabled()) {
		tl_begin(l, "ioctl");
		tl_u64(l, "fd", (uint64_t)n->fd);
		tl_u64(l, "cmd", cmd);
		tl_str(l, "name", name);
		tl_u64(l, "t", t0);
		tl_u64(l, "t_return", t1);
		tl_i64(l, "rc", rc);
		tl_u64(l, "errno", (uint64_t)err);
	} else {
		l->len = 0;
	}
	return rc;
}

static void commit(struct truth_line *l)
{
	if (l->len)
		truth_commit(l);
}

void devnode__reset(struct devnode *n)
{
	struct truth_line l;
	unsigned long type = 0;

	if (!devnode__present(n) || n->submit_mode)
		return;
	do_ioctl(n, GASKET_IOCTL_RESET, "GASKET_IOCTL_RESET", (void *)type, &l);
	commit(&l);
}

void devnode__register_interrupt(struct devnode *n, int core, int event_fd)
{
	struct truth_line l;

	if (!devnode__present(n))
		return;
	if (n->submit_mode) {
		struct drm_syncobj_eventfd a = {
			.handle = (__u32)core + 1,
			.point = 0,
			.fd = event_fd,
		};

		do_ioctl(n, DRM_IOCTL_SYNCOBJ_EVENTFD, "DRM_IOCTL_SYNCOBJ_EVENTFD",
			 &a, &l);
		if (l.len) {
			tl_u64(&l, "handle", a.handle);
			tl_i64(&l, "event_fd", event_fd);
			tl_u64(&l, "core", (uint64_t)core);
		}
	} else {
		/* Interrupt index = core; the CSR BAR is 2 (reference 4). */
		struct gasket_interrupt_mapping a = {
			.interrupt = (__u64)core,
			.event_fd = (__u64)event_fd,
			.bar_index = 2,
			.reg_offset = 0x46000 + 8 * (__u64)core,
		};

		do_ioctl(n, GASKET_IOCTL_REGISTER_INTERRUPT,
			 "GASKET_IOCTL_REGISTER_INTERRUPT", &a, &l);
		if (l.len) {
			tl_u64(&l, "interrupt", a.interrupt);
			tl_i64(&l, "event_fd", event_fd);
			tl_u64(&l, "bar_index", a.bar_index);
			tl_u64(&l, "reg_offset", a.reg_offset);
			tl_u64(&l, "core", (uint64_t)core);
		}
	}
	commit(&l);
}

void devnode__unregister_interrupt(struct devnode *n, int core)
{
	struct truth_line l;

	if (!devnode__present(n) || n->submit_mode)
		return;
	do_ioctl(n, GASKET_IOCTL_UNREGISTER_INTERRUPT,
		 "GASKET_IOCTL_UNREGISTER_INTERRUPT", (void *)(unsigned long)core, &l);
	if (l.len)
		tl_u64(&l, "interrupt", (uint64_t)core);
	commit(&l);
}

static void page_table_ioctl(struct devnode *n, unsigned long cmd,
			     const char *name, const void *host, size_t size,
			     uint64_t va)
{
	struct gasket_page_table_ioctl a = {
		.page_table_index = 0,
		.size = size,
		.host_address = (__u64)(uintptr_t)host,
		.device_address = va,
	};
	struct truth_line l;

	do_ioctl(n, cmd, name, &a, &l);
	if (l.len) {
		tl_u64(&l, "page_table_index", a.page_table_index);
		tl_u64(&l, "size", a.size);
		tl_u64(&l, "host_address", a.host_address);
		tl_u64(&l, "device_address", a.device_address);
	}
	commit(&l);
}

uint64_t devnode__map(struct devnode *n, const void *host, size_t size)
{
	uint64_t va;

	if (!devnode__present(n) || n->submit_mode)
		return 0;
	va = __atomic_fetch_add(&n->next_va, (size + 4095) & ~4095ull, __ATOMIC_RELAXED);
	page_table_ioctl(n, GASKET_IOCTL_MAP_BUFFER, "GASKET_IOCTL_MAP_BUFFER",
			 host, size, va);
	return va;
}

void devnode__unmap(struct devnode *n, const void *host, size_t size,
		    uint64_t device_address)
{
	if (!devnode__present(n) || n->submit_mode)
		return;
	page_table_ioctl(n, GASKET_IOCTL_UNMAP_BUFFER, "GASKET_IOCTL_UNMAP_BUFFER",
			 host, size, device_address);
}

void devnode__submit(struct devnode *n, uint64_t launch_id, uint32_t buffer_count)
{
	__u32 handles[SIM_SUBMIT_MAX_BUFFERS] = { 0 };
	struct drm_ivpu_submit a = {
		.buffers_ptr = (__u64)(uintptr_t)handles,
		.buffer_count = buffer_count < SIM_SUBMIT_MAX_BUFFERS ?
			buffer_count : SIM_SUBMIT_MAX_BUFFERS,
		.engine = 0,
		.flags = 0,
		.commands_offset = 0,
		.priority = 0,
	};
	struct truth_line l;
	__u32 i;

	if (!devnode__present(n) || !n->submit_mode)
		return;
	for (i = 0; i < a.buffer_count; i++)
		handles[i] = i + 1;
	do_ioctl(n, DRM_IOCTL_IVPU_SUBMIT, "DRM_IOCTL_IVPU_SUBMIT", &a, &l);
	if (l.len) {
		tl_u64(&l, "launch_id", launch_id);
		tl_u64(&l, "buffer_count", a.buffer_count);
		tl_u64(&l, "engine", a.engine);
	}
	commit(&l);
}
