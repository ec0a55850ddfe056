// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The agent's reader of a PJRT plugin's collection (user/agent/
 * xspace_decode.c): bytes a plugin hands over, read inside the traced
 * process. Every event delivered must lie inside the input, and a refused
 * message must deliver nothing.
 */
#include <errno.h>

#include "fuzz_input.h"
#include "agent/xspace_decode.h"

struct seen {
	const uint8_t *data;
	size_t size, events;
};

static int check_event(void *ctx, const struct xspace_event *ev)
{
	struct seen *s = ctx;
	const char *lo = (const char *)s->data, *hi = lo + s->size;

	/* Texts point into the input, never past it. */
	if ((ev->name.len && (ev->name.s < lo || ev->name.s + ev->name.len > hi)) ||
	    (ev->category.len && (ev->category.s < lo || ev->category.s + ev->category.len > hi)))
		__builtin_trap();
	s->events++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct xspace_limits lim = {
		.max_bytes = 1 << 20, .max_events = 1 << 16, .max_metadata = 1 << 16,
	};
	struct seen s = { .data = data, .size = size };
	struct xspace_counts c;
	int err = xspace_decode(data, size, &lim, check_event, &s, &c);

	if (err == -EINVAL && s.events)
		__builtin_trap();	/* refused, yet something was delivered */
	return 0;
}
