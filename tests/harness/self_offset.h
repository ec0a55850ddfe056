/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * For tests that put uprobes on their own functions: where @fn lies in
 * /proc/self/exe, as a file offset (what probe_session__attach_runtime
 * takes), from the mapping /proc/self/maps shows for it; 0 when none does.
 */
#ifndef ACCELTRACE_TEST_SELF_OFFSET_H
#define ACCELTRACE_TEST_SELF_OFFSET_H

#include <stdint.h>
#include <stdio.h>

static inline uint64_t self_file_offset(void *fn)
{
	uint64_t addr = (uint64_t)fn, start, end, off;
	char line[512], perms[8];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx", &start, &end, perms, &off) == 4 &&
		    addr >= start && addr < end) {
			fclose(f);
			return addr - start + off;
		}
	}
	if (f)
		fclose(f);
	return 0;
}

#endif /* ACCELTRACE_TEST_SELF_OFFSET_H */
