/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * "Did you mean": the known words closest to a mistyped one, by edit
 * distance (insertions, deletions, substitutions and swaps of two
 * neighbours each count one), as git and cargo suggest commands.
 */
#ifndef ACCELTRACE_SUGGEST_H
#define ACCELTRACE_SUGGEST_H

#include <stddef.h>

/*
 * Edit distance between a and b (optimal string alignment: "reprot" is one
 * swap from "report"); words longer than SUGGEST_MAX_LEN count as far from
 * everything (SIZE_MAX).
 */
#define SUGGEST_MAX_LEN 64
size_t suggest_distance(const char *a, const char *b);

/*
 * Fills out[] with up to max_out candidates that `word` may have meant:
 * those it is a prefix of when there are any (an abbreviation that matched
 * several), else those at the smallest distance, if that distance is small
 * for the word's length (at most 1 for words of up to 4 characters, 2 up to
 * 8, 3 beyond). Returns how many; 0 when nothing is close.
 */
size_t suggest_closest(const char *word, const char *const *cands, size_t n_cands,
		       const char **out, size_t max_out);

#endif /* ACCELTRACE_SUGGEST_H */
