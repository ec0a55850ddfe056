// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A PJRT library's API table and its slot probes (runtime_attach.h): the
 * table found by scanning a running process's memory, or by GetPjrtApi's
 * return; checked (pjrt_api.c), then a uprobe on every slot the probe pack
 * names. A table refused is said at each process's 1st, 2nd, 4th, ...
 * refusal and counted.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

#define LOG_CONTEXT "attach"
#include "lib/clock.h"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "discover/pjrt_api.h"
#include "discover/proc_maps.h"
#include "attach/runtime_attach.h"
#include "attach/runtime_attach_internal.h"

/* A scan's refusal is final only this long after the first scan. */
#define SCAN_SETTLE_NS (500 * 1000000ull)


static void attach_slot_probes(struct runtime_attach *ra, struct library *lib,
			       struct pjrt_api *api)
{
	const struct rt_pack *pack = lib->pub.pack;
	size_t first = ra->n_probes;
	char file[64];

	lib->pub.has_table = true;
	lib->pub.table_refused = false;
	lib->pub.table_addr = pjrt_api__addr(api);
	lib->pub.pjrt_major = pjrt_api__major(api);
	lib->pub.pjrt_minor = pjrt_api__minor(api);
	snprintf(lib->pub.table_note, sizeof(lib->pub.table_note), "%s",
		 pjrt_api__note(api) ? pjrt_api__note(api) : "");
	if (lib->pub.slots_attached)
		return;
	for (size_t i = 0; i < pack->n_entries; i++) {
		const struct rt_pack_entry *e = &pack->entries[i];
		struct pjrt_probe_target t;
		struct attached_probe *p;

		if (e->target != RT_TARGET_PJRT)
			continue;
		if (pjrt_api__probe_target(api, e->pjrt_fn, &t))
			continue;	/* not in this minor's table, or NULL */
		p = runtime_attach_new_probe(ra, e, &lib->pub);
		if (!p)
			break;
		snprintf(p->target, sizeof(p->target), "PJRT_Api slot %d", t.slot);
		p->file_offset = t.file_offset;
		p->placement = t.placement;
		p->attach_offset = t.attach_offset;
		/* The file the slot's address maps, which gave the offsets. */
		runtime_attach_file(ra, t.fd, t.dev, t.ino, file, sizeof(file));
		snprintf(p->attach_path, sizeof(p->attach_path), "%s", file);
	}
	/* Batched by file: most slots lie in the table's own library. */
	runtime_attach_new_probes(ra, lib, first, NULL);
	lib->pub.slots_attached = true;
}

/*
 * Whether to say a PJRT table refusal in @pid, the @nth there: at the 1st,
 * 2nd, 4th, 8th, ... A process that loads and unloads a plugin in a loop
 * (thousands of times a second) leaves a bounded log; every refusal is
 * counted (runtime_attach__refusals, the daemon's metrics).
 */
static bool refusal_to_say(struct runtime_attach *ra, pid_t pid, uint64_t *nth)
{
	uintptr_t n = 1;

	ra->refusals_total++;
	if (!ra->refusals)
		ra->refusals = hashmap__new();
	if (ra->refusals) {
		n = (uintptr_t)hashmap__get(ra->refusals, (uint64_t)pid, 0) + 1;
		hashmap__put(ra->refusals, (uint64_t)pid, 0, (void *)n, NULL);
	}
	*nth = n;
	return !(n & (n - 1));
}

uint64_t runtime_attach__refusals(const struct runtime_attach *ra)
{
	return ra ? ra->refusals_total : 0;
}

/* A running process's table: found by scanning, since GetPjrtApi ran. */
void runtime_attach_find_table(struct runtime_attach *ra, struct library *lib, pid_t pid,
			       const char *maps_path)
{
	char reason[1024] = "";
	struct pjrt_api *api;

	/* Found, or refused in this process's memory already: the rescans
	 * that call this four times a second need not scan it again. */
	if (lib->pub.has_table || (lib->pub.table_refused && lib->refused_pid == pid))
		return;
	if (lib->scan_pid != pid) {
		lib->scan_pid = pid;
		lib->first_scan_ns = mono_ns();
	}
	api = pjrt_api__scan(pid, maps_path, reason, sizeof(reason));
	if (!api) {
		/* ENOENT: not initialised yet; GetPjrtApi's return will tell.
		 * A library caught as it is mapped is scanned while it starts:
		 * what looks invalid then may be a table half filled, so while
		 * tracing the rescans look again before refusing it (a plan,
		 * `acceltrace probes`, looks once). */
		if (errno != ENOENT &&
		    (!ra->ps || mono_ns() - lib->first_scan_ns >= SCAN_SETTLE_NS)) {
			uint64_t nth;

			lib->pub.table_refused = true;
			lib->refused_pid = pid;
			if (refusal_to_say(ra, pid, &nth))
				log_warn("refusing the PJRT table of %s in process %d: %s "
					 "(refusal %" PRIu64 " there; said at powers of two)",
					 lib->pub.path, pid, reason, nth);
		}
		snprintf(lib->pub.table_note, sizeof(lib->pub.table_note), "%s", reason);
		return;
	}
	lib->pub.table_scanned = true;
	lib->pub.table_pid = pid;
	attach_slot_probes(ra, lib, api);
	pjrt_api__free(api);
}

int runtime_attach__on_pjrt_api(struct runtime_attach *ra, pid_t pid,
				uint64_t table)
{
	struct library *lib = NULL;
	char reason[1024] = "";
	struct pjrt_api *api;
	struct proc_maps *maps = proc_maps__read(pid);

	if (!maps)
		return -errno;
	/* Whichever PJRT library this process maps the table belongs to,
	 * named as this process maps it (the name pjrt_api finds it by). */
	for (size_t i = 0; i < ra->n_libs; i++) {
		struct library *l = ra->libs[i];
		const struct proc_object *o = NULL;

		if (!l->pub.pack->pjrt)
			continue;
		for (size_t j = 0; j < proc_maps__object_count(maps) && !o; j++) {
			const struct proc_object *c = proc_maps__object(maps, j);
			uint64_t dev = makedev(c->dev_major, c->dev_minor);

			if ((dev == l->map_dev && c->inode == l->map_ino) ||
			    (dev == l->pub.dev && c->inode == l->pub.ino))
				o = c;
		}
		if (!o)
			continue;	/* not mapped by this process */
		api = pjrt_api__from_getpjrtapi(pid, o->path, table, reason, sizeof(reason));
		if (api) {
			l->pub.table_scanned = false;
			l->pub.table_pid = pid;
			runtime_attach_add_user(ra, l, pid);
			attach_slot_probes(ra, l, api);
			pjrt_api__free(api);
			proc_maps__free(maps);
			return 0;
		}
		if (errno != ENOENT)
			lib = l;	/* mapped, but the table was refused */
	}
	proc_maps__free(maps);
	if (lib) {
		uint64_t nth;

		lib->pub.table_refused = true;
		snprintf(lib->pub.table_note, sizeof(lib->pub.table_note), "%s", reason);
		if (refusal_to_say(ra, pid, &nth))
			log_warn("refusing the PJRT table GetPjrtApi returned in process %d: %s "
				 "(refusal %" PRIu64 " there; said at powers of two)", pid, reason,
				 nth);
	}
	return -EINVAL;
}
