// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The XSpace writer's per-plane stat metadata table (see xspace_stats.h):
 * two string tables, the plane's stat names and the fixed list of
 * metadata-level names, and a map from capture string ids to stat ids so
 * that a span's arg keys are looked up by id, not hashed each time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/capture.h"
#include "lib/array.h"
#include "lib/strtab.h"
#include "output/xspace_stats.h"

/*
 * Per-op constants that XProf reads from XEventMetadata.stats, not from the
 * event (xprof-contract.md 1.2, "Metadata-level stats"). On device planes
 * these args go to the metadata of the event's name, from its first
 * occurrence; an occurrence with a different value carries it itself.
 */
static const char *const metadata_stat_names[] = {
	"program_id", "hlo_category", "tf_op", "tf_op_name", "flops",
	"model_flops", "bytes_accessed", "raw_bytes_accessed",
	"memory_access_breakdown", "deduplicated_name", "source",
	"source_stack", "hlo_module", "long_name", "shape_with_layout",
};

int xspace_stats__init(struct xspace_stats *t)
{
	memset(t, 0, sizeof(*t));
	t->names = strtab__new();
	t->md_names = strtab__new();
	if (!t->names || !t->md_names)
		return -ENOMEM;
	for (size_t i = 0; i < sizeof(metadata_stat_names) / sizeof(metadata_stat_names[0]); i++) {
		const char *s = metadata_stat_names[i];

		if (!strtab__intern(t->md_names, s, strlen(s)))
			return -ENOMEM;
	}
	return 0;
}

void xspace_stats__free(struct xspace_stats *t)
{
	strtab__free(t->names);
	strtab__free(t->md_names);
	free(t->md_stat);
	u64_map__free(&t->by_sid);
	memset(t, 0, sizeof(*t));
}

void xspace_stats__reset(struct xspace_stats *t)
{
	strtab__clear(t->names);
	u64_map__clear(&t->by_sid);
	t->oom = false;
}

uint32_t xspace_stats__id(struct xspace_stats *t, const char *name)
{
	size_t n = strtab__count(t->names), len = strlen(name);
	uint32_t id;

	/* Room for a new id's flag first, so a name is never half added. */
	if (ARRAY_GROW(t->md_stat, t->md_cap, n + 1)) {
		t->oom = true;
		return 0;
	}
	id = strtab__intern(t->names, name, len);
	if (!id) {
		t->oom = true;
		return 0;
	}
	if (id == n)	/* new */
		t->md_stat[id] = strtab__find(t->md_names, name, len) != 0;
	return id;
}

uint32_t xspace_stats__id_of(struct xspace_stats *t, const struct capture *c,
			     uint32_t sid)
{
	const char *s;
	uint32_t id = u64_map__get(&t->by_sid, sid);

	if (id != U64_MAP_NONE)
		return id;
	s = capture__string(c, sid);
	if (!s || !s[0])
		return 0;
	id = xspace_stats__id(t, s);
	if (id && u64_map__put(&t->by_sid, sid, id)) {
		t->oom = true;
		return 0;
	}
	return id;
}

bool xspace_stats__is_md(const struct xspace_stats *t, uint32_t id)
{
	return id && id < strtab__count(t->names) && t->md_stat[id];
}

size_t xspace_stats__count(const struct xspace_stats *t)
{
	return strtab__count(t->names);
}

const char *xspace_stats__name(const struct xspace_stats *t, uint32_t id)
{
	return strtab__str(t->names, id);
}
