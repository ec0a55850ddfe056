// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The module name of MLIR bytecode, on programs written by MLIR's own
 * bytecode writer (mlir-opt 19, tests/analyze/data/README.md says how):
 * bytecode versions 1 (the name in the attribute dictionary), 5 and 6 (in
 * the module's properties), and a module without a name. Every truncation
 * and every single-byte change of them is read without a crash, and a
 * source that fails its reads is refused with its error. Reads go through
 * the byte source a block at a time.
 *
 * Programs are hostile input: a synthetic program whose module dictionary
 * holds tens of thousands of keys (each key a lookup in the string and
 * attribute tables) is named in time and reads linear in its size, and
 * programs past the bounds (too many entries, too many bytes to read) are
 * refused with -E2BIG and why.
 */
#include <fcntl.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "analyze/mlir_bytecode.h"
#include "analyze/program_name.h"

#define DATA "tests/analyze/data/"

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf = NULL;
	int fd = open(path, O_RDONLY);

	if (fd >= 0 && !fstat(fd, &st) && (buf = malloc(st.st_size)) &&
	    read(fd, buf, st.st_size) == st.st_size) {
		*len = st.st_size;
	} else {
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	return buf;
}

struct counting {
	const uint8_t *buf;
	unsigned int reads;
	int fail_after;		/* reads that succeed; -1: all */
};

static int counting_read(void *ctx, uint64_t off, void *out, size_t len)
{
	struct counting *c = ctx;

	if (c->fail_after >= 0 && c->reads >= (unsigned int)c->fail_after)
		return -EFAULT;
	c->reads++;
	memcpy(out, c->buf + off, len);
	return 0;
}

static void test_versions(void)
{
	static const char *const files[] = {
		DATA "jit_train_step.v1.mlirbc", DATA "jit_train_step.v5.mlirbc",
		DATA "jit_train_step.v6.mlirbc",
	};
	char name[64], why[128], tiny[5];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t len = 0;
		uint8_t *buf = slurp(files[i], &len);
		struct byte_source src;
		struct counting cnt = { .fail_after = -1 };

		if (!ASSERT_OK_PTR(buf, files[i]))
			continue;
		ASSERT_TRUE(mlir_bytecode_is(buf, len), "magic");
		src = byte_source_of_buffer(buf, len);
		ASSERT_OK(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
			  files[i]);
		ASSERT_STREQ(name, "jit_train_step", files[i]);
		ASSERT_OK(mlir_bytecode_module_name(&src, tiny, sizeof(tiny), NULL, 0),
			  "a short buffer");
		ASSERT_STREQ(tiny, "jit_", "cut to fit");

		/* Through a reader that counts and then fails. */
		cnt.buf = buf;
		src.ctx = &cnt;
		src.read = counting_read;
		ASSERT_OK(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
			  "counted reads");
		ASSERT_TRUE(cnt.reads > 0 && cnt.reads < 64, "a window at a time");
		cnt.reads = 0;
		cnt.fail_after = 0;	/* a small program is one block */
		ASSERT_EQ(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
			  -EFAULT, "the source's error");

		/* The program as Compile's caller hands it: by magic. */
		src = byte_source_of_buffer(buf, len);
		ASSERT_TRUE(pjrt_program_module_name_from(&src, name, sizeof(name)) == 0 &&
			    !strcmp(name, "jit_train_step"), "program_name dispatches bytecode");
		free(buf);
	}
}

static void test_refusals(void)
{
	size_t len = 0;
	uint8_t *buf = slurp(DATA "anonymous.v6.mlirbc", &len);
	struct byte_source src;
	char name[64], why[128];

	if (ASSERT_OK_PTR(buf, "anonymous module")) {
		src = byte_source_of_buffer(buf, len);
		ASSERT_EQ(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
			  -ENOENT, "module without a name");
		free(buf);
	}
	src = byte_source_of_buffer("HloModule x", 11);
	ASSERT_EQ(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
		  -EINVAL, "not bytecode");
	ASSERT_STRCONTAINS(why, "magic", "says why");
	src = byte_source_of_buffer("ML\xefR\x0f", 5);	/* version 7 */
	ASSERT_EQ(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
		  -EINVAL, "unknown version");
	ASSERT_STRCONTAINS(why, "version 7", "names the version");
}

/* Every prefix and every single-byte change: an answer or an error, never
 * a crash or a read outside the bytes (valgrind/ASan see those). */
static void test_damage(void)
{
	size_t len = 0;
	uint8_t *buf = slurp(DATA "jit_train_step.v6.mlirbc", &len);
	unsigned int ok = 0, refused = 0;
	char name[64], why[128];

	if (!ASSERT_OK_PTR(buf, "v6"))
		return;
	for (size_t cut = 0; cut < len; cut++) {
		uint8_t *copy = malloc(cut ? cut : 1);
		struct byte_source src;

		memcpy(copy, buf, cut);
		src = byte_source_of_buffer(copy, cut);
		if (mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)))
			refused++;
		free(copy);
	}
	ASSERT_EQ(refused, len, "every truncation refused");
	for (size_t at = 0; at < len; at++) {
		for (int bit = 0; bit < 8; bit++) {
			struct byte_source src = byte_source_of_buffer(buf, len);
			int err;

			buf[at] ^= 1u << bit;
			err = mlir_bytecode_module_name(&src, name, sizeof(name), why,
							sizeof(why));
			buf[at] ^= 1u << bit;
			if (!err) {
				ok++;
				ASSERT_TRUE(strlen(name) < sizeof(name), "terminated");
			} else if (!ASSERT_TRUE(err == -EINVAL || err == -ENOENT, "error kind")) {
				printf("  byte %zu bit %d: %d (%s)\n", at, bit, err, why);
			}
		}
	}
	printf("damage: %u of %zu one-bit changes still gave a name\n", ok, len * 8);
	free(buf);
}

/* ---------------------------------------------------------------- synthetic programs */

struct out {
	uint8_t *buf;
	size_t len, cap;
	bool oom;
};

static void put(struct out *o, const void *data, size_t len)
{
	if (o->len + len > o->cap) {
		size_t cap = (o->len + len) * 2;
		uint8_t *b = realloc(o->buf, cap);

		if (!b) {
			o->oom = true;
			return;
		}
		o->buf = b;
		o->cap = cap;
	}
	memcpy(o->buf + o->len, data, len);
	o->len += len;
}

/* MLIR's prefix varint; @wide: always the nine-byte form. */
static void put_varint(struct out *o, uint64_t v, bool wide)
{
	uint8_t b[9] = { 0 };

	for (int n = 1; n <= 8 && !wide; n++) {
		if (v < (1ull << (7 * n))) {
			uint64_t w = (v << n) | (1ull << (n - 1));

			for (int i = 0; i < n; i++)
				b[i] = w >> (8 * i);
			put(o, b, n);
			return;
		}
	}
	for (int i = 0; i < 8; i++)
		b[1 + i] = v >> (8 * i);
	put(o, b, 9);
}

static void put_section(struct out *o, uint8_t id, const struct out *data)
{
	put(o, &id, 1);
	put_varint(o, data->len, false);
	put(o, data->buf, data->len);
	o->oom |= data->oom;
}

/*
 * A version-1 program, `module @big_program attributes {k0000000 = "v",
 * ..., sym_name}`: @keys keys before sym_name in the module's dictionary,
 * each its own attribute and string, the case that walked the tables once
 * per key. @wide_sizes: the string sizes in nine-byte varints.
 */
static uint8_t *synthetic_program(uint32_t keys, bool wide_sizes, size_t *len)
{
	enum { S_BUILTIN, S_MODULE, S_SYM_NAME, S_NAME, S_V, S_KEYS };
	enum { A_DICT, A_SYM_NAME, A_NAME, A_V, A_KEYS };
	static const char *const fixed[] = { "builtin", "module", "sym_name",
					     "big_program", "v" };
	struct out o = { 0 }, str = { 0 }, dia = { 0 }, offs = { 0 }, data = { 0 },
		   ir = { 0 }, entry = { 0 };
	uint32_t n_strings = S_KEYS + keys, n_attrs = A_KEYS + keys;
	char key[16];

	put(&o, "ML\xefR", 4);
	put_varint(&o, 1, false);
	put(&o, "test", 5);

	/* strings: count, sizes in reverse order, the strings */
	put_varint(&str, n_strings, false);
	for (uint32_t i = n_strings; i-- > 0;)
		put_varint(&str, i < S_KEYS ? strlen(fixed[i]) + 1 : 9, wide_sizes);
	for (uint32_t i = 0; i < n_strings; i++) {
		if (i < S_KEYS) {
			put(&str, fixed[i], strlen(fixed[i]) + 1);
		} else {
			snprintf(key, sizeof(key), "k%07u", i - S_KEYS);
			put(&str, key, 9);
		}
	}
	/* dialects: builtin, its one op name (module) */
	put_varint(&dia, 1, false);
	put_varint(&dia, S_BUILTIN << 1, false);
	put_varint(&dia, 0, false);
	put_varint(&dia, 1, false);
	put_varint(&dia, S_MODULE, false);
	/* attributes: the dictionary, then StringAttrs, each with its size */
	put_varint(&offs, n_attrs, false);
	put_varint(&offs, 0, false);
	put_varint(&offs, 0, false);
	put_varint(&offs, n_attrs, false);
	put_varint(&entry, 1, false);			/* DictionaryAttr */
	put_varint(&entry, keys + 1, false);
	for (uint32_t k = 0; k < keys; k++) {
		put_varint(&entry, A_KEYS + k, false);
		put_varint(&entry, A_V, false);
	}
	put_varint(&entry, A_SYM_NAME, false);
	put_varint(&entry, A_NAME, false);
	put_varint(&offs, entry.len << 1 | 1, false);
	put(&data, entry.buf, entry.len);
	o.oom |= entry.oom;
	for (uint32_t a = A_SYM_NAME; a < n_attrs; a++) {
		uint32_t s = a < A_KEYS ? a - A_SYM_NAME + S_SYM_NAME : a - A_KEYS + S_KEYS;

		entry.len = 0;
		put_varint(&entry, 2, false);			/* StringAttr */
		put_varint(&entry, s, false);
		put_varint(&offs, entry.len << 1 | 1, false);
		put(&data, entry.buf, entry.len);
	}
	/* IR: the top block, the root op (module, mask: attributes), its
	 * location, its dictionary */
	put_varint(&ir, 1 << 1, false);
	put_varint(&ir, 0, false);
	put(&ir, "\x01", 1);
	put_varint(&ir, A_V, false);
	put_varint(&ir, A_DICT, false);

	put_section(&o, 0, &str);
	put_section(&o, 1, &dia);
	put_section(&o, 3, &offs);
	put_section(&o, 2, &data);
	put_section(&o, 4, &ir);
	free(str.buf);
	free(dia.buf);
	free(offs.buf);
	free(data.buf);
	free(ir.buf);
	free(entry.buf);
	if (o.oom) {
		free(o.buf);
		return NULL;
	}
	*len = o.len;
	return o.buf;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The fastest of a few namings of @buf, in seconds (noise only adds). */
static double naming_time(const uint8_t *buf, size_t len)
{
	double best = 1e9;
	char name[64];

	for (int i = 0; i < 5; i++) {
		struct byte_source src = byte_source_of_buffer(buf, len);
		double t = now_s();

		if (mlir_bytecode_module_name(&src, name, sizeof(name), NULL, 0))
			return -1;
		t = now_s() - t;
		if (t < best)
			best = t;
	}
	return best;
}

struct bytes_counted {
	const uint8_t *buf;
	uint64_t bytes;
};

static int bytes_counted_read(void *ctx, uint64_t off, void *out, size_t len)
{
	struct bytes_counted *b = ctx;

	b->bytes += len;
	memcpy(out, b->buf + off, len);
	return 0;
}

/* A dictionary of 12,500 keys (256 KB) and of 50,000 (1 MB): named, the
 * reads within the program's size, the time four times the size taking
 * about four times as long (a walk per key took sixteen). */
static void test_linear(void)
{
	size_t small_len = 0, big_len = 0;
	uint8_t *small = synthetic_program(12500, false, &small_len);
	uint8_t *big = synthetic_program(50000, false, &big_len);
	struct bytes_counted cnt = { 0 };
	struct byte_source src;
	double t_small, t_big;
	char name[64], why[128];

	if (!ASSERT_OK_PTR(small, "256 KB program") || !ASSERT_OK_PTR(big, "1 MB program"))
		goto out;
	printf("synthetic programs: %zu and %zu bytes\n", small_len, big_len);
	cnt.buf = small;
	src = (struct byte_source){ .ctx = &cnt, .size = small_len,
				    .read = bytes_counted_read };
	if (!ASSERT_OK(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
		       "256 KB named"))
		printf("  why: %s\n", why);
	ASSERT_STREQ(name, "big_program", "the name after 12,500 keys");
	printf("256 KB program: %llu bytes read\n", (unsigned long long)cnt.bytes);
	/* Each table once, in blocks: a walk per key read gigabytes. */
	if (!ASSERT_LE(cnt.bytes, 2 * small_len, "bytes read within twice the program"))
		goto out;
	cnt = (struct bytes_counted){ .buf = big };
	src = (struct byte_source){ .ctx = &cnt, .size = big_len, .read = bytes_counted_read };
	ASSERT_OK(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
		  "1 MB named");
	ASSERT_STREQ(name, "big_program", "the name after 50,000 keys");
	ASSERT_LE(cnt.bytes, 2 * big_len, "1 MB: bytes read within twice the program");
	t_small = naming_time(small, small_len);
	t_big = naming_time(big, big_len);
	printf("naming time: %.2f ms (256 KB), %.2f ms (1 MB), ratio %.1f\n",
	       t_small * 1e3, t_big * 1e3, t_big / t_small);
	if (ASSERT_TRUE(t_small > 0 && t_big > 0, "timed"))
		ASSERT_TRUE(t_big / t_small < 6, "four times the size, under six times the time");
out:
	free(small);
	free(big);
}

/* Past the bounds: refused with -E2BIG, and why, in bounded memory. */
static void test_bounds(void)
{
	size_t len = 0;
	uint8_t *buf = synthetic_program(MLIR_NAME_MAX_ENTRIES, false, &len);
	struct byte_source src;
	char name[64], why[128];

	if (ASSERT_OK_PTR(buf, "a program of more strings than are indexed")) {
		src = byte_source_of_buffer(buf, len);
		ASSERT_EQ(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
			  -E2BIG, "too many strings");
		ASSERT_STRCONTAINS(why, "strings", "says which table");
		printf("%zu bytes: %s\n", len, why);
		free(buf);
	}
	/* Fewer strings, each size nine bytes: the size table alone is more
	 * than may be read. */
	buf = synthetic_program(MLIR_NAME_MAX_READ / 9 + 1000, true, &len);
	if (ASSERT_OK_PTR(buf, "a program of more table than may be read")) {
		src = byte_source_of_buffer(buf, len);
		ASSERT_EQ(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
			  -E2BIG, "too many bytes to read");
		ASSERT_STRCONTAINS(why, "reads more than", "says the read bound");
		printf("%zu bytes: %s\n", len, why);
		free(buf);
	}
	/* Under both: the same shape names. */
	buf = synthetic_program(1000, true, &len);
	if (ASSERT_OK_PTR(buf, "a small program of wide sizes")) {
		src = byte_source_of_buffer(buf, len);
		ASSERT_OK(mlir_bytecode_module_name(&src, name, sizeof(name), why, sizeof(why)),
			  "wide sizes named");
		ASSERT_STREQ(name, "big_program", "its name");
		free(buf);
	}
}

int main(void)
{
	test_versions();
	test_refusals();
	test_damage();
	test_linear();
	test_bounds();
	return test_exit();
}
