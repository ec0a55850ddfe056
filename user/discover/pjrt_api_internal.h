/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What pjrt_api.c (slot tables, reading and validating a table, uprobe
 * targets) and pjrt_scan.c (finding a table in a running process) share: the
 * table header as read from the process, a table that passed validation, how
 * far validation got, and the helpers both halves call. Private to those two
 * files; everything else uses pjrt_api.h.
 */
#ifndef ACCELTRACE_PJRT_API_INTERNAL_H
#define ACCELTRACE_PJRT_API_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "discover/pjrt_api.h"

struct proc_maps;
struct proc_object;

/* The 40-byte header, as laid out on x86-64 (and every LP64 ABI). */
struct api_header {
	uint64_t struct_size;
	uint64_t extension_start;
	uint64_t version_struct_size;
	uint64_t version_extension_start;
	int32_t major;
	int32_t minor;
};
_Static_assert(sizeof(struct api_header) == PJRT_API_HEADER_SIZE, "PJRT_Api header");

/* A table that passed validation, before it becomes a struct pjrt_api. */
struct table {
	uint64_t addr;
	struct api_header h;
	enum pjrt_layout layout;
	const char *layout_why;
	size_t nslots;
	uint64_t *slots;
};

/* How far a candidate got: the scan reports the one that got furthest. */
enum stage {
	STAGE_READ,
	STAGE_VERSION_SIZE,
	STAGE_MAJOR,
	STAGE_MINOR,
	STAGE_STRUCT_SIZE,
	STAGE_SLOTS_READ,
	STAGE_POINTERS,
	STAGE_VALID,
};

/* printf into a caller's reason buffer (NULL or size 0: nothing). */
__attribute__((format(printf, 3, 4)))
void pjrt_say(char *buf, size_t size, const char *fmt, ...);
/* The file name part of a path. */
const char *pjrt_base_name(const char *path);
/* addr lies in an executable mapping of lib. */
bool pjrt_in_lib_text(const struct proc_maps *maps,
		      const struct proc_object *lib, uint64_t addr);
/*
 * Validates the table at addr against lib. On success t holds it (slots
 * malloc'd); on failure reason says which check failed. *stage is how far
 * it got.
 */
int pjrt_validate(pid_t pid, const struct proc_maps *maps,
		  const struct proc_object *lib, uint64_t addr,
		  struct table *t, enum stage *stage, char *reason,
		  size_t size);
/* The mapped object maps names @library (never a path lookup). */
const struct proc_object *pjrt_find_library(const struct proc_maps *maps,
					    const char *library);
/* The process's maps; NULL, errno (ESRCH for a gone process) and reason. */
struct proc_maps *pjrt_read_maps(pid_t pid, char *reason, size_t size);
/* A struct pjrt_api owning maps and t's slots (t->slots is cleared). */
struct pjrt_api *pjrt_make_api(pid_t pid, struct proc_maps *maps,
			       const struct proc_object *lib,
			       struct table *t, const char *note);

#endif /* ACCELTRACE_PJRT_API_INTERNAL_H */
