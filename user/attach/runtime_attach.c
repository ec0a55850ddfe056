// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Runtime-library discovery and uprobe placement. Uprobes are keyed by file
 * and offset, so each library file is probed once, for every process that
 * maps it (the BPF side keeps only traced processes); a library no traced
 * process maps any more loses its probes. A PJRT library's slot probes,
 * from its API table, are runtime_attach_tables.c; OnReady callbacks,
 * found at run time, are runtime_callbacks.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define LOG_CONTEXT "attach"
#include "lib/hashmap.h"
#include "lib/log.h"
#include "lib/array.h"
#include "discover/device_nodes.h"
#include "discover/elf_image.h"
#include "probe/probe_session.h"
#include "discover/proc_maps.h"
#include "discover/procfs.h"
#include "attach/runtime_attach.h"
#include "attach/runtime_attach_internal.h"
#include "discover/runtime_kind.h"
#include "discover/safe_open.h"

/* ---------------------------------------------------------------- libraries */

static struct library *find_library(struct runtime_attach *ra, uint64_t dev,
				    uint64_t ino)
{
	for (size_t i = 0; i < ra->n_libs; i++) {
		const struct library *l = ra->libs[i];

		if ((l->pub.dev == dev && l->pub.ino == ino) ||
		    (l->map_dev == dev && l->map_ino == ino))
			return ra->libs[i];
	}
	return NULL;
}

/* Attaches the probes made since @first, the library's in one batch (with
 * uprobe_multi, one link per program for them all). */
void runtime_attach_new_probes(struct runtime_attach *ra, struct library *lib, size_t first,
			       const char *const *paths)
{
	if (ra->n_probes > first)
		lib->pub.n_probes += runtime_attach_attach_many(ra, ra->probes + first, paths,
								ra->n_probes - first);
}

static void attach_symbol_probes(struct runtime_attach *ra, struct library *lib)
{
	const struct rt_pack *pack = lib->pub.pack;
	size_t first = ra->n_probes;
	char file[64];

	/* The file the symbols were read from, and no other. */
	if (runtime_attach_file(ra, elf_image__fd(lib->elf), lib->pub.dev, lib->pub.ino, file,
				sizeof(file)))
		log_warn("cannot hold %s open: its probes are not attached", lib->pub.path);

	for (size_t i = 0; i < pack->n_entries; i++) {
		const struct rt_pack_entry *e = &pack->entries[i];
		struct elf_symbol sym;
		struct attached_probe *p;
		uint64_t off;

		if (e->target != RT_TARGET_SYMBOL)
			continue;
		/* An entry whose function this library lacks costs nothing. */
		if (elf_image__find_symbol(lib->elf, e->symbol, &sym))
			continue;
		if (sym.type != 2 /* STT_FUNC */) {
			log_debug("%s in %s is not a plain function (type %d): skipped",
				  e->symbol, lib->pub.path, sym.type);
			continue;
		}
		if (elf_image__vaddr_to_offset(lib->elf, sym.value, &off))
			continue;
		p = runtime_attach_new_probe(ra, e, &lib->pub);
		if (!p)
			break;
		snprintf(p->target, sizeof(p->target), "symbol %s", e->name);
		p->file_offset = off;
		if (probe_placement__for_vaddr(lib->elf, sym.value, &p->placement))
			memset(&p->placement, 0, sizeof(p->placement));
		p->attach_offset = off + p->placement.offset;
		/* Where runtime_attach_attach_many() finds it (an empty
		 * name: no descriptor, refused there). */
		snprintf(p->attach_path, sizeof(p->attach_path), "%s", file);
	}
	runtime_attach_new_probes(ra, lib, first, NULL);
}

/*
 * The library open at @path_fd (O_PATH, checked by safe_open.h; stat @st),
 * @name for people: known already by its identity, or read through that
 * descriptor and probed.
 */
static struct library *library_get(struct runtime_attach *ra, int path_fd,
				   const struct stat *st, const char *name,
				   const struct runtime_kind *kind)
{
	const struct rt_pack *pack = kind->pack;
	struct library *lib;

	lib = find_library(ra, st->st_dev, st->st_ino);
	if (lib)
		return lib;
	if (ARRAY_GROW(ra->libs, ra->cap_libs, ra->n_libs + 1))
		return NULL;
	lib = calloc(1, sizeof(*lib));
	if (!lib)
		return NULL;
	snprintf(lib->pub.path, sizeof(lib->pub.path), "%s", name);
	lib->pub.dev = lib->map_dev = st->st_dev;
	lib->pub.ino = lib->map_ino = st->st_ino;
	lib->pub.pack = pack;
	snprintf(lib->pub.recognised_by, sizeof(lib->pub.recognised_by), "%s", kind->why);
	lib->elf = elf_image__reopen(path_fd, name);
	if (!lib->elf) {
		log_warn("cannot read %s: %s", name, strerror(errno));
		free(lib);
		return NULL;
	}
	if (elf_image__build_id(lib->elf, lib->pub.build_id, sizeof(lib->pub.build_id)))
		lib->pub.build_id[0] = '\0';
	ra->libs[ra->n_libs++] = lib;
	log_debug("runtime library %s (%s: %s; build id %s)", name, pack->name,
		  kind->why, lib->pub.build_id[0] ? lib->pub.build_id : "none");
	attach_symbol_probes(ra, lib);
	return lib;
}

/*
 * Counts @pid among @lib's users. The first user after the last one left
 * gets back every probe the library had (symbols, PJRT slots: they were
 * detached, not forgotten).
 */
void runtime_attach_add_user(struct runtime_attach *ra, struct library *lib, pid_t pid)
{
	for (unsigned int i = 0; i < lib->pub.users; i++)
		if (lib->users[i] == pid)
			return;
	if (!lib->pub.users && ra->ps) {
		struct attached_probe **again = calloc(ra->n_probes + 1, sizeof(*again));
		size_t n = 0;

		for (size_t i = 0; i < ra->n_probes; i++) {
			struct attached_probe *p = ra->probes[i];

			/* In the file it was attached in: a slot's function
			 * may lie in another library than the table. */
			if (p->lib != &lib->pub || p->probe_id >= 0 || p->error)
				continue;
			if (again)
				again[n++] = p;
			else if (!runtime_attach_attach_probe(ra, p, p->attach_path))
				lib->pub.n_probes++;
		}
		if (n)
			lib->pub.n_probes += runtime_attach_attach_many(ra, again, NULL, n);
		free(again);
	}
	if (lib->pub.users < MAX_LIB_USERS)
		lib->users[lib->pub.users++] = pid;
}

/* ---------------------------------------------------------------- processes */

/* Library paths a process's environment names for later loading. */
static void add_environ_libraries(struct runtime_attach *ra, pid_t pid,
				  const char *root)
{
	static const char *const vars[] = {
		"TPU_LIBRARY_PATH=", "PJRT_NAMES_AND_LIBRARY_PATHS=",
	};
	char *env = NULL, *buf, *end;
	size_t len = 0;

	if (procfs_environ(pid, &env, &len))
		return;
	/* "NAME=value\0" each; the last may be cut short of its NUL. */
	for (buf = env, end = env + len; buf < end; buf += strnlen(buf, end - buf) + 1) {
		if (!memchr(buf, '\0', end - buf))
			break;
		for (size_t v = 0; v < sizeof(vars) / sizeof(vars[0]); v++) {
			size_t vl = strlen(vars[v]);
			char *list, *item, *save = NULL;

			if (strncmp(buf, vars[v], vl))
				continue;
			list = strdup(buf + vl);
			if (!list)
				continue;	/* found later by its mapping */
			/* TPU_LIBRARY_PATH is one path; the PJRT list is
			 * name:path pairs separated by commas. */
			for (item = strtok_r(list, ",", &save); item;
			     item = strtok_r(NULL, ",", &save)) {
				char *p = v ? strchr(item, ':') : NULL;
				struct runtime_kind kind;
				char full[PATH_MAX];
				struct stat st;
				int pfd;

				p = p ? p + 1 : item;
				if (p[0] != '/')
					continue;
				/* The process's to name: resolved in its root,
				 * opened only if a regular local file. */
				pfd = safe_open_in_root(pid, p, NULL, &st);
				if (pfd < 0)
					continue;
				/* Recognised by its exports, as if mapped. */
				snprintf(full, sizeof(full), "%s%s", root, p);
				if (!runtime_kind__of_fd(pfd, full, st.st_dev, st.st_ino, &kind) &&
				    kind.pack)
					library_get(ra, pfd, &st, full, &kind);
				close(pfd);
			}
			free(list);
		}
	}
	free(env);
}

struct fd_mark {
	int fd;
	enum fd_kind kind;
};

struct fd_walk {
	struct process_report *report;
	/* What the kernel is told once the walk is over. */
	struct fd_mark *marks;
	size_t n_marks, cap_marks;
};

static void mark_fd(struct fd_walk *w, int fd, enum fd_kind kind)
{
	/* Out of memory: the fd is marked when the kernel sees it used. */
	if (!ARRAY_GROW(w->marks, w->cap_marks, w->n_marks + 1))
		w->marks[w->n_marks++] = (struct fd_mark){ fd, kind };
}

/* Notes which fds are device nodes and eventfds. */
static int note_fd(void *ctx, int fd, const char *target)
{
	struct fd_walk *w = ctx;
	struct process_report *r = w->report;
	const struct device_node_pattern *pat;

	if (!strcmp(target, "anon_inode:[eventfd]")) {
		mark_fd(w, fd, FD_EVENTFD);
		if (r)
			r->n_eventfds++;
		return 0;
	}
	pat = device_node_match(target);
	if (!pat)
		return 0;
	mark_fd(w, fd, FD_DEVICE);
	if (r && r->n_device_nodes < 16) {
		r->device_nodes[r->n_device_nodes].fd = fd;
		snprintf(r->device_nodes[r->n_device_nodes].path,
			 sizeof(r->device_nodes[0].path), "%.127s", target);
		r->device_nodes[r->n_device_nodes].family = pat->family->name;
		r->n_device_nodes++;
	}
	return 0;
}

/* Tells the kernel which fds are device nodes and eventfds: the walk
 * only notes them, the writes follow it. */
static void add_process_fds(struct runtime_attach *ra, pid_t pid,
			    struct process_report *r)
{
	struct fd_walk w = { .report = r };

	procfs_for_each_fd(pid, note_fd, &w);
	for (size_t i = 0; ra->ps && i < w.n_marks; i++)
		probe_session__set_fd(ra->ps, pid, w.marks[i].fd, w.marks[i].kind);
	free(w.marks);
}

int runtime_attach__add_process(struct runtime_attach *ra, pid_t pid,
				struct process_report *r)
{
	struct proc_maps *maps;
	char root[64] = "";
	int found = 0;

	if (r) {
		memset(r, 0, sizeof(*r));
		r->pid = pid;
	}
	maps = proc_maps__read(pid);
	if (!maps)
		return -errno;
	if (proc_root_differs(pid) == 1) {
		procfs_root_path(pid, root, sizeof(root));
		if (r)
			r->in_container = true;
	}
	for (size_t i = 0; i < proc_maps__object_count(maps); i++) {
		const struct proc_object *o = proc_maps__object(maps, i);
		uint64_t dev = makedev(o->dev_major, o->dev_minor);
		struct runtime_kind kind;
		char name[PATH_MAX];
		struct library *lib;
		struct stat st;
		int pfd;

		/* Remembered per file: a hash lookup, but for new files. */
		if (runtime_kind__of_object(pid, maps, o, &kind) || !kind.pack)
			continue;
		lib = find_library(ra, dev, o->inode);
		if (!lib) {
			/* By its mapping, never by its name. */
			pfd = proc_map__open(pid, proc_maps__get(maps, o->first), &st);
			if (pfd < 0)
				continue;
			snprintf(name, sizeof(name), "%s%s", root, o->path);
			lib = library_get(ra, pfd, &st, name, &kind);
			close(pfd);
			if (!lib)
				continue;
			lib->map_dev = dev;
			lib->map_ino = o->inode;
		}
		found++;
		runtime_attach_add_user(ra, lib, pid);
		if (kind.pack->pjrt)
			runtime_attach_find_table(ra, lib, pid, o->path);
		if (r && r->n_libraries < 16)
			r->libraries[r->n_libraries++] = &lib->pub;
	}
	proc_maps__free(maps);
	add_environ_libraries(ra, pid, root);
	add_process_fds(ra, pid, r);
	return found;
}

static bool uses(const struct library *lib, pid_t pid)
{
	for (unsigned int i = 0; i < lib->pub.users; i++)
		if (lib->users[i] == pid)
			return true;
	return false;
}

int runtime_attach__on_mapped(struct runtime_attach *ra, pid_t pid,
			      const struct runtime_mapping *m)
{
	struct safe_open_want want = { .same_file = true, .dev = m->dev, .ino = m->ino };
	char path[96], name[PATH_MAX];
	struct runtime_kind kind;
	struct library *lib;
	struct stat st;
	ssize_t n;
	int pfd, err;

	if (!m->end)
		goto examine;	/* the kernel could not look the mapping up */
	lib = find_library(ra, m->dev, m->ino);
	if (lib) {
		if (uses(lib, pid))
			return 0;
		goto examine;
	}
	/* Known already (the C library, a framework's own code...): a hash
	 * lookup, no system call. */
	if (!runtime_kind__known(m->dev, m->ino, &kind) && !kind.pack)
		return 0;
	/* The mapping names the file whatever its path in the process (a
	 * container's root, a deleted file); the link says what ld.so
	 * opened, the name recognition takes as its hint. */
	procfs_map_file_path(pid, m->start, m->end, path, sizeof(path));
	n = readlink(path, name, sizeof(name) - 1);
	if (n < 0)
		goto examine;	/* changed meanwhile, or no privilege */
	name[n] = '\0';
	pfd = safe_open(pid, path, &want, &st);
	if (pfd < 0) {
		if (pfd == -ENOTSUP)
			return 0;	/* not a regular local file: never probed */
		goto examine;	/* remapped meanwhile */
	}
	err = runtime_kind__of_fd(pfd, name, m->dev, m->ino, &kind);
	close(pfd);
	if (err)
		goto examine;
	if (!kind.pack)
		return 0;	/* the C library, a framework's own code... */
examine:
	n = runtime_attach__add_process(ra, pid, NULL);
	return n < 0 ? (int)n : 1;
}

size_t runtime_attach_detach_matching(struct runtime_attach *ra,
			    bool (*match)(const struct attached_probe *p, const void *arg),
			    const void *arg)
{
	int *ids = calloc(ra->n_probes + 1, sizeof(*ids));
	size_t n = 0;

	for (size_t i = 0; i < ra->n_probes; i++) {
		struct attached_probe *p = ra->probes[i];

		if (!match(p, arg))
			continue;
		if (!ids) {
			n += p->probe_id >= 0;
			runtime_attach_detach_probe(ra, p);
			continue;
		}
		if (p->probe_id >= 0) {
			ids[n++] = p->probe_id;
			ra->by_id[p->probe_id] = NULL;
		}
		p->probe_id = -1;
	}
	if (ra->ps && n)
		probe_session__detach_runtime_many(ra->ps, ids, n);
	log_debug("detached %zu runtime probes", n);
	free(ids);
	return n;
}

static bool probe_of_library(const struct attached_probe *p, const void *lib)
{
	return p->lib == lib;
}

static bool any_probe(const struct attached_probe *p, const void *arg)
{
	(void)p;
	(void)arg;
	return true;
}

static void library_drop_probes(struct runtime_attach *ra, struct library *lib)
{
	runtime_attach_detach_matching(ra, probe_of_library, &lib->pub);
	lib->pub.n_probes = 0;
}

void runtime_attach__remove_process(struct runtime_attach *ra, pid_t pid)
{
	if (ra->refusals)
		hashmap__remove(ra->refusals, (uint64_t)pid, 0);
	for (size_t i = 0; i < ra->n_libs; i++) {
		struct library *lib = ra->libs[i];

		for (unsigned int u = 0; u < lib->pub.users; u++) {
			if (lib->users[u] != pid)
				continue;
			lib->users[u] = lib->users[--lib->pub.users];
			/* Nobody traced maps it: no probe stays behind. */
			if (!lib->pub.users && !lib->pub.pinned) {
				library_drop_probes(ra, lib);
				lib->pub.has_table = false;
			}
			break;
		}
	}
	for (size_t i = 0; i < ra->n_callbacks; i++) {
		struct callback *cb = &ra->callbacks[i];

		for (unsigned int u = 0; u < cb->n_users; u++) {
			if (cb->users[u].pid != pid)
				continue;
			cb->users[u] = cb->users[--cb->n_users];
			break;
		}
		if (!cb->n_users && cb->probe && cb->probe->probe_id >= 0)
			runtime_attach_detach_probe(ra, cb->probe);
	}
}

bool runtime_attach__settled(const struct runtime_attach *ra)
{
	for (size_t i = 0; i < ra->n_libs; i++) {
		const struct attached_library *l = &ra->libs[i]->pub;

		if (l->pack->pjrt && l->users && !l->slots_attached && !l->table_refused)
			return false;
	}
	return true;
}

enum rt_platform runtime_attach__platform(const struct runtime_attach *ra,
					 pid_t pid, const char **vendor)
{
	enum rt_platform best = RT_PLATFORM_UNKNOWN;

	*vendor = NULL;
	for (size_t i = 0; i < ra->n_libs; i++) {
		const struct library *lib = ra->libs[i];
		const struct rt_pack *pack = lib->pub.pack;
		bool user = uses(lib, pid);
		/* Should one process map both kinds, the GPU runtime names
		 * its devices (enum order): a choice, the case is rare. */
		if (!user || pack->platform <= best)
			continue;
		best = pack->platform;
		*vendor = pack->vendor;
	}
	return best;
}

enum cuda_runtime_layer process_report__cuda_runtime(const struct process_report *r,
						     const struct attached_library **lib)
{
	const struct attached_library *driver = NULL;

	*lib = NULL;
	for (unsigned int i = 0; i < r->n_libraries; i++) {
		const struct attached_library *l = r->libraries[i];

		if (!strcmp(l->pack->name, "CUDA runtime")) {
			*lib = l;
			/* Recognised by its exports under a name that is not
			 * libcudart's: a framework library that links it in. */
			return rt_pack_match(l->path) == l->pack ? CUDA_RT_SHARED :
								   CUDA_RT_STATIC;
		}
		if (!strcmp(l->pack->name, "CUDA driver"))
			driver = l;
	}
	return driver ? CUDA_RT_NOT_FOUND : CUDA_RT_NONE;
}

const char *cuda_runtime_layer_name(enum cuda_runtime_layer layer)
{
	switch (layer) {
	case CUDA_RT_SHARED: return "shared";
	case CUDA_RT_STATIC: return "static";
	case CUDA_RT_NOT_FOUND: return "not found";
	default: return "none";
	}
}

/* ---------------------------------------------------------------- lifecycle */

struct runtime_attach *runtime_attach__new(struct probe_session *ps,
					   const struct runtime_attach_opts *opts)
{
	struct runtime_attach *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return NULL;
	ra->ps = ps;
	for (size_t i = 0; opts && i < opts->n_libraries; i++) {
		const char *path = opts->libraries[i];
		struct runtime_kind kind;
		struct library *lib;
		struct stat st;
		int pfd, err;

		pfd = safe_open(0, path, NULL, &st);
		err = pfd < 0 ? pfd : runtime_kind__of_fd(pfd, path, st.st_dev, st.st_ino, &kind);
		if (err) {
			log_err("--library %s: %s", path, err == -ENOTSUP ?
				"not a regular file on a local file system" : strerror(-err));
			if (pfd >= 0)
				close(pfd);
			runtime_attach__free(ra);
			errno = -err;
			return NULL;
		}
		if (!kind.pack) {
			log_warn("--library %s: not a runtime library (%s): no probe pack applies",
				 path, kind.why);
			close(pfd);
			continue;
		}
		lib = library_get(ra, pfd, &st, path, &kind);
		close(pfd);
		if (!lib) {
			log_err("--library %s: %s", path, strerror(errno ? errno : ENOENT));
			runtime_attach__free(ra);
			errno = ENOENT;
			return NULL;
		}
		lib->pub.pinned = true;
	}
	return ra;
}

void runtime_attach__free(struct runtime_attach *ra)
{
	if (!ra)
		return;
	runtime_attach_detach_matching(ra, any_probe, NULL);
	for (size_t i = 0; i < ra->n_probes; i++)
		free(ra->probes[i]);
	free(ra->probes);
	for (size_t i = 0; i < ra->n_libs; i++) {
		elf_image__free(ra->libs[i]->elf);
		free(ra->libs[i]);
	}
	free(ra->libs);
	/* After every probe is detached: nothing names them any more. */
	for (size_t i = 0; i < ra->n_files; i++)
		close(ra->files[i].fd);
	free(ra->files);
	hashmap__free(ra->refusals, NULL);
	free(ra);
}

const struct attached_probe *runtime_attach__probe(const struct runtime_attach *ra,
						   int probe_id)
{
	if (probe_id < 0 || probe_id >= AT_MAX_PROBES)
		return NULL;
	return ra->by_id[probe_id];
}

size_t runtime_attach__probe_count(const struct runtime_attach *ra)
{
	return ra->n_probes;
}

const struct attached_probe *runtime_attach__probe_at(const struct runtime_attach *ra,
						      size_t i)
{
	return i < ra->n_probes ? ra->probes[i] : NULL;
}

size_t runtime_attach__library_count(const struct runtime_attach *ra)
{
	return ra->n_libs;
}

const struct attached_library *runtime_attach__library(const struct runtime_attach *ra,
						       size_t i)
{
	return i < ra->n_libs ? &ra->libs[i]->pub : NULL;
}
