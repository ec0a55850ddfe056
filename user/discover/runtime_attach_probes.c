// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probes of runtime_attach: each one's record, the file it is placed
 * in (held open by descriptor, so every attach lands on the inode that was
 * read), its attach and detach.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_CONTEXT "attach"
#include "lib/log.h"
#include "lib/array.h"
#include "probe/probe_session.h"
#include "discover/runtime_attach.h"
#include "discover/runtime_attach_internal.h"

/* ---------------------------------------------------------------- probes */

struct attached_probe *runtime_attach_new_probe(struct runtime_attach *ra,
						const struct rt_pack_entry *e,
						const struct attached_library *lib)
{
	struct attached_probe *p;

	if (ARRAY_GROW(ra->probes, ra->cap_probes, ra->n_probes + 1))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->probe_id = -1;
	p->entry = e;
	p->lib = lib;
	ra->probes[ra->n_probes++] = p;
	return p;
}

int runtime_attach_file(struct runtime_attach *ra, int fd, uint64_t dev, uint64_t ino,
			char *path, size_t size)
{
	struct probe_file *f = NULL;

	path[0] = '\0';
	for (size_t i = 0; i < ra->n_files && !f; i++)
		if (ra->files[i].dev == dev && ra->files[i].ino == ino)
			f = &ra->files[i];
	if (!f) {
		int held;

		if (ARRAY_GROW(ra->files, ra->cap_files, ra->n_files + 1))
			return -ENOMEM;
		/* Held while acceltrace runs: the inode cannot be reused
		 * meanwhile, so (dev, ino) keeps naming this file. */
		held = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (held < 0)
			return -errno;
		f = &ra->files[ra->n_files++];
		*f = (struct probe_file){ .dev = dev, .ino = ino, .fd = held };
	}
	snprintf(path, size, "/proc/self/fd/%d", f->fd);
	return 0;
}

/* What messages call @p's file: its library, or its target. */
static const char *probe_where(const struct attached_probe *p)
{
	return p->lib ? p->lib->path : p->target;
}

int runtime_attach_attach_probe(struct runtime_attach *ra, struct attached_probe *p,
				const char *path)
{
	struct rt_probe_spec spec;
	char why[256];
	int id;

	if (rt_pack_entry__validate(p->entry, why, sizeof(why))) {
		log_err("probe pack entry refused: %s", why);
		return p->error = -EINVAL;
	}
	/* An instruction the kernel will not probe at all (lock prefix...). */
	if (p->placement.refused) {
		log_warn("cannot probe %s in %s: %s", p->entry->name, probe_where(p),
			 p->placement.why);
		return p->error = -EOPNOTSUPP;
	}
	if (!path[0])
		return p->error = -EBADF;	/* no descriptor for its file */
	if (!ra->ps)
		return 0;
	if (path != p->attach_path)
		snprintf(p->attach_path, sizeof(p->attach_path), "%s", path);
	/* A detail probe waits for detail to come back on (set_detail). */
	if (ra->detail_off && rt_event_kind_is_detail(p->entry->event))
		return 0;
	rt_pack_entry__spec(p->entry, &spec);
	id = probe_session__attach_runtime(ra->ps, &spec, path, p->attach_offset, -1);
	if (id < 0) {
		log_warn("cannot probe %s in %s at 0x%llx: %s", p->entry->name, probe_where(p),
			 (unsigned long long)p->attach_offset, strerror(-id));
		return p->error = id;
	}
	p->probe_id = id;
	ra->by_id[id] = p;
	log_debug("probe %d: %s at %s+0x%llx (%s)", id, p->entry->name, probe_where(p),
		  (unsigned long long)p->attach_offset, path);
	return 0;
}

void runtime_attach_detach_probe(struct runtime_attach *ra, struct attached_probe *p)
{
	if (ra->ps && p->probe_id >= 0) {
		probe_session__detach_runtime(ra->ps, p->probe_id);
		ra->by_id[p->probe_id] = NULL;
	}
	p->probe_id = -1;
}

