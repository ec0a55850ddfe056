// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Walks of the BPF side's hash maps for a dead process's entries: open
 * calls, device fds, device memory (probe_session_internal.h).
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>

#include "probe/probe_session_internal.h"

/*
 * Deletes every entry of @map_fd for which @match(key, value, pid) says yes
 * (the value is read only when @val_size is not 0), counting each off
 * *@in_hash when set. The next key is taken before a delete: a deleted key
 * cannot be a cursor.
 */
int map_delete_matching(int map_fd, size_t key_size, size_t val_size, map_match_fn match,
			uint32_t pid, __u64 *in_hash)
{
	char key[64], next[64];
	union map_value val;
	bool have, have_next;
	int deleted = 0;

	if (key_size > sizeof(key) || val_size > sizeof(val))
		return -EINVAL;
	have = !bpf_map_get_next_key(map_fd, NULL, key);
	while (have) {
		have_next = !bpf_map_get_next_key(map_fd, key, next);
		if ((!val_size || !bpf_map_lookup_elem(map_fd, key, &val)) &&
		    match(key, &val, pid) && !bpf_map_delete_elem(map_fd, key)) {
			deleted++;
			if (in_hash)
				__atomic_fetch_sub(in_hash, 1, __ATOMIC_SEQ_CST);
		}
		memcpy(key, next, key_size);
		have = have_next;
	}
	return deleted;
}

bool map_key_pid_is(const void *key, const union map_value *val, uint32_t pid)
{
	return *(const __u32 *)key == pid;
}
