// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probe placement's x86-64 decoder (discover/): a function's first bytes,
 * read from a library a traced process maps, decide where its uprobe goes.
 * A probe moved past the entry must stay inside the bytes it was given.
 */
#include "fuzz_input.h"
#include "discover/probe_placement.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probe_placement pl;

	/* Its own copy, exactly @size long: ASan sees any read past it. */
	uint8_t *code = malloc(size ? size : 1);

	if (!code)
		abort();
	memcpy(code, data, size);
	if (!probe_placement__decide(code, size, &pl)) {
		/* Moved only over instructions it saw whole (an opcode alone
		 * may still name a longer instruction: insn_len is a decoding). */
		if (pl.offset && pl.offset >= size)
			abort();	/* a probe placed past the bytes it was given */
		if (!memchr(pl.insn, 0, sizeof(pl.insn)) || !memchr(pl.why, 0, sizeof(pl.why)))
			abort();	/* an unterminated description */
	}
	free(code);
	return 0;
}
