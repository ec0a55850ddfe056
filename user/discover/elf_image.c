// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A read-only view of one ELF file through libelf: see elf_image.h. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOG_CONTEXT "elf"
#include "lib/log.h"
#include "discover/elf_image.h"
#include "discover/safe_open.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

#define VERSYM_HIDDEN 0x8000
#define VERSYM_INDEX 0x7fff

struct elf_image {
	char *path;
	int fd;
	Elf *elf;
	int machine;
	int type;
	struct elf_segment *segs;
	size_t nsegs;
	Elf_Scn *dynsym;
	Elf_Scn *symtab;
	Elf_Scn *versym;
	Elf_Scn *gnu_hash;	/* SHT_GNU_HASH, for elf_image__find_export */
	/* Names of the versions this file defines, by version index. */
	const char **verdef_names;
	size_t nverdef_names;
};

static int load_segments(struct elf_image *img)
{
	size_t phnum, i;

	if (elf_getphdrnum(img->elf, &phnum))
		return -ENOEXEC;
	img->segs = calloc(phnum ? phnum : 1, sizeof(*img->segs));
	if (!img->segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(img->elf, i, &ph))
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD)
			continue;
		img->segs[img->nsegs++] = (struct elf_segment){
			.vaddr = ph.p_vaddr,
			.memsz = ph.p_memsz,
			.offset = ph.p_offset,
			.filesz = ph.p_filesz,
			.flags = ph.p_flags,
		};
	}
	return 0;
}

/*
 * Index -> name of every version .gnu.version_d defines (sh_info entries,
 * chained by vd_next; each entry's first Verdaux names it).
 */
static int load_verdefs(struct elf_image *img, Elf_Scn *scn)
{
	size_t off, max_ndx = 0;
	Elf_Data *data;
	GElf_Verdef vd;
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)))
		return 0;	/* unreadable versions: names stay unversioned */

	for (off = 0; gelf_getverdef(data, off, &vd); off += vd.vd_next) {
		if (vd.vd_ndx > max_ndx)
			max_ndx = vd.vd_ndx;
		if (!vd.vd_next)
			break;
	}
	img->verdef_names = calloc(max_ndx + 1, sizeof(char *));
	if (!img->verdef_names)
		return -ENOMEM;
	img->nverdef_names = max_ndx + 1;

	for (off = 0; gelf_getverdef(data, off, &vd); off += vd.vd_next) {
		GElf_Verdaux vda;

		if (gelf_getverdaux(data, off + vd.vd_aux, &vda))
			img->verdef_names[vd.vd_ndx] =
				elf_strptr(img->elf, sh.sh_link, vda.vda_name);
		if (!vd.vd_next)
			break;
	}
	return 0;
}

static int load_sections(struct elf_image *img)
{
	Elf_Scn *scn = NULL, *verdef = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(img->elf, &shstrndx))
		return 0;	/* no section headers: segments and notes only */
	while ((scn = elf_nextscn(img->elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		switch (sh.sh_type) {
		case SHT_DYNSYM:
			img->dynsym = scn;
			break;
		case SHT_SYMTAB:
			img->symtab = scn;
			break;
		case SHT_GNU_versym:
			img->versym = scn;
			break;
		case SHT_GNU_HASH:
			img->gnu_hash = scn;
			break;
		case SHT_GNU_verdef:
			verdef = scn;
			break;
		}
	}
	return verdef ? load_verdefs(img, verdef) : 0;
}

struct elf_image *elf_image__open_fd(int fd, const char *name)
{
	struct elf_image *img;
	int err;

	img = calloc(1, sizeof(*img));
	if (!img) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	img->fd = fd;
	img->path = strdup(name);
	if (!img->path) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		err = -ENOSYS;
		goto cleanup;
	}
	img->elf = elf_begin(img->fd, ELF_C_READ_MMAP, NULL);
	if (!img->elf || elf_kind(img->elf) != ELF_K_ELF) {
		log_debug("%s: not an ELF file (%s)", name, elf_errmsg(-1));
		err = -ENOEXEC;
		goto cleanup;
	}
	{
		GElf_Ehdr eh;

		if (!gelf_getehdr(img->elf, &eh)) {
			err = -ENOEXEC;
			goto cleanup;
		}
		img->machine = eh.e_machine;
		img->type = eh.e_type;
	}
	err = load_segments(img);
	if (err)
		goto cleanup;
	err = load_sections(img);
	if (err)
		goto cleanup;
	return img;

cleanup:
	elf_image__free(img);
	errno = -err;
	return NULL;
}

struct elf_image *elf_image__reopen(int path_fd, const char *name)
{
	int fd = safe_reopen(path_fd, O_RDONLY);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return elf_image__open_fd(fd, name);
}

struct elf_image *elf_image__open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	return elf_image__open_fd(fd, path);
}

void elf_image__free(struct elf_image *img)
{
	if (!img)
		return;
	if (img->elf)
		elf_end(img->elf);
	if (img->fd >= 0)
		close(img->fd);
	free(img->verdef_names);
	free(img->segs);
	free(img->path);
	free(img);
}

const char *elf_image__path(const struct elf_image *img)
{
	return img->path;
}

int elf_image__fd(const struct elf_image *img)
{
	return img->fd;
}

int elf_image__machine(const struct elf_image *img)
{
	return img->machine;
}

int elf_image__type(const struct elf_image *img)
{
	return img->type;
}

/* ---------------------------------------------------------------- build id */

static int find_build_id(Elf_Data *data, char *hex, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while ((next = gelf_getnote(data, off, &nh, &name_off, &desc_off))) {
		const unsigned char *d = (const unsigned char *)data->d_buf;

		off = next;
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp(d + name_off, "GNU", 4) || !nh.n_descsz)
			continue;
		if (size < 2 * (size_t)nh.n_descsz + 1)
			return -ENOSPC;
		for (size_t i = 0; i < nh.n_descsz; i++) {
			hex[2 * i] = digits[d[desc_off + i] >> 4];
			hex[2 * i + 1] = digits[d[desc_off + i] & 0xf];
		}
		hex[2 * nh.n_descsz] = '\0';
		return 0;
	}
	return -ENOENT;
}

int elf_image__build_id(const struct elf_image *img, char *hex, size_t size)
{
	Elf_Scn *scn = NULL;
	size_t phnum;
	int err;

	while ((scn = elf_nextscn(img->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		err = find_build_id(data, hex, size);
		if (err != -ENOENT)
			return err;
	}
	/* No section headers (or no note section): the PT_NOTE segments. */
	if (elf_getphdrnum(img->elf, &phnum))
		return -ENOENT;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (!gelf_getphdr(img->elf, i, &ph) || ph.p_type != PT_NOTE)
			continue;
		data = elf_getdata_rawchunk(img->elf, ph.p_offset, ph.p_filesz,
					    ELF_T_NHDR);
		if (!data)
			continue;
		err = find_build_id(data, hex, size);
		if (err != -ENOENT)
			return err;
	}
	return -ENOENT;
}

/* ---------------------------------------------------------------- symbols */

struct sym_query {
	const char *base;
	size_t base_len;
	const char *ver;	/* NULL: any version */
	bool ver_default;	/* "@@" (else "@") */
};

struct sym_best {
	int rank;		/* 0: none yet */
	bool ambiguous;
	struct elf_symbol sym;
};

/*
 * How well a symbol named base[0..base_len) with version ver (NULL: none)
 * matches the query: 3 exact, 2 default version, 1 hidden version, 0 no.
 */
static int match_rank(const struct sym_query *q, const char *base,
		      size_t base_len, const char *ver, bool hidden)
{
	if (base_len != q->base_len || strncmp(base, q->base, base_len))
		return 0;
	if (q->ver)
		return ver && !strcmp(ver, q->ver) && q->ver_default == !hidden ? 3 : 0;
	if (!ver)
		return 3;
	return hidden ? 1 : 2;
}

static void consider(struct sym_best *best, int rank, const GElf_Sym *s,
		     bool from_dynsym)
{
	int bind = GELF_ST_BIND(s->st_info);

	/* Global and weak beat local at the same rank. */
	rank = rank * 2 + (bind != STB_LOCAL);
	if (rank < best->rank)
		return;
	if (rank == best->rank) {
		if (s->st_value != best->sym.value)
			best->ambiguous = true;
		return;
	}
	best->rank = rank;
	best->ambiguous = false;
	best->sym = (struct elf_symbol){
		.value = s->st_value,
		.size = s->st_size,
		.type = GELF_ST_TYPE(s->st_info),
		.binding = bind,
		.from_dynsym = from_dynsym,
	};
}

static void search_table(const struct elf_image *img, Elf_Scn *scn,
			 bool dynsym, const struct sym_query *q,
			 struct sym_best *best)
{
	Elf_Data *data, *versym_data = NULL;
	GElf_Shdr sh;
	size_t n;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
		return;
	data = elf_getdata(scn, NULL);
	if (!data)
		return;
	if (dynsym && img->versym)
		versym_data = elf_getdata(img->versym, NULL);
	n = sh.sh_size / sh.sh_entsize;

	for (size_t i = 0; i < n; i++) {
		const char *name, *ver = NULL, *at;
		bool hidden = false;
		size_t base_len;
		GElf_Sym s;
		int type, rank;

		if (!gelf_getsym(data, i, &s) || s.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		name = elf_strptr(img->elf, sh.sh_link, s.st_name);
		if (!name || !*name)
			continue;

		at = strchr(name, '@');
		if (at) {
			/* .symtab spelling: name@VER or name@@VER. */
			base_len = at - name;
			hidden = at[1] != '@';
			ver = hidden ? at + 1 : at + 2;
		} else {
			base_len = strlen(name);
			if (versym_data) {
				GElf_Versym vs;
				size_t ndx;

				if (gelf_getversym(versym_data, i, &vs)) {
					ndx = vs & VERSYM_INDEX;
					hidden = vs & VERSYM_HIDDEN;
					if (ndx > 1 && ndx < img->nverdef_names)
						ver = img->verdef_names[ndx];
				}
			}
		}
		rank = match_rank(q, name, base_len, ver, hidden);
		if (rank)
			consider(best, rank, &s, dynsym);
	}
}

int elf_image__find_symbol(const struct elf_image *img, const char *name,
			   struct elf_symbol *sym)
{
	struct sym_query q = { .base = name };
	const char *at = strchr(name, '@');
	Elf_Scn *tables[2] = { img->dynsym, img->symtab };

	if (at) {
		q.base_len = at - name;
		q.ver_default = at[1] == '@';
		q.ver = q.ver_default ? at + 2 : at + 1;
	} else {
		q.base_len = strlen(name);
	}

	for (int t = 0; t < 2; t++) {
		struct sym_best best = {};

		if (!tables[t])
			continue;
		search_table(img, tables[t], t == 0, &q, &best);
		if (!best.rank)
			continue;
		if (best.ambiguous) {
			log_debug("%s: '%s' names several functions", img->path, name);
			return -ENOTUNIQ;
		}
		*sym = best.sym;
		return 0;
	}
	return -ENOENT;
}

/* ---------------------------------------------------------------- exports */

struct dynsym_view {
	Elf_Data *data;
	size_t n;
	size_t strndx;
};

static int dynsym_view(const struct elf_image *img, struct dynsym_view *v)
{
	GElf_Shdr sh;

	if (!img->dynsym || !gelf_getshdr(img->dynsym, &sh) || !sh.sh_entsize)
		return -ENOENT;
	v->data = elf_getdata(img->dynsym, NULL);
	if (!v->data)
		return -ENOENT;
	v->n = sh.sh_size / sh.sh_entsize;
	v->strndx = sh.sh_link;
	return 0;
}

/* Whether .dynsym entry i is the exported function @name. */
static bool export_at(const struct elf_image *img, const struct dynsym_view *v,
		      size_t i, const char *name, struct elf_symbol *sym)
{
	const char *n;
	GElf_Sym s;
	int type, bind;

	if (i >= v->n || !gelf_getsym(v->data, i, &s) || s.st_shndx == SHN_UNDEF)
		return false;
	type = GELF_ST_TYPE(s.st_info);
	bind = GELF_ST_BIND(s.st_info);
	if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
	    (bind != STB_GLOBAL && bind != STB_WEAK))
		return false;
	n = elf_strptr(img->elf, v->strndx, s.st_name);
	if (!n || strcmp(n, name))
		return false;
	*sym = (struct elf_symbol){
		.value = s.st_value,
		.size = s.st_size,
		.type = type,
		.binding = bind,
		.from_dynsym = true,
	};
	return true;
}

static bool host_byte_order(const struct elf_image *img)
{
	const char *ident = elf_getident(img->elf, NULL);
	const union { uint16_t u; unsigned char c[2]; } probe = { .u = 1 };

	return ident && ident[EI_DATA] == (probe.c[0] ? ELFDATA2LSB : ELFDATA2MSB);
}

/*
 * The GNU hash table (as glibc's ld.so reads it): a Bloom filter that turns
 * most absent names away at once, then one bucket's chain of hashes.
 * Returns 0, -ENOENT (absent), or -EINVAL when the table cannot be used and
 * .dynsym must be walked instead.
 */
static int gnu_hash_lookup(const struct elf_image *img, const struct dynsym_view *v,
			   const char *name, struct elf_symbol *sym)
{
	size_t word = gelf_getclass(img->elf) == ELFCLASS64 ? 8 : 4;
	size_t bits = word * 8, size, off_buckets, off_chain;
	uint32_t hdr[4], h = 5381, idx, h2;
	const unsigned char *b;
	uint64_t bloom = 0, mask;
	Elf_Data *d;

	if (!img->gnu_hash || !host_byte_order(img))
		return -EINVAL;
	d = elf_rawdata(img->gnu_hash, NULL);
	if (!d || !d->d_buf || d->d_size < sizeof(hdr))
		return -EINVAL;
	b = d->d_buf;
	size = d->d_size;
	memcpy(hdr, b, sizeof(hdr));
	/* nbuckets, symoffset, bloom_size, bloom_shift */
	if (!hdr[0] || !hdr[2] || hdr[0] > size || hdr[2] > size || hdr[3] >= 32)
		return -EINVAL;
	off_buckets = sizeof(hdr) + (size_t)hdr[2] * word;
	off_chain = off_buckets + (size_t)hdr[0] * 4;
	if (off_chain > size)
		return -EINVAL;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = h * 33 + *p;

	if (word == 8) {
		memcpy(&bloom, b + sizeof(hdr) + ((h / bits) % hdr[2]) * word, 8);
	} else {
		uint32_t w32;

		memcpy(&w32, b + sizeof(hdr) + ((h / bits) % hdr[2]) * word, 4);
		bloom = w32;
	}
	mask = (1ULL << (h % bits)) | (1ULL << ((h >> hdr[3]) % bits));
	if ((bloom & mask) != mask)
		return -ENOENT;
	memcpy(&idx, b + off_buckets + (h % hdr[0]) * 4, 4);
	if (idx < hdr[1])
		return -ENOENT;		/* an empty bucket */
	for (;; idx++) {
		size_t c = off_chain + (size_t)(idx - hdr[1]) * 4;

		if (c + 4 > size || idx >= v->n)
			return -ENOENT;
		memcpy(&h2, b + c, 4);
		if ((h2 | 1) == (h | 1) && export_at(img, v, idx, name, sym))
			return 0;
		if (h2 & 1)
			return -ENOENT;	/* the chain's last entry */
	}
}

int elf_image__find_export(const struct elf_image *img, const char *name,
			   struct elf_symbol *sym)
{
	struct dynsym_view v;
	int err;

	if (dynsym_view(img, &v))
		return -ENOENT;
	err = gnu_hash_lookup(img, &v, name, sym);
	if (err != -EINVAL)
		return err;
	for (size_t i = 0; i < v.n; i++)
		if (export_at(img, &v, i, name, sym))
			return 0;
	return -ENOENT;
}

/* ---------------------------------------------------------------- segments */

size_t elf_image__segment_count(const struct elf_image *img)
{
	return img->nsegs;
}

int elf_image__segment(const struct elf_image *img, size_t i,
		       struct elf_segment *seg)
{
	if (i >= img->nsegs)
		return -ERANGE;
	*seg = img->segs[i];
	return 0;
}

static const struct elf_segment *seg_of_vaddr(const struct elf_image *img,
					      uint64_t vaddr)
{
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
			return s;
	}
	return NULL;
}

int elf_image__vaddr_to_offset(const struct elf_image *img, uint64_t vaddr,
			       uint64_t *offset)
{
	const struct elf_segment *s = seg_of_vaddr(img, vaddr);

	if (!s)
		return -ENOENT;
	*offset = vaddr - s->vaddr + s->offset;
	return 0;
}

int elf_image__offset_to_vaddr(const struct elf_image *img, uint64_t offset,
			       uint64_t *vaddr)
{
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];

		if (offset >= s->offset && offset - s->offset < s->filesz) {
			*vaddr = offset - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

bool elf_image__vaddr_is_exec(const struct elf_image *img, uint64_t vaddr)
{
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];

		if ((s->flags & PF_X) && vaddr >= s->vaddr &&
		    vaddr - s->vaddr < s->memsz)
			return true;
	}
	return false;
}

int elf_image__read(const struct elf_image *img, uint64_t vaddr, void *buf,
		    size_t len)
{
	const struct elf_segment *s = seg_of_vaddr(img, vaddr);
	uint64_t avail, off;
	size_t done = 0;

	if (!s)
		return -ENOENT;
	if (!len)
		return 0;
	avail = s->filesz - (vaddr - s->vaddr);
	if (len > avail)
		len = avail;
	if (len > INT32_MAX)
		len = INT32_MAX;
	off = s->offset + (vaddr - s->vaddr);
	while (done < len) {
		ssize_t n = pread(img->fd, (char *)buf + done, len - done,
				  off + done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;	/* truncated file */
		done += n;
	}
	return done ? (int)done : -EIO;
}
