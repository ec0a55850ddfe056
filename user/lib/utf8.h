/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Text from outside (thread names, file paths, program and kernel names)
 * made valid UTF-8 before it reaches a format that requires it: proto3
 * strings (XSpace), Prometheus label values, JSON. Valid UTF-8 passes
 * unchanged; each byte that does not begin a valid character (RFC 3629:
 * no overlong forms, no surrogates, nothing past U+10FFFF) becomes U+FFFD.
 * Control characters (C0, DEL, C1) are kept or replaced as the consumer
 * needs: a name has no use for them, a JSON writer escapes them. NUL is
 * always replaced (the result is a C string).
 */
#ifndef ACCELTRACE_UTF8_H
#define ACCELTRACE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

#define UTF8_REPLACEMENT "\xef\xbf\xbd"	/* U+FFFD, 3 bytes */

enum utf8_flags {
	UTF8_KEEP_CONTROLS = 0,
	UTF8_REPLACE_CONTROLS = 1 << 0,	/* C0, DEL and C1 become U+FFFD */
};

/* The length (1 to 4) of the valid character @s begins with (of @len
 * bytes), or 0 when its first byte begins none. */
size_t utf8_char_len(const char *s, size_t len);
/* Whether the character of @n bytes at @s is a control character. */
bool utf8_is_control(const char *s, size_t n);
/* True when utf8_sanitize would leave @s[0..len) as it is. */
bool utf8_is_clean(const char *s, size_t len, unsigned int flags);
/*
 * @s[0..len) into @out, NUL-terminated, at most @cap - 1 bytes and never
 * cut inside a character; @cap >= 1. Returns the bytes written (without
 * the NUL). utf8_sanitized_len() is what all of it needs.
 */
size_t utf8_sanitize(const char *s, size_t len, char *out, size_t cap,
		     unsigned int flags);
size_t utf8_sanitized_len(const char *s, size_t len, unsigned int flags);

#endif /* ACCELTRACE_UTF8_H */
