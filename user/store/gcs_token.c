// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Cloud Storage's access token (gcs_token.h). */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/gcs_token.h"
#include "store/store_answers.h"
#include "store/store_internal.h"

#define LOG_CONTEXT "store"
#include "lib/log.h"

#define SCOPE "https://www.googleapis.com/auth/devstorage.read_write"
#define MAX_KEY_FILE (64u << 10)

/* The token endpoint's or metadata server's answer into @t. */
static int take_token(struct gcs_token *t, const struct http_response *rs, const char *from)
{
	int64_t expires_in = 0;
	char type[32] = "", why[200];
	struct json_field f[] = {
		{ .name = "access_token", .str = t->access, .len = sizeof(t->access) },
		{ .name = "expires_in", .num = &expires_in },
		{ .name = "token_type", .str = type, .len = sizeof(type) },
	};

	if (rs->status != 200 || !rs->data) {
		char shown[200];

		store_answer_excerpt(rs->data, rs->len < 160 ? rs->len : 160, shown, sizeof(shown));
		log_err("%s refused a Cloud Storage token: HTTP %ld%s%s", from, rs->status,
			shown[0] ? ": " : "", shown);
		return rs->status == 401 || rs->status == 400 ? -EKEYREJECTED : -EACCES;
	}
	if (json_fields(rs->data, rs->len, f, 3, why, sizeof(why)) || !f[0].found ||
	    !t->access[0]) {
		log_err("%s answered no access token: %s", from, why[0] ? why : "none in it");
		t->access[0] = '\0';
		return -EINVAL;
	}
	t->expires = time(NULL) + (expires_in > 0 && expires_in < 86400 ? expires_in : 300);
	return 0;
}

static int from_metadata(struct gcs_token *t, const struct store_http_limits *limits)
{
	const char *host = getenv("GCE_METADATA_HOST");
	struct store_http_limits l = *limits;
	struct http_request rq = HTTP_REQUEST_INIT;
	struct http_response rs = { 0 };
	struct curl_slist *h = curl_slist_append(NULL, "Metadata-Flavor: Google");
	char url[512];
	int err;

	if (!host || !*host)
		host = "metadata.google.internal";
	l.connect_s = 3;
	l.deadline_s = 20;
	snprintf(url, sizeof(url),
		 "http://%.200s/computeMetadata/v1/instance/service-accounts/default/token", host);
	rq.method = "GET";
	rq.url = url;
	rq.headers = h;
	err = store_http_send(&l, &rq, &rs, "metadata token");
	curl_slist_free_all(h);
	if (err) {
		log_err("no Cloud Storage credentials: GOOGLE_APPLICATION_CREDENTIALS is not set "
			"and the metadata server %.200s did not answer (%s)", host, rs.error);
		err = -ENOKEY;
	} else {
		err = take_token(t, &rs, "the metadata server");
		t->source = "the metadata server";
	}
	http_response_clear(&rs);
	return err;
}

static void b64url(const unsigned char *in, size_t n, char *out)
{
	static const char a[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t o = 0, i;

	for (i = 0; i + 2 < n; i += 3) {
		unsigned v = in[i] << 16 | in[i + 1] << 8 | in[i + 2];

		out[o++] = a[v >> 18];
		out[o++] = a[(v >> 12) & 63];
		out[o++] = a[(v >> 6) & 63];
		out[o++] = a[v & 63];
	}
	if (n - i == 1) {
		out[o++] = a[in[i] >> 2];
		out[o++] = a[(in[i] & 3) << 4];
	} else if (n - i == 2) {
		out[o++] = a[in[i] >> 2];
		out[o++] = a[((in[i] & 3) << 4) | (in[i + 1] >> 4)];
		out[o++] = a[(in[i + 1] & 15) << 2];
	}
	out[o] = '\0';
}

/* "<header>.<claims>.<signature>", RS256 with the service account's key. */
static int signed_jwt(const char *email, const char *pem, const char *aud, char **out)
{
	char header[64], claims[1024], *signing = NULL, h64[128], c64[1400];
	unsigned char sig[1024];
	char s64[1400];
	size_t sig_len = sizeof(sig);
	time_t now = time(NULL);
	BIO *bio = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *key = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int err = -EINVAL;

	BIO_free(bio);
	if (!key || !ctx)
		goto out;
	snprintf(header, sizeof(header), "{\"alg\":\"RS256\",\"typ\":\"JWT\"}");
	snprintf(claims, sizeof(claims),
		 "{\"iss\":\"%.300s\",\"scope\":\"" SCOPE "\",\"aud\":\"%.300s\","
		 "\"iat\":%lld,\"exp\":%lld}", email, aud, (long long)now,
		 (long long)now + 3600);
	b64url((unsigned char *)header, strlen(header), h64);
	b64url((unsigned char *)claims, strlen(claims), c64);
	if (asprintf(&signing, "%s.%s", h64, c64) < 0) {
		signing = NULL;
		err = -ENOMEM;
		goto out;
	}
	if (EVP_DigestSignInit(ctx, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestSign(ctx, sig, &sig_len, (unsigned char *)signing, strlen(signing)) != 1)
		goto out;
	b64url(sig, sig_len, s64);
	err = asprintf(out, "%s.%s", signing, s64) < 0 ? -ENOMEM : 0;
out:
	free(signing);
	EVP_MD_CTX_free(ctx);
	EVP_PKEY_free(key);
	return err;
}

static char *read_key_file(const char *path)
{
	int err = 0;
	char *buf = store_read_small_file(path, MAX_KEY_FILE, &err);

	if (!buf && err == -EFBIG)
		log_err("GOOGLE_APPLICATION_CREDENTIALS %s is no regular file of at most %u KiB",
			path, MAX_KEY_FILE >> 10);
	else if (!buf)
		log_err("cannot read GOOGLE_APPLICATION_CREDENTIALS %s: %s", path, strerror(-err));
	return buf;
}

/* The key file's token exchange: a service account's JWT, or a user's
 * refresh token. */
static int from_key_file(struct gcs_token *t, const char *path,
			 const struct store_http_limits *l)
{
	char *pem = calloc(1, 8192);
	char type[64] = "", email[320] = "", token_uri[512] = "", why[200];
	char client_id[256] = "", client_secret[256] = "", refresh[1024] = "";
	struct json_field f[] = {
		{ .name = "type", .str = type, .len = sizeof(type) },
		{ .name = "client_email", .str = email, .len = sizeof(email) },
		{ .name = "private_key", .str = pem, .len = 8192 },
		{ .name = "token_uri", .str = token_uri, .len = sizeof(token_uri) },
		{ .name = "client_id", .str = client_id, .len = sizeof(client_id) },
		{ .name = "client_secret", .str = client_secret, .len = sizeof(client_secret) },
		{ .name = "refresh_token", .str = refresh, .len = sizeof(refresh) },
	};
	struct http_request rq = HTTP_REQUEST_INIT;
	struct http_response rs = { 0 };
	char *json = pem ? read_key_file(path) : NULL, *body = NULL, *jwt = NULL;
	char e_id[800], e_secret[800], e_refresh[3100];
	int err;

	if (!json) {
		free(pem);
		return pem ? -ENOKEY : -ENOMEM;
	}
	err = json_fields(json, strlen(json), f, 7, why, sizeof(why));
	explicit_bzero(json, strlen(json));
	free(json);
	if (err) {
		log_err("GOOGLE_APPLICATION_CREDENTIALS %s is no key file: %s", path, why);
		goto out;
	}
	if (!token_uri[0])
		snprintf(token_uri, sizeof(token_uri), "https://oauth2.googleapis.com/token");
	if (!strcmp(type, "service_account")) {
		err = signed_jwt(email, pem, token_uri, &jwt);
		if (err) {
			log_err("GOOGLE_APPLICATION_CREDENTIALS %s: cannot sign with its "
				"private_key (no RSA key in PEM form?)", path);
			goto out;
		}
		err = asprintf(&body, "grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type"
			       "%%3Ajwt-bearer&assertion=%s", jwt) < 0 ? -ENOMEM : 0;
	} else if (!strcmp(type, "authorized_user")) {
		if (store_http_escape(client_id, false, e_id, sizeof(e_id)) ||
		    store_http_escape(client_secret, false, e_secret, sizeof(e_secret)) ||
		    store_http_escape(refresh, false, e_refresh, sizeof(e_refresh))) {
			err = -ENAMETOOLONG;
			goto out;
		}
		err = asprintf(&body, "grant_type=refresh_token&client_id=%s&client_secret=%s"
			       "&refresh_token=%s", e_id, e_secret, e_refresh) < 0 ? -ENOMEM : 0;
		explicit_bzero(e_secret, sizeof(e_secret));
		explicit_bzero(e_refresh, sizeof(e_refresh));
	} else {
		log_err("GOOGLE_APPLICATION_CREDENTIALS %s: type \"%.40s\" is neither "
			"service_account nor authorized_user", path, type);
		err = -EINVAL;
	}
	if (err)
		goto out;
	{
		struct curl_slist *h = curl_slist_append(
			NULL, "Content-Type: application/x-www-form-urlencoded");

		rq.method = "POST";
		rq.url = token_uri;
		rq.headers = h;
		rq.body = body;
		rq.body_len = strlen(body);
		err = store_http_send(l, &rq, &rs, "token");
		curl_slist_free_all(h);
	}
	if (err)
		log_err("the token endpoint %.200s did not answer: %s", token_uri, rs.error);
	else
		err = take_token(t, &rs, "the token endpoint");
	t->source = "GOOGLE_APPLICATION_CREDENTIALS";
out:
	if (body)
		explicit_bzero(body, strlen(body));
	free(body);
	free(jwt);
	explicit_bzero(pem, 8192);
	free(pem);
	explicit_bzero(client_secret, sizeof(client_secret));
	explicit_bzero(refresh, sizeof(refresh));
	http_response_clear(&rs);
	return err;
}

int gcs_token_fresh(struct gcs_token *t, const struct store_http_limits *l)
{
	const char *key = getenv("GOOGLE_APPLICATION_CREDENTIALS");

	if (t->access[0] && t->expires - time(NULL) > 300)
		return 0;
	t->access[0] = '\0';
	if (key && *key)
		return from_key_file(t, key, l);
	return from_metadata(t, l);
}
