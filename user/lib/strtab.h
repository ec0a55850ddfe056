/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A string interning table: each distinct string gets a dense id, from 1 in
 * the order first seen; id 0 is the empty string, always present. Strings are
 * copied into chunks that never move, so the pointers strtab__str() returns
 * stay valid until strtab__clear() or strtab__free().
 *
 *	struct strtab *t = strtab__new();
 *	uint32_t id = strtab__intern(t, "fusion", 6);
 *	if (!id && errno == ENOMEM) ...	// a non-empty string got no id
 *	puts(strtab__str(t, id));
 *	strtab__free(t);
 */
#ifndef ACCELTRACE_STRTAB_H
#define ACCELTRACE_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct strtab;

/* An empty table (just ""); NULL and errno on failure. */
struct strtab *strtab__new(void);
/* Accepts NULL. */
void strtab__free(struct strtab *t);
/* Back to just "", keeping the storage for reuse; earlier pointers die. */
void strtab__clear(struct strtab *t);

/*
 * The id of s[0..len), added when new. NULL or len 0 is id 0. Out of
 * memory (or of ids), returns 0 with errno ENOMEM and the table unchanged.
 */
uint32_t strtab__intern(struct strtab *t, const char *s, size_t len);
/* The id of s[0..len) if present, else 0 (then "" and absent look alike). */
uint32_t strtab__find(const struct strtab *t, const char *s, size_t len);

/* The string of an id (NUL-terminated), or NULL for an id never returned. */
const char *strtab__str(const struct strtab *t, uint32_t id);
/* Its length without the NUL; 0 for an unknown id. */
size_t strtab__len(const struct strtab *t, uint32_t id);
/* Ids run from 0 to strtab__count() - 1. */
size_t strtab__count(const struct strtab *t);

/* The hash the table uses (32-bit FNV-1a), for callers that key by it. */
uint32_t strtab__hash(const char *s, size_t len);

#endif /* ACCELTRACE_STRTAB_H */
