/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The repository roots a Profile may write under: the daemon's logdir
 * (any directory beneath it: XProf's client sends <logdir>/plugins/profile)
 * and the operator's profiler-roots. A root from the network is compared
 * as a normalised string, then opened confined beneath the allowed one.
 */
#ifndef ACCELTRACE_PROFILER_ROOTS_H
#define ACCELTRACE_PROFILER_ROOTS_H

#include <stdbool.h>
#include <stddef.h>

#include "profiler_service/profiler_service.h"

struct profiler_roots {
	struct {
		char path[PROFILER_MAX_PATH];	/* normalised */
		bool is_logdir;			/* beneath only, not itself */
	} root[PROFILER_MAX_ROOTS];
	size_t n;
};

/* The logdir (as given and resolved) and @roots (':'-separated absolute
 * paths; NULL: none). 0 or -EINVAL, logged. */
int profiler_roots__init(struct profiler_roots *r, const char *logdir, const char *roots);
/* Which allowed root holds @root (normalised) into *which; -EPERM: none. */
int profiler_roots__match(const struct profiler_roots *r, const char *root, size_t *which);
/* profiler_service__open_root's work, @root under r->root[which]. */
int profiler_roots__open(const struct profiler_roots *r, size_t which, const char *root,
			 const char *session, enum grpc_status *code, char *why,
			 size_t why_len);

#endif /* ACCELTRACE_PROFILER_ROOTS_H */
