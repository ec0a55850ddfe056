/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the harnesses share: the fuzzer's bytes as a NUL-terminated string,
 * as an anonymous file (memfd) for parsers that read files, and split into
 * NUL-separated fields. Everything is freed before the input returns, so
 * LeakSanitizer's report is the parser's.
 */
#ifndef ACCELTRACE_FUZZ_INPUT_H
#define ACCELTRACE_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The bytes with a NUL after them (they may hold NULs of their own). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* An anonymous file holding the bytes, then @extra bytes of holes (a
 * sparse file's size costs nothing but may announce a lot). */
static inline int fuzz_memfd(const uint8_t *data, size_t size, uint64_t extra)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	if (extra && ftruncate(fd, (off_t)(size + extra)))
		abort();
	return fd;
}

/* "/proc/self/fd/N": the memfd by a path, for parsers that open paths. */
static inline void fuzz_fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

#endif /* ACCELTRACE_FUZZ_INPUT_H */
