/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An XPlane's stat metadata table for the XSpace writer: stat names,
 * unique by content, get ids from 1 in the order first used (the ids
 * XStat.metadata_id refers to); each knows whether XProf reads it from
 * the event's metadata rather than the event (a "metadata-level" stat,
 * xprof-contract.md 1.2). Reset for every plane.
 */
#ifndef ACCELTRACE_XSPACE_STATS_H
#define ACCELTRACE_XSPACE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/u64_map.h"

struct capture;
struct strtab;

struct xspace_stats {
	struct strtab *names;	/* stat id -> name; id 0 ("") unused */
	bool *md_stat;		/* by id: a metadata-level stat */
	size_t md_cap;
	struct u64_map by_sid;	/* capture string id -> stat id */
	struct strtab *md_names;	/* the metadata-level names */
	bool oom;		/* an allocation failed: the plane is incomplete */
};

/* 0 or -ENOMEM; free with xspace_stats__free either way. */
int xspace_stats__init(struct xspace_stats *t);
void xspace_stats__free(struct xspace_stats *t);
/* Empty again, for the next plane. */
void xspace_stats__reset(struct xspace_stats *t);

/* The id of a name, added when new; 0 (and t->oom) out of memory. */
uint32_t xspace_stats__id(struct xspace_stats *t, const char *name);
/* The id of a capture string; 0 for "" or an unknown id, or (t->oom) no memory. */
uint32_t xspace_stats__id_of(struct xspace_stats *t, const struct capture *c,
			     uint32_t sid);
/* Whether stat id is metadata-level. */
bool xspace_stats__is_md(const struct xspace_stats *t, uint32_t id);
/* Ids run from 1 to xspace_stats__count() - 1. */
size_t xspace_stats__count(const struct xspace_stats *t);
const char *xspace_stats__name(const struct xspace_stats *t, uint32_t id);

#endif /* ACCELTRACE_XSPACE_STATS_H */
