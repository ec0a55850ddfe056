// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Outside text as valid UTF-8; see utf8.h. */
#include <string.h>

#include "lib/utf8.h"

size_t utf8_char_len(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned char lo = 0x80, hi = 0xbf;	/* the second byte's range */
	size_t n;

	if (!len)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;	/* a continuation byte, an overlong C0/C1, F5..FF */
	if (p[0] == 0xe0)
		lo = 0xa0;	/* overlong */
	else if (p[0] == 0xed)
		hi = 0x9f;	/* surrogates */
	else if (p[0] == 0xf0)
		lo = 0x90;	/* overlong */
	else if (p[0] == 0xf4)
		hi = 0x8f;	/* past U+10FFFF */
	if (len < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

bool utf8_is_control(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	if (n == 1)
		return p[0] < 0x20 || p[0] == 0x7f;
	return n == 2 && p[0] == 0xc2 && p[1] < 0xa0;	/* U+0080..U+009F */
}

/* How @s's next character is written: its own @n bytes, or U+FFFD. */
static const char *next_char(const char *s, size_t len, unsigned int flags, size_t *n,
			     size_t *out_n)
{
	size_t k = utf8_char_len(s, len);

	*n = k ? k : 1;
	if (!k || !s[0] || ((flags & UTF8_REPLACE_CONTROLS) && utf8_is_control(s, k))) {
		*out_n = 3;
		return UTF8_REPLACEMENT;
	}
	*out_n = k;
	return s;
}

bool utf8_is_clean(const char *s, size_t len, unsigned int flags)
{
	for (size_t i = 0; i < len;) {
		const unsigned char c = s[i];
		size_t n, out_n;

		/* Printable ASCII, the common case, one byte at a time. */
		if (c >= 0x20 && c < 0x7f) {
			i++;
			continue;
		}
		if (next_char(s + i, len - i, flags, &n, &out_n) != s + i)
			return false;
		i += n;
	}
	return true;
}

size_t utf8_sanitize(const char *s, size_t len, char *out, size_t cap,
		     unsigned int flags)
{
	size_t w = 0;

	if (!cap)
		return 0;
	for (size_t i = 0; i < len;) {
		size_t n, out_n;
		const char *src = next_char(s + i, len - i, flags, &n, &out_n);

		if (out_n > cap - 1 - w)
			break;		/* whole characters only */
		memcpy(out + w, src, out_n);
		w += out_n;
		i += n;
	}
	out[w] = '\0';
	return w;
}

size_t utf8_sanitized_len(const char *s, size_t len, unsigned int flags)
{
	size_t total = 0;

	for (size_t i = 0; i < len;) {
		size_t n, out_n;

		next_char(s + i, len - i, flags, &n, &out_n);
		total += out_n;
		i += n;
	}
	return total;
}
