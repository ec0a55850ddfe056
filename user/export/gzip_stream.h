/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A FILE* that gzips what is written to it into another stream (zlib,
 * through fopencookie), so writers that print (lib/json_writer) write
 * .gz files as they go, in bounded memory.
 */
#ifndef ACCELTRACE_GZIP_STREAM_H
#define ACCELTRACE_GZIP_STREAM_H

#include <stdint.h>
#include <stdio.h>

struct gzip_stream;

/* A gzip stream onto out; NULL and errno on failure. */
struct gzip_stream *gzip_stream__open(FILE *out, FILE **in);
/*
 * Closes *in, finishes the gzip member and flushes out. 0 or -errno (the
 * first write error, ENOMEM); *bytes: the compressed bytes written.
 */
int gzip_stream__close(struct gzip_stream *g, uint64_t *bytes);

#endif /* ACCELTRACE_GZIP_STREAM_H */
