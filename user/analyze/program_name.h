/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Program names as frameworks give them: the module name a compiled
 * program carries in its own text (HLO, StableHLO/MLIR) or serialized
 * HloModuleProto, read from the bytes the Compile call was handed.
 */
#ifndef ACCELTRACE_PROGRAM_NAME_H
#define ACCELTRACE_PROGRAM_NAME_H

#include <stdbool.h>
#include <stddef.h>

/* The module name in the first bytes of a PJRT program (HLO text, MLIR,
 * HloModuleProto); false when none can be read. */
bool pjrt_program_module_name(const char *code, size_t len, char *name,
			      size_t name_len);

#endif /* ACCELTRACE_PROGRAM_NAME_H */
