// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Edit distance and the closest known words to a mistyped one. */
#include <stdint.h>
#include <string.h>

#include "lib/suggest.h"

static size_t min3(size_t a, size_t b, size_t c)
{
	size_t m = a < b ? a : b;

	return m < c ? m : c;
}

size_t suggest_distance(const char *a, const char *b)
{
	/* Row i of the dynamic-programming table lives in rows[i % 3]: a swap
	 * looks two rows back. */
	size_t rows[3][SUGGEST_MAX_LEN + 1];
	size_t la = strlen(a), lb = strlen(b);

	if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		rows[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *c = rows[i % 3], *p = rows[(i - 1) % 3], *pp = rows[(i + 1) % 3];

		c[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];

			c[j] = min3(p[j] + 1, c[j - 1] + 1, p[j - 1] + cost);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    pp[j - 2] + 1 < c[j])
				c[j] = pp[j - 2] + 1;
		}
	}
	return rows[la % 3][lb];
}

static size_t allowed_distance(size_t len)
{
	if (len <= 4)
		return 1;
	return len <= 8 ? 2 : 3;
}

size_t suggest_closest(const char *word, const char *const *cands, size_t n_cands,
		       const char **out, size_t max_out)
{
	size_t wl = strlen(word), n = 0, best = SIZE_MAX;

	if (!wl || !max_out)
		return 0;
	for (size_t i = 0; i < n_cands && n < max_out; i++)
		if (strlen(cands[i]) > wl && !strncmp(cands[i], word, wl))
			out[n++] = cands[i];
	if (n)
		return n;
	for (size_t i = 0; i < n_cands; i++) {
		size_t d = suggest_distance(word, cands[i]);

		if (d < best)
			best = d;
	}
	if (best == 0 || best > allowed_distance(wl))
		return 0;
	for (size_t i = 0; i < n_cands && n < max_out; i++)
		if (suggest_distance(word, cands[i]) == best)
			out[n++] = cands[i];
	return n;
}
