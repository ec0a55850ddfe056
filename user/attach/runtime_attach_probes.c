// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probes of runtime_attach: each one's record, the file it is placed
 * in (held open by descriptor, so every attach lands on the inode that was
 * read), their attach (a library's in one batch) and detach, and the detail
 * switch that parks and brings back the detail ones.
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
#include "attach/runtime_attach.h"
#include "attach/runtime_attach_internal.h"

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

/* Whether @p is to be attached now (1), needs nothing more (0: planning,
 * or a detail probe parked while detail is off) or cannot be (-errno, in
 * p->error too). */
static int probe_ready(struct runtime_attach *ra, struct attached_probe *p, const char *path)
{
	char why[256];

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
	return 1;
}

/* Probes @a and @b go in one batch: the same file, the same library (so
 * that they are detached together, as library_drop_probes does); a
 * callback's probe goes alone (each is detached with its last user). */
static bool same_batch(const struct attached_probe *a, const struct attached_probe *b)
{
	return a->lib && a->lib == b->lib && !strcmp(a->attach_path, b->attach_path);
}

/* Attaches @n probes ready in one batch (same_batch). */
static void attach_batch(struct runtime_attach *ra, struct attached_probe **batch, size_t n)
{
	const struct rt_probe_spec **specs = calloc(n, sizeof(*specs));
	struct rt_probe_spec *spec = calloc(n, sizeof(*spec));
	uint64_t *offsets = calloc(n, sizeof(*offsets));
	int *ids = calloc(n, sizeof(*ids));

	if (!specs || !spec || !offsets || !ids) {
		for (size_t i = 0; i < n; i++)
			batch[i]->error = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		rt_pack_entry__spec(batch[i]->entry, &spec[i]);
		specs[i] = &spec[i];
		offsets[i] = batch[i]->attach_offset;
	}
	probe_session__attach_runtime_many(ra->ps, specs, batch[0]->attach_path, offsets, n,
					   ids);
	for (size_t i = 0; i < n; i++) {
		struct attached_probe *p = batch[i];

		if (ids[i] < 0) {
			log_warn("cannot probe %s in %s at 0x%llx: %s", p->entry->name,
				 probe_where(p), (unsigned long long)p->attach_offset,
				 strerror(-ids[i]));
			p->error = ids[i];
			continue;
		}
		p->probe_id = ids[i];
		ra->by_id[ids[i]] = p;
		log_debug("probe %d: %s at %s+0x%llx (%s)", ids[i], p->entry->name,
			  probe_where(p), (unsigned long long)p->attach_offset, p->attach_path);
	}
out:
	free(specs);
	free(spec);
	free(offsets);
	free(ids);
}

size_t runtime_attach_attach_many(struct runtime_attach *ra, struct attached_probe **probes,
				  const char *const *paths, size_t n)
{
	struct attached_probe **ready = calloc(n + 1, sizeof(*ready));
	struct attached_probe **batch = calloc(n + 1, sizeof(*batch));
	size_t n_ready = 0, ok = 0;

	for (size_t i = 0; i < n; i++) {
		if (probe_ready(ra, probes[i], paths ? paths[i] : probes[i]->attach_path) <= 0)
			continue;
		if (ready && batch)
			ready[n_ready++] = probes[i];
		else
			attach_batch(ra, &probes[i], 1);	/* no memory: one each */
	}
	/* Batches in the order met: one session call (with uprobe_multi, one
	 * link per program) for each. */
	for (size_t i = 0; i < n_ready; i++) {
		size_t m = 0;

		if (!ready[i])
			continue;
		for (size_t j = i; j < n_ready; j++) {
			if (ready[j] && (j == i || same_batch(ready[i], ready[j]))) {
				batch[m++] = ready[j];
				if (j != i)
					ready[j] = NULL;
			}
		}
		attach_batch(ra, batch, m);
	}
	for (size_t i = 0; i < n; i++)
		ok += !probes[i]->error;
	free(ready);
	free(batch);
	return ok;
}

int runtime_attach_attach_probe(struct runtime_attach *ra, struct attached_probe *p,
				const char *path)
{
	runtime_attach_attach_many(ra, &p, &path, 1);
	return p->error;
}

void runtime_attach_detach_probe(struct runtime_attach *ra, struct attached_probe *p)
{
	if (ra->ps && p->probe_id >= 0) {
		probe_session__detach_runtime(ra->ps, p->probe_id);
		ra->by_id[p->probe_id] = NULL;
	}
	p->probe_id = -1;
}

/* ---------------------------------------------------------------- detail */

static bool attached_detail_probe(const struct attached_probe *p, const void *arg)
{
	(void)arg;
	return p->probe_id >= 0 && rt_event_kind_is_detail(p->entry->event);
}

/* Whether a parked probe is still wanted: its library or callback is in use. */
static bool in_use(const struct runtime_attach *ra, const struct attached_probe *p)
{
	if (p->lib)
		return p->lib->users || p->lib->pinned;
	for (size_t i = 0; i < ra->n_callbacks; i++)
		if (ra->callbacks[i].probe == p)
			return ra->callbacks[i].n_users;
	return false;
}

size_t runtime_attach__set_detail(struct runtime_attach *ra, bool on)
{
	size_t n = 0;

	if (ra->detail_off == !on)
		return 0;
	ra->detail_off = !on;
	if (!on)
		return runtime_attach_detach_matching(ra, attached_detail_probe, NULL);
	/* Parked: a detail probe not attached, without an error, whose
	 * library or callback is still in use. All at once: with
	 * uprobe_multi, a library's are one link per program, so a sampled
	 * slice costs a few link creations, not one per probe. */
	{
		struct attached_probe **parked = calloc(ra->n_probes + 1, sizeof(*parked));
		size_t m = 0;

		for (size_t i = 0; i < ra->n_probes; i++) {
			struct attached_probe *p = ra->probes[i];

			if (p->probe_id >= 0 || p->error || !p->attach_path[0] ||
			    !rt_event_kind_is_detail(p->entry->event) || !in_use(ra, p))
				continue;
			if (parked)
				parked[m++] = p;
			else if (!runtime_attach_attach_probe(ra, p, p->attach_path))
				n++;
		}
		if (m)
			runtime_attach_attach_many(ra, parked, NULL, m);
		for (size_t i = 0; i < m; i++)
			n += parked[i]->probe_id >= 0;
		free(parked);
	}
	return n;
}
