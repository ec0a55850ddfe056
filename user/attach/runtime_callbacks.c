// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * OnReady callbacks: they live in the framework's code, not the plugin's,
 * so each is found at run time, from the address OnReady registered, and
 * probed once per function (file, offset) for every process that
 * registers it (see runtime_attach.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_CONTEXT "attach"
#include "lib/log.h"
#include "discover/elf_image.h"
#include "discover/probe_packs.h"
#include "discover/probe_placement.h"
#include "discover/proc_maps.h"
#include "attach/runtime_attach.h"
#include "attach/runtime_attach_internal.h"

int runtime_attach__on_callback(struct runtime_attach *ra, pid_t pid,
				uint64_t addr)
{
	const struct proc_map *m;
	struct attached_probe *p;
	struct elf_image *elf = NULL;
	struct proc_maps *maps;
	uint64_t off, vaddr;
	struct callback *cb;
	char file[64];
	struct stat st;
	int err = 0, pfd = -1;

	if (runtime_attach__callback_ready(ra, pid, addr))
		return 0;
	maps = proc_maps__read(pid);
	if (!maps)
		return -errno;
	/* The file that maps the function, by its mapping: the offset is in
	 * it, its code decides the placement, the probe goes on it. */
	if (proc_maps__addr_to_file_offset(maps, addr, &m, &off) ||
	    (pfd = proc_map__open(pid, m, &st)) < 0) {
		err = -ENOENT;
		goto out;
	}
	for (size_t i = 0; i < ra->n_callbacks; i++) {
		cb = &ra->callbacks[i];
		if (cb->dev != st.st_dev || cb->ino != st.st_ino || cb->offset != off)
			continue;
		/* The same function, another process (or the same one again). */
		if (cb->n_users < MAX_CALLBACK_USERS) {
			cb->users[cb->n_users].pid = pid;
			cb->users[cb->n_users].addr = addr;
			cb->n_users++;
		}
		/* Its last user had gone: probe it again, in the file held. */
		if (cb->probe && cb->probe->probe_id < 0)
			err = runtime_attach_attach_probe(ra, cb->probe, cb->probe->attach_path);
		goto out;
	}
	if (ra->n_callbacks == MAX_CALLBACKS) {
		if (!ra->callbacks_full_warned)
			log_warn("more than %d distinct OnReady callbacks: later ones are not probed",
				 MAX_CALLBACKS);
		ra->callbacks_full_warned = true;
		err = -E2BIG;
		goto out;
	}
	p = runtime_attach_new_probe(ra, rt_pack_callback_entry(), NULL);
	if (!p) {
		err = -ENOMEM;
		goto out;
	}
	snprintf(p->target, sizeof(p->target), "callback %.60s+0x%llx",
		 strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path,
		 (unsigned long long)off);
	p->file_offset = off;
	elf = elf_image__reopen(pfd, m->path);
	if (!elf || elf_image__offset_to_vaddr(elf, off, &vaddr) ||
	    probe_placement__for_vaddr(elf, vaddr, &p->placement))
		memset(&p->placement, 0, sizeof(p->placement));
	p->attach_offset = off + p->placement.offset;
	runtime_attach_file(ra, pfd, st.st_dev, st.st_ino, file, sizeof(file));
	err = runtime_attach_attach_probe(ra, p, file);
	cb = &ra->callbacks[ra->n_callbacks++];
	cb->dev = st.st_dev;
	cb->ino = st.st_ino;
	cb->offset = off;
	cb->probe = p;
	cb->users[0].pid = pid;
	cb->users[0].addr = addr;
	cb->n_users = 1;
	log_debug("probing OnReady callback %s (process %d)", p->target, pid);
out:
	elf_image__free(elf);
	if (pfd >= 0)
		close(pfd);
	proc_maps__free(maps);
	return err;
}

bool runtime_attach__callback_ready(struct runtime_attach *ra, pid_t pid,
				    uint64_t addr)
{
	for (size_t i = 0; i < ra->n_callbacks; i++) {
		const struct callback *cb = &ra->callbacks[i];

		for (unsigned int u = 0; u < cb->n_users; u++)
			if (cb->users[u].pid == pid && cb->users[u].addr == addr)
				return cb->probe && cb->probe->probe_id >= 0;
	}
	return false;
}
