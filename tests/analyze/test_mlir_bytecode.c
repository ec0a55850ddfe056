// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The module name of MLIR bytecode, on programs written by MLIR's own
 * bytecode writer (mlir-opt 19, tests/analyze/data/README.md says how):
 * bytecode versions 1 (the name in the attribute dictionary), 5 and 6 (in
 * the module's properties), and a module without a name. Every truncation
 * and every single-byte change of them is read without a crash, and a
 * source that fails its reads is refused with its error. Reads go through
 * the byte source a window at a time.
 */
#include <fcntl.h>
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
		cnt.fail_after = 1;
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

int main(void)
{
	test_versions();
	test_refusals();
	test_damage();
	return test_exit();
}
