/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Numbers with units, as options and configuration files spell them; each
 * 0 or -EINVAL (-ERANGE for a duration past 10^18 ns or a size past 2^64),
 * plain decimal only: no blank, sign, hex, "inf" or "nan".
 */
#ifndef ACCELTRACE_UNITS_H
#define ACCELTRACE_UNITS_H

#include <stdint.h>

/* A decimal integer >= 0. */
int parse_uint(const char *s, uint64_t *v);
/* "10s", "500ms", "2m", "1h", "250us", "3" (seconds) -> nanoseconds. */
int parse_duration(const char *s, uint64_t *ns);
/* "64M", "1G", "4096", "8k" -> bytes. */
int parse_size(const char *s, uint64_t *bytes);

#endif /* ACCELTRACE_UNITS_H */
