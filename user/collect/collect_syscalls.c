// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Syscall records into host spans: file reads by traced threads (named by
 * the file they read), reads and polls of completion eventfds, ioctls on
 * device nodes decoded by the driver family's table, and device opens.
 * What changes the kernel's fd table (an eventfd handed to a driver, an
 * open that is not a device after all) and what changes what must be
 * probed (a file mapped executable: maybe a runtime loaded late) go to the
 * attach controller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "collector"
#include "lib/log.h"
#include "collect/collector_internal.h"
#include "discover/device_nodes.h"
#include "discover/procfs.h"

/* Every decoded field fits in a span, before the generic arguments. */
_Static_assert(IOCTL_MAX_FIELDS <= CAPTURE_MAX_ARGS,
	       "a decoded ioctl's fields must all fit in one span");

static const struct device_node_pattern *device_fd(struct collector *c,
						   uint32_t pid, uint32_t fd)
{
	const struct device_node_pattern *p = hashmap__get(c->dev_fds, pid, fd);
	char target[256];

	if (p)
		return p;
	/* Opened before the probes: ask /proc once. */
	if (procfs_fd_path(pid, fd, target, sizeof(target)))
		return NULL;
	p = device_node_match(target);
	if (p)
		collect_put(c, c->dev_fds, pid, fd, (void *)p, NULL);
	return p;
}

static uint32_t file_name(struct collector *c, const struct ev_syscall *r)
{
	uintptr_t id = (uintptr_t)hashmap__get(c->files, r->dev, r->ino);
	char target[512];

	if (id)
		return id;
	if (r->fd == (uint32_t)-1 ||
	    procfs_fd_path(r->h.pid, r->fd, target, sizeof(target)))
		snprintf(target, sizeof(target), "dev %llu:%llu inode %llu",
			 (unsigned long long)(r->dev >> 8),
			 (unsigned long long)(r->dev & 0xff),
			 (unsigned long long)r->ino);
	id = capture__intern(c->cap, target);
	/* Not remembered: looked up again next time, nothing lost. */
	if (id)
		collect_put(c, c->files, r->dev, r->ino, (void *)id, NULL);
	return id;
}

static const char *sc_name(uint32_t sc)
{
	switch (sc) {
	case SC_READ: return "read";
	case SC_PREAD64: return "pread64";
	case SC_READV: return "readv";
	case SC_PREADV: return "preadv";
	case SC_IOCTL: return "ioctl";
	case SC_CLOSE: return "close";
	case SC_IO_URING_READ: return "io_uring read";
	default: return "syscall";
	}
}

/* A completion eventfd registered with a driver: its reads are device
 * interrupts, and the kernel must know it as one. */
static void eventfd_registered(struct collector *c, const struct ev_syscall *r,
			       const struct device_node_pattern *pat,
			       const struct ioctl_decoder *d, uint64_t fd)
{
	struct eventfd_info *e = calloc(1, sizeof(*e)), *old = NULL;
	uint64_t irq = 0;

	if (!e) {
		collect_out_of_memory(c);
		return;
	}
	e->interrupt = -1;
	for (int j = 0; j < IOCTL_MAX_FIELDS && d->fields[j].name; j++)
		if (d->fields[j].role == ROLE_INTERRUPT &&
		    ioctl_field_value(&d->fields[j], r->argbuf, r->argbuf_len, &irq))
			e->interrupt = irq;
	e->device = pat->what;
	if (collect_put(c, c->eventfds, r->h.pid, fd, e, (void **)&old))
		free(e);
	free(old);
	collect_control(c, CTL_EVENTFD_REGISTERED, r->h.pid, fd, 0);
}

/*
 * The decoded fields go first: a span holds CAPTURE_MAX_ARGS arguments and
 * a decoder up to IOCTL_MAX_FIELDS. The generic ones follow while there is
 * room; a decoded ioctl's name already says its command and kind.
 */
static void on_ioctl(struct collector *c, const struct ev_syscall *r,
		     struct capture_span *s)
{
	const struct device_node_pattern *pat = device_fd(c, r->h.pid, r->fd);
	const struct ioctl_decoder *d = pat ? ioctl_decode(pat->family, r->args[0]) : NULL;
	char name[96];

	s->kind = SPAN_IOCTL;
	if (r->ret < 0)
		s->flags |= SPAN_F_ERROR;
	if (d) {
		s->name = collect_intern_static(c, d->name);
		if (d->kind == IOCTL_SUBMIT)
			collect_note_activity(c, r->h.start_ns, ACT_EXECUTION);
		for (int i = 0; i < IOCTL_MAX_FIELDS && d->fields[i].name; i++) {
			const struct ioctl_field *f = &d->fields[i];
			uint64_t v;

			if (!ioctl_field_value(f, r->argbuf, r->argbuf_len, &v))
				continue;
			capture_span__add_u64(s, collect_intern_static(c, f->name), v);
			if (f->role == ROLE_EVENTFD && (int64_t)v >= 0)
				eventfd_registered(c, r, pat, d, v);
		}
	} else {
		snprintf(name, sizeof(name), "ioctl 0x%08llx",
			 (unsigned long long)r->args[0]);
		s->name = capture__intern(c->cap, name);
	}
	/* -E2BIG once the span is full: the name holds what is left out. */
	capture_span__add_i64(s, c->k_ret, r->ret);
	if (pat)
		capture_span__add_str(s, c->k_device,
				      collect_intern_static(c, pat->family->name));
	if (d)
		capture_span__add_str(s, c->k_kind,
				      collect_intern_static(c, ioctl_kind_name(d->kind)));
	capture_span__add_u64(s, c->k_cmd, r->args[0]);
}

/* A read of a completion eventfd: the host waiting for the device. */
static void on_eventfd_read(struct collector *c, const struct ev_syscall *r,
			    struct capture_span *s)
{
	struct eventfd_info *e = hashmap__get(c->eventfds, r->h.pid, r->fd);

	s->kind = SPAN_DEVICE_WAIT;
	s->name = collect_intern_static(c, "eventfd read (device completion)");
	if (r->argbuf_len == 8)
		capture_span__add_u64(s, c->k_value, *(uint64_t *)r->argbuf);
	if (e && e->interrupt >= 0)
		capture_span__add_i64(s, c->k_interrupt, e->interrupt);
	if (e)
		capture_span__add_str(s, c->k_device,
				      collect_intern_static(c, e->device));
	capture_span__add_u64(s, c->k_fd, r->fd);
}

static void on_file_read(struct collector *c, const struct ev_syscall *r,
			 struct capture_span *s)
{
	if (r->ret >= 0)
		capture_span__add_u64(s, c->k_bytes, r->ret);
	else
		s->flags |= SPAN_F_ERROR;
	capture_span__add_u64(s, c->k_requested, r->args[0]);
	if (r->args[1] != (uint64_t)-1)
		capture_span__add_u64(s, c->k_offset, r->args[1]);
	capture_span__add_str(s, c->k_file, file_name(c, r));
	if (r->fd != (uint32_t)-1)
		capture_span__add_u64(s, c->k_fd, r->fd);
}

void collect_syscall(struct collector *c, const struct ev_syscall *r)
{
	struct capture_span s;
	int track;

	if (r->sc == SC_CLOSE) {
		free(hashmap__remove(c->eventfds, r->h.pid, r->fd));
		hashmap__remove(c->dev_fds, r->h.pid, r->fd);
		return;
	}
	track = collect_host_track(c, r->h.pid, r->h.tid);
	if (track < 0)
		return;
	collect_init_span(&s, track, SPAN_FILE_READ,
			  collect_intern_static(c, sc_name(r->sc)),
			  r->h.start_ns, r->h.end_ns ? r->h.end_ns : r->h.start_ns);
	if (!r->h.end_ns)
		s.flags |= SPAN_F_OPEN_AT_STOP;

	switch (r->sc) {
	case SC_READ:
	case SC_PREAD64:
	case SC_READV:
	case SC_PREADV:
	case SC_IO_URING_READ:
		if (r->fd_kind == FD_EVENTFD) {
			on_eventfd_read(c, r, &s);
		} else if (r->fd_kind == FD_DEVICE) {
			s.kind = SPAN_HOST_OTHER;
			capture_span__add_u64(&s, c->k_fd, r->fd);
		} else {
			on_file_read(c, r, &s);
		}
		break;
	case SC_IOCTL:
		on_ioctl(c, r, &s);
		break;
	default:
		return;
	}
	collect_keep_span(c, &s);
}

void collect_dev_open(struct collector *c, const struct ev_dev_open *r)
{
	const struct device_node_pattern *pat = device_node_match(r->path);
	struct capture_span s;
	char name[AT_PATH_MAX + 8];
	int track;

	if (!pat) {
		/* The kernel's prefix matched, the full pattern did not. */
		collect_control(c, CTL_NOT_A_DEVICE, r->h.pid, r->fd, 0);
		return;
	}
	collect_put(c, c->dev_fds, r->h.pid, r->fd, (void *)pat, NULL);
	collect_control(c, CTL_DEVICE_OPENED, r->h.pid, r->fd, 0);
	track = collect_host_track(c, r->h.pid, r->h.tid);
	if (track < 0)
		return;
	snprintf(name, sizeof(name), "open %s", r->path);
	collect_init_span(&s, track, SPAN_HOST_OTHER, capture__intern(c->cap, name),
			  r->h.start_ns, r->h.end_ns);
	capture_span__add_u64(&s, c->k_fd, r->fd);
	capture_span__add_str(&s, c->k_device, collect_intern_static(c, pat->what));
	collect_keep_span(c, &s);
}

/* A file mapped executable (a library's text): the controller examines
 * the process after this poll, so a runtime loaded late is probed before
 * its first call rather than at the next rescan. No span: it is no device
 * work. */
void collect_mapped(struct collector *c, const struct ev_mapped *r)
{
	struct control_record rec = {
		.kind = CTL_MAPPED, .pid = r->h.pid, .fd = (uint32_t)-1,
		.value = r->start, .map_end = r->end, .map_pgoff = r->pgoff,
		.dev = r->dev, .ino = r->ino,
	};

	collect_queue_control(c, &rec);
}
