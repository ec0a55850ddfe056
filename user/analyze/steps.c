// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The dominant program: device time summed per (pid, program). */
#include <errno.h>
#include <stdlib.h>

#include "analyze/steps.h"
#include "lib/hashmap.h"

static void free_total(void *v)
{
	free(v);
}

int steps_dominant_program(const struct step_candidate *c, size_t n,
			   uint32_t *program)
{
	struct hashmap *totals = hashmap__new();
	uint64_t best = 0;
	int err = 0;

	if (!totals)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t *t = hashmap__get(totals, c[i].pid, c[i].program);

		if (!t) {
			t = calloc(1, sizeof(*t));
			if (!t || hashmap__put(totals, c[i].pid, c[i].program, t, NULL)) {
				free(t);
				err = -ENOMEM;
				goto out;
			}
		}
		*t += c[i].end_ns - c[i].start_ns;
	}
	/* A tie goes to the program executed first. */
	for (size_t i = 0; i < n; i++) {
		uint64_t *t = hashmap__get(totals, c[i].pid, c[i].program);

		if (*t > best) {
			best = *t;
			*program = c[i].program;
		}
	}
	if (!best)
		err = -ENOENT;
out:
	hashmap__free(totals, free_total);
	return err;
}
