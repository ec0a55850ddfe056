// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ProfilerService's requests (profiler_service/): what anyone who
 * reaches the daemon's gRPC port may send. The first byte picks the
 * method, the rest is the message. A Profile that is accepted must name a
 * session and a host that are safe as one path component each, and a
 * normalised absolute root beneath the logdir; the old-client retry must
 * never read past the message.
 */
#include "fuzz_input.h"
#include "output/xprof_logdir.h"
#include "profiler_service/profiler_service.h"

static const char *const paths[] = { PROFILER_PATH_PROFILE, PROFILER_PATH_TERMINATE,
				     PROFILER_PATH_MONITOR, "/x.Y/Z" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct profiler_service *ps;
	struct profiler_request rq;
	char why[PROFILER_MAX_STATUS];
	enum grpc_status st;
	uint8_t *copy;

	if (!ps) {
		struct profiler_service_config cfg = { .sz = sizeof(cfg),
			.logdir = "/var/lib/acceltrace/logs", .roots = "/srv/profiles",
			.hostname = "fuzzhost", .max_duration_ns = 600000000000ull };

		ps = profiler_service__new(&cfg);
		if (!ps)
			abort();
	}
	if (!size || size > GRPC_SERVER_MAX_MESSAGE + 1)
		return 0;
	/* The message alone, in a buffer of its own size (ASan sees overreads). */
	copy = malloc(size - 1 ? size - 1 : 1);
	memcpy(copy, data + 1, size - 1);
	st = profiler_service__parse(ps, paths[data[0] % 4], copy, size - 1,
				     1700000000000000000ull, &rq, why, sizeof(why));
	if (!memchr(why, 0, sizeof(why)))
		abort();
	if (st == GRPC_STATUS_OK && rq.method == PROFILER_PROFILE) {
		const struct profiler_profile *p = &rq.profile;

		if (!xprof_valid_name(p->session, sizeof(p->session), false) ||
		    !xprof_valid_name(p->host, sizeof(p->host), true))
			abort();	/* a name the logdir must not get */
		if (p->root[0] != '/' || strstr(p->root, "/../") || strstr(p->root, "/./") ||
		    strstr(p->root, "//"))
			abort();
		if (strncmp(p->root, "/var/lib/acceltrace/logs/", 25) &&
		    strncmp(p->root, "/srv/profiles", 13))
			abort();	/* outside every allowed root */
		if (!p->duration_ns || p->duration_ns > 600000000000ull)
			abort();
	}
	if (st == GRPC_STATUS_OK && rq.method == PROFILER_TERMINATE && rq.session[0] &&
	    !xprof_valid_name(rq.session, sizeof(rq.session), false))
		abort();
	free(copy);
	return 0;
}
