// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The agents' control pages in traced processes (agent_links.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/types.h>

#include "attach/agent_links.h"
#include "discover/mapped_files.h"
#include "discover/procfs.h"
#include "lib/array.h"
#include "lib/hashmap.h"

/* How often a held lease is written again (agents see it run out after
 * the lease's length without a renewal: acceltrace gone, not just late). */
#define RENEW_NS (1000 * 1000000ull)

struct agent_link {
	int fd;
	void *wake_map;		/* the page, mapped only as a futex address */
	struct agent_status st;
	uint64_t lease_written;	/* what this acceltrace wrote last */
	uint32_t flush_asked;	/* the flush_request written; 0: none pending */
};

struct agent_links {
	struct agent_link *v;
	size_t n, cap;
	struct hashmap *seen;	/* (dev, ino) of pages found */
	uint64_t lease, written_at;
};

struct agent_links *agent_links__new(void)
{
	struct agent_links *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->seen = hashmap__new();
	if (!l->seen) {
		free(l);
		return NULL;
	}
	return l;
}

void agent_links__free(struct agent_links *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		if (l->v[i].wake_map)
			munmap(l->v[i].wake_map, AGENT_CONTROL_SIZE);
		close(l->v[i].fd);
	}
	free(l->v);
	hashmap__free(l->seen, NULL);
	free(l);
}

/* Control pages among @pid's files. */
struct find_ctx {
	struct agent_links *l;
	pid_t pid;
	uid_t uid;		/* the process's (its /proc directory's owner) */
	int found, err;
};

/*
 * Only what the agent makes is taken for a page, before anything is
 * opened: a file of exactly one page, unlinked, private to the process's
 * user (0600) and owned by it. acceltrace writes into the page; a file the
 * process merely maps or reads (a root-owned one among them) must never
 * be opened for writing, however its first bytes read.
 */
static int not_a_page(void *ctx, int path_fd, const struct stat *st)
{
	struct find_ctx *f = ctx;

	(void)path_fd;
	return hashmap__get(f->l->seen, st->st_dev, st->st_ino) != NULL ||
	       st->st_size != AGENT_CONTROL_SIZE || st->st_nlink != 0 ||
	       (st->st_mode & 07777) != 0600 || st->st_uid != f->uid;
}

/* +1 to the u32 at @off; the new value, 0 when the file refused. */
static uint32_t bump(struct agent_link *k, size_t off)
{
	uint32_t v = 0;

	if (pread(k->fd, &v, sizeof(v), (off_t)off) != sizeof(v))
		return 0;
	if (!++v)
		v = 1;
	return pwrite(k->fd, &v, sizeof(v), (off_t)off) == sizeof(v) ? v : 0;
}

/* The agent sleeps on wake: bump it, then wake it. A racing second
 * acceltrace may lose one bump; what the agent reads then is what counts. */
static void wake_agent(struct agent_link *k)
{
	if (bump(k, offsetof(struct agent_control, wake)) && k->wake_map)
		syscall(SYS_futex, (char *)k->wake_map + offsetof(struct agent_control, wake),
			FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void write_lease(struct agent_link *k, uint64_t lease)
{
	if (pwrite(k->fd, &lease, sizeof(lease), offsetof(struct agent_control, lease_until_ns)) !=
	    sizeof(lease))
		return;
	k->lease_written = lease;
	wake_agent(k);
}

static void offer(void *ctx, const struct mapped_file *m)
{
	struct find_ctx *f = ctx;
	struct agent_links *l = f->l;
	struct agent_link *k;
	struct stat st;
	int fd, rfd;

	rfd = mapped_file_open(f->pid, m, AGENT_CONTROL_MAGIC, AGENT_CONTROL_SIZE, not_a_page, f,
			       &st);
	if (rfd < 0)
		return;
	/* The page it is: now for writing, the same inode. */
	fd = procfs_reopen_own_fd(rfd, O_RDWR | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	close(rfd);
	if (fd < 0)
		return;
	if (ARRAY_GROW(l->v, l->cap, l->n + 1) ||
	    hashmap__put(l->seen, st.st_dev, st.st_ino, (void *)1, NULL)) {
		close(fd);
		f->err = -ENOMEM;
		return;
	}
	k = &l->v[l->n++];
	memset(k, 0, sizeof(*k));
	k->fd = fd;
	k->st.pid = f->pid;
	/* Read-only and never touched: only the futex's key. */
	k->wake_map = mmap(NULL, AGENT_CONTROL_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (k->wake_map == MAP_FAILED)
		k->wake_map = NULL;
	if (l->lease)
		write_lease(k, l->lease);
	f->found++;
}

int agent_links__find(struct agent_links *l, pid_t pid)
{
	struct find_ctx f = { .l = l, .pid = pid };
	int err;

	err = procfs_owner_uid(pid, &f.uid);
	if (err)
		return err;
	err = mapped_files_for_each(pid, offer, &f);

	if (f.err)
		return f.err;
	return f.found ? f.found : err;
}

void agent_links__want(struct agent_links *l, uint64_t until_ns, uint64_t now_ns)
{
	if (until_ns && l->lease && now_ns < l->written_at + RENEW_NS)
		return;
	for (size_t i = 0; i < l->n; i++) {
		struct agent_link *k = &l->v[i];
		uint64_t cur = 0;

		if (!until_ns) {
			/* Let go only of the lease this acceltrace wrote: one
			 * another wrote since stays theirs. */
			if (pread(k->fd, &cur, sizeof(cur),
				  offsetof(struct agent_control, lease_until_ns)) == sizeof(cur) &&
			    cur == k->lease_written && cur)
				write_lease(k, now_ns);
			continue;
		}
		write_lease(k, until_ns);
	}
	l->lease = until_ns;
	l->written_at = now_ns;
}

int agent_links__flush(struct agent_links *l)
{
	int asked = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct agent_link *k = &l->v[i];

		k->flush_asked = 0;
		if (k->st.state != AGENT_STATE_ACTIVE)
			continue;
		k->flush_asked = bump(k, offsetof(struct agent_control, flush_request));
		if (k->flush_asked) {
			wake_agent(k);
			asked++;
		}
	}
	return asked;
}

bool agent_links__flushed(struct agent_links *l)
{
	for (size_t i = 0; i < l->n; i++) {
		struct agent_link *k = &l->v[i];
		uint32_t done = 0;

		if (!k->flush_asked)
			continue;
		if (pread(k->fd, &done, sizeof(done), offsetof(struct agent_control, flush_done)) !=
		    sizeof(done))
			k->flush_asked = 0;	/* unreadable: not waited for */
		else if (done == k->flush_asked)
			k->flush_asked = 0;
		else
			return false;
	}
	return true;
}

/* The agent's fields, bounded: the message made printable. */
static bool read_status(struct agent_link *k)
{
	struct agent_control c;
	uint32_t was = k->st.state, bufs = k->st.buffers;

	if (pread(k->fd, &c, sizeof(c), 0) != (ssize_t)sizeof(c) || c.magic != AGENT_CONTROL_MAGIC) {
		k->st.state = 0;
		return false;
	}
	k->st.state = c.state >= AGENT_STATE_DORMANT && c.state <= AGENT_STATE_NO_RUNTIME ?
		      c.state : 0;
	k->st.state_since_ns = c.state_since_ns;
	k->st.backends = c.backends;
	k->st.activations = c.activations;
	k->st.records = c.records;
	k->st.runtime_dropped = c.runtime_dropped;
	k->st.incomplete = c.incomplete;
	k->st.buffers = c.buffers;
	for (size_t i = 0; i < sizeof(k->st.message); i++) {
		char ch = i + 1 < sizeof(k->st.message) ? c.message[i] : '\0';

		/* Printable ASCII only: it goes to logs, JSON and protobuf. */
		k->st.message[i] = ch && (ch < 0x20 || ch > 0x7e) ? '?' : ch;
		if (!ch)
			break;
	}
	return (k->st.state == AGENT_STATE_ACTIVE && was != AGENT_STATE_ACTIVE) ||
	       k->st.buffers != bufs;
}

int agent_links__poll(struct agent_links *l)
{
	int changed = 0;

	for (size_t i = 0; i < l->n; i++)
		changed += read_status(&l->v[i]);
	return changed;
}

void agent_links__drop_exited(struct agent_links *l)
{
	size_t w = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct agent_link *k = &l->v[i];
		struct stat st;

		if (procfs_pid_alive(k->st.pid)) {
			l->v[w++] = *k;
			continue;
		}
		if (!fstat(k->fd, &st))
			hashmap__remove(l->seen, st.st_dev, st.st_ino);
		if (k->wake_map)
			munmap(k->wake_map, AGENT_CONTROL_SIZE);
		close(k->fd);
	}
	l->n = w;
}

size_t agent_links__count(const struct agent_links *l)
{
	return l ? l->n : 0;
}

const struct agent_status *agent_links__status(const struct agent_links *l, size_t i)
{
	return i < l->n ? &l->v[i].st : NULL;
}

bool agent_links__has(const struct agent_links *l, pid_t pid)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (l->v[i].st.pid == pid)
			return true;
	return false;
}
