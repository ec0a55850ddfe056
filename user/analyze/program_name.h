/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Program names as frameworks give them: the module name a compiled
 * program carries in its own text (HLO, StableHLO/MLIR), serialized
 * HloModuleProto or MLIR bytecode, read from the bytes the Compile call
 * was handed.
 */
#ifndef ACCELTRACE_PROGRAM_NAME_H
#define ACCELTRACE_PROGRAM_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* The module name in the first bytes of a PJRT program (HLO text, MLIR,
 * HloModuleProto); false when none can be read. */
bool pjrt_program_module_name(const char *code, size_t len, char *name,
			      size_t name_len);

struct byte_source;

/*
 * The same for a whole program read through @src (in another process's
 * memory, say): MLIR bytecode by its format, read in place; the others
 * from the program's first 4 KiB. 0, -ENOENT when it names no module,
 * -EINVAL when it cannot be read as a program, or the source's -errno.
 */
int pjrt_program_module_name_from(const struct byte_source *src, char *name,
				  size_t name_len);

#endif /* ACCELTRACE_PROGRAM_NAME_H */
