// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Finding planes, lines and stats by the names XProf resolves them by. */
#include <string.h>

#include "reader/xspace_reader.h"

const struct xs_stat *xs_stat_find(const struct xs_stat *stats, size_t n,
				   const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(stats[i].name, name))
			return &stats[i];
	return NULL;
}

const struct xs_stat *xs_event_stat(const struct xs_event *e, const char *name)
{
	const struct xs_stat *s = xs_stat_find(e->stats, e->n_stats, name);

	return s ? s : xs_stat_find(e->meta->stats, e->meta->n_stats, name);
}

bool xs_stat_int(const struct xs_stat *s, int64_t *v)
{
	if (!s)
		return false;
	switch (s->type) {
	case XS_STAT_INT: *v = s->i; return true;
	case XS_STAT_UINT: *v = (int64_t)s->u; return true;
	case XS_STAT_DOUBLE:
		/* A file's double may be NaN or past 2^63: no int64_t value, and
		 * the cast would be undefined. [-2^63, 2^63) converts. */
		if (!(s->d >= -0x1p63 && s->d < 0x1p63))
			return false;
		*v = (int64_t)s->d;
		return true;
	default: return false;
	}
}

bool xs_stat_double(const struct xs_stat *s, double *v)
{
	if (!s)
		return false;
	switch (s->type) {
	case XS_STAT_INT: *v = (double)s->i; return true;
	case XS_STAT_UINT: *v = (double)s->u; return true;
	case XS_STAT_DOUBLE: *v = s->d; return true;
	default: return false;
	}
}

const struct xs_plane *xs_plane_named(const struct xs_space *xs, const char *name)
{
	for (size_t i = 0; i < xs->n_planes; i++)
		if (!strcmp(xs->planes[i].name, name))
			return &xs->planes[i];
	return NULL;
}

const struct xs_line *xs_line_named(const struct xs_plane *p, const char *name)
{
	for (size_t i = 0; i < p->n_lines; i++)
		if (!strcmp(p->lines[i].name, name))
			return &p->lines[i];
	return NULL;
}

bool xs_is_device_plane(const struct xs_plane *p)
{
	static const char prefix[] = "/device:";

	return !strncmp(p->name, prefix, sizeof(prefix) - 1) &&
	       strncmp(p->name, "/device:CUSTOM", 14) != 0;
}

const char *xs_event_label(const struct xs_event *e)
{
	return e->meta->display_name[0] ? e->meta->display_name : e->meta->name;
}
