// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * /proc/PID/maps text (discover/): its paths are file names a traced
 * process chose (spaces, "\012" for a newline, " (deleted)"). Parsed, then
 * asked what discovery asks: objects, the mapping of an address, its file
 * offset.
 */
#include "fuzz_input.h"
#include "discover/proc_maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_string(data, size);
	struct proc_maps *maps = proc_maps__parse(text, size);
	const struct proc_map *m;
	uint64_t off;

	for (size_t i = 0; maps && i < proc_maps__count(maps); i++) {
		m = proc_maps__get(maps, i);
		proc_maps__find(maps, m->start);
		proc_maps__addr_to_file_offset(maps, m->end - 1, NULL, &off);
		proc_maps__object_of(maps, m);
	}
	for (size_t i = 0; maps && i < proc_maps__object_count(maps); i++)
		proc_maps__object(maps, i);
	proc_maps__free(maps);
	free(text);
	return 0;
}
