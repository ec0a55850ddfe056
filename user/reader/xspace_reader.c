// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Decoding with protobuf-c (from output/xplane.proto, the upstream field
 * numbers), then one pass that resolves every id to its name and every
 * offset to an absolute time, so readers never see the wire's indirections.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "reader/xspace_reader.h"
#include "xplane.pb-c.h"

/* One protobuf message cannot exceed 2 GiB (xprof-contract.md §10). */
#define XS_MAX_FILE_BYTES ((size_t)INT32_MAX)

typedef Tensorflow__Profiler__XSpace pb_space;
typedef Tensorflow__Profiler__XPlane pb_plane;
typedef Tensorflow__Profiler__XLine pb_line;
typedef Tensorflow__Profiler__XEvent pb_event;
typedef Tensorflow__Profiler__XStat pb_stat;

struct stat_name {
	int64_t id;
	const char *name;
};

struct xs_priv {
	pb_space *pb;
};

static const struct xs_event_meta missing_meta = {
	.id = -1, .name = "(unknown event metadata)", .display_name = "",
};

static int fail(char *err, size_t len, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return code;
}

static int cmp_stat_name(const void *a, const void *b)
{
	const struct stat_name *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_meta(const void *a, const void *b)
{
	const struct xs_event_meta *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_event(const void *a, const void *b)
{
	const struct xs_event *x = a, *y = b;

	if (x->start_ps != y->start_ps)
		return x->start_ps < y->start_ps ? -1 : 1;
	/* Longest first, so nested events come outer to inner. */
	return x->dur_ps > y->dur_ps ? -1 : x->dur_ps < y->dur_ps;
}

static const char *stat_name_of(const struct stat_name *names, size_t n, int64_t id)
{
	struct stat_name key = { .id = id };
	const struct stat_name *hit = array_bsearch(&key, names, n, sizeof(*names),
						    cmp_stat_name);

	return hit ? hit->name : NULL;
}

/* Converts n protobuf stats; *out is NULL when n is 0. */
static int convert_stats(pb_stat **in, size_t n, const struct stat_name *names,
			 size_t n_names, struct xs_stat **out)
{
	struct xs_stat *s;

	*out = NULL;
	if (!n)
		return 0;
	s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *name = stat_name_of(names, n_names, in[i]->metadata_id);
		const char *ref;

		s[i].name = name ? name : "";
		switch (in[i]->value_case) {
		case TENSORFLOW__PROFILER__XSTAT__VALUE_DOUBLE_VALUE:
			s[i].type = XS_STAT_DOUBLE;
			s[i].d = in[i]->double_value;
			break;
		case TENSORFLOW__PROFILER__XSTAT__VALUE_UINT64_VALUE:
			s[i].type = XS_STAT_UINT;
			s[i].u = in[i]->uint64_value;
			break;
		case TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE:
			s[i].type = XS_STAT_INT;
			s[i].i = in[i]->int64_value;
			break;
		case TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE:
			s[i].type = XS_STAT_STR;
			s[i].s = in[i]->str_value;
			break;
		case TENSORFLOW__PROFILER__XSTAT__VALUE_REF_VALUE:
			/* Interning: the string is the referenced metadata's name. */
			ref = stat_name_of(names, n_names, (int64_t)in[i]->ref_value);
			s[i].type = XS_STAT_STR;
			s[i].s = ref ? ref : "";
			break;
		case TENSORFLOW__PROFILER__XSTAT__VALUE_BYTES_VALUE:
			s[i].type = XS_STAT_BYTES;
			s[i].bytes = in[i]->bytes_value.data;
			s[i].len = in[i]->bytes_value.len;
			break;
		case TENSORFLOW__PROFILER__XSTAT__VALUE_COMPRESSED_STR_VALUE:
			s[i].type = XS_STAT_BYTES;
			s[i].bytes = in[i]->compressed_str_value.data;
			s[i].len = in[i]->compressed_str_value.len;
			break;
		default:
			s[i].type = XS_STAT_NONE;
			break;
		}
	}
	*out = s;
	return 0;
}

static int build_metas(const pb_plane *pp, struct xs_plane *p,
		       const struct stat_name *names, size_t n_names)
{
	if (!pp->n_event_metadata)
		return 0;
	p->metas = calloc(pp->n_event_metadata, sizeof(*p->metas));
	if (!p->metas)
		return -ENOMEM;
	for (size_t i = 0; i < pp->n_event_metadata; i++) {
		const Tensorflow__Profiler__XEventMetadata *m = pp->event_metadata[i]->value;
		struct xs_event_meta *x = &p->metas[p->n_metas];

		if (!m)
			continue;
		/* The map key is the id (they are equal in valid files). */
		x->id = pp->event_metadata[i]->key;
		x->name = m->name;
		x->display_name = m->display_name;
		p->n_metas++;
		if (convert_stats(m->stats, m->n_stats, names, n_names, &x->stats))
			return -ENOMEM;
		x->n_stats = m->n_stats;
	}
	qsort(p->metas, p->n_metas, sizeof(*p->metas), cmp_meta);
	return 0;
}

static const struct xs_event_meta *meta_of(const struct xs_plane *p, int64_t id)
{
	struct xs_event_meta key = { .id = id };
	/* A plane without metadata has no array (acceltrace's own host planes). */
	const struct xs_event_meta *m = array_bsearch(&key, p->metas, p->n_metas,
						      sizeof(key), cmp_meta);

	return m ? m : &missing_meta;
}

static int build_line(const pb_plane *pp, const pb_line *pl, struct xs_plane *p,
		      struct xs_line *l, const struct stat_name *names, size_t n_names,
		      char *err, size_t errlen)
{
	const int64_t max_ns = INT64_MAX / 1000 - 1;

	l->id = pl->id;
	l->display_id = pl->display_id ? pl->display_id : pl->id;
	l->name = pl->name;
	l->display_name = pl->display_name[0] ? pl->display_name : pl->name;
	l->timestamp_ns = pl->timestamp_ns;
	l->duration_ps = pl->duration_ps;
	if (pl->timestamp_ns > max_ns || pl->timestamp_ns < -max_ns)
		return fail(err, errlen, -EINVAL, "line '%s' of plane '%s' has a timestamp "
			    "out of range (%lld ns)", pl->name, pp->name,
			    (long long)pl->timestamp_ns);
	if (!pl->n_events)
		return 0;
	l->events = calloc(pl->n_events, sizeof(*l->events));
	if (!l->events)
		return -ENOMEM;
	/* Counted now so that xs_free frees what a failure leaves behind. */
	l->n_events = pl->n_events;
	for (size_t i = 0; i < pl->n_events; i++) {
		const pb_event *pe = pl->events[i];
		struct xs_event *e = &l->events[i];
		int64_t off = 0;

		if (pe->duration_ps < 0)
			return fail(err, errlen, -EINVAL, "an event on line '%s' of plane '%s' "
				    "has a negative duration (%lld ps)", pl->name, pp->name,
				    (long long)pe->duration_ps);
		if (pe->data_case == TENSORFLOW__PROFILER__XEVENT__DATA_NUM_OCCURRENCES)
			e->num_occurrences = pe->num_occurrences;
		else
			off = pe->offset_ps;
		if (off > INT64_MAX / 2 || off < -(INT64_MAX / 2) ||
		    pe->duration_ps > INT64_MAX / 4)
			return fail(err, errlen, -EINVAL, "an event on line '%s' of plane '%s' "
				    "has a time out of range", pl->name, pp->name);
		e->meta = meta_of(p, pe->metadata_id);
		if (__builtin_mul_overflow(pl->timestamp_ns, (int64_t)1000, &e->start_ps) ||
		    __builtin_add_overflow(e->start_ps, off, &e->start_ps) ||
		    e->start_ps > INT64_MAX - pe->duration_ps)
			return fail(err, errlen, -EINVAL, "an event on line '%s' of plane '%s' "
				    "has a time out of range", pl->name, pp->name);
		e->dur_ps = pe->duration_ps;
		if (convert_stats(pe->stats, pe->n_stats, names, n_names, &e->stats))
			return -ENOMEM;
		e->n_stats = pe->n_stats;
	}
	qsort(l->events, l->n_events, sizeof(*l->events), cmp_event);
	return 0;
}

static int build_plane(const pb_plane *pp, struct xs_plane *p, size_t *n_events,
		       char *err, size_t errlen)
{
	struct stat_name *names = NULL;
	size_t n_names = 0;
	int ret = -ENOMEM;

	p->id = pp->id;
	p->name = pp->name;
	if (pp->n_stat_metadata) {
		names = calloc(pp->n_stat_metadata, sizeof(*names));
		if (!names)
			return -ENOMEM;
	}
	for (size_t i = 0; i < pp->n_stat_metadata; i++) {
		const Tensorflow__Profiler__XStatMetadata *m = pp->stat_metadata[i]->value;

		if (!m)
			continue;
		names[n_names].id = pp->stat_metadata[i]->key;
		names[n_names].name = m->name;
		if (!strcmp(m->name, "group_id"))
			p->has_group_id = true;
		n_names++;
	}
	array_sort(names, n_names, sizeof(*names), cmp_stat_name);
	if (convert_stats(pp->stats, pp->n_stats, names, n_names, &p->stats))
		goto out;
	p->n_stats = pp->n_stats;
	if (build_metas(pp, p, names, n_names))
		goto out;
	if (pp->n_lines) {
		p->lines = calloc(pp->n_lines, sizeof(*p->lines));
		if (!p->lines)
			goto out;
	}
	for (size_t i = 0; i < pp->n_lines; i++) {
		ret = build_line(pp, pp->lines[i], p, &p->lines[i], names, n_names,
				 err, errlen);
		p->n_lines = i + 1;
		if (ret)
			goto out;
		*n_events += p->lines[i].n_events;
	}
	ret = 0;
out:
	free(names);
	return ret;
}

void xs_free(struct xs_space *xs)
{
	struct xs_priv *priv;

	if (!xs)
		return;
	for (size_t i = 0; i < xs->n_planes; i++) {
		struct xs_plane *p = &xs->planes[i];

		for (size_t j = 0; j < p->n_lines; j++) {
			for (size_t k = 0; k < p->lines[j].n_events; k++)
				free(p->lines[j].events[k].stats);
			free(p->lines[j].events);
		}
		for (size_t j = 0; j < p->n_metas; j++)
			free(p->metas[j].stats);
		free(p->lines);
		free(p->metas);
		free(p->stats);
	}
	free(xs->planes);
	priv = xs->priv;
	if (priv) {
		if (priv->pb)
			tensorflow__profiler__xspace__free_unpacked(priv->pb, NULL);
		free(priv);
	}
	free(xs);
}

int xs_read_buffer(const uint8_t *buf, size_t len, const char *name,
		   struct xs_space **out, char *err, size_t errlen)
{
	struct xs_space *xs;
	struct xs_priv *priv;
	pb_space *pb;
	int ret;

	*out = NULL;
	if (!len)
		return fail(err, errlen, -EINVAL, "%s is empty (0 bytes): not an XSpace", name);
	pb = tensorflow__profiler__xspace__unpack(NULL, len, buf);
	if (!pb)
		return fail(err, errlen, -EINVAL, "%s is not a valid XSpace: the protobuf "
			    "is truncated or corrupt (%zu bytes)", name, len);
	xs = calloc(1, sizeof(*xs));
	priv = calloc(1, sizeof(*priv));
	if (!xs || !priv) {
		free(xs);
		free(priv);
		tensorflow__profiler__xspace__free_unpacked(pb, NULL);
		return fail(err, errlen, -ENOMEM, "%s: out of memory", name);
	}
	priv->pb = pb;
	xs->priv = priv;
	xs->hostnames = (const char *const *)pb->hostnames;
	xs->n_hostnames = pb->n_hostnames;
	xs->errors = (const char *const *)pb->errors;
	xs->n_errors = pb->n_errors;
	xs->warnings = (const char *const *)pb->warnings;
	xs->n_warnings = pb->n_warnings;
	if (!pb->n_planes) {
		xs_free(xs);
		return fail(err, errlen, -EINVAL, "%s holds no planes: not an XSpace capture", name);
	}
	xs->planes = calloc(pb->n_planes, sizeof(*xs->planes));
	if (!xs->planes) {
		xs_free(xs);
		return fail(err, errlen, -ENOMEM, "%s: out of memory", name);
	}
	for (size_t i = 0; i < pb->n_planes; i++) {
		char why[256] = "";

		ret = build_plane(pb->planes[i], &xs->planes[i], &xs->n_events, why, sizeof(why));
		xs->n_planes = i + 1;
		if (ret) {
			xs_free(xs);
			if (ret == -ENOMEM)
				return fail(err, errlen, ret, "%s: out of memory", name);
			return fail(err, errlen, ret, "%s is not a valid XSpace: %s", name, why);
		}
	}
	*out = xs;
	return 0;
}

int xs_read_file(const char *path, struct xs_space **out, char *err, size_t errlen)
{
	struct stat st;
	uint8_t *buf;
	size_t got = 0;
	int fd, ret;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, errlen, -errno, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(err, errlen, -EINVAL, "%s is not a regular file", path);
	}
	if ((uint64_t)st.st_size > XS_MAX_FILE_BYTES) {
		close(fd);
		return fail(err, errlen, -EFBIG, "%s is larger than 2 GiB: not one XSpace "
			    "message (split captures are not read)", path);
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf) {
		close(fd);
		return fail(err, errlen, -ENOMEM, "%s: out of memory", path);
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -EIO;
			close(fd);
			free(buf);
			return fail(err, errlen, ret, "cannot read %s: %s", path,
				    n < 0 ? strerror(-ret) : "file shrank while read");
		}
		got += n;
	}
	close(fd);
	ret = xs_read_buffer(buf, got, path, out, err, errlen);
	if (ret) {
		free(buf);
		return ret;
	}
	/* Stats point into the decoded message, not into buf: buf can go. */
	free(buf);
	return 0;
}
