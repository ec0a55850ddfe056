/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's run-time statistics of a BPF program, for the benchmarks
 * that read them (bpf_enable_stats(BPF_STATS_RUN_TIME) on).
 */
#ifndef ACCELTRACE_BENCH_BPF_H
#define ACCELTRACE_BENCH_BPF_H

#include <stdint.h>
#include <bpf/bpf.h>

/* @fd's total run time and runs so far; zeros when unreadable. */
static inline void bench_prog_stats(int fd, uint64_t *ns, uint64_t *cnt)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	*ns = *cnt = 0;
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)) {
		*ns = info.run_time_ns;
		*cnt = info.run_cnt;
	}
}

#endif /* ACCELTRACE_BENCH_BPF_H */
