/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A small streaming JSON writer: nesting, commas and string escaping are its
 * business, so printers only say what they print.
 */
#ifndef ACCELTRACE_JSON_WRITER_H
#define ACCELTRACE_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json_writer;

/* Returns NULL and sets errno on allocation failure. */
struct json_writer *jw_new(FILE *out, bool pretty);
/* Flushes nothing and accepts NULL; callers check the FILE themselves. */
void jw_free(struct json_writer *jw);

/* A compact JSON text built in memory (a plane stat's value): open, write
 * through m->jw, close for the string. */
struct jw_memory {
	struct json_writer *jw;
	FILE *f;
	char *buf;
	size_t len;
};
/* 0 or -ENOMEM. */
int jw_memory_open(struct jw_memory *m);
/* The text into *out (free() it), 0; or -ENOMEM with nothing kept. */
int jw_memory_close(struct jw_memory *m, char **out);

void jw_start_object(struct json_writer *jw);
void jw_end_object(struct json_writer *jw);
void jw_start_array(struct json_writer *jw);
void jw_end_array(struct json_writer *jw);
void jw_name(struct json_writer *jw, const char *name);

void jw_string(struct json_writer *jw, const char *s);
void jw_uint(struct json_writer *jw, uint64_t v);
void jw_int(struct json_writer *jw, int64_t v);
void jw_double(struct json_writer *jw, double v);
void jw_bool(struct json_writer *jw, bool v);
void jw_null(struct json_writer *jw);
/* v / 10^decimals written exactly (no binary rounding): 1234567, 3 -> 1234.567. */
void jw_decimal(struct json_writer *jw, uint64_t v, unsigned int decimals);

void jw_string_field(struct json_writer *jw, const char *name, const char *s);
void jw_uint_field(struct json_writer *jw, const char *name, uint64_t v);
void jw_int_field(struct json_writer *jw, const char *name, int64_t v);
void jw_double_field(struct json_writer *jw, const char *name, double v);
void jw_bool_field(struct json_writer *jw, const char *name, bool v);

#endif /* ACCELTRACE_JSON_WRITER_H */
