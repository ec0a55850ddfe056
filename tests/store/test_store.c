// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * store/ without a server: bucket URLs normalised and refused, keys
 * escaped for a URL, the clouds' XML and JSON answers read with bounds
 * (entities, integers as strings, answers cut short, strings longer than
 * the caller's buffer), S3's credentials and region found in AWS's order
 * from the variables and the shared files (profiles, the config file's
 * "profile NAME" sections), and none found said as an error.
 */
#include <stdlib.h>
#include <unistd.h>

#include "test.h"
#include "store/s3_credentials.h"
#include "store/store.h"
#include "store/store_answers.h"
#include "store/store_http.h"

static void test_urls(void)
{
	static const struct { const char *in, *out; } good[] = {
		{ "s3://bucket", "s3://bucket" },
		{ "s3://bucket/", "s3://bucket" },
		{ "gs://my-bucket//a///b/", "gs://my-bucket/a/b" },
		{ "gs://a.b_c-d/x y/plugins", "gs://a.b_c-d/x y/plugins" },
	};
	static const char *const bad[] = {
		"s3://", "s3:///x", "gs://ab/x", "gs://Bucket/x", "gs://-abc/x", "gs://abc-/x",
		"s3://bucket/../x", "s3://bucket/./x", "s3://bucket/a/..", "s3://buck\x01t/x",
		"s3://bucket/a\nb", "http://bucket/x", "/local/path", "gs:/bucket",
	};
	char out[64];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (ASSERT_OK(store_url_normalise(good[i].in, out, sizeof(out)), good[i].in))
			ASSERT_STREQ(out, good[i].out, good[i].in);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ASSERT_NEQ(store_url_normalise(bad[i], out, sizeof(out)), 0, bad[i]);
	ASSERT_EQ(store_url_normalise("s3://bucket/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
				      out, sizeof(out)), -ENAMETOOLONG, "too long");
	ASSERT_TRUE(store_is_url("s3://x") && store_is_url("gs://x"), "schemes");
	ASSERT_FALSE(store_is_url("S3://x") || store_is_url("file:///x") || store_is_url(NULL),
		     "not schemes");
}

static void test_escape(void)
{
	char out[64];

	ASSERT_OK(store_http_escape("plugins/profile/s 1/h:0.xplane.pb", true, out, sizeof(out)),
		  "with slashes");
	ASSERT_STREQ(out, "plugins/profile/s%201/h%3A0.xplane.pb", "kept and escaped");
	ASSERT_OK(store_http_escape("a/b~c", false, out, sizeof(out)), "without");
	ASSERT_STREQ(out, "a%2Fb~c", "a slash escaped");
	ASSERT_OK(store_http_escape("\xc3\xa9", false, out, sizeof(out)), "utf-8");
	ASSERT_STREQ(out, "%C3%A9", "bytes escaped");
	ASSERT_EQ(store_http_escape("abcdef", false, out, 6), -ENAMETOOLONG, "does not fit");
	ASSERT_EQ(store_http_escape("abcd/", false, out, 7), -ENAMETOOLONG, "escape does not fit");
}

static void test_xml(void)
{
	const char *x = "<Error><Code>NoSuchKey</Code><Message>The &lt;key&gt; &amp; &quot;"
			"it&apos;s&quot; &#65; gone</Message></Error>";
	const char *end = x + strlen(x), *after;
	char out[64], small[5];

	after = xml_field(x, end, "Code", out, sizeof(out));
	ASSERT_TRUE(after != NULL, "Code found");
	ASSERT_STREQ(out, "NoSuchKey", "Code");
	ASSERT_TRUE(xml_field(after, end, "Message", out, sizeof(out)) != NULL, "after Code");
	ASSERT_STREQ(out, "The <key> & \"it's\" &#65; gone", "entities");
	ASSERT_TRUE(xml_field(x, end, "Code", small, sizeof(small)) != NULL, "cut");
	ASSERT_STREQ(small, "NoSu", "cut to fit");
	ASSERT_TRUE(xml_field(x, end, "UploadId", out, sizeof(out)) == NULL, "absent");
	/* An answer cut before its closing tag. */
	ASSERT_TRUE(xml_field(x, x + 20, "Code", out, sizeof(out)) == NULL, "unterminated");
	ASSERT_TRUE(xml_field(x, x + 10, "Code", out, sizeof(out)) == NULL, "tag cut");
}

static void test_json(void)
{
	const char *j = "{\"access_token\":\"ya29.a\\nb\",\"expires_in\":3599,\"size\":\"123\","
			"\"extra\":{\"deep\":[1,2,{\"x\":null}]},\"token_type\":\"Bearer\"}";
	char tok[32] = "", type[8] = "", err[128], tiny[4];
	int64_t expires = 0, size = 0;
	struct json_field f[] = {
		{ .name = "access_token", .str = tok, .len = sizeof(tok) },
		{ .name = "expires_in", .num = &expires },
		{ .name = "size", .num = &size },
		{ .name = "token_type", .str = type, .len = sizeof(type) },
		{ .name = "missing", .str = tiny, .len = sizeof(tiny) },
	};

	if (ASSERT_OK(json_fields(j, strlen(j), f, 5, err, sizeof(err)), err)) {
		ASSERT_STREQ(tok, "ya29.a\nb", "escape read");
		ASSERT_EQ(expires, 3599, "a number");
		ASSERT_EQ(size, 123, "a string of digits");
		ASSERT_STREQ(type, "Bearer", "after a nested value");
		ASSERT_FALSE(f[4].found, "absent");
	}
	ASSERT_EQ(json_fields(j, 40, f, 5, err, sizeof(err)), -EINVAL, "cut short");
	ASSERT_TRUE(err[0] != '\0', "says why");
	{
		struct json_field g[] = { { .name = "access_token", .str = tiny, .len = sizeof(tiny) } };

		ASSERT_EQ(json_fields(j, strlen(j), g, 1, err, sizeof(err)), -EINVAL,
			  "longer than the buffer");
	}
	{
		const char *s = "{\"size\":\"12x\"}";
		struct json_field g[] = { { .name = "size", .num = &size } };

		ASSERT_EQ(json_fields(s, strlen(s), g, 1, err, sizeof(err)), -EINVAL, "no integer");
	}
	ASSERT_EQ(json_fields("[1]", 3, f, 5, err, sizeof(err)), -EINVAL, "not an object");
}

struct seen {
	char keys[4][64];
	uint64_t sizes[4];
	size_t n;
};

static int see(const char *key, uint64_t size, void *ctx)
{
	struct seen *v = ctx;

	if (v->n >= 4)
		return -E2BIG;
	snprintf(v->keys[v->n], sizeof(v->keys[0]), "%s", key);
	v->sizes[v->n++] = size;
	return 0;
}

static void test_listings(void)
{
	const char *s3 = "<ListBucketResult><IsTruncated>true</IsTruncated><Contents><Key>a/"
			 "s&amp;1/h.xplane.pb</Key><Size>12</Size></Contents><Contents><Key>b"
			 "</Key><Size>7</Size></Contents><Contents><Key>cut</Key>"
			 "<NextContinuationToken>tok/1=</NextContinuationToken></ListBucketResult>";
	const char *gcs = "{\"kind\":\"storage#objects\",\"items\":[{\"name\":\"p/x.pb\","
			  "\"size\":\"123\",\"md5Hash\":\"q\"},{\"size\":\"5\",\"name\":\"y\"}],"
			  "\"nextPageToken\":\"2\"}";
	struct seen v = { 0 };
	char next[32], why[96];

	ASSERT_OK(s3_list_page(s3, strlen(s3), see, &v, next, sizeof(next)), "s3 page");
	ASSERT_EQ(v.n, 2, "two whole <Contents> (the cut one ends the page)");
	ASSERT_STREQ(v.keys[0], "a/s&1/h.xplane.pb", "key, entity decoded");
	ASSERT_EQ(v.sizes[0], 12, "size");
	ASSERT_STREQ(next, "tok/1=", "continuation token");
	v.n = 0;
	ASSERT_OK(s3_list_page("<IsTruncated>false</IsTruncated><NextContinuationToken>x"
			       "</NextContinuationToken>", 80, see, &v, next, sizeof(next)),
		  "last page");
	ASSERT_STREQ(next, "", "no token when not truncated");

	v.n = 0;
	if (ASSERT_OK(gcs_list_page(gcs, strlen(gcs), see, &v, next, sizeof(next), why,
				    sizeof(why)), why)) {
		ASSERT_EQ(v.n, 2, "two items");
		ASSERT_STREQ(v.keys[1], "y", "fields in any order");
		ASSERT_EQ(v.sizes[0], 123, "size as a string");
		ASSERT_STREQ(next, "2", "page token");
	}
	v.n = 0;
	ASSERT_EQ(gcs_list_page(gcs, 60, see, &v, next, sizeof(next), why, sizeof(why)),
		  -EINVAL, "cut short");
	ASSERT_OK(gcs_list_page("{}", 2, see, &v, next, sizeof(next), why, sizeof(why)),
		  "an empty bucket answers {}");
	ASSERT_STREQ(next, "", "and no token");
}

static char dir[] = "/tmp/test-store-XXXXXX";

static void write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void clear_aws_env(void)
{
	static const char *const vars[] = {
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_SHARED_CREDENTIALS_FILE",
		"AWS_CONFIG_FILE",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	/* Never ask a real metadata server from a test. */
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

static void test_s3_credentials(void)
{
	struct store_http_limits l = { .connect_s = 1, .stall_s = 1, .deadline_s = 2,
				       .attempts = 1 };
	struct s3_credentials c;
	char path[256];

	if (!mkdtemp(dir)) {
		ASSERT_TRUE(false, "mkdtemp");
		return;
	}
	clear_aws_env();
	setenv("HOME", dir, 1);
	ASSERT_EQ(s3_credentials_find(&c, &l), -ENOKEY, "none anywhere");

	write_file("credentials",
		   "# a comment\n[default]\naws_access_key_id = AKDEFAULT\n"
		   "aws_secret_access_key=secretdefault \r\n\n[ci]\n aws_access_key_id=AKCI\n"
		   "aws_secret_access_key = secretci\naws_session_token = tok\n"
		   "[half]\naws_access_key_id=AKHALF\n");
	write_file("config", "[default]\nregion = eu-west-1\n[profile ci]\nregion=ap-south-1\n");
	snprintf(path, sizeof(path), "%s/credentials", dir);
	setenv("AWS_SHARED_CREDENTIALS_FILE", path, 1);
	snprintf(path, sizeof(path), "%s/config", dir);
	setenv("AWS_CONFIG_FILE", path, 1);
	if (ASSERT_OK(s3_credentials_find(&c, &l), "the default profile")) {
		ASSERT_STREQ(c.key_id, "AKDEFAULT", "key id");
		ASSERT_STREQ(c.secret, "secretdefault", "secret, blanks trimmed");
		ASSERT_STREQ(c.token, "", "no token");
		ASSERT_STREQ(c.region, "eu-west-1", "the config's region");
	}
	setenv("AWS_PROFILE", "ci", 1);
	if (ASSERT_OK(s3_credentials_find(&c, &l), "profile ci")) {
		ASSERT_STREQ(c.key_id, "AKCI", "ci's key id");
		ASSERT_STREQ(c.token, "tok", "ci's token");
		ASSERT_STREQ(c.region, "ap-south-1", "[profile ci]'s region");
	}
	setenv("AWS_PROFILE", "half", 1);
	ASSERT_EQ(s3_credentials_find(&c, &l), -ENOKEY, "a profile with no secret");
	setenv("AWS_ACCESS_KEY_ID", "AKENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "secretenv", 1);
	setenv("AWS_REGION", "us-west-2", 1);
	if (ASSERT_OK(s3_credentials_find(&c, &l), "the variables first")) {
		ASSERT_STREQ(c.key_id, "AKENV", "the variables' key");
		ASSERT_STREQ(c.region, "us-west-2", "AWS_REGION first");
	}
	clear_aws_env();
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	if (system(path))
		ASSERT_TRUE(false, "cleanup");
}

int main(void)
{
	test_urls();
	test_escape();
	test_xml();
	test_json();
	test_listings();
	test_s3_credentials();
	return test_exit();
}
