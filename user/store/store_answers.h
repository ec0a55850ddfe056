/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Reading the clouds' answers with bounds (store_answers.c). */
#ifndef ACCELTRACE_STORE_ANSWERS_H
#define ACCELTRACE_STORE_ANSWERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

/*
 * The text of the first <@tag>...</@tag> in [xml, end), entities decoded,
 * into @out (cut to fit). Where the element ends, or NULL when there is
 * none.
 */
const char *xml_field(const char *xml, const char *end, const char *tag, char *out,
		      size_t len);

/* One field of a JSON object: a string into str[len], or an integer
 * (as a number or a string of digits) into *num. */
struct json_field {
	const char *name;
	char *str;
	size_t len;
	int64_t *num;
	bool found;
};

/* The top-level fields of the object @json asked for by name; others
 * skipped. 0, or -EINVAL with the reason in err. */
int json_fields(const char *json, size_t n, struct json_field *fields, size_t n_fields,
		char *err, size_t errlen);

/*
 * One page of S3's ListObjectsV2 answer: @fn for each <Contents>' Key and
 * Size, @next the NextContinuationToken when IsTruncated ("" on the last
 * page). @fn's first nonzero return, or 0.
 */
int s3_list_page(const char *xml, size_t n, store_list_fn fn, void *ctx, char *next,
		 size_t next_len);
/*
 * One page of Cloud Storage's objects.list answer ({"items": [{"name",
 * "size"}...], "nextPageToken"}): @fn for each item, @next the token ("" on
 * the last page). @fn's first nonzero return, or -EINVAL with @why.
 */
int gcs_list_page(const char *json, size_t n, store_list_fn fn, void *ctx, char *next,
		  size_t next_len, char *why, size_t why_len);

/* The first bytes of an answer fit for a log line (control bytes, quotes
 * and non-ASCII as spaces) into @out. */
void store_answer_excerpt(const char *data, size_t n, char *out, size_t len);

#endif /* ACCELTRACE_STORE_ANSWERS_H */
