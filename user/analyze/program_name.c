// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Module names from program bytes: "HloModule NAME" (HLO text),
 * "module @NAME" (StableHLO/MLIR), field 1 of an HloModuleProto, or the
 * root module's sym_name in MLIR bytecode (mlir_bytecode.h).
 */
#include <errno.h>
#include <string.h>

#include "analyze/mlir_bytecode.h"
#include "analyze/program_name.h"

/* Text and proto names are at the start: "HloModule NAME" first, "module
 * @NAME" after a few #loc lines, a proto's field 1 first. */
#define HEAD_BYTES 4096

static bool is_name_char(char ch)
{
	return ch == '_' || ch == '.' || ch == '-' || (ch >= '0' && ch <= '9') ||
	       (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

/* The name after the first @prefix in @code, if any. */
static bool text_module_name(const char *code, size_t len, const char *prefix,
			     char *name, size_t name_len)
{
	const char *s = memmem(code, len, prefix, strlen(prefix));
	size_t n = 0;

	if (!s)
		return false;
	s += strlen(prefix);
	while (s < code + len && n + 1 < name_len && is_name_char(*s))
		name[n++] = *s++;
	name[n] = '\0';
	return n > 0;
}

bool pjrt_program_module_name(const char *code, size_t len, char *name,
			      size_t name_len)
{
	static const char *const text_prefixes[] = { "HloModule ", "module @" };

	if (!name_len)
		return false;
	for (size_t p = 0; p < sizeof(text_prefixes) / sizeof(text_prefixes[0]); p++)
		if (memmem(code, len, text_prefixes[p], strlen(text_prefixes[p])))
			return text_module_name(code, len, text_prefixes[p], name,
						name_len);
	/* HloModuleProto: field 1 (name), length-delimited, comes first. */
	if (len >= 3 && (unsigned char)code[0] == 0x0a) {
		size_t l = (unsigned char)code[1];

		if (l && !(l & 0x80) && l + 2 <= len && l < name_len) {
			for (size_t i = 0; i < l; i++) {
				unsigned char ch = code[2 + i];

				if (ch < 0x20 || ch > 0x7e)
					return false;
				name[i] = ch;
			}
			name[l] = '\0';
			return true;
		}
	}
	return false;
}

int pjrt_program_module_name_from(const struct byte_source *src, char *name,
				  size_t name_len)
{
	char head[HEAD_BYTES];
	size_t n = src->size < sizeof(head) ? src->size : sizeof(head);
	int err;

	if (!name_len || !n)
		return -EINVAL;
	err = src->read(src->ctx, 0, head, n);
	if (err)
		return err;
	if (mlir_bytecode_is(head, n))
		return mlir_bytecode_module_name(src, name, name_len, NULL, 0);
	return pjrt_program_module_name(head, n, name, name_len) ? 0 : -ENOENT;
}
