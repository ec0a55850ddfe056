// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Packed records, unpacked (see packed_records.h).
 */
#include <errno.h>
#include <string.h>

#include "probe/packed_records.h"

_Static_assert(offsetof(struct ev_rt_call, vals) == RT_CALL_HEAD,
	       "RT_CALL_HEAD is the packed record's head");
_Static_assert(RT_CALL_SIZE(AT_MAX_FETCH_OPS, AT_RT_PAYLOAD) == sizeof(struct ev_rt_call),
	       "a full record is the largest packed one");
_Static_assert(offsetof(struct ev_syscall, argbuf) == SYSCALL_HEAD,
	       "SYSCALL_HEAD is the packed syscall record's head");

int rt_record__unpack(struct ev_rt_call *out, const void *data, size_t size)
{
	struct ev_rt_call head;
	size_t n, len;

	if (size < RT_CALL_HEAD)
		return -EINVAL;
	memcpy(&head, data, RT_CALL_HEAD);
	n = head.n_vals;
	len = head.payload_len;
	if (n > AT_MAX_FETCH_OPS || len > AT_RT_PAYLOAD || size < RT_CALL_SIZE(n, len))
		return -EINVAL;
	/* Through a copy: @out may be @data (a full struct in place). */
	memset(head.vals, 0, sizeof(head.vals) + sizeof(head.payload));
	memcpy(head.vals, (const char *)data + RT_CALL_HEAD, n * sizeof(head.vals[0]));
	memcpy(head.payload, (const char *)data + RT_CALL_HEAD + n * sizeof(head.vals[0]), len);
	head.n_vals = AT_MAX_FETCH_OPS;
	*out = head;
	return 0;
}

int sys_record__unpack(struct ev_syscall *out, const void *data, size_t size)
{
	struct ev_syscall rec;

	if (size < SYSCALL_HEAD)
		return -EINVAL;
	memcpy(&rec, data, SYSCALL_HEAD);
	if (rec.argbuf_len > AT_ARGBUF || size < SYSCALL_SIZE(rec.argbuf_len))
		return -EINVAL;
	memset(rec.argbuf, 0, sizeof(rec.argbuf));
	memcpy(rec.argbuf, (const char *)data + SYSCALL_HEAD, rec.argbuf_len);
	*out = rec;
	return 0;
}
