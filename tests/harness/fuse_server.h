/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A FUSE file system served by a thread of the test, speaking the kernel's
 * protocol on /dev/fuse: one regular file, "buffer" (fuse_server.size
 * bytes, starting with fuse_server.head), at the mount point given. It is
 * what a traced process could hand acceltrace: a file whose every request
 * waits on a process that may stop answering. The caller mounts it in a
 * mount namespace of its own (unshare(CLONE_NEWNS) first).
 *
 * - silent: nothing is answered any more; what is asked meanwhile is
 *   counted in asked_silent (a file's release, sent in the background
 *   without anyone waiting, is not);
 * - hold_reads: READ requests are never answered (the rest are).
 *
 * fuse_server_stop() ends the connection (every request still waiting
 * fails) and unmounts. Root only.
 */
#ifndef ACCELTRACE_TEST_FUSE_SERVER_H
#define ACCELTRACE_TEST_FUSE_SERVER_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fuse.h>

#define FUSE_SERVER_INO 2

struct fuse_server {
	int fd;
	char mnt[4400];
	uint64_t size;
	char head[64];
	volatile int silent, hold_reads, stop;
	volatile int asked_silent;
	pthread_t th;
	bool running;
};

static void fuse_server_reply(struct fuse_server *s, uint64_t unique, int error,
			      const void *body, size_t len)
{
	char buf[sizeof(struct fuse_out_header) + 4096];
	struct fuse_out_header *h = (void *)buf;

	if (len > 4096)
		len = 4096;
	h->len = sizeof(*h) + len;
	h->error = error;
	h->unique = unique;
	if (len)
		memcpy(buf + sizeof(*h), body, len);
	if (write(s->fd, buf, h->len) < 0)
		return;	/* the kernel gave up on the request */
}

static void fuse_server_attr(const struct fuse_server *s, struct fuse_attr *a, uint64_t nodeid)
{
	memset(a, 0, sizeof(*a));
	a->ino = nodeid;
	a->mode = nodeid == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0755;
	a->nlink = 1;
	a->size = nodeid == FUSE_ROOT_ID ? 0 : s->size;
	a->blocks = (a->size + 511) / 512;
	a->blksize = 4096;
}

static void fuse_server_serve(struct fuse_server *s, const struct fuse_in_header *in,
			      const void *arg)
{
	switch (in->opcode) {
	case FUSE_INIT: {
		const struct fuse_init_in *i = arg;
		/* Reads in the background, as libfuse's servers do by
		 * default: a reader waits on the page, not on the request. */
		struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
					   .minor = FUSE_KERNEL_MINOR_VERSION,
					   .max_write = 4096, .max_readahead = 4096,
					   .flags = i->flags & FUSE_ASYNC_READ };

		fuse_server_reply(s, in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_LOOKUP: {
		struct fuse_entry_out o = { .nodeid = FUSE_SERVER_INO };

		if (strcmp(arg, "buffer")) {
			fuse_server_reply(s, in->unique, -ENOENT, NULL, 0);
			break;
		}
		fuse_server_attr(s, &o.attr, FUSE_SERVER_INO);
		fuse_server_reply(s, in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out o = {};	/* attr_valid 0: never cached */

		fuse_server_attr(s, &o.attr, in->nodeid);
		fuse_server_reply(s, in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_OPEN: {
		struct fuse_open_out o = { .fh = 1 };

		fuse_server_reply(s, in->unique, 0, &o, sizeof(o));
		break;
	}
	case FUSE_READ: {
		const struct fuse_read_in *r = arg;
		static char data[4096];
		size_t len = r->size < sizeof(data) ? r->size : sizeof(data);

		if (s->hold_reads)
			break;	/* never answered */
		memset(data, 0, sizeof(data));
		if (r->offset == 0)
			memcpy(data, s->head, sizeof(s->head));
		if (r->offset >= s->size)
			len = 0;
		else if (len > s->size - r->offset)
			len = s->size - r->offset;
		fuse_server_reply(s, in->unique, 0, data, len);
		break;
	}
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		break;		/* no reply */
	case FUSE_FLUSH:
	case FUSE_RELEASE:
		fuse_server_reply(s, in->unique, 0, NULL, 0);
		break;
	default:
		fuse_server_reply(s, in->unique, -ENOSYS, NULL, 0);
	}
}

static void *fuse_server_loop(void *arg)
{
	static char buf[1 << 17];
	struct fuse_server *s = arg;

	while (!s->stop) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		const struct fuse_in_header *in = (void *)buf;
		ssize_t n;

		/* A poll with a timeout, not a blocking read, so that stop
		 * leaves no reference to the device held. */
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		n = read(s->fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(*in))
			return NULL;	/* the connection is gone */
		if (s->silent) {
			if (in->opcode != FUSE_FORGET && in->opcode != FUSE_BATCH_FORGET &&
			    in->opcode != FUSE_INTERRUPT && in->opcode != FUSE_RELEASE) {
				s->asked_silent++;
				fprintf(stderr, "the silent FUSE server was asked: opcode %u\n",
					in->opcode);
			}
			continue;
		}
		fuse_server_serve(s, in, buf + sizeof(*in));
	}
	return NULL;
}

/* Mounts at @mnt (created) and serves; 0 or -errno. */
static int fuse_server_start(struct fuse_server *s, const char *mnt)
{
	char opts[128];

	snprintf(s->mnt, sizeof(s->mnt), "%s", mnt);
	s->fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other",
		 s->fd);
	if ((mkdir(mnt, 0755) && errno != EEXIST) ||
	    mount("acceltrace-test", mnt, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		int err = -errno;

		close(s->fd);
		s->fd = -1;
		return err;
	}
	if (pthread_create(&s->th, NULL, fuse_server_loop, s)) {
		umount2(mnt, MNT_DETACH);
		close(s->fd);
		s->fd = -1;
		return -EAGAIN;
	}
	s->running = true;
	return 0;
}

/* Ends the connection (requests still waiting fail) and unmounts. */
static void fuse_server_stop(struct fuse_server *s)
{
	if (s->running) {
		s->stop = 1;
		pthread_join(s->th, NULL);
		s->running = false;
	}
	if (s->fd >= 0) {
		close(s->fd);	/* the last reference: the connection is aborted */
		s->fd = -1;
	}
	umount2(s->mnt, MNT_DETACH);
	rmdir(s->mnt);
}

#endif /* ACCELTRACE_TEST_FUSE_SERVER_H */
