// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Every allocator's timeline, found by its kernel key (pid, layer, flags,
 * device) in a sorted array: a sample a second per allocator is a binary
 * search, and a new allocator (rare) a move.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define LOG_CONTEXT "devmem"
#include "lib/log.h"
#include "capture/capture.h"
#include "devmem/devmem_book.h"
#include "devmem/devmem_names.h"

#define DEFAULT_MAX_ALLOCATORS 1024u
#define DEFAULT_KEEP_AFTER_EXIT_NS (600ull * 1000000000ull)

struct book_entry {
	struct at_mem_agg_key key;
	uint32_t ordinal;
	char name[DEVMEM_ALLOCATOR_NAME_MAX];
	/* No runtime had said the platform (named by the layer's guess, as
	 * the XSpace writer names device planes): asked again at each
	 * sample, the name made right once it is. */
	bool platform_unknown;
	struct devmem_timeline *tl;
	struct at_mem_agg last;		/* the latest sample */
	uint64_t exited_ns;		/* 0: alive */
};

struct devmem_book {
	struct devmem_book_opts o;
	struct devmem_tier tiers[DEVMEM_MAX_TIERS];
	struct book_entry *e;		/* sorted by key */
	size_t n, cap;
	uint64_t refused;		/* samples past max_allocators */
};

struct devmem_book *devmem_book__new(const struct devmem_book_opts *opts)
{
	struct devmem_book *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	if (opts)
		memcpy(&b->o, opts, opts->sz < sizeof(b->o) ? opts->sz : sizeof(b->o));
	b->o.sz = sizeof(b->o);
	if (b->o.tiers) {
		/* Refused now, not at the first sample. */
		if (devmem_timeline__check_tiers(b->o.tiers, b->o.n_tiers))
			goto inval;
		memcpy(b->tiers, b->o.tiers, b->o.n_tiers * sizeof(b->tiers[0]));
		b->o.tiers = b->tiers;	/* the caller's array need not outlive us */
	}
	if (!b->o.max_allocators)
		b->o.max_allocators = DEFAULT_MAX_ALLOCATORS;
	if (!b->o.keep_after_exit_ns)
		b->o.keep_after_exit_ns = DEFAULT_KEEP_AFTER_EXIT_NS;
	return b;
inval:
	free(b);
	errno = EINVAL;
	return NULL;
}

void devmem_book__free(struct devmem_book *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		devmem_timeline__free(b->e[i].tl);
	free(b->e);
	free(b);
}

static int key_cmp(const struct at_mem_agg_key *a, const struct at_mem_agg_key *b)
{
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->layer != b->layer)
		return a->layer < b->layer ? -1 : 1;
	if (a->flags != b->flags)
		return a->flags < b->flags ? -1 : 1;
	if (a->device != b->device)
		return a->device < b->device ? -1 : 1;
	return 0;
}

/* The index of @key, or where it would go (*found false). */
static size_t find(const struct devmem_book *b, const struct at_mem_agg_key *key, bool *found)
{
	size_t lo = 0, hi = b->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = key_cmp(&b->e[mid].key, key);

		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static int insert(struct devmem_book *b, size_t at, const struct at_mem_agg_key *key,
		  devmem_resolve_fn resolve, void *ctx)
{
	struct book_entry e = { .key = *key };
	const char *platform = NULL;
	int err;

	if (b->n >= b->o.max_allocators) {
		if (!b->refused++)
			log_warn("more than %" PRIu32 " device-memory allocators: the others "
				 "have no timeline (counted)", b->o.max_allocators);
		return -ENOSPC;
	}
	if (!resolve || !resolve(ctx, key, &e.ordinal, &platform))
		return -EAGAIN;
	err = devmem_allocator_name(e.name, sizeof(e.name), platform, e.ordinal, key->layer);
	if (err < 0)
		return err;
	e.platform_unknown = !platform;	/* named by the layer's guess for now */
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		struct book_entry *grown;

		if (cap > b->o.max_allocators)
			cap = b->o.max_allocators;
		grown = realloc(b->e, cap * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		b->e = grown;
		b->cap = cap;
	}
	e.tl = devmem_timeline__new(b->o.tiers, b->o.n_tiers);
	if (!e.tl)
		return -errno;
	memmove(&b->e[at + 1], &b->e[at], (b->n - at) * sizeof(*b->e));
	b->e[at] = e;
	b->n++;
	return 0;
}

/* The collector learns a process's platform from its runtime, maybe after
 * its first allocation. */
static void name_again(struct book_entry *e, devmem_resolve_fn resolve, void *ctx)
{
	const char *platform = NULL;
	uint32_t ordinal;

	if (!resolve || !resolve(ctx, &e->key, &ordinal, &platform) || !platform)
		return;
	if (devmem_allocator_name(e->name, sizeof(e->name), platform, e->ordinal,
				  e->key.layer) >= 0)
		e->platform_unknown = false;
}

int devmem_book__sample(struct devmem_book *b, uint64_t now_ns, const struct at_mem_agg_key *key,
			const struct at_mem_agg *agg, devmem_resolve_fn resolve, void *ctx)
{
	struct book_entry *e;
	bool found;
	size_t at = find(b, key, &found);
	int err;

	if (!found) {
		err = insert(b, at, key, resolve, ctx);
		if (err)
			return err;
	}
	e = &b->e[at];
	if (e->platform_unknown && found)
		name_again(e, resolve, ctx);
	/* An exited process's aggregate lingers until the kernel forgets it:
	 * its timeline stopped at the exit. */
	if (e->exited_ns)
		return 0;
	e->last = *agg;
	devmem_timeline__add(e->tl, now_ns, agg->in_use, agg->peak);
	return 0;
}

void devmem_book__process_exited(struct devmem_book *b, uint32_t pid, uint64_t now_ns)
{
	for (size_t i = 0; i < b->n; i++) {
		if (b->e[i].key.pid == pid && !b->e[i].exited_ns)
			b->e[i].exited_ns = now_ns ? now_ns : 1;
	}
}

void devmem_book__expire(struct devmem_book *b, uint64_t now_ns)
{
	size_t kept = 0;

	for (size_t i = 0; i < b->n; i++) {
		struct book_entry *e = &b->e[i];

		if (e->exited_ns && now_ns >= e->exited_ns &&
		    now_ns - e->exited_ns >= b->o.keep_after_exit_ns) {
			devmem_timeline__free(e->tl);
			continue;
		}
		b->e[kept++] = *e;	/* the order stays sorted */
	}
	b->n = kept;
}

int devmem_book__to_capture(const struct devmem_book *b, struct capture *cap, uint32_t pid,
			    uint64_t since_ns)
{
	struct capture_mem_point *pts = NULL;
	size_t max = 0;
	int err = 0, written = 0;

	for (size_t i = 0; i < b->n; i++) {
		const struct book_entry *e = &b->e[i];
		struct capture_mem_allocator a = {
			.pid = e->key.pid, .device = e->ordinal, .layer = e->key.layer,
		};
		size_t n;

		if (pid && e->key.pid != pid)
			continue;
		if (devmem_timeline__max_points(e->tl) > max) {
			free(pts);
			max = devmem_timeline__max_points(e->tl);
			pts = malloc(max * sizeof(*pts));
			if (!pts) {
				err = -ENOMEM;
				break;
			}
		}
		n = devmem_timeline__points(e->tl, since_ns, pts, max);
		if (!n)
			continue;
		a.name = capture__intern(cap, e->name);
		if (!a.name) {
			err = -ENOMEM;
			break;
		}
		err = capture__set_mem_timeline(cap, &a, pts, n);
		if (err)
			break;
		written++;
	}
	free(pts);
	return err ? err : written;
}

size_t devmem_book__count(const struct devmem_book *b)
{
	return b->n;
}

int devmem_book__entry(const struct devmem_book *b, size_t i, struct devmem_book_entry *out)
{
	const struct book_entry *e;

	if (i >= b->n)
		return -ENOENT;
	e = &b->e[i];
	memset(out, 0, sizeof(*out));
	out->alloc.pid = e->key.pid;
	out->alloc.device = e->ordinal;
	out->alloc.layer = e->key.layer;
	out->name = e->name;
	out->in_use = e->last.in_use;
	out->peak = e->last.peak;
	out->peak_ns = e->last.peak_ns;
	out->allocs = e->last.allocs;
	out->frees = e->last.frees;
	out->frees_unknown = e->last.frees_unknown;
	out->untracked = e->last.untracked;
	out->untracked_bytes = e->last.untracked_bytes;
	out->exited_ns = e->exited_ns;
	return 0;
}

size_t devmem_book__bytes(const struct devmem_book *b)
{
	size_t bytes = sizeof(*b) + b->cap * sizeof(*b->e);

	for (size_t i = 0; i < b->n; i++)
		bytes += devmem_timeline__bytes(b->e[i].tl);
	return bytes;
}

uint64_t devmem_book__refused(const struct devmem_book *b)
{
	return b->refused;
}
