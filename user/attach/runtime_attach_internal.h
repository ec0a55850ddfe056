/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The runtime attach manager's insides, shared by its files only:
 * runtime_attach.c (libraries, their symbol and PJRT slot probes, the
 * processes that map them) and runtime_callbacks.c (OnReady callbacks,
 * probed at run time). Nothing outside these two includes this.
 */
#ifndef ACCELTRACE_RUNTIME_ATTACH_INTERNAL_H
#define ACCELTRACE_RUNTIME_ATTACH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "acceltrace/events.h"
#include "attach/runtime_attach.h"

struct elf_image;

#define MAX_CALLBACKS 64
#define MAX_LIB_USERS 256

struct library {
	struct attached_library pub;
	struct elf_image *elf;		/* read through the one descriptor opened */
	/* Its identity as /proc/PID/maps and the kernel's mapping records
	 * show it: pub's (fstat's) but on overlayfs before 6.8. */
	uint64_t map_dev, map_ino;
	pid_t users[MAX_LIB_USERS];
	pid_t refused_pid;		/* the process whose table was refused */
	/* When a scan first ran in a process: a table read while GetPjrtApi
	 * is still filling it looks invalid, so refusals wait a while. */
	pid_t scan_pid;
	uint64_t first_scan_ns;
};

#define MAX_CALLBACK_USERS 64

/* A callback function: probed once per (file, offset), for every process
 * that registers it; detached when the last of them is gone. */
struct callback {
	uint64_t dev, ino, offset;	/* the function, in its file */
	struct attached_probe *probe;
	struct {
		pid_t pid;
		uint64_t addr;		/* the function's address in that process */
	} users[MAX_CALLBACK_USERS];
	unsigned int n_users;
};

/*
 * A file uprobes are attached in, held open while acceltrace runs: every
 * attach, and every attach again (detail back on, a library's first user
 * after its last left), names it "/proc/self/fd/N", so the kernel probes
 * the inode whose bytes decided the offsets, whatever its path names now.
 */
struct probe_file {
	uint64_t dev, ino;
	int fd;
};

struct hashmap;

struct runtime_attach {
	struct probe_session *ps;	/* NULL: plan only */
	struct probe_file *files;
	size_t n_files, cap_files;
	struct library **libs;
	size_t n_libs, cap_libs;
	struct attached_probe **probes;
	size_t n_probes, cap_probes;
	struct attached_probe *by_id[AT_MAX_PROBES];
	struct callback callbacks[MAX_CALLBACKS];
	size_t n_callbacks;
	bool callbacks_full_warned;
	/* Detail probes are parked (not attached) while this is set. */
	bool detail_off;
	/* PJRT tables refused: per traced process (pid -> count, for the
	 * log's backoff), and in all. */
	struct hashmap *refusals;
	uint64_t refusals_total;
};

/* A new probe record for entry @e (in @lib, NULL for a callback); NULL
 * when out of memory. */
struct attached_probe *runtime_attach_new_probe(struct runtime_attach *ra,
						const struct rt_pack_entry *e,
						const struct attached_library *lib);
/*
 * The name the kernel resolves to the file open at @fd, whose identity is
 * (@dev, @ino): "/proc/self/fd/N" of a descriptor held from the first call
 * for that file on. 0, or -errno with @path "" (out of descriptors).
 */
int runtime_attach_file(struct runtime_attach *ra, int fd, uint64_t dev, uint64_t ino,
			char *path, size_t size);
/* Attaches @p at (@path from runtime_attach_file, attach_offset) unless
 * planning; 0 or -errno. */
int runtime_attach_attach_probe(struct runtime_attach *ra, struct attached_probe *p,
				const char *path);
/*
 * Attaches @n probes as runtime_attach_attach_probe() would, each at
 * @paths[i] (NULL: its attach_path), those of one library in one file
 * together: one session call, and with uprobe_multi one link per program
 * for all of them. Returns how many have no error (p->error: why not).
 */
size_t runtime_attach_attach_many(struct runtime_attach *ra, struct attached_probe **probes,
				  const char *const *paths, size_t n);
/* Detaches every probe @match selects, all at once: how many were attached. */
size_t runtime_attach_detach_matching(struct runtime_attach *ra,
				      bool (*match)(const struct attached_probe *p,
						    const void *arg),
				      const void *arg);
/* Detaches @p (its link destroyed; the record stays). */
void runtime_attach_detach_probe(struct runtime_attach *ra, struct attached_probe *p);

/* Counts @pid among @lib's users; the first after the last one left gets
 * back every probe the library had (runtime_attach.c). */
void runtime_attach_add_user(struct runtime_attach *ra, struct library *lib, pid_t pid);
/* Attaches the probes made since @first, the library's in one batch. */
void runtime_attach_new_probes(struct runtime_attach *ra, struct library *lib, size_t first,
			       const char *const *paths);
/* A running process's table, by scanning its memory (GetPjrtApi ran
 * before we attached): its slot probes placed, or the refusal said
 * (runtime_attach_tables.c). */
void runtime_attach_find_table(struct runtime_attach *ra, struct library *lib, pid_t pid,
			       const char *maps_path);

#endif /* ACCELTRACE_RUNTIME_ATTACH_INTERNAL_H */
