// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Track layout: spans wholly outside the window left out and counted;
 * spans clipped at the window start ordered longest first; a span that
 * only partly overlaps another goes to a second row, one that nests stays;
 * slots give each row's spans in order; finding spans by time; the layout
 * reused for a smaller track.
 */
#include "test.h"
#include "output/track_layout.h"

#define S(a, b) { .start_ns = (a), .end_ns = (b) }

static void test_layout(void)
{
	/* Sorted as the capture sorts: start asc, end desc. */
	const struct capture_span sp[] = {
		S(10, 20),	/* 0: wholly before the window */
		S(50, 300),	/* 1: clipped at the start, ends at 300 */
		S(60, 900),	/* 2: clipped at the start, longer: first */
		S(100, 200),	/* 3: starts at the window start */
		S(150, 400),	/* 4: partly overlaps 3: a second row */
		S(500, 600),	/* 5 */
		S(550, 560),	/* 6: nests in 5 */
		S(1000, 1100),	/* 7: after the window */
	};
	const uint32_t want_order[] = { 2, 1, 3, 4, 5, 6 };
	/* Row 0 holds 2, 1, 3, 5, 6 (slots 0..4), row 1 holds 4 (slot 5). */
	const uint32_t want_slot[] = { 0, 1, 2, 5, 3, 4 };
	struct track_layout *l = track_layout__new();
	const uint32_t *order, *slot;
	size_t first, count;

	if (!ASSERT_OK_PTR(l, "new"))
		return;
	ASSERT_OK(track_layout__run(l, sp, 8, 100, 900), "run");
	ASSERT_EQ(track_layout__outside(l), 2, "before and after the window");
	if (!ASSERT_EQ(track_layout__count(l), 6, "six laid out"))
		goto out;
	order = track_layout__order(l);
	slot = track_layout__slot(l);
	for (int k = 0; k < 6; k++) {
		ASSERT_EQ(order[k], want_order[k], "order");
		ASSERT_EQ(slot[k], want_slot[k], "slot");
	}
	ASSERT_EQ(track_layout__rows(l), 2, "two rows");
	track_layout__row(l, 0, &first, &count);
	ASSERT_TRUE(first == 0 && count == 5, "row 0: slots 0..4");
	track_layout__row(l, 1, &first, &count);
	ASSERT_TRUE(first == 5 && count == 1, "row 1: slot 5");
	ASSERT_EQ(span_clip_start(&sp[1], 100), 100, "clip start");
	ASSERT_EQ(span_clip_end(&sp[2], 800), 800, "clip end");
	ASSERT_TRUE(span_is_clipped(&sp[1], 100, 900), "clipped");
	ASSERT_FALSE(span_is_clipped(&sp[5], 100, 900), "not clipped");
	ASSERT_EQ(track_spans_first_start_after(sp, 8, 100), 4, "first after 100");
	ASSERT_EQ(track_spans_first_start_after(sp, 8, 0), 0, "first after 0");
	ASSERT_EQ(track_spans_first_start_after(sp, 8, 5000), 8, "none after 5000");

	/* Reused: a smaller track, nothing in the window. */
	ASSERT_OK(track_layout__run(l, sp, 1, 100, 900), "run again");
	ASSERT_EQ(track_layout__count(l), 0, "none");
	ASSERT_EQ(track_layout__rows(l), 0, "no rows");
	ASSERT_EQ(track_layout__outside(l), 1, "one outside");
out:
	track_layout__free(l);
	track_layout__free(NULL);
}

int main(void)
{
	test_layout();
	return test_exit();
}
