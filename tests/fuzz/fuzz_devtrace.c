// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A devtrace buffer (devtrace/): header, name table and record ring, as a
 * traced process's file may hold them. The first input byte stretches the
 * file with holes by that many 4 MiB (a sparse file's size is free to
 * announce); the rest is the file. The reader polls it a few times, as the
 * daemon's loop would, and every record's name is looked up whole.
 */
#include <fcntl.h>

#include "fuzz_input.h"
#include "devtrace/devtrace_reader.h"

struct seen {
	struct devtrace_reader *r;
	unsigned long records;
};

static int on_record(void *ctx, int buf, const struct devtrace_record *rec)
{
	struct seen *s = ctx;
	char name[DEVTRACE_LONG_NAME_MAX + 1];
	int kind;

	devtrace_reader__name(s->r, buf, rec->name_id, &kind);
	devtrace_reader__long_name(s->r, buf, rec->name_id, name, sizeof(name));
	s->records++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen s = { 0 };
	struct devtrace_reader_ops ops = { .on_record = on_record, .ctx = &s };
	struct devtrace_reader_opts opts = {
		.sz = sizeof(opts),
		/* pread: the format is under test here, not the ring. */
		.io = { .sz = sizeof(opts.io), .staging_bytes = 1 << 20, .force_pread = 1 },
	};
	struct devtrace_buffer_stats st;
	int buf;

	if (!size)
		return 0;
	s.r = devtrace_reader__new(&opts, &ops);
	if (!s.r)
		abort();
	buf = devtrace_reader__add(s.r, fuzz_memfd(data + 1, size - 1, (uint64_t)data[0] << 22),
				   "fuzz");
	for (int i = 0; buf >= 0 && i < 3; i++) {
		if (devtrace_reader__poll(s.r, 4) < 0)
			break;
		devtrace_reader__caught_up(s.r, buf);
	}
	if (buf >= 0)
		devtrace_reader__stats(s.r, buf, &st);
	devtrace_reader__free(s.r);
	return 0;
}
