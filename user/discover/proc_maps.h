/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A process's memory map (/proc/PID/maps) and reads of its memory: which
 * mapping holds an address, which file and file offset a code address comes
 * from (uprobes are attached by file and offset), which objects a process has
 * mapped, and the mapped file itself, opened by the mapping rather than by
 * its name.
 *
 * Lifecycle: proc_maps__read(pid) -> queries -> proc_maps__free(). A map is
 * a snapshot: a process that dlopen()s later needs a fresh read.
 */
#ifndef ACCELTRACE_PROC_MAPS_H
#define ACCELTRACE_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct proc_maps;

struct proc_map {
	uint64_t start;		/* first byte */
	uint64_t end;		/* one past the last byte */
	uint64_t offset;	/* file offset of start (0 for anonymous) */
	uint64_t inode;		/* 0 for anonymous and pseudo mappings */
	uint32_t dev_major;
	uint32_t dev_minor;
	bool r, w, x;
	bool shared;		/* 's' (else 'p', private / copy-on-write) */
	/*
	 * The file was unlinked after mapping: the kernel's " (deleted)"
	 * suffix, removed from path.
	 */
	bool deleted;
	/*
	 * The name as the kernel prints it, relative to the reader's root:
	 * "" for anonymous memory, "[heap]", "[stack]", "[vdso]",
	 * "[anon:NAME]" and the like for pseudo mappings, an absolute path for
	 * files (spaces kept; a newline, which the kernel prints as "\012",
	 * restored). Never NULL.
	 */
	const char *path;
};

/* A mapping backed by a file (an inode and an absolute path). */
bool proc_map__is_file(const struct proc_map *m);

/* A mapped file: the mappings that share one (device, inode). */
struct proc_object {
	const char *path;	/* as in the first mapping */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	bool deleted;
	uint64_t start;		/* lowest start of its mappings */
	uint64_t end;		/* highest end of its mappings */
	size_t first;		/* index of its first mapping */
	size_t last;		/* index of its last mapping */
	size_t nmaps;		/* how many mappings (not always contiguous) */
};

/*
 * Reads and parses /proc/PID/maps (pid 0: this process). Returns NULL and
 * sets errno: the open/read error (ENOENT: no such process; EACCES), EINVAL
 * for a line that does not parse, ENOMEM.
 */
struct proc_maps *proc_maps__read(pid_t pid);
/* Parses text in the /proc/PID/maps format; for tests and saved maps. */
struct proc_maps *proc_maps__parse(const char *text, size_t len);
/* Accepts NULL. */
void proc_maps__free(struct proc_maps *maps);

size_t proc_maps__count(const struct proc_maps *maps);
/* The i-th mapping in address order, or NULL when i is out of range. */
const struct proc_map *proc_maps__get(const struct proc_maps *maps, size_t i);
/* The mapping containing addr, or NULL. */
const struct proc_map *proc_maps__find(const struct proc_maps *maps,
				       uint64_t addr);
/* The index of m within maps (m must come from maps). */
size_t proc_maps__index(const struct proc_maps *maps, const struct proc_map *m);

/*
 * Translates a process address to the mapped file and the file offset a
 * uprobe on it is attached at: offset = addr - start + mapping offset.
 * Returns 0, -ENOENT when no mapping holds addr, -ENXIO when the mapping is
 * not backed by a file (anonymous, [heap], JIT code, ...). *map may be NULL.
 */
int proc_maps__addr_to_file_offset(const struct proc_maps *maps, uint64_t addr,
				   const struct proc_map **map,
				   uint64_t *offset);

/* The distinct mapped files, in order of their lowest address. */
size_t proc_maps__object_count(const struct proc_maps *maps);
const struct proc_object *proc_maps__object(const struct proc_maps *maps,
					    size_t i);
/* The object m belongs to, or NULL for a mapping not backed by a file. */
const struct proc_object *proc_maps__object_of(const struct proc_maps *maps,
					       const struct proc_map *m);

/*
 * Opens the file behind mapping @m of process @pid (0: this process) the
 * one way that names no path: /proc/PID/map_files/START-END, the kernel's
 * link to the mapped file itself, whatever its name now says and in
 * whichever mount namespace (a container's) or state (deleted) it is. The
 * link is opened with O_PATH and checked (safe_open.h): a regular file on a
 * local file system, the (dev, inode) the mapping shows, so a mapping
 * replaced since @m was read is refused. Needs CAP_SYS_ADMIN (or
 * CAP_CHECKPOINT_RESTORE). Returns the O_PATH descriptor, with @st its
 * stat, or -errno: -ENXIO when @m is not a file mapping, -ESTALE when the
 * range maps another file now, -ENOTSUP (not a regular local file), -ENOENT
 * (unmapped), -EPERM.
 */
int proc_map__open(pid_t pid, const struct proc_map *m, struct stat *st);

/*
 * Whether process pid's root directory is another one than ours. Returns
 * 1 (differs), 0 (same), or -errno when /proc/PID/root cannot be stat'ed.
 */
int proc_root_differs(pid_t pid);

/*
 * Reads len bytes at addr in process pid (0: this process): with
 * process_vm_readv(2), falling back to pread(2) on /proc/PID/mem where that
 * is refused (seccomp, ENOSYS) or stops short. Returns 0 when all len bytes
 * were read, -EFAULT when part of the range is not mapped or readable, or
 * the error that refused both ways (-EPERM, -ESRCH, ...).
 */
int process_read(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif /* ACCELTRACE_PROC_MAPS_H */
