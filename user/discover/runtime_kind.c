// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Runtime libraries recognised by what they export, once per file. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define LOG_CONTEXT "discover"
#include "lib/log.h"
#include "lib/hashmap.h"
#include "lib/lazy_regex.h"
#include "discover/runtime_kind.h"
#include "discover/safe_open.h"

/*
 * Libraries every process maps and no runtime is: the C library, the
 * dynamic linker, the C++ and GCC runtimes. Not parsed, to save the first
 * scan of a host some hundreds of opens; a hint that spares work, never one
 * that makes a library a runtime.
 */
static const char system_libraries[] =
	"^((libc|libm|libdl|librt|libpthread|libresolv|libutil|libanl|"
	"libnsl|libcrypt|libmvec|libgcc_s|libstdc\\+\\+|libatomic)"
	"\\.so(\\.[0-9]+)*|ld-linux[^/]*\\.so(\\.[0-9]+)*|ld-musl[^/]*\\.so[^/]*)$";

/* A remembered file. */
struct kind_entry {
	const struct rt_pack *pack;
	enum runtime_kind_how how;
	const char *any_of;	/* the any_of export that matched, or NULL */
};

static struct hashmap *cache;
static unsigned long parses;

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Whether @img exports @pack's signature; *any_of: the one that matched. */
static bool signature_matches(const struct elf_image *img, const struct rt_pack *pack,
			      const char **any_of)
{
	const struct rt_abi_signature *abi = &pack->abi;
	struct elf_symbol sym;

	*any_of = NULL;
	if (!abi->all_of && !abi->any_of)
		return false;
	for (size_t i = 0; abi->all_of && abi->all_of[i]; i++)
		if (elf_image__find_export(img, abi->all_of[i], &sym))
			return false;
	if (!abi->any_of)
		return true;
	for (size_t i = 0; abi->any_of[i]; i++) {
		if (!elf_image__find_export(img, abi->any_of[i], &sym)) {
			*any_of = abi->any_of[i];
			return true;
		}
	}
	return false;
}

/* "exports A", "exports A and B", "exports A, B and C". */
static void say_why(const struct rt_pack *pack, const char *any_of, char *why,
		    size_t len)
{
	const char *names[8];
	size_t n = 0, used = 0;

	if (!why || !len)
		return;
	why[0] = '\0';
	if (!pack)
		return;
	for (size_t i = 0; pack->abi.all_of && pack->abi.all_of[i] && n < 7; i++)
		names[n++] = pack->abi.all_of[i];
	if (any_of)
		names[n++] = any_of;
	used = snprintf(why, len, "exports");
	for (size_t i = 0; i < n && used < len; i++)
		used += snprintf(why + used, len - used, "%s%s",
				 !i ? " " : i + 1 == n ? " and " : ", ", names[i]);
}

/* The pack @img's exports match, preferring one hinted by @name. */
static const struct rt_pack *recognise(const struct elf_image *img, const char *name,
				       const char **best_any)
{
	static struct lazy_regex hints[16];
	const struct rt_pack *best = NULL;
	const char *base = name ? basename_of(name) : NULL;

	*best_any = NULL;
	for (size_t i = 0; i < rt_pack_count(); i++) {
		const struct rt_pack *p = rt_pack_get(i);
		const char *any_of;
		bool hinted;

		if (!signature_matches(img, p, &any_of))
			continue;
		hinted = base && p->library && i < sizeof(hints) / sizeof(hints[0]) &&
			 lazy_regex__match(&hints[i], p->library, base);
		if (!best || hinted) {
			best = p;
			*best_any = any_of;
		}
		if (hinted)
			break;
	}
	return best;
}

const struct rt_pack *runtime_kind__recognise(const struct elf_image *img,
					      const char *name, char *why,
					      size_t len)
{
	const char *any_of;
	const struct rt_pack *pack = recognise(img, name, &any_of);

	say_why(pack, any_of, why, len);
	return pack;
}

static void fill(struct runtime_kind *kind, const struct kind_entry *e)
{
	kind->pack = e->pack;
	kind->how = e->how;
	if (e->pack)
		say_why(e->pack, e->any_of, kind->why, sizeof(kind->why));
	else
		snprintf(kind->why, sizeof(kind->why), "%s", runtime_kind_how_name(e->how));
}

static int remember(uint64_t dev, uint64_t ino, const struct kind_entry *e)
{
	struct kind_entry *copy;

	if (!cache && !(cache = hashmap__new()))
		return -ENOMEM;
	copy = malloc(sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	*copy = *e;
	if (hashmap__put(cache, dev, ino, copy, NULL)) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

static const struct kind_entry *lookup(uint64_t dev, uint64_t ino)
{
	return cache ? hashmap__get(cache, dev, ino) : NULL;
}

int runtime_kind__known(uint64_t dev, uint64_t ino, struct runtime_kind *kind)
{
	const struct kind_entry *hit = lookup(dev, ino);

	if (!hit)
		return -ENOENT;
	fill(kind, hit);
	return 0;
}

int runtime_kind__of_fd(int path_fd, const char *name, uint64_t dev, uint64_t ino,
			struct runtime_kind *kind)
{
	static struct lazy_regex system_re;
	const struct kind_entry *hit = lookup(dev, ino);
	struct kind_entry e = { .how = RT_KIND_NOT_RUNTIME };
	struct elf_image *img;
	int err;

	if (hit) {
		fill(kind, hit);
		return 0;
	}
	if (lazy_regex__match(&system_re, system_libraries, basename_of(name))) {
		e.how = RT_KIND_SKIPPED;
	} else {
		img = elf_image__reopen(path_fd, name);
		if (!img) {
			err = -errno;
			/* Not ELF is a property of the file; a failed open
			 * may be of the path (a process gone, no privilege). */
			if (err != -ENOEXEC) {
				log_debug("cannot read %s: %s", name, strerror(-err));
				return err;
			}
			e.how = RT_KIND_NOT_ELF;
		} else {
			parses++;
			e.pack = recognise(img, name, &e.any_of);
			if (e.pack)
				e.how = RT_KIND_BY_EXPORTS;
			elf_image__free(img);
		}
	}
	if (e.pack)
		log_debug("%s is a %s library", name, e.pack->name);
	/* Out of memory: answered, not remembered. */
	remember(dev, ino, &e);
	fill(kind, &e);
	return 0;
}

int runtime_kind__of_path(const char *path, struct runtime_kind *kind)
{
	struct stat st;
	int pfd = safe_open(0, path, NULL, &st), err;

	if (pfd < 0)
		return pfd;
	err = runtime_kind__of_fd(pfd, path, st.st_dev, st.st_ino, kind);
	close(pfd);
	return err;
}

/* Whether any of @o's mappings is executable. */
static bool object_has_code(const struct proc_maps *maps, const struct proc_object *o)
{
	for (size_t i = o->first; i <= o->last; i++) {
		const struct proc_map *m = proc_maps__get(maps, i);

		if (m && m->x && m->inode == o->inode && m->dev_major == o->dev_major &&
		    m->dev_minor == o->dev_minor)
			return true;
	}
	return false;
}

int runtime_kind__of_object(pid_t pid, const struct proc_maps *maps,
			    const struct proc_object *o, struct runtime_kind *kind)
{
	uint64_t dev = makedev(o->dev_major, o->dev_minor);
	const struct kind_entry *hit = lookup(dev, o->inode);
	struct stat st;
	int pfd, err;

	if (hit) {
		fill(kind, hit);
		return 0;
	}
	if (!object_has_code(maps, o))
		return -EAGAIN;
	pfd = proc_map__open(pid, proc_maps__get(maps, o->first), &st);
	if (pfd < 0)
		return pfd;
	/* Remembered by the identity the maps show: the next rescan's key. */
	err = runtime_kind__of_fd(pfd, o->path, dev, o->inode, kind);
	close(pfd);
	return err;
}

unsigned long runtime_kind__parse_count(void)
{
	return parses;
}

size_t runtime_kind__cached_count(void)
{
	return cache ? hashmap__count(cache) : 0;
}

void runtime_kind__forget(void)
{
	hashmap__free(cache, free);
	cache = NULL;
	parses = 0;
}

const char *runtime_kind_how_name(enum runtime_kind_how how)
{
	switch (how) {
	case RT_KIND_NOT_RUNTIME:
		return "exports no runtime's API";
	case RT_KIND_BY_EXPORTS:
		return "recognised by its exports";
	case RT_KIND_SKIPPED:
		return "a system library, not parsed";
	case RT_KIND_NOT_ELF:
		return "not an ELF file";
	}
	return "?";
}
