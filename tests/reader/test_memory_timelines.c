// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * reader/memory_timelines.c: the acceltrace.memory_timelines JSON read in
 * its documented form (keys of a later version skipped), and hostile text
 * refused with where and why: every truncation of a valid document, a
 * wrong version, nesting past the bound, numbers past int64 or not
 * integers, points out of time order, negative sizes, names past the
 * bound, more allocators than XS_MEM_MAX_ALLOCATORS.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "reader/memory_timelines.h"

static const char valid[] =
	"{\"version\": 1, \"future\": {\"a\": [1, 2.5e3, true, null, \"x\\\"y\"]},\n"
	" \"allocators\": [\n"
	"  {\"allocator_name\": \"GPU_0_cuda_reserved\", \"pid\": 42, \"device_ordinal\": 0,\n"
	"   \"layer\": \"cuda_reserved\", \"points\": [[-7200000000000, 600000000000, 5, 1, 9, 9],\n"
	"   [-600000000000, 10000000000, 7, 5, 7, 9]]},\n"
	"  {\"pid\": 7, \"allocator_name\": \"TPU_1_pjrt\\u0062uffers\", \"points\": []}\n"
	" ]}";

static int parse(const char *s, size_t len, struct memory_timelines *t, char *err)
{
	return memory_timelines_parse(s, len, t, err, 160);
}

static void test_valid(void)
{
	struct memory_timelines t;
	char err[160];

	if (!ASSERT_OK(parse(valid, strlen(valid), &t, err), "a valid document"))
		return;
	if (ASSERT_EQ(t.n_allocs, 2, "two allocators")) {
		const struct xs_mem_allocator *a = &t.allocs[0], *b = &t.allocs[1];

		ASSERT_STREQ(a->name, "GPU_0_cuda_reserved", "its name");
		ASSERT_STREQ(a->layer, "cuda_reserved", "its layer");
		ASSERT_EQ(a->pid, 42, "its pid");
		ASSERT_EQ(a->device_ordinal, 0, "its device");
		if (ASSERT_EQ(a->n_points, 2, "its points")) {
			ASSERT_EQ(a->points[0].t_ns, -7200000000000LL, "t_ns, negative before the window");
			ASSERT_EQ(a->points[0].span_ns, 600000000000LL, "span_ns");
			ASSERT_EQ(a->points[1].in_use, 7, "in_use");
			ASSERT_EQ(a->points[1].min, 5, "min");
			ASSERT_EQ(a->points[1].max, 7, "max");
			ASSERT_EQ(a->points[1].peak, 9, "peak");
		}
		ASSERT_STREQ(b->name, "TPU_1_pjrtbuffers", "a \\u escape");
		ASSERT_EQ(b->device_ordinal, -1, "no device_ordinal: -1");
		ASSERT_EQ(b->n_points, 0, "no points");
	}
	memory_timelines_free(&t);
}

/* Every prefix of a valid document is refused, none read out of bounds. */
static void test_truncated(void)
{
	size_t n = strlen(valid), refused = 0;

	for (size_t len = 0; len < n; len++) {
		struct memory_timelines t;
		char err[160], *copy = malloc(len ? len : 1);

		memcpy(copy, valid, len);	/* no NUL after it: ASan sees overreads */
		refused += parse(copy, len, &t, err) == -EINVAL && err[0] && !t.n_allocs;
		free(copy);
	}
	ASSERT_EQ(refused, n, "every truncation refused with a reason");
}

static void test_refusals(void)
{
	static const struct {
		const char *json, *why;
	} bad[] = {
		{ "{\"version\": 2, \"allocators\": []}", "version 2" },
		{ "{\"allocators\": []}", "no \"version\"" },
		{ "{\"version\": 1, \"allocators\": [{\"pid\": 1}]}", "without allocator_name" },
		{ "{\"version\": 1, \"allocators\": [{\"allocator_name\": \"a\", \"pid\": 99999999999999999999}]}",
		  "expected an int64" },
		{ "{\"version\": 1, \"allocators\": [{\"allocator_name\": \"a\", \"points\": [[0, 1, 2.5, 0, 0, 0]]}]}",
		  "expected an integer" },
		{ "{\"version\": 1, \"allocators\": [{\"allocator_name\": \"a\", \"points\": [[5, 1, 1, 1, 1, 1], [4, 1, 1, 1, 1, 1]]}]}",
		  "out of time order" },
		{ "{\"version\": 1, \"allocators\": [{\"allocator_name\": \"a\", \"points\": [[5, -1, 1, 1, 1, 1]]}]}",
		  "negative" },
		{ "{\"version\": 1, \"allocators\": [{\"allocator_name\": \"a\", \"points\": [[5, 1, 1, 1, 1]]}]}",
		  "expected ','" },
		{ "{\"version\": 1, \"allocators\": []} x", "text after the object" },
		{ "{\"version\": 1, \"allocators\": [{\"allocator_name\": \"a\\q\"}]}", "bad escape" },
		{ "{\"version\": 1, \"x\": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}", "nested deeper" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct memory_timelines t;
		char err[160];

		ASSERT_EQ(parse(bad[i].json, strlen(bad[i].json), &t, err), -EINVAL, bad[i].why);
		ASSERT_STRCONTAINS(err, bad[i].why, bad[i].why);
		ASSERT_EQ(t.n_allocs, 0, "nothing kept");
	}
}

static void test_bounds(void)
{
	struct memory_timelines t;
	size_t n = XS_MEM_MAX_ALLOCATORS + 1, cap = 64 + n * 24, k;
	char *s = malloc(cap), err[160], name[300];

	k = (size_t)snprintf(s, cap, "{\"version\": 1, \"allocators\": [");
	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(s + k, cap - k, "%s{\"allocator_name\":\"a\"}", i ? "," : "");
	k += (size_t)snprintf(s + k, cap - k, "]}");
	ASSERT_EQ(parse(s, k, &t, err), -E2BIG, "more allocators than the bound");
	ASSERT_STRCONTAINS(err, "allocators", "the bound named");
	free(s);

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = 0;
	s = malloc(512);
	k = (size_t)snprintf(s, 512, "{\"version\": 1, \"allocators\": [{\"allocator_name\": \"%s\"}]}",
			     name);
	ASSERT_EQ(parse(s, k, &t, err), -EINVAL, "a name past the bound");
	ASSERT_STRCONTAINS(err, "string longer than", "the reason");
	free(s);
}

int main(void)
{
	test_valid();
	test_truncated();
	test_refusals();
	test_bounds();
	return test_exit();
}
