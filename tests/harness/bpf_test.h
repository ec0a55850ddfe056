/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The start of a test that loads acceltrace's BPF programs: root, libbpf's
 * messages routed through the log (TEST_VERBOSE=1: debug), the kernel's
 * features probed, and a skip where acceltrace cannot run here.
 */
#ifndef ACCELTRACE_BPF_TEST_H
#define ACCELTRACE_BPF_TEST_H

#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "lib/log.h"
#include "probe/kernel_features.h"

/* False (SKIP printed) where the kernel lacks what acceltrace needs: the
 * caller returns TEST_SKIP. */
static inline bool test_require_bpf(struct features *f)
{
	char missing[512];

	test_require_root("loads BPF programs");
	log_route_libbpf();
	if (getenv("TEST_VERBOSE"))
		log_set_verbosity(LOG_DEBUG);
	features__probe(f);
	if (!features__can_run(f, missing, sizeof(missing))) {
		printf("SKIP: acceltrace cannot run here: %s\n", missing);
		return false;
	}
	return true;
}

#endif /* ACCELTRACE_BPF_TEST_H */
