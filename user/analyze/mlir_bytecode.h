/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The module name of an MLIR bytecode program: what JAX hands a PJRT
 * plugin's Compile (a StableHLO portable artifact), whose `module @jit_step`
 * XProf names device programs by.
 *
 * The name is found by following the format, not by guessing among strings:
 * the root op of the IR section must be builtin.module, and its sym_name is
 * read from the op's properties (bytecode version >= 5) or its attribute
 * dictionary (older), through the attribute table to the string section.
 * Reads go through a byte source, so a program can be read in place in
 * another process's memory a block at a time, never all of it.
 */
#ifndef ACCELTRACE_MLIR_BYTECODE_H
#define ACCELTRACE_MLIR_BYTECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the bytes come from: a buffer, a file, another process. */
struct byte_source {
	void *ctx;
	uint64_t size;		/* bytes in the program */
	/* Copies @len bytes at @off into @buf: 0, or -errno. */
	int (*read)(void *ctx, uint64_t off, void *buf, size_t len);
};

/* True when @head (the program's first bytes) has bytecode's magic. */
bool mlir_bytecode_is(const void *head, size_t len);

/*
 * What naming one program may cost, whatever the program says: bytes read
 * from the source (in blocks of 4 KiB, the tables and a few entries, never
 * the whole program), and entries indexed per table (strings, attributes;
 * 4 bytes each). Past either, naming stops with -E2BIG.
 */
#define MLIR_NAME_MAX_READ	(8u << 20)
#define MLIR_NAME_MAX_ENTRIES	(1u << 20)

/*
 * The root module's sym_name into @name (NUL-terminated, cut to fit).
 * Returns 0; -ENOENT when the module has no name (`module { ... }`);
 * -EINVAL when the bytes are not bytecode this understands (@why says
 * where); -E2BIG when naming it would pass a bound above (@why says
 * which); -ENOMEM, or the source's -errno. Time is linear in the tables.
 */
int mlir_bytecode_module_name(const struct byte_source *src, char *name,
			      size_t name_len, char *why, size_t why_len);

/* A byte source over a buffer in memory. */
struct byte_source byte_source_of_buffer(const void *buf, size_t len);

#endif /* ACCELTRACE_MLIR_BYTECODE_H */
