// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* When the daemon wants detail: slices, full, holds after a trigger. */
#include "test.h"
#include "daemon/detail_sampler.h"

#define MS 1000000ull
#define S (1000 * MS)
#define T0 (1000 * S)

int main(void)
{
	struct detail_sampler s;

	/* 1 s every 30 s from T0. */
	detail_sampler__init(&s, false, 30 * S, 1 * S, T0);
	ASSERT_FALSE(detail_sampler__want(&s, T0 - 1), "nothing before the first slice");
	ASSERT_TRUE(detail_sampler__want(&s, T0), "a slice at the start");
	ASSERT_TRUE(detail_sampler__want(&s, T0 + 999 * MS), "to its end");
	ASSERT_FALSE(detail_sampler__want(&s, T0 + 1 * S), "off after it");
	ASSERT_FALSE(detail_sampler__want(&s, T0 + 29 * S), "off until the next");
	ASSERT_TRUE(detail_sampler__want(&s, T0 + 60 * S + 500 * MS), "the third slice");

	/* A trigger's window after it: on throughout, whatever the slices. */
	detail_sampler__hold(&s, T0 + 40 * S, T0 + 50 * S);
	ASSERT_FALSE(detail_sampler__want(&s, T0 + 39 * S), "not before the trigger");
	ASSERT_TRUE(detail_sampler__want(&s, T0 + 40 * S), "from the trigger");
	ASSERT_TRUE(detail_sampler__want(&s, T0 + 49 * S), "through its window");
	ASSERT_FALSE(detail_sampler__want(&s, T0 + 50 * S), "not past its stop");
	detail_sampler__release(&s);
	ASSERT_FALSE(detail_sampler__want(&s, T0 + 45 * S), "released");

	/* A reload keeps the phase. */
	detail_sampler__configure(&s, false, 10 * S, 2 * S);
	ASSERT_TRUE(detail_sampler__want(&s, T0 + 21 * S), "new interval, same epoch");
	ASSERT_FALSE(detail_sampler__want(&s, T0 + 22 * S), "new slice length");

	/* Slice 0: detail only after triggers. */
	detail_sampler__configure(&s, false, 10 * S, 0);
	ASSERT_FALSE(detail_sampler__want(&s, T0), "no slices at all");
	detail_sampler__hold(&s, T0 + 5 * S, T0 + 6 * S);
	ASSERT_TRUE(detail_sampler__want(&s, T0 + 5 * S), "but a trigger's window");

	/* A slice as long as its interval never ends; full is always. */
	detail_sampler__configure(&s, false, 10 * S, 10 * S);
	ASSERT_TRUE(detail_sampler__want(&s, T0 + 17 * S), "slice >= interval: always");
	detail_sampler__configure(&s, true, 30 * S, 1 * S);
	ASSERT_TRUE(detail_sampler__want(&s, T0 + 17 * S), "full: always");
	return test_exit();
}
