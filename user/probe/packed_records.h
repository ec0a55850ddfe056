/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Packed records (struct ev_rt_call and struct ev_syscall in events.h): the
 * ring's form, and the open-call tables', only as long as used, unpacked
 * here into the full structs every reader takes.
 */
#ifndef ACCELTRACE_PROBE_PACKED_RECORDS_H
#define ACCELTRACE_PROBE_PACKED_RECORDS_H

#include <stddef.h>
#include <linux/types.h>

#include "acceltrace/events.h"

/*
 * Unpacks the runtime-call record @data (@size bytes, from the kernel or a
 * traced process's doing: trusted for nothing) into @out: values past
 * n_vals and payload bytes past payload_len 0, n_vals AT_MAX_FETCH_OPS.
 * A full struct unpacks to itself. -EINVAL when @size cannot hold the
 * record its header and counts describe, or a count is out of range;
 * @out is then untouched.
 */
int rt_record__unpack(struct ev_rt_call *out, const void *data, size_t size);

/*
 * Unpacks the syscall record @data (@size bytes) into @out, argbuf zero
 * past argbuf_len. -EINVAL when @size is short of SYSCALL_SIZE(argbuf_len)
 * or argbuf_len is past AT_ARGBUF; @out is then untouched.
 */
int sys_record__unpack(struct ev_syscall *out, const void *data, size_t size);

#endif /* ACCELTRACE_PROBE_PACKED_RECORDS_H */
