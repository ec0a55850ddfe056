/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Finding a span in a capture by name in C tests: the first, track by
 * track, of @kind (a negative kind: any), and its track. Include after
 * "capture/capture.h".
 */
#ifndef ACCELTRACE_TEST_CAPTURE_FIND_H
#define ACCELTRACE_TEST_CAPTURE_FIND_H

#include <string.h>

static inline const struct capture_span *
test_find_span(const struct capture *cap, const char *name, int kind,
	       const struct capture_track **track)
{
	for (size_t t = 0; t < capture__num_tracks(cap); t++) {
		size_t n;
		const struct capture_span *sp = capture__track_spans(cap, t, &n);

		for (size_t i = 0; sp && i < n; i++) {
			if ((kind >= 0 && sp[i].kind != kind) ||
			    strcmp(capture__string(cap, sp[i].name), name))
				continue;
			if (track)
				*track = capture__track(cap, t);
			return &sp[i];
		}
	}
	return NULL;
}

#endif /* ACCELTRACE_TEST_CAPTURE_FIND_H */
