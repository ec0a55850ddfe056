/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ProfilerService's methods without the network and without the
 * daemon: a request's bytes (from grpc_server.h's calls) decoded with
 * protobuf-c, bounded and checked, and turned into a plain request the
 * daemon acts on; the responses encoded. Everything here comes from
 * whoever reaches the port: each name becomes one path component or is
 * refused, a repository_root must lie under the daemon's logdir (or a
 * configured root) and is opened confined, never through a symbolic link.
 */
#ifndef ACCELTRACE_PROFILER_SERVICE_H
#define ACCELTRACE_PROFILER_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler_service/grpc_server.h"
#include "output/xprof_logdir.h"

#define PROFILER_PATH_PROFILE "/tensorflow.ProfilerService/Profile"
#define PROFILER_PATH_TERMINATE "/tensorflow.ProfilerService/Terminate"
#define PROFILER_PATH_MONITOR "/tensorflow.ProfilerService/Monitor"

#define PROFILER_MAX_PATH 1024		/* a repository_root's bytes */
#define PROFILER_MAX_HOST 128		/* a host_name's bytes */
#define PROFILER_MAX_REPEATED 64	/* tools, tool_options, advanced_configuration */
#define PROFILER_MAX_ROOTS 16		/* profiler-roots entries */
#define PROFILER_MAX_MONITOR_MS 60000u	/* a Monitor's wait */
#define PROFILER_MAX_STATUS 512		/* an answer's grpc-message */

struct profiler_service_config {
	size_t sz;
	const char *logdir;		/* the daemon's: roots under it are allowed */
	const char *roots;		/* more allowed roots, ':'-separated; NULL: none */
	const char *hostname;		/* the default host_name; NULL: gethostname() */
	uint64_t max_duration_ns;	/* the longest Profile (max-trigger-duration) */
};

enum profiler_method {
	PROFILER_PROFILE,
	PROFILER_TERMINATE,
	PROFILER_MONITOR,
};

struct profiler_profile {
	uint64_t duration_ns;
	uint64_t start_realtime_ns;	/* 0: now */
	bool late;			/* its start had passed: now instead */
	bool full_detail;		/* host_tracer_level >= 2 */
	char session[XPROF_MAX_SESSION];
	char host[PROFILER_MAX_HOST];
	char root[PROFILER_MAX_PATH];	/* normalised, absolute */
	size_t base;			/* which allowed root holds it */
	char client[48];		/* who asked (grpc_call__client), set by the caller */
	/* What was asked and is not done, "" or "a, b, c". */
	char not_honoured[PROFILER_MAX_STATUS - 64];
};

struct profiler_request {
	enum profiler_method method;
	struct profiler_profile profile;	/* PROFILER_PROFILE */
	char session[XPROF_MAX_SESSION];	/* PROFILER_TERMINATE ("": any) */
	uint64_t monitor_ns;			/* PROFILER_MONITOR, capped */
	int monitor_level;			/* 1 or 2 */
	bool monitor_timestamp;
};

struct profiler_service;

/* NULL and errno (-EINVAL: a root of profiler-roots is not an absolute,
 * normalised path), the reason logged. */
struct profiler_service *profiler_service__new(const struct profiler_service_config *cfg);
void profiler_service__free(struct profiler_service *ps);

/*
 * Decodes and checks a call's message (@path its :path) into @rq, at
 * @now_realtime_ns. GRPC_STATUS_OK, or the status to answer with and
 * @why saying what was wrong: UNIMPLEMENTED (an unknown method),
 * INVALID_ARGUMENT (undecodable, a bad duration, name or path),
 * PERMISSION_DENIED (a root outside the allowed ones).
 */
enum grpc_status profiler_service__parse(const struct profiler_service *ps, const char *path,
					 const uint8_t *msg, size_t len,
					 uint64_t now_realtime_ns, struct profiler_request *rq,
					 char *why, size_t why_len);

/*
 * Opens (creating what is missing, mode 0750) the profile's root beneath
 * its allowed root, never through a symbolic link, and checks that its
 * session directory is none either: an O_DIRECTORY fd, or -errno with
 * *code and @why set (PERMISSION_DENIED for a symbolic link or an escape,
 * FAILED_PRECONDITION for a file where a directory goes, INTERNAL else).
 */
int profiler_service__open_root(const struct profiler_service *ps,
				const struct profiler_profile *p, enum grpc_status *code,
				char *why, size_t why_len);

/* The status a capture's write error answers with. */
enum grpc_status profiler_service__write_status(int err);

/* ProfileResponse{empty_trace}, TerminateResponse{}, MonitorResponse{data}:
 * malloc'd into *out (free it); 0 or -ENOMEM. */
int profiler_service__profile_response(bool empty_trace, uint8_t **out, size_t *len);
int profiler_service__terminate_response(uint8_t **out, size_t *len);
int profiler_service__monitor_response(const char *text, uint8_t **out, size_t *len);

/* Normalises an absolute path: no "." or ".." component (-EINVAL), no
 * repeated or trailing '/'; -ENAMETOOLONG when it does not fit. */
int profiler_path_normalise(const char *in, char *out, size_t len);

#endif /* ACCELTRACE_PROFILER_SERVICE_H */
