// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A recursive-descent parser for the memory timelines JSON, bounded: the
 * nesting of skipped values, the allocators and the points are capped, and
 * every number must fit an int64.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/json_cursor.h"
#include "reader/memory_timelines.h"

#define MAX_NAME_LEN 256

static int points(struct json_cursor *c, struct xs_mem_allocator *a, size_t *n_points)
{
	size_t cap = 0;

	if (json_expect(c, '['))
		return -EINVAL;
	if (json_eat(c, ']'))
		return 0;
	do {
		int64_t f[6];

		if (++*n_points > XS_MEM_MAX_POINTS)
			return json_fail(c, -E2BIG, "more than %u points", XS_MEM_MAX_POINTS);
		if (json_expect(c, '['))
			return -EINVAL;
		for (int k = 0; k < 6; k++)
			if ((k && json_expect(c, ',')) || json_int(c, &f[k]))
				return -EINVAL;
		if (json_expect(c, ']'))
			return -EINVAL;
		if (f[1] < 0 || f[2] < 0 || f[3] < 0 || f[4] < 0 || f[5] < 0)
			return json_fail(c, -EINVAL, "a negative span or byte count");
		if (a->n_points && f[0] < a->points[a->n_points - 1].t_ns)
			return json_fail(c, -EINVAL, "points out of time order");
		if (ARRAY_GROW(a->points, cap, a->n_points + 1))
			return -ENOMEM;
		a->points[a->n_points++] = (struct xs_mem_point){
			.t_ns = f[0], .span_ns = f[1], .in_use = f[2],
			.min = f[3], .max = f[4], .peak = f[5],
		};
	} while (json_eat(c, ','));
	return json_expect(c, ']');
}

static int allocator(struct json_cursor *c, struct xs_mem_allocator *a, size_t *n_points)
{
	char key[MAX_NAME_LEN], val[MAX_NAME_LEN];
	bool named = false;
	int ret;

	a->pid = a->device_ordinal = -1;
	if (json_expect(c, '{'))
		return -EINVAL;
	if (json_eat(c, '}'))
		return json_fail(c, -EINVAL, "an allocator without allocator_name");
	do {
		if (json_string(c, key, sizeof(key)) || json_expect(c, ':'))
			return -EINVAL;
		if (!strcmp(key, "allocator_name") || !strcmp(key, "layer")) {
			char **dst = (char **)(!strcmp(key, "layer") ? &a->layer : &a->name);

			if (json_string(c, val, sizeof(val)))
				return -EINVAL;
			free(*dst);
			*dst = strdup(val);
			if (!*dst)
				return -ENOMEM;
			named |= dst == (char **)&a->name;
		} else if (!strcmp(key, "pid")) {
			if (json_int(c, &a->pid))
				return -EINVAL;
		} else if (!strcmp(key, "device_ordinal")) {
			if (json_int(c, &a->device_ordinal))
				return -EINVAL;
		} else if (!strcmp(key, "points")) {
			ret = points(c, a, n_points);
			if (ret)
				return ret;
		} else if (json_skip(c, 0)) {
			return -EINVAL;
		}
	} while (json_eat(c, ','));
	if (!named)
		return json_fail(c, -EINVAL, "an allocator without allocator_name");
	return json_expect(c, '}');
}

static int document(struct json_cursor *c, struct memory_timelines *out)
{
	char key[MAX_NAME_LEN];
	size_t cap = 0, n_points = 0;	/* over all allocators */
	int64_t version = -1;
	int ret;

	if (json_expect(c, '{'))
		return -EINVAL;
	do {
		if (json_string(c, key, sizeof(key)) || json_expect(c, ':'))
			return -EINVAL;
		if (!strcmp(key, "version")) {
			if (json_int(c, &version))
				return -EINVAL;
			if (version != 1)
				return json_fail(c, -EINVAL, "version %lld, not 1", (long long)version);
		} else if (!strcmp(key, "allocators")) {
			if (json_expect(c, '['))
				return -EINVAL;
			if (json_eat(c, ']'))
				continue;
			do {
				if (out->n_allocs >= XS_MEM_MAX_ALLOCATORS)
					return json_fail(c, -E2BIG, "more than %d allocators",
						    XS_MEM_MAX_ALLOCATORS);
				if (ARRAY_GROW(out->allocs, cap, out->n_allocs + 1))
					return -ENOMEM;
				memset(&out->allocs[out->n_allocs], 0, sizeof(*out->allocs));
				ret = allocator(c, &out->allocs[out->n_allocs++], &n_points);
				if (ret)
					return ret;
			} while (json_eat(c, ','));
			if (json_expect(c, ']'))
				return -EINVAL;
		} else if (json_skip(c, 0)) {
			return -EINVAL;
		}
	} while (json_eat(c, ','));
	if (json_expect(c, '}'))
		return -EINVAL;
	json_ws(c);
	if (c->i != c->n)
		return json_fail(c, -EINVAL, "text after the object");
	if (version != 1)
		return json_fail(c, -EINVAL, "no \"version\": 1");
	return 0;
}

int memory_timelines_parse(const char *json, size_t len, struct memory_timelines *out,
			   char *err, size_t errlen)
{
	struct json_cursor c = { .s = json, .n = len, .err = err, .errlen = errlen };
	int ret;

	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = 0;
	ret = document(&c, out);
	if (ret) {
		if (ret == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		memory_timelines_free(out);
	}
	return ret;
}

void memory_timelines_free(struct memory_timelines *t)
{
	for (size_t i = 0; i < t->n_allocs; i++) {
		free((char *)t->allocs[i].name);
		free((char *)t->allocs[i].layer);
		free(t->allocs[i].points);
	}
	free(t->allocs);
	memset(t, 0, sizeof(*t));
}
