/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * An OAuth 2.0 access token for Cloud Storage, found as Google's client
 * libraries find one: the key file GOOGLE_APPLICATION_CREDENTIALS names (a
 * service account's key, exchanged as a signed JWT; or a user's refresh
 * token), else the VM's metadata server (GCE_METADATA_HOST, else
 * metadata.google.internal), which every TPU VM has. Renewed five minutes
 * before it expires.
 */
#ifndef ACCELTRACE_GCS_TOKEN_H
#define ACCELTRACE_GCS_TOKEN_H

#include <time.h>

#include "store/store_http.h"

struct gcs_token {
	char access[4096];
	time_t expires;
	const char *source;	/* for messages */
};

/* A token, fetched now when there is none or it is about to expire;
 * 0 or -errno with the reason logged. */
int gcs_token_fresh(struct gcs_token *t, const struct store_http_limits *l);

#endif /* ACCELTRACE_GCS_TOKEN_H */
