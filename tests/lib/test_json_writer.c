// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The JSON writer: nesting, commas, escaping, numbers (exact decimals too), compact and pretty;
 * strings valid UTF-8 whatever they held (a byte 0xff from a thread's name). */
#include <math.h>

#include "test.h"
#include "lib/json_writer.h"

static char *render(bool pretty, void (*fill)(struct json_writer *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json_writer *jw = jw_new(f, pretty);

	fill(jw);
	jw_free(jw);
	fclose(f);
	return buf;
}

static void fill_nested(struct json_writer *jw)
{
	jw_start_object(jw);
	jw_string_field(jw, "name", "a\"b\\c\n\x01");
	jw_uint_field(jw, "big", UINT64_MAX);
	jw_int_field(jw, "neg", -5);
	jw_bool_field(jw, "yes", true);
	jw_double_field(jw, "nan", NAN);
	jw_double_field(jw, "half", 0.5);
	jw_name(jw, "list");
	jw_start_array(jw);
	jw_uint(jw, 1);
	jw_start_object(jw);
	jw_end_object(jw);
	jw_start_array(jw);
	jw_end_array(jw);
	jw_null(jw);
	jw_end_array(jw);
	jw_name(jw, "empty");
	jw_string(jw, "");
	jw_end_object(jw);
}

static void fill_small(struct json_writer *jw)
{
	jw_start_object(jw);
	jw_name(jw, "a");
	jw_start_array(jw);
	jw_uint(jw, 1);
	jw_uint(jw, 2);
	jw_end_array(jw);
	jw_end_object(jw);
}

static void fill_decimals(struct json_writer *jw)
{
	jw_start_array(jw);
	jw_decimal(jw, 11628771950345ull, 3);	/* ns as exact microseconds */
	jw_decimal(jw, 5, 3);
	jw_decimal(jw, 42, 0);
	jw_end_array(jw);
}

/* A name (key) and a value holding bytes that begin no character. */
static void fill_invalid_utf8(struct json_writer *jw)
{
	jw_start_object(jw);
	jw_string_field(jw, "tr\xc0\xafn", "w\xffrker \xe6\x97\xa5\n");
	jw_end_object(jw);
}

int main(void)
{
	char *s;

	s = render(false, fill_nested);
	ASSERT_STREQ(s,
		     "{\"name\":\"a\\\"b\\\\c\\n\\u0001\",\"big\":18446744073709551615,"
		     "\"neg\":-5,\"yes\":true,\"nan\":null,\"half\":0.5,"
		     "\"list\":[1,{},[],null],\"empty\":\"\"}",
		     "compact nested document");
	free(s);

	s = render(true, fill_small);
	ASSERT_STREQ(s, "{\n  \"a\": [\n    1,\n    2\n  ]\n}", "pretty document");
	free(s);

	s = render(false, fill_invalid_utf8);
	ASSERT_STREQ(s, "{\"tr\xef\xbf\xbd\xef\xbf\xbdn\":\"w\xef\xbf\xbdrker \xe6\x97\xa5\\n\"}",
		     "invalid bytes as U+FFFD, valid characters kept");
	free(s);

	s = render(false, fill_decimals);
	ASSERT_STREQ(s, "[11628771950.345,0.005,42]", "exact decimals");
	free(s);
	return test_exit();
}
