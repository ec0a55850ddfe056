// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* gzip through fopencookie: each write deflates into the output stream. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/gzip_stream.h"

#define CHUNK 65536
/* windowBits 15 + 16: a gzip header and trailer rather than zlib's. */
#define GZIP_WINDOW_BITS (15 + 16)

struct gzip_stream {
	z_stream z;
	FILE *out, *in;
	uint64_t bytes;
	int err;
	unsigned char buf[CHUNK];
};

static int pump(struct gzip_stream *g, int flush)
{
	int ret;

	do {
		size_t have;

		g->z.next_out = g->buf;
		g->z.avail_out = CHUNK;
		ret = deflate(&g->z, flush);
		if (ret == Z_STREAM_ERROR)
			return -EIO;
		have = CHUNK - g->z.avail_out;
		if (have && fwrite(g->buf, 1, have, g->out) != have)
			return errno ? -errno : -EIO;
		g->bytes += have;
	} while (g->z.avail_out == 0);
	return 0;
}

static ssize_t gz_write(void *cookie, const char *data, size_t n)
{
	struct gzip_stream *g = cookie;

	/* fopencookie(3): a write function reports an error by returning 0
	 * (with errno set), never a negative count. */
	if (g->err) {
		errno = -g->err;
		return 0;
	}
	g->z.next_in = (unsigned char *)data;
	g->z.avail_in = (uInt)n;
	g->err = pump(g, Z_NO_FLUSH);
	if (g->err) {
		errno = -g->err;
		return 0;
	}
	return (ssize_t)n;
}

struct gzip_stream *gzip_stream__open(FILE *out, FILE **in)
{
	cookie_io_functions_t io = { .write = gz_write };
	struct gzip_stream *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	g->out = out;
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, GZIP_WINDOW_BITS, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		errno = ENOMEM;
		return NULL;
	}
	g->in = fopencookie(g, "w", io);
	if (!g->in) {
		deflateEnd(&g->z);
		free(g);
		return NULL;
	}
	*in = g->in;
	return g;
}

int gzip_stream__close(struct gzip_stream *g, uint64_t *bytes)
{
	int err;

	/* fclose flushes the cookie's buffer through gz_write first. */
	err = fclose(g->in) ? (errno ? -errno : -EIO) : 0;
	if (!err && !g->err) {
		g->z.next_in = NULL;
		g->z.avail_in = 0;
		g->err = pump(g, Z_FINISH);
	}
	if (!err)
		err = g->err;
	if (!err && fflush(g->out))
		err = -errno;
	*bytes = g->bytes;
	deflateEnd(&g->z);
	free(g);
	return err;
}
