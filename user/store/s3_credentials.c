// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* S3's credentials and region, found in AWS's order (s3_credentials.h). */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/s3_credentials.h"
#include "store/store_answers.h"
#include "store/store_internal.h"

#define LOG_CONTEXT "store"
#include "lib/log.h"

#define MAX_INI_BYTES (256u << 10)

static bool env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v;
}

/* A file of AWS's INI shape read whole (bounded); NULL when it is not
 * there; @what names it in a message when it cannot be read. */
static char *read_small_file(const char *path, const char *what)
{
	int err = 0;
	char *buf = store_read_small_file(path, MAX_INI_BYTES, &err);

	if (!buf && err == -EFBIG)
		log_warn("the %s %s is no regular file of at most %u KiB: not read", what,
			 path, MAX_INI_BYTES >> 10);
	else if (!buf && err != -ENOENT)
		log_warn("cannot read the %s %s: %s", what, path, strerror(-err));
	return buf;
}

static void trim(char **s, char **e)
{
	while (*s < *e && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*e > *s && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r'))
		(*e)--;
}

/* @key's value in section [@section] of INI text @ini into @out; true when found. */
static bool ini_value(const char *ini, const char *section, const char *key, char *out,
		      size_t len)
{
	bool in = false;

	for (const char *line = ini; line && *line;) {
		const char *nl = strchr(line, '\n');
		char *s = (char *)line, *e = (char *)(nl ? nl : line + strlen(line));

		line = nl ? nl + 1 : NULL;
		trim(&s, &e);
		if (s == e || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *r = memchr(s, ']', e - s);

			if (r) {
				char *a = s + 1, *b = r;

				trim(&a, &b);
				in = (size_t)(b - a) == strlen(section) && !memcmp(a, section, b - a);
			}
			continue;
		}
		if (in) {
			char *eq = memchr(s, '=', e - s), *k = s, *ke, *v;

			if (!eq)
				continue;
			ke = eq;
			v = eq + 1;
			trim(&k, &ke);
			trim(&v, &e);
			if ((size_t)(ke - k) == strlen(key) && !memcmp(k, key, ke - k) &&
			    (size_t)(e - v) < len) {
				memcpy(out, v, e - v);
				out[e - v] = '\0';
				return true;
			}
		}
	}
	return false;
}

static const char *profile_name(void)
{
	return env_set("AWS_PROFILE") ? getenv("AWS_PROFILE") : "default";
}

/* ~/<rel>, or the variable's file. */
static void aws_file(const char *var, const char *rel, char *out, size_t len)
{
	const char *home = getenv("HOME");

	if (env_set(var))
		snprintf(out, len, "%s", getenv(var));
	else
		snprintf(out, len, "%s/%s", home && *home ? home : "/root", rel);
}

static void find_region(struct s3_credentials *c)
{
	char path[1024], section[300];
	char *ini;

	if (env_set("AWS_REGION")) {
		snprintf(c->region, sizeof(c->region), "%s", getenv("AWS_REGION"));
		return;
	}
	if (env_set("AWS_DEFAULT_REGION")) {
		snprintf(c->region, sizeof(c->region), "%s", getenv("AWS_DEFAULT_REGION"));
		return;
	}
	snprintf(c->region, sizeof(c->region), "us-east-1");
	aws_file("AWS_CONFIG_FILE", ".aws/config", path, sizeof(path));
	ini = read_small_file(path, "AWS config file");
	if (!ini)
		return;
	/* The config file names its sections "profile NAME", but "default". */
	if (strcmp(profile_name(), "default"))
		snprintf(section, sizeof(section), "profile %s", profile_name());
	else
		snprintf(section, sizeof(section), "default");
	ini_value(ini, section, "region", c->region, sizeof(c->region));
	free(ini);
}

static int from_file(struct s3_credentials *c)
{
	char path[1024];
	char *ini;
	bool ok;

	aws_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials", path, sizeof(path));
	ini = read_small_file(path, "AWS credentials file");
	if (!ini)
		return -ENOENT;
	ok = ini_value(ini, profile_name(), "aws_access_key_id", c->key_id, sizeof(c->key_id)) &&
	     ini_value(ini, profile_name(), "aws_secret_access_key", c->secret,
		       sizeof(c->secret));
	if (ok && !ini_value(ini, profile_name(), "aws_session_token", c->token,
			     sizeof(c->token)))
		c->token[0] = '\0';
	free(ini);
	if (!ok)
		return -ENOENT;
	c->source = "the shared credentials file";
	return 0;
}

/* ---------------------------------------------------------------- IMDSv2 */

/* @path of the metadata server into a response; 0 when it answered 200. */
static int imds_get(const char *base, const char *token, const char *path,
		    struct http_response *rs, const struct store_http_limits *limits)
{
	struct store_http_limits l = { .connect_s = 2, .stall_s = 5, .deadline_s = 10,
				       .attempts = limits->attempts < 3 ? limits->attempts : 3 };
	struct http_request rq = HTTP_REQUEST_INIT;
	struct curl_slist *h = NULL;
	char url[1024], hdr[256];
	int err;

	snprintf(url, sizeof(url), "%s%s", base, path);
	if (token) {
		snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token: %s", token);
		rq.method = "GET";
	} else {
		snprintf(hdr, sizeof(hdr), "X-aws-ec2-metadata-token-ttl-seconds: 21600");
		rq.method = "PUT";
	}
	h = curl_slist_append(h, hdr);
	rq.url = url;
	rq.headers = h;
	err = store_http_send(&l, &rq, rs, "instance metadata");
	curl_slist_free_all(h);
	if (!err && rs->status != 200)
		err = -EACCES;
	return err;
}

static time_t parse_iso8601(const char *s)
{
	struct tm tm = { 0 };

	if (!strptime(s, "%Y-%m-%dT%H:%M:%S", &tm))
		return 0;
	return timegm(&tm);
}

static int from_instance(struct s3_credentials *c, const struct store_http_limits *l)
{
	const char *base = env_set("AWS_EC2_METADATA_SERVICE_ENDPOINT") ?
			   getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT") : "http://169.254.169.254";
	struct http_response rs = { 0 };
	char token[256], role[256], path[512], expiration[64] = "", why[200];
	struct json_field f[] = {
		{ .name = "AccessKeyId", .str = c->key_id, .len = sizeof(c->key_id) },
		{ .name = "SecretAccessKey", .str = c->secret, .len = sizeof(c->secret) },
		{ .name = "Token", .str = c->token, .len = sizeof(c->token) },
		{ .name = "Expiration", .str = expiration, .len = sizeof(expiration) },
	};
	size_t base_len = strlen(base);
	char root[512], *nl;
	int err;

	while (base_len && base[base_len - 1] == '/')
		base_len--;
	snprintf(root, sizeof(root), "%.*s", (int)base_len, base);
	err = imds_get(root, NULL, "/latest/api/token", &rs, l);
	if (err || !rs.data || rs.len >= sizeof(token))
		goto fail;
	snprintf(token, sizeof(token), "%s", rs.data);
	err = imds_get(root, token, "/latest/meta-data/iam/security-credentials/", &rs, l);
	if (err || !rs.data || !rs.len || rs.len >= sizeof(role))
		goto fail;
	snprintf(role, sizeof(role), "%s", rs.data);
	nl = strchr(role, '\n');
	if (nl)
		*nl = '\0';
	snprintf(path, sizeof(path), "/latest/meta-data/iam/security-credentials/%.200s", role);
	err = imds_get(root, token, path, &rs, l);
	if (err || !rs.data)
		goto fail;
	if (json_fields(rs.data, rs.len, f, 4, why, sizeof(why)) || !f[0].found ||
	    !f[1].found) {
		log_err("the instance metadata server's credentials are unreadable: %s",
			why[0] ? why : "no AccessKeyId or SecretAccessKey");
		err = -EINVAL;
		goto out;
	}
	if (!f[2].found)
		c->token[0] = '\0';
	c->expires = parse_iso8601(expiration);
	c->source = "the instance's role (IMDSv2)";
	err = 0;
	goto out;
fail:
	if (!err)
		err = -EIO;
	log_debug("instance metadata at %s: %s", base, rs.error[0] ? rs.error : "refused");
out:
	http_response_clear(&rs);
	return err;
}

int s3_credentials_find(struct s3_credentials *c, const struct store_http_limits *l)
{
	const char *off = getenv("AWS_EC2_METADATA_DISABLED");

	memset(c, 0, sizeof(*c));
	find_region(c);
	if (env_set("AWS_ACCESS_KEY_ID") && env_set("AWS_SECRET_ACCESS_KEY")) {
		snprintf(c->key_id, sizeof(c->key_id), "%s", getenv("AWS_ACCESS_KEY_ID"));
		snprintf(c->secret, sizeof(c->secret), "%s", getenv("AWS_SECRET_ACCESS_KEY"));
		if (env_set("AWS_SESSION_TOKEN"))
			snprintf(c->token, sizeof(c->token), "%s", getenv("AWS_SESSION_TOKEN"));
		c->source = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY";
		return 0;
	}
	if (!from_file(c))
		return 0;
	if ((!off || strcasecmp(off, "true")) && !from_instance(c, l))
		return 0;
	log_err("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, write "
		"profile [%s] in the shared credentials file, or run where the instance "
		"metadata server gives a role's", profile_name());
	return -ENOKEY;
}

int s3_credentials_fresh(struct s3_credentials *c, const struct store_http_limits *l)
{
	struct s3_credentials next;
	int err;

	if (!c->expires || c->expires - time(NULL) > 300)
		return 0;
	/* Found anew into a copy: a failed renewal keeps the ones in hand
	 * while they last. */
	err = s3_credentials_find(&next, l);
	if (!err)
		*c = next;
	explicit_bzero(&next, sizeof(next));
	if (err && c->expires > time(NULL))
		return 0;
	return err ? -EKEYEXPIRED : 0;
}
