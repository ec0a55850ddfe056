// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Names made to fit a table's column: C++ argument lists and template
 * arguments folded to "(...)" and "<...>" (innermost first), then a cut at
 * a word boundary marked with "...". Names come from the capture (outside
 * input): the work is bounded by FIT_MAX bytes whatever their length.
 */
#include <string.h>

#include "report/report.h"

#define FIT_MAX 1024
#define ELLIPSIS "..."

size_t report_text_cols(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static bool is_close(const char *s, size_t i, char close)
{
	/* "->" is an operator, not the end of a template's arguments. */
	return s[i] == close && !(close == '>' && i && s[i - 1] == '-');
}

/* The index of the @close matching the @open at @i, or 0 when none does. */
static size_t match(const char *s, size_t i, char open, char close)
{
	int level = 1;

	for (size_t k = i + 1; s[k]; k++) {
		if (s[k] == open)
			level++;
		else if (is_close(s, k, close) && !--level)
			return k;
	}
	return 0;
}

/*
 * @in into @out (FIT_MAX + 1 bytes), each matched @open...@close group that
 * opens at nesting @depth or deeper (1: outermost) written as open "..."
 * close, unless its content is no longer than that.
 */
static void fold(const char *in, char *out, char open, char close, int depth)
{
	size_t stack[FIT_MAX], n = 0, o = 0;

	for (size_t i = 0; in[i] && o < FIT_MAX;) {
		if (in[i] == open) {
			size_t j = match(in, i, open, close);

			if (j && (int)n + 1 >= depth && j - i - 1 > strlen(ELLIPSIS) &&
			    o + strlen(ELLIPSIS) + 2 <= FIT_MAX) {
				out[o++] = open;
				memcpy(out + o, ELLIPSIS, strlen(ELLIPSIS));
				o += strlen(ELLIPSIS);
				out[o++] = close;
				i = j + 1;
				continue;
			}
			if (j && n < FIT_MAX)
				stack[n++] = j;
		} else if (n && i == stack[n - 1]) {
			n--;
		}
		out[o++] = in[i++];
	}
	out[o] = 0;
}

static int max_depth(const char *s, char open, char close)
{
	size_t stack[FIT_MAX], n = 0;
	int most = 0;

	for (size_t i = 0; s[i] && i < FIT_MAX; i++) {
		if (s[i] == open) {
			size_t j = match(s, i, open, close);

			if (j && n < FIT_MAX) {
				stack[n++] = j;
				if ((int)n > most)
					most = (int)n;
			}
		} else if (n && i == stack[n - 1]) {
			n--;
		}
	}
	return most;
}

static const char *out(const char *s, char *buf, size_t size)
{
	size_t n = strlen(s);

	if (n >= size)
		n = size - 1;
	/* Never end inside a character. */
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(buf, s, n);
	buf[n] = 0;
	return buf;
}

static bool boundary(char c)
{
	return strchr("_:<>(),. /-[]{}", c) != NULL;
}

/* @s cut to @width columns, at a boundary when one is not too far back. */
static void cut(char *s, size_t width)
{
	size_t keep = width > strlen(ELLIPSIS) ? width - strlen(ELLIPSIS) : width;
	size_t cols = 0, i = 0, at_word = 0, cols_at_word = 0;

	for (; s[i]; i++) {
		if (((unsigned char)s[i] & 0xc0) == 0x80)
			continue;
		if (cols == keep)
			break;
		/* Before a run of separators ("::"), not inside it. */
		if (i && boundary(s[i]) && !boundary(s[i - 1])) {
			at_word = i;
			cols_at_word = cols;
		}
		cols++;
	}
	if (!s[i])
		return;
	if (at_word && cols_at_word * 2 >= keep)
		i = at_word;
	while (i && s[i - 1] == ' ')
		i--;
	if (width > strlen(ELLIPSIS))
		memcpy(s + i, ELLIPSIS, strlen(ELLIPSIS) + 1);
	else
		s[i] = 0;
}

const char *report_fit_name(const char *name, size_t width, char *buf, size_t size)
{
	char a[FIT_MAX + 1], b[FIT_MAX + 1];

	if (!size)
		return name;
	if (!width || report_text_cols(name) <= width)
		return name;
	out(name, a, sizeof(a));
	fold(a, b, '(', ')', 1);
	if (report_text_cols(b) <= width)
		return out(b, buf, size);
	for (int d = max_depth(b, '<', '>'); d >= 1; d--) {
		fold(b, a, '<', '>', d);
		if (report_text_cols(a) <= width)
			return out(a, buf, size);
	}
	/* Templates folded as far as they go (or none): cut what remains. */
	fold(b, a, '<', '>', 1);
	cut(a, width);
	return out(a, buf, size);
}

const char *report_fit_ends(const char *name, size_t width, char *buf, size_t size)
{
	size_t cols = report_text_cols(name), keep, head, tail, i, o = 0, c = 0;
	size_t el = strlen(ELLIPSIS);

	if (!size)
		return name;
	if (!width || cols <= width || width <= el + 2)
		return width && cols > width ? out(name, buf, size < width + 1 ? size : width + 1) : name;
	keep = width - el;
	head = keep / 3;
	tail = keep - head;
	/* The first head characters, the ellipsis, the last tail ones. */
	for (i = 0; name[i]; i++) {
		if (((unsigned char)name[i] & 0xc0) != 0x80 && c++ == head)
			break;
		if (o + 1 < size)
			buf[o++] = name[i];
	}
	for (size_t k = 0; k < el && o + 1 < size; k++)
		buf[o++] = ELLIPSIS[k];
	for (c = 0; name[i]; i++) {
		bool start = ((unsigned char)name[i] & 0xc0) != 0x80;

		if (start)
			c++;
		if (c > cols - head - tail && o + 1 < size)
			buf[o++] = name[i];
	}
	buf[o] = 0;
	return buf;
}
