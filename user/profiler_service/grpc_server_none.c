// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stand-ins for grpc_server.h until the transport (branch `grpc`,
 * grpc_server.c on nghttp2) is merged: weak, so that its definitions win
 * when both are linked. Binding says ENOSYS and the daemon goes on without
 * the ProfilerService. Delete this file once grpc_server.c is in.
 */
#include <errno.h>
#include <stddef.h>

#include "profiler_service/grpc_server.h"

#define WEAK __attribute__((weak))

WEAK struct grpc_server *grpc_server__bind(const struct grpc_server_opts *opts)
{
	(void)opts;
	errno = ENOSYS;
	return NULL;
}

WEAK uint16_t grpc_server__port(const struct grpc_server *s)
{
	(void)s;
	return 0;
}

WEAK int grpc_server__serve(struct grpc_server *s)
{
	(void)s;
	return -ENOSYS;
}

WEAK int grpc_server__fd(const struct grpc_server *s)
{
	(void)s;
	return -1;
}

WEAK struct grpc_call *grpc_server__take(struct grpc_server *s)
{
	(void)s;
	return NULL;
}

WEAK void grpc_server__stop(struct grpc_server *s, const char *why)
{
	(void)s;
	(void)why;
}

WEAK const char *grpc_call__method(const struct grpc_call *c)
{
	(void)c;
	return "";
}

WEAK const uint8_t *grpc_call__message(const struct grpc_call *c, size_t *len)
{
	(void)c;
	*len = 0;
	return NULL;
}

WEAK const char *grpc_call__peer(const struct grpc_call *c)
{
	(void)c;
	return "";
}

WEAK uint64_t grpc_call__deadline_ns(const struct grpc_call *c)
{
	(void)c;
	return 0;
}

WEAK bool grpc_call__cancelled(const struct grpc_call *c)
{
	(void)c;
	return true;
}

WEAK void grpc_call__finish(struct grpc_call *c, enum grpc_status status, const char *message,
			    const uint8_t *response, size_t len)
{
	(void)c;
	(void)status;
	(void)message;
	(void)response;
	(void)len;
}
