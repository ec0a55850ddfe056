// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * PJRT_Api table validation (discover/): a table as it lies in a traced
 * process's memory (a 40-byte header, then function pointers), checked
 * against a plugin whose code is mapped at 0x7f0000001000-0x7f0000100000.
 * The table is read through process_read() from this process, out of a
 * buffer as large as the largest table validation accepts, so what the
 * input does not fill reads as zeros, never as neighbouring memory.
 */
#include "fuzz_input.h"
#include "discover/pjrt_api_internal.h"
#include "discover/proc_maps.h"

static const char plugin_maps[] =
	"7f0000000000-7f0000001000 r--p 00000000 08:01 1234 /usr/lib/libtpu.so\n"
	"7f0000001000-7f0000100000 r-xp 00001000 08:01 1234 /usr/lib/libtpu.so\n"
	"7f0000100000-7f0000110000 rw-p 00100000 08:01 1234 /usr/lib/libtpu.so\n"
	"7f0000200000-7f0000300000 r-xp 00000000 08:01 99 /usr/lib/libother.so\n";

#define TABLE_BYTES (PJRT_API_HEADER_SIZE + 8 * PJRT_MAX_SLOTS)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct proc_maps *maps;
	static uint8_t *table;
	const struct proc_object *lib;
	enum stage stage;
	struct table t;
	char reason[512];

	if (!maps) {
		maps = proc_maps__parse(plugin_maps, sizeof(plugin_maps) - 1);
		table = malloc(TABLE_BYTES);
		if (!maps || !table)
			abort();
	}
	if (size > TABLE_BYTES)
		return 0;
	memset(table, 0, TABLE_BYTES);
	memcpy(table, data, size);
	lib = proc_maps__object(maps, 0);
	if (!pjrt_validate(0, maps, lib, (uintptr_t)table, &t, &stage, reason, sizeof(reason))) {
		/* A table that passed: each function acceltrace must probe is
		 * in the plugin's code. */
		for (int fn = 0; fn < PJRT_FN__COUNT; fn++) {
			int slot = pjrt_fn_slot(fn, t.h.minor);

			if (pjrt_fn_required(fn) && slot >= 0 && (size_t)slot < t.nslots &&
			    !pjrt_in_lib_text(maps, lib, t.slots[slot]))
				abort();
		}
		free(t.slots);
	}
	return 0;
}
