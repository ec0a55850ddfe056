/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What `record` says of each window it wrote: the capture's path and
 * exports, the window and the events span (report's words), counts, losses
 * and how to open it; or all of it as JSON with -j.
 */
#ifndef ACCELTRACE_CLI_RECORD_SUMMARY_H
#define ACCELTRACE_CLI_RECORD_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "export/export.h"

struct recorder;

/* A window's files, as written. */
struct written {
	const char *logdir;
	char path[4096];
	char session[256];	/* the capture's, or that with a suffix ("-2") */
	uint64_t bytes;
	char exported[EXPORT_CHROME_JSON + 1][4096];	/* "" when not asked for */
};

/* -q: the path alone (JSON with -j as ever). */
void print_summary(struct recorder *rec, const struct written *wr, bool quiet);

#endif /* ACCELTRACE_CLI_RECORD_SUMMARY_H */
