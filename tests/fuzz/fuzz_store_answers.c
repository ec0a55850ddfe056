// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The clouds' answers (store/store_answers.h): any bytes as S3's XML
 * (every field a listing or an error reads, a ListObjectsV2 page), as a
 * JSON object (a token's, a key file's), as a Cloud Storage listing page,
 * and as a bucket URL to normalise. A server, a key
 * file and a URL are outside input; the reads must stay in bounds and fit
 * the caller's buffers.
 */
#include "fuzz_input.h"
#include "store/store.h"
#include "store/store_answers.h"

static int count_key(const char *key, uint64_t size, void *ctx)
{
	(*(size_t *)ctx) += strlen(key) + (size & 1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const tags[] = { "Key", "Size", "Code", "Message", "UploadId",
					    "IsTruncated", "NextContinuationToken" };
	char *s = fuzz_string(data, size), out[64], url[128], err[96], str[16];
	const char *end = s + size, *p;
	int64_t num;
	struct json_field f[] = {
		{ .name = "access_token", .str = str, .len = sizeof(str) },
		{ .name = "expires_in", .num = &num },
		{ .name = "size", .num = &num },
	};

	for (size_t t = 0; t < sizeof(tags) / sizeof(tags[0]); t++)
		for (p = s; p && p < end;)
			p = xml_field(p, end, tags[t], out, sizeof(out));
	size_t seen = 0;
	char next[32];

	json_fields(s, size, f, 3, err, sizeof(err));
	s3_list_page(s, size, count_key, &seen, next, sizeof(next));
	gcs_list_page(s, size, count_key, &seen, next, sizeof(next), err, sizeof(err));
	store_url_normalise(s, url, sizeof(url));
	store_answer_excerpt(s, size, out, sizeof(out));
	free(s);
	return 0;
}
