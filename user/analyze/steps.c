// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The dominant program: device time and runs summed per (pid, program);
 * the most device time among the programs that run often enough.
 */
#include <errno.h>
#include <stdlib.h>

#include "analyze/steps.h"
#include "lib/hashmap.h"

struct total {
	uint64_t ns;	/* device time */
	uint64_t runs;	/* executions */
};

static void free_total(void *v)
{
	free(v);
}

int steps_dominant_program(const struct step_candidate *c, size_t n,
			   uint32_t *program)
{
	struct hashmap *totals = hashmap__new();
	uint64_t best = 0, most_runs = 0;
	int err = 0;

	if (!totals)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct total *t = hashmap__get(totals, c[i].pid, c[i].program);

		if (!t) {
			t = calloc(1, sizeof(*t));
			if (!t || hashmap__put(totals, c[i].pid, c[i].program, t, NULL)) {
				free(t);
				err = -ENOMEM;
				goto out;
			}
		}
		t->ns += c[i].end_ns - c[i].start_ns;
		if (++t->runs > most_runs)
			most_runs = t->runs;
	}
	/*
	 * A program run a few times beside one run hundreds of times (a
	 * stalled or long one-off: a checkpoint's program, a 5-minute op) is
	 * not the step, however long it ran. A tie goes to the program
	 * executed first.
	 */
	for (size_t i = 0; i < n; i++) {
		struct total *t = hashmap__get(totals, c[i].pid, c[i].program);

		if (t->runs * STEPS_MIN_RUN_SHARE < most_runs)
			continue;
		if (t->ns > best) {
			best = t->ns;
			*program = c[i].program;
		}
	}
	if (!best)
		err = -ENOENT;
out:
	hashmap__free(totals, free_total);
	return err;
}
