/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reading a written XSpace back in C tests, with protobuf-c's generated
 * code (not acceltrace's reader): the file's bytes, a plane by name, an
 * event's name by its metadata id. Include after "xplane.pb-c.h".
 */
#ifndef ACCELTRACE_TEST_XPLANE_C_H
#define ACCELTRACE_TEST_XPLANE_C_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef Tensorflow__Profiler__XSpace XSpace;
typedef Tensorflow__Profiler__XPlane XPlane;

/* The whole file (malloc'd, *len set), or NULL. */
static inline uint8_t *xplane_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc(n ? n : 1);
		if (buf && fread(buf, 1, n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = n;
	}
	fclose(f);
	return buf;
}

static inline const XPlane *xplane_plane(const XSpace *xs, const char *name)
{
	for (size_t i = 0; i < xs->n_planes; i++)
		if (!strcmp(xs->planes[i]->name, name))
			return xs->planes[i];
	return NULL;
}

static inline const char *xplane_event_name(const XPlane *p, int64_t metadata_id)
{
	for (size_t i = 0; i < p->n_event_metadata; i++)
		if (p->event_metadata[i]->key == metadata_id)
			return p->event_metadata[i]->value->name;
	return NULL;
}

#endif /* ACCELTRACE_TEST_XPLANE_C_H */
