// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Device memory kept in the kernel (bpf/devmem.bpf.h): the per (pid, layer,
 * device) aggregates walked for the daemon's and record's samples, and a
 * dead process's entries dropped (its pid may come back as another
 * process, whose first free must not find this one's allocation).
 */
#include <errno.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probe/probe_session.h"
#include "probe/probe_session_internal.h"
#include "acceltrace.skel.h"

int probe_session__mem_for_each(struct probe_session *ps, probe_mem_agg_fn fn, void *ctx)
{
	int fd = bpf_map__fd(ps->skel->maps.mem_agg);
	struct at_mem_agg_key key, next;
	struct at_mem_agg agg;
	bool have = !bpf_map_get_next_key(fd, NULL, &key);
	int err;

	while (have) {
		/* The next key first: the entry may go (its process exited)
		 * between the two calls, and a gone key is no cursor. */
		bool have_next = !bpf_map_get_next_key(fd, &key, &next);

		if (!bpf_map_lookup_elem(fd, &key, &agg)) {
			err = fn(ctx, &key, &agg);
			if (err)
				return err;
		} else if (errno != ENOENT) {
			return -errno;
		}
		key = next;
		have = have_next;
	}
	return 0;
}

int probe_session__mem_proc(struct probe_session *ps, uint32_t pid, struct at_mem_proc *out)
{
	if (bpf_map_lookup_elem(bpf_map__fd(ps->skel->maps.mem_proc), &pid, out))
		return -errno;
	return 0;
}

/*
 * The live table is walked only for a process that holds entries in it
 * (its count says so: every entry is counted in and out), since that walk
 * reads the whole table. The context table's key is (pid, context): the
 * same shape as a live allocation's.
 */
int probe_session__mem_forget_pid(struct probe_session *ps, uint32_t pid)
{
	struct at_mem_proc proc;
	int n = 0;

	if (!probe_session__mem_proc(ps, pid, &proc) && proc.live)
		n += map_delete_matching(bpf_map__fd(ps->skel->maps.mem_live),
					 sizeof(struct at_mem_live_key), 0, map_key_pid_is, pid,
					 NULL);
	bpf_map_delete_elem(bpf_map__fd(ps->skel->maps.mem_proc), &pid);
	n += map_delete_matching(bpf_map__fd(ps->skel->maps.mem_agg),
				 sizeof(struct at_mem_agg_key), 0, map_key_pid_is, pid, NULL);
	n += map_delete_matching(bpf_map__fd(ps->skel->maps.mem_ctx_dev),
				 sizeof(struct at_mem_live_key), 0, map_key_pid_is, pid, NULL);
	return n;
}
