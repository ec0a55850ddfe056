/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Every allocator's timeline (devmem_timeline.h), fed by samples of the
 * kernel's per (pid, layer, device) aggregates (struct at_mem_agg): the
 * daemon samples once a second for the whole life of each process it
 * watches, `record` each tick of its window. Bounded: at most max_allocators
 * at once; an exited process's timelines are kept for keep_after_exit_ns
 * (its last capture may still want them), then dropped.
 */
#ifndef ACCELTRACE_DEVMEM_BOOK_H
#define ACCELTRACE_DEVMEM_BOOK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "acceltrace/events.h"
#include "capture/capture_memory.h"
#include "devmem/devmem_timeline.h"

struct capture;
struct devmem_book;

struct devmem_book_opts {
	size_t sz;
	const struct devmem_tier *tiers;	/* NULL: the timeline defaults */
	size_t n_tiers;
	uint32_t max_allocators;		/* 0: 1024 */
	uint64_t keep_after_exit_ns;		/* 0: 10 minutes */
};
#define devmem_book_opts__last_field keep_after_exit_ns

/*
 * Names an aggregate: its device ordinal (a PJRT_Device handle resolved by
 * whoever knows the process's devices) and platform ("GPU", "TPU"; NULL
 * while no runtime said: named by the layer's guess, and again once
 * known). Returns false when it cannot yet (the sample is skipped, not
 * misfiled).
 */
typedef bool (*devmem_resolve_fn)(void *ctx, const struct at_mem_agg_key *key,
				  uint32_t *ordinal, const char **platform);

struct devmem_book *devmem_book__new(const struct devmem_book_opts *opts);
void devmem_book__free(struct devmem_book *b);
/* One aggregate's sample at @now_ns (CLOCK_MONOTONIC). -ENOSPC past
 * max_allocators (counted, said once), -EAGAIN when @resolve cannot name
 * a new allocator yet (skipped), -ENOMEM. */
int devmem_book__sample(struct devmem_book *b, uint64_t now_ns, const struct at_mem_agg_key *key,
			const struct at_mem_agg *agg, devmem_resolve_fn resolve, void *ctx);
/* @pid exited at @now_ns: its timelines stop and are dropped later. */
void devmem_book__process_exited(struct devmem_book *b, uint32_t pid, uint64_t now_ns);
/* Drops what was kept past keep_after_exit_ns. */
void devmem_book__expire(struct devmem_book *b, uint64_t now_ns);
/* Writes the timelines of @pid (0: every process) into @cap, from
 * @since_ns on (0: all they hold). Returns how many, or -errno. */
int devmem_book__to_capture(const struct devmem_book *b, struct capture *cap, uint32_t pid,
			    uint64_t since_ns);

/* For metrics and tests. */
struct devmem_book_entry {
	struct capture_mem_allocator alloc;	/* name is the book's own string */
	const char *name;
	uint64_t in_use;
	uint64_t peak;
	uint64_t peak_ns;
	uint64_t allocs, frees, frees_unknown;
	/* Allocations the kernel's live table had no room for, and their
	 * bytes: in_use is short by at most these (struct at_mem_agg). */
	uint64_t untracked, untracked_bytes;
	uint64_t exited_ns;			/* 0: alive */
};
size_t devmem_book__count(const struct devmem_book *b);
int devmem_book__entry(const struct devmem_book *b, size_t i, struct devmem_book_entry *out);
/* Bytes the book holds, timelines included. */
size_t devmem_book__bytes(const struct devmem_book *b);
/* Samples refused past max_allocators. */
uint64_t devmem_book__refused(const struct devmem_book *b);

#endif /* ACCELTRACE_DEVMEM_BOOK_H */
