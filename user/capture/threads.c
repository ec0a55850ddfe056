// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Processes and threads of the capture model: created on first use, named
 * and renamed (each thread's name history, bounded), ended at their exit,
 * and read back by writers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "capture/capture_internal.h"
#include "lib/array.h"
#include "lib/strtab.h"
#include "lib/u64_map.h"

#define NO_ID U64_MAP_NONE
#define GROW(arr, cap, need) ARRAY_GROW(arr, cap, need)

struct capture_process *capture_get_process(struct capture *c, uint32_t pid)
{
	uint32_t i = u64_map__get(&c->proc_idx, pid);
	struct capture_process *p;

	if (i != NO_ID)
		return &c->procs[i];
	if (GROW(c->procs, c->procs_cap, c->nprocs + 1) ||
	    u64_map__put(&c->proc_idx, pid, c->nprocs))
		return NULL;
	p = &c->procs[c->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

int capture__set_process(struct capture *c, uint32_t pid, const char *name)
{
	struct capture_process *p;

	if (c->finalized)
		return -EBUSY;
	p = capture_get_process(c, pid);
	if (!p)
		return -ENOMEM;
	if (name && name[0]) {
		uint32_t id = capture__intern(c, name);

		if (id)		/* else counted lost; the old name stays */
			p->name = id;
	}
	return 0;
}

int capture__set_process_origin(struct capture *c, uint32_t pid, uint32_t ppid,
				const char *container, const char *pod)
{
	struct capture_process *p;
	uint32_t id;

	if (c->finalized)
		return -EBUSY;
	p = capture_get_process(c, pid);
	if (!p)
		return -ENOMEM;
	p->ppid = ppid;
	/* A name that cannot be interned is counted lost; the old stays. */
	id = container && container[0] ? capture__intern(c, container) : 0;
	if (id)
		p->container = id;
	id = pod && pod[0] ? capture__intern(c, pod) : 0;
	if (id)
		p->pod = id;
	return 0;
}

int capture__process_exited(struct capture *c, uint32_t pid, uint64_t ts_ns)
{
	struct capture_process *p;

	if (c->finalized)
		return -EBUSY;
	p = capture_get_process(c, pid);
	if (!p)
		return -ENOMEM;
	p->exit_ns = ts_ns;
	return 0;
}

struct capture_thread *capture_get_thread(struct capture *c, uint32_t pid,
					  uint32_t tid)
{
	uint64_t key = pair_key(pid, tid);
	uint32_t i = u64_map__get(&c->thread_idx, key);
	struct capture_thread *t;

	if (i != NO_ID)
		return &c->threads[i];
	if (!capture_get_process(c, pid))
		return NULL;
	if (GROW(c->threads, c->threads_cap, c->nthreads + 1) ||
	    GROW(c->thread_names, c->thread_names_cap, c->nthreads + 1) ||
	    u64_map__put(&c->thread_idx, key, c->nthreads))
		return NULL;
	memset(&c->thread_names[c->nthreads], 0, sizeof(c->thread_names[0]));
	t = &c->threads[c->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	return t;
}

/*
 * Appends to thread i's name history: past the bound, or out of memory,
 * the rename is only counted. Grown 1, 2, 4, ... up to the bound: most
 * threads have one name.
 */
static void history_add(struct capture *c, size_t i, uint32_t id, uint64_t ts)
{
	struct thread_names *h = &c->thread_names[i];

	if (h->n >= CAPTURE_MAX_THREAD_NAMES) {
		h->more++;
		return;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 1;
		void *v;

		if (cap > CAPTURE_MAX_THREAD_NAMES)
			cap = CAPTURE_MAX_THREAD_NAMES;
		v = realloc(h->v, cap * sizeof(*h->v));
		if (!v) {
			h->more++;
			c->thread_names_lost++;
			return;
		}
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n].ts_ns = ts;
	h->v[h->n].name = id;
	h->n++;
}

/* Names t (its tracks and an unnamed process too), recording the change. */
static void name_thread(struct capture *c, struct capture_thread *t,
			const char *name, uint64_t ts)
{
	uint32_t track, id;

	if (!name || !name[0])
		return;
	id = capture__intern(c, name);
	if (!id || id == t->name)	/* lost (counted), or no change */
		return;
	history_add(c, t - c->threads, id, ts);
	t->name = id;
	track = u64_map__get(&c->host_tracks, pair_key(t->pid, t->tid));
	if (track != NO_ID)
		c->tracks[track].info.name = t->name;
	/* The main thread names an unnamed process. */
	if (t->pid == t->tid) {
		struct capture_process *p = capture_get_process(c, t->pid);

		if (p && !p->name)
			p->name = t->name;
	}
}

int capture__set_thread(struct capture *c, uint32_t pid, uint32_t tid,
			const char *name, uint64_t start_ns)
{
	struct capture_thread *t;

	if (c->finalized)
		return -EBUSY;
	t = capture_get_thread(c, pid, tid);
	if (!t)
		return -ENOMEM;
	if (start_ns)
		t->start_ns = start_ns;
	/* Its first name dates from its start; a later one's time is unknown. */
	name_thread(c, t, name, t->name ? 0 : start_ns);
	return 0;
}

int capture__rename_thread(struct capture *c, uint32_t pid, uint32_t tid,
			   const char *name, uint64_t ts_ns)
{
	struct capture_thread *t;

	if (c->finalized)
		return -EBUSY;
	t = capture_get_thread(c, pid, tid);
	if (!t)
		return -ENOMEM;
	name_thread(c, t, name, ts_ns);
	return 0;
}

int capture__thread_exited(struct capture *c, uint32_t pid, uint32_t tid,
			   uint64_t ts_ns)
{
	struct capture_thread *t;

	if (c->finalized)
		return -EBUSY;
	t = capture_get_thread(c, pid, tid);
	if (!t)
		return -ENOMEM;
	t->exit_ns = ts_ns;
	return 0;
}

/* ---- reading --------------------------------------------------------- */

size_t capture__num_processes(const struct capture *c)
{
	return c->nprocs;
}

const struct capture_process *capture__process(const struct capture *c, size_t i)
{
	if (i >= c->nprocs) {
		errno = ENOENT;
		return NULL;
	}
	return &c->procs[i];
}

size_t capture__num_threads(const struct capture *c)
{
	return c->nthreads;
}

const struct capture_thread *capture__thread(const struct capture *c, size_t i)
{
	if (i >= c->nthreads) {
		errno = ENOENT;
		return NULL;
	}
	return &c->threads[i];
}

int capture__find_thread(const struct capture *c, uint32_t pid, uint32_t tid)
{
	uint32_t i = u64_map__get(&c->thread_idx, pair_key(pid, tid));

	return i == NO_ID ? -ENOENT : (int)i;
}

const struct capture_thread_name *capture__thread_names(const struct capture *c,
							size_t i, size_t *n,
							uint64_t *more)
{
	*n = 0;
	if (more)
		*more = 0;
	if (i >= c->nthreads) {
		errno = ENOENT;
		return NULL;
	}
	*n = c->thread_names[i].n;
	if (more)
		*more = c->thread_names[i].more;
	return c->thread_names[i].n ? c->thread_names[i].v : NULL;
}
