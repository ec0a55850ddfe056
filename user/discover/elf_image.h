/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A read-only view of one ELF file (a runtime library or an executable), as
 * acceltrace needs it to place uprobes: the build id, function symbols, the
 * PT_LOAD segments, virtual address <-> file offset, and the bytes at an
 * address so the first instructions of a function can be inspected.
 *
 * Addresses here are the file's own virtual addresses (st_value, p_vaddr),
 * not addresses in a process; proc_maps.h translates process addresses.
 * Uprobes are attached by (file, file offset): see elf_image__vaddr_to_offset.
 *
 * Lifecycle: elf_image__open() -> queries -> elf_image__free().
 */
#ifndef ACCELTRACE_ELF_IMAGE_H
#define ACCELTRACE_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_image;

struct elf_symbol {
	uint64_t value;		/* st_value: the function's virtual address */
	uint64_t size;		/* st_size (0 when the object did not say) */
	int type;		/* STT_FUNC or STT_GNU_IFUNC (the resolver!) */
	int binding;		/* STB_GLOBAL, STB_WEAK or STB_LOCAL */
	bool from_dynsym;	/* found in .dynsym (else .symtab) */
};

struct elf_segment {
	uint64_t vaddr;		/* p_vaddr */
	uint64_t memsz;		/* p_memsz */
	uint64_t offset;	/* p_offset */
	uint64_t filesz;	/* p_filesz */
	uint32_t flags;		/* PF_R | PF_W | PF_X */
};

/*
 * Opens path read-only (O_CLOEXEC) and reads its headers. Returns NULL and
 * sets errno: the open(2) error, ENOEXEC when the file is not ELF (or is an
 * archive), ENOMEM. For files acceltrace itself names (tests, its own
 * binary); a file a traced process names is opened by safe_open.h and read
 * through elf_image__open_fd().
 */
struct elf_image *elf_image__open(const char *path);
/*
 * Reads the ELF file open read-only at @fd, which the image owns from
 * now on (closed by elf_image__free, or here on failure). @name is what
 * messages and elf_image__path() call it. NULL and errno as above.
 */
struct elf_image *elf_image__open_fd(int fd, const char *name);
/*
 * Reads the file @path_fd (an O_PATH descriptor safe_open.h checked)
 * names, through a read-only descriptor of that same inode; @path_fd stays
 * the caller's. NULL and errno as above.
 */
struct elf_image *elf_image__reopen(int path_fd, const char *name);
/* Accepts NULL. */
void elf_image__free(struct elf_image *img);

const char *elf_image__path(const struct elf_image *img);
/*
 * The descriptor the image reads: "/proc/self/fd/N" names this very file
 * to the kernel (a uprobe's attach) for as long as the image lives.
 */
int elf_image__fd(const struct elf_image *img);
/* e_machine (EM_X86_64, EM_AARCH64, ...) and e_type (ET_DYN, ET_EXEC). */
int elf_image__machine(const struct elf_image *img);
int elf_image__type(const struct elf_image *img);

/*
 * The NT_GNU_BUILD_ID note as lowercase hex, NUL-terminated. Looked up in the
 * SHT_NOTE sections, then in the PT_NOTE segments (files without section
 * headers). Returns 0, -ENOENT when there is none, -ENOSPC when hex[] cannot
 * hold 2 * length + 1 bytes (41 for the usual 20-byte SHA-1 id).
 */
int elf_image__build_id(const struct elf_image *img, char *hex, size_t size);

/*
 * Looks up a defined function (STT_FUNC or STT_GNU_IFUNC, st_shndx !=
 * SHN_UNDEF) by name, in .dynsym first and then .symtab.
 *
 * Versions: "foo" matches foo, foo@@VER and foo@VER, preferring an exact
 * unversioned name, then the default version (@@), then a hidden one (@);
 * "foo@@VER" and "foo@VER" match only that version. In .dynsym the version
 * comes from .gnu.version/.gnu.version_d; in .symtab it is part of the name.
 * Global and weak symbols win over local ones of the same rank.
 *
 * Returns 0, -ENOENT when no such function is defined, -ENOTUNIQ when the
 * best matches are several functions at different addresses (two local
 * symbols of the same name in .symtab, say).
 */
int elf_image__find_symbol(const struct elf_image *img, const char *name,
			   struct elf_symbol *sym);

/*
 * Looks up a function the file exports: a defined STT_FUNC or STT_GNU_IFUNC
 * of global or weak binding in .dynsym, any version, as the dynamic linker
 * would find it for dlsym(). Uses the .gnu.hash table when there is one (a
 * few reads, however many symbols the file has), else walks .dynsym.
 * .symtab is never read: what a stripped file still exports is what
 * counts. Returns 0, -ENOENT when the file exports no such function.
 */
int elf_image__find_export(const struct elf_image *img, const char *name,
			   struct elf_symbol *sym);

/* PT_LOAD segments, in program header order. */
size_t elf_image__segment_count(const struct elf_image *img);
/* Returns 0 or -ERANGE when i >= elf_image__segment_count(). */
int elf_image__segment(const struct elf_image *img, size_t i,
		       struct elf_segment *seg);

/*
 * The file offset holding virtual address vaddr: the PT_LOAD segment whose
 * [p_vaddr, p_vaddr + p_filesz) contains it, offset = vaddr - p_vaddr +
 * p_offset. This is the offset a uprobe on vaddr is attached at. Returns 0,
 * -ENOENT when no segment's file image contains vaddr (it may still lie in
 * a segment's zero-filled tail, .bss).
 */
int elf_image__vaddr_to_offset(const struct elf_image *img, uint64_t vaddr,
			       uint64_t *offset);
/* The inverse: the virtual address of file offset. 0 or -ENOENT. */
int elf_image__offset_to_vaddr(const struct elf_image *img, uint64_t offset,
			       uint64_t *vaddr);
/* Whether vaddr lies in the memory image of a PT_LOAD segment with PF_X. */
bool elf_image__vaddr_is_exec(const struct elf_image *img, uint64_t vaddr);

/*
 * Reads up to len bytes of the file image at vaddr, stopping at the end of
 * the segment's file image. Returns the number of bytes read (> 0 unless
 * len is 0), -ENOENT
 * when vaddr is not in any segment's file image, or the pread(2) error.
 */
int elf_image__read(const struct elf_image *img, uint64_t vaddr, void *buf,
		    size_t len);

#endif /* ACCELTRACE_ELF_IMAGE_H */
