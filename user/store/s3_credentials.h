/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * S3's credentials and region, found as AWS's own tools find them: the
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN variables,
 * then the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, else
 * ~/.aws/credentials; profile AWS_PROFILE, else "default"), then the
 * instance's role through IMDSv2 (AWS_EC2_METADATA_SERVICE_ENDPOINT, else
 * http://169.254.169.254; off with AWS_EC2_METADATA_DISABLED=true),
 * renewed before they expire. The region: AWS_REGION, AWS_DEFAULT_REGION,
 * the config file's (AWS_CONFIG_FILE, else ~/.aws/config), else us-east-1.
 */
#ifndef ACCELTRACE_S3_CREDENTIALS_H
#define ACCELTRACE_S3_CREDENTIALS_H

#include <stdbool.h>
#include <time.h>

#include "store/store_http.h"

struct s3_credentials {
	char key_id[128];
	char secret[128];
	char token[4096];	/* "" without a session token */
	char region[64];
	time_t expires;		/* 0: never (variables, files) */
	const char *source;	/* where they came from, for messages */
};

/* 0, or -errno with the reason logged (none found, a file unreadable,
 * the metadata server's refusal). */
int s3_credentials_find(struct s3_credentials *c, const struct store_http_limits *l);
/* The same again when instance credentials expire within five minutes. */
int s3_credentials_fresh(struct s3_credentials *c, const struct store_http_limits *l);

#endif /* ACCELTRACE_S3_CREDENTIALS_H */
