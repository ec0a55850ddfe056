/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which runtime a library file is, recognised by its ABI: the functions it
 * exports, as the probe packs' signatures list them (a PJRT plugin exports
 * GetPjrtApi, the CUDA driver cuInit and cuLaunchKernel, ...), whatever the
 * file is called. File names are hints only: they pick between packs whose
 * signatures both match, and spare parsing the C library and its kin.
 *
 * Each file is parsed once per identity (st_dev, st_ino) for the life of
 * the process, and the answer is remembered, "not a runtime" included: the
 * rescans that walk every library a framework maps, four times a second,
 * cost one hash lookup per library. acceltrace examines processes from one
 * thread; the cache is not locked.
 */
#ifndef ACCELTRACE_RUNTIME_KIND_H
#define ACCELTRACE_RUNTIME_KIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/elf_image.h"
#include "discover/probe_packs.h"
#include "discover/proc_maps.h"

enum runtime_kind_how {
	RT_KIND_NOT_RUNTIME,	/* parsed: matches no pack's signature */
	RT_KIND_BY_EXPORTS,	/* parsed: its exports match @pack's signature */
	RT_KIND_SKIPPED,	/* not parsed: a system library by name (libc...) */
	RT_KIND_NOT_ELF,	/* not an ELF file (data, fonts, locale archive) */
};

struct runtime_kind {
	const struct rt_pack *pack;	/* NULL: not a runtime library */
	enum runtime_kind_how how;
	/* How it was recognised, for `acceltrace probes`: "exports
	 * GetPjrtApi", "exports cuLaunchKernel and cuInit". */
	char why[160];
};

/*
 * Recognises an open ELF image, without the cache: the pack whose
 * signature its exports match (preferring one whose name hint matches the
 * basename of @name, when @name is not NULL), or NULL. @why (may be NULL)
 * says which exports decided.
 */
const struct rt_pack *runtime_kind__recognise(const struct elf_image *img,
					      const char *name, char *why,
					      size_t len);

/*
 * The file open at @path_fd (an O_PATH descriptor checked by safe_open.h),
 * whose identity is (@dev, @ino): remembered, or read through that
 * descriptor now and remembered. @name is the file name the process sees
 * (the hint). Returns 0, or -errno when the file cannot be read (not
 * remembered: the next call tries again).
 */
int runtime_kind__of_fd(int path_fd, const char *name, uint64_t dev, uint64_t ino,
			struct runtime_kind *kind);
/* The remembered answer for (@dev, @ino) alone, no I/O: 0, or -ENOENT. */
int runtime_kind__known(uint64_t dev, uint64_t ino, struct runtime_kind *kind);
/*
 * A file acceltrace was given by path (--library): opened as safe_open()
 * does (a regular file on a local file system, or -ENOTSUP), then as
 * runtime_kind__of_fd().
 */
int runtime_kind__of_path(const char *path, struct runtime_kind *kind);
/*
 * Object @o of process @pid (from @maps): identified by the device and
 * inode its mappings show, so a remembered file costs no system call; on a
 * miss opened through its mapping (proc_map__open: /proc/PID/map_files,
 * whatever its name says now, in a container or deleted). A file with no
 * executable mapping yet is not parsed and nothing is remembered
 * (-EAGAIN): ld.so maps a library's first segment before its code, and
 * data files are never code.
 */
int runtime_kind__of_object(pid_t pid, const struct proc_maps *maps,
			    const struct proc_object *o, struct runtime_kind *kind);

/* Files parsed (ELF images opened) since start or the last forget. */
unsigned long runtime_kind__parse_count(void);
/* Files remembered. */
size_t runtime_kind__cached_count(void);
/* Forgets every file (tests; a file replaced in place keeps its inode). */
void runtime_kind__forget(void);

const char *runtime_kind_how_name(enum runtime_kind_how how);

#endif /* ACCELTRACE_RUNTIME_KIND_H */
