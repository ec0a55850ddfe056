/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the devtrace format (docs/devtrace.md) says a header and a record may
 * hold: the checks a reader makes before trusting either, so a corrupted or
 * hostile buffer is refused or skipped, never followed out of bounds.
 */
#ifndef ACCELTRACE_DEVTRACE_FORMAT_H
#define ACCELTRACE_DEVTRACE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "acceltrace/devtrace.h"

/* Bytes of the header a reader polls: everything up to begin_seq. */
#define DEVTRACE_HEADER_READ (offsetof(struct devtrace_header, reserved2))

/* NULL when @h (magic set) describes a buffer that fits a file of
 * @file_size bytes, else why not. */
const char *devtrace_header_problem(const struct devtrace_header *h, uint64_t file_size);

enum devtrace_record_verdict {
	DEVTRACE_REC_OK,
	DEVTRACE_REC_EMPTY,	/* kind 0: ignored, as the format says */
	DEVTRACE_REC_UNKNOWN,	/* a kind from a later version: skipped */
	DEVTRACE_REC_BAD,	/* impossible contents: skipped */
};

/* Checks a record's fields against its kind; @names is how many name
 * entries the buffer has published. */
enum devtrace_record_verdict devtrace_record_check(const struct devtrace_record *r,
						   uint64_t names);
/* Whether records of @kind name something by name_id. */
bool devtrace_kind_has_name(unsigned int kind);
const char *devtrace_kind_name(unsigned int kind);
/* XLA's name of an op category (hlo_category), or NULL for none/unknown. */
const char *devtrace_category_name(unsigned int cat);

#endif /* ACCELTRACE_DEVTRACE_FORMAT_H */
