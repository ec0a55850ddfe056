// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The protobuf wire encoder: varints at their boundaries, tags, string and
 * int64 fields (0 omitted), a length placeholder patched after the fact
 * (a padded 5-byte varint) at a stream offset that is not 0, the byte
 * limit (-EFBIG, sticky), and a stream that cannot seek.
 */
#include "test.h"
#include "output/pb_wire.h"

static void test_varints(void)
{
	static const struct {
		uint64_t v;
		size_t n;
		uint8_t b[10];
	} cases[] = {
		{ 0, 1, { 0 } },
		{ 127, 1, { 0x7f } },
		{ 128, 2, { 0x80, 0x01 } },
		{ 300, 2, { 0xac, 0x02 } },
		{ UINT64_MAX, 10, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } },
	};
	uint8_t buf[10];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = pb_varint_encode(buf, cases[i].v);

		ASSERT_EQ(n, cases[i].n, "varint length");
		ASSERT_TRUE(!memcmp(buf, cases[i].b, n), "varint bytes");
	}
}

static void test_stream(void)
{
	uint8_t got[64];
	static const uint8_t want[] = {
		0x0a, 0x85, 0x80, 0x80, 0x80, 0x00,	/* field 1, len 5, padded */
		0x12, 0x03, 'a', 'b', 'c',		/* field 2: "abc" */
		0x18, 0x96, 0x01,			/* field 3: 150 */
	};
	struct pb_out o;
	uint64_t at;
	FILE *f = tmpfile();
	size_t n;

	if (!ASSERT_OK_PTR(f, "tmpfile"))
		return;
	fputs("XY", f);		/* the output starts at offset 2 */
	ASSERT_OK(pb_out__init(&o, f, 1000), "init");
	at = pb_begin_len(&o, 1);
	pb_string_field(&o, 2, "abc");
	pb_end_len(&o, at);
	pb_int64_field(&o, 4, 0);	/* the default: nothing */
	pb_int64_field(&o, 3, 150);
	ASSERT_OK(o.err, "no error");
	ASSERT_EQ(o.pos, sizeof(want), "bytes counted");
	fflush(f);
	rewind(f);
	n = fread(got, 1, sizeof(got), f);
	ASSERT_EQ(n, sizeof(want) + 2, "file size");
	ASSERT_TRUE(!memcmp(got, "XY", 2) && !memcmp(got + 2, want, sizeof(want)),
		    "bytes, placeholder patched in place");
	pb_out__release(&o);

	ASSERT_OK(pb_out__init(&o, f, 4), "init with a 4-byte limit");
	pb_string_field(&o, 2, "abc");
	ASSERT_EQ(o.err, -EFBIG, "over the limit");
	pb_int64_field(&o, 3, 1);
	ASSERT_EQ(o.err, -EFBIG, "sticky");
	ASSERT_EQ(o.pos, 2, "nothing after the error");
	pb_out__release(&o);
	fclose(f);
}

static void test_not_seekable(void)
{
	struct pb_out o;
	int pfd[2];
	FILE *f;

	if (!ASSERT_OK(pipe(pfd), "pipe"))
		return;
	f = fdopen(pfd[1], "w");
	if (ASSERT_OK_PTR(f, "fdopen")) {
		ASSERT_EQ(pb_out__init(&o, f, 100), -ESPIPE, "a pipe cannot be patched");
		fclose(f);
	}
	close(pfd[0]);
}

int main(void)
{
	test_varints();
	test_stream();
	test_not_seekable();
	return test_exit();
}
