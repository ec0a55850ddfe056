// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libsimtruth.so: the ground-truth log's buffers, one per thread.
 *
 * A thread appends lines to its own 256 KiB buffer under its own (in
 * practice uncontended) lock and writes the whole buffer with one write()
 * when it fills, when the thread exits, and on truth_flush(), which writes
 * every thread's buffer. The file is opened O_APPEND, so the trainer, the
 * plugin and several trainer processes share it: each write() holds whole
 * lines. Lines are therefore grouped by thread, not sorted by time. Nothing
 * is fsync'd; truth_flush() runs on exit, on SIGTERM/SIGINT and before a
 * deliberate crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "simtruth.h"

#define TBUF_SIZE (256u << 10)

struct tbuf {
	struct tbuf *next;
	pthread_mutex_t lock;
	bool idle;			/* its thread exited; under reg_lock */
	size_t len;
	char data[TBUF_SIZE];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static struct tbuf *bufs;		/* every thread's, under reg_lock */
static __thread struct tbuf *mine;
static int fd = -1;
static int first_err;
static volatile bool enabled;
static int cached_pid;
static __thread int cached_tid;

static void write_all(const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (!first_err)
				first_err = -errno;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

/* Called with b->lock held. */
static void drain(struct tbuf *b)
{
	if (b->len && fd >= 0)
		write_all(b->data, b->len);
	b->len = 0;
}

/* A thread's exit writes its lines; the buffer is kept for reuse. */
static void on_thread_exit(void *p)
{
	struct tbuf *b = p;

	pthread_mutex_lock(&reg_lock);
	pthread_mutex_lock(&b->lock);
	drain(b);
	b->idle = true;
	pthread_mutex_unlock(&b->lock);
	pthread_mutex_unlock(&reg_lock);
}

static void on_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void on_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

/* A forked child keeps the file but not the parent's unwritten lines, which
 * the parent writes itself; its ids are its own. */
static void on_child(void)
{
	struct tbuf *b;

	for (b = bufs; b; b = b->next) {
		pthread_mutex_init(&b->lock, NULL);
		b->len = 0;
	}
	cached_pid = 0;
	cached_tid = 0;
	pthread_mutex_unlock(&reg_lock);
}

static void init_once(void)
{
	pthread_key_create(&key, on_thread_exit);
	pthread_atfork(on_prepare, on_parent, on_child);
}

int truth_pid(void)
{
	if (!cached_pid)
		cached_pid = getpid();
	return cached_pid;
}

int truth_tid(void)
{
	if (!cached_tid)
		cached_tid = (int)syscall(SYS_gettid);
	return cached_tid;
}

int truth_open(const char *path)
{
	int err = 0;

	pthread_once(&once, init_once);
	pthread_mutex_lock(&reg_lock);
	if (fd >= 0)
		goto out;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	first_err = 0;
	enabled = true;
out:
	pthread_mutex_unlock(&reg_lock);
	return err;
}

bool truth_enabled(void)
{
	return enabled;
}

static struct tbuf *my_buffer(void)
{
	struct tbuf *b = mine;

	if (b)
		return b;
	/* Reuse the buffer of a thread that has exited, if any. */
	pthread_mutex_lock(&reg_lock);
	for (b = bufs; b && !b->idle; b = b->next)
		;
	if (b) {
		b->idle = false;
	} else {
		b = malloc(sizeof(*b));
		if (b) {
			pthread_mutex_init(&b->lock, NULL);
			b->idle = false;
			b->len = 0;
			b->next = bufs;
			bufs = b;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	if (b) {
		pthread_setspecific(key, b);
		mine = b;
	}
	return b;
}

void truth_commit(struct truth_line *l)
{
	struct tbuf *b;

	if (!enabled)
		return;
	b = my_buffer();
	if (!b)
		return;
	l->buf[l->len++] = '}';
	l->buf[l->len++] = '\n';
	pthread_mutex_lock(&b->lock);
	if (b->len + l->len > TBUF_SIZE)
		drain(b);
	memcpy(b->data + b->len, l->buf, l->len);
	b->len += l->len;
	pthread_mutex_unlock(&b->lock);
}

int truth_flush(void)
{
	struct tbuf *b;
	int err;

	if (!enabled)
		return 0;
	pthread_mutex_lock(&reg_lock);
	for (b = bufs; b; b = b->next) {
		pthread_mutex_lock(&b->lock);
		drain(b);
		pthread_mutex_unlock(&b->lock);
	}
	err = first_err;
	pthread_mutex_unlock(&reg_lock);
	return err;
}

int truth_close(void)
{
	int err;

	if (!enabled)
		return 0;
	err = truth_flush();
	pthread_mutex_lock(&reg_lock);
	enabled = false;
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	fd = -1;
	pthread_mutex_unlock(&reg_lock);
	return err;
}
