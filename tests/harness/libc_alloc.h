/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The allocator underneath a test's own malloc (alloc_fail.h): glibc's
 * __libc_malloc and kin, or AddressSanitizer's when the test is built with
 * it (make check-sanitize), whose allocator then owns every block; mixing
 * the two frees ASan's blocks into glibc ("free(): invalid size").
 */
#ifndef ACCELTRACE_LIBC_ALLOC_H
#define ACCELTRACE_LIBC_ALLOC_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define LIBC_ALLOC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LIBC_ALLOC_ASAN 1
#endif
#endif

#ifdef LIBC_ALLOC_ASAN
#define LIBC_ALLOC(fn) __interceptor_##fn
#else
#define LIBC_ALLOC(fn) __libc_##fn
#endif

extern void *LIBC_ALLOC(malloc)(size_t size);
extern void *LIBC_ALLOC(calloc)(size_t n, size_t size);
extern void *LIBC_ALLOC(realloc)(void *p, size_t size);
extern void LIBC_ALLOC(free)(void *p);

#endif /* ACCELTRACE_LIBC_ALLOC_H */
