// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Walks of the BPF side's hash maps for a dead process's entries: open
 * calls, device fds, device memory (probe_session_internal.h); and the
 * one call that drops them all (probe_session__forget_pid).
 *
 * A walk reads the table in batches (BPF_MAP_LOOKUP_BATCH, Linux 5.6):
 * the live-allocation table may hold a million entries, which a key-by-key
 * walk reads in two million syscalls, a second of the daemon's loop at
 * each traced process's exit. Where the kernel has no batches, the walk
 * goes key by key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "probe/probe_session.h"
#include "probe/probe_session_internal.h"

/* Bytes of keys and values one batch reads at most. */
#define WALK_BATCH_BYTES (1u << 20)

static void count_off(__u64 *in_hash)
{
	if (in_hash)
		__atomic_fetch_sub(in_hash, 1, __ATOMIC_SEQ_CST);
}

static bool matches(const char *key, const char *val, size_t val_size, map_match_fn match,
		    uint32_t pid)
{
	union map_value v;

	if (val_size)
		memcpy(&v, val, val_size);
	return match(key, &v, pid);
}

/* The next key is taken before a delete: a deleted key cannot be a cursor. */
int map_delete_key_by_key(int map_fd, size_t key_size, size_t val_size, map_match_fn match,
			  uint32_t pid, __u64 *in_hash)
{
	char key[64], next[64];
	union map_value val;
	bool have, have_next;
	int deleted = 0;

	have = !bpf_map_get_next_key(map_fd, NULL, key);
	while (have) {
		have_next = !bpf_map_get_next_key(map_fd, key, next);
		if ((!val_size || !bpf_map_lookup_elem(map_fd, key, &val)) &&
		    match(key, &val, pid) && !bpf_map_delete_elem(map_fd, key)) {
			deleted++;
			count_off(in_hash);
		}
		memcpy(key, next, key_size);
		have = have_next;
	}
	return deleted;
}

/* The matching keys of one batch, packed at its start, go; a key another
 * CPU deleted first stops a batched delete: the rest go one by one. */
static int delete_keys(int map_fd, char *keys, size_t key_size, __u32 n, __u64 *in_hash)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 done = n;
	int deleted = 0;

	if (!n)
		return 0;
	if (!bpf_map_delete_batch(map_fd, keys, &done, &opts))
		done = n;
	else if (done > n)
		done = 0;
	deleted = (int)done;
	if (in_hash)
		__atomic_fetch_sub(in_hash, done, __ATOMIC_SEQ_CST);
	for (__u32 i = done; i < n; i++) {
		if (!bpf_map_delete_elem(map_fd, keys + (size_t)i * key_size)) {
			deleted++;
			count_off(in_hash);
		}
	}
	return deleted;
}

int map_delete_batched(int map_fd, size_t key_size, size_t val_size, map_match_fn match,
		       uint32_t pid, __u64 *in_hash, int *deleted_out)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info), batch, n, keep;
	__u64 in_token = 0, out_token = 0;
	char *keys = NULL, *vals = NULL;
	bool first = true, last = false;
	int deleted = 0, err = 0;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &info_len) || info.key_size != key_size ||
	    info.value_size < val_size) {
		err = -EINVAL;
		goto out;
	}
	batch = WALK_BATCH_BYTES / (info.key_size + info.value_size);
	if (batch > info.max_entries)
		batch = info.max_entries;
	if (!batch)
		batch = 1;
	keys = malloc((size_t)batch * info.key_size);
	vals = malloc((size_t)batch * info.value_size);
	if (!keys || !vals) {
		err = -ENOMEM;
		goto out;
	}
	while (!last) {
		n = batch;
		if (bpf_map_lookup_batch(map_fd, first ? NULL : &in_token, &out_token, keys, vals,
					 &n, &opts)) {
			/* ENOENT: the table's end, with n entries before it. */
			if (errno != ENOENT || n > batch) {
				err = -errno;
				goto out;
			}
			last = true;
		}
		first = false;
		in_token = out_token;
		keep = 0;
		for (__u32 i = 0; i < n; i++) {
			char *k = keys + (size_t)i * key_size;

			if (!matches(k, vals + (size_t)i * info.value_size, val_size, match, pid))
				continue;
			if (keep != i)
				memcpy(keys + (size_t)keep * key_size, k, key_size);
			keep++;
		}
		deleted += delete_keys(map_fd, keys, key_size, keep, in_hash);
	}
out:
	free(keys);
	free(vals);
	*deleted_out = deleted;
	return err;
}

/*
 * Deletes every entry of @map_fd for which @match(key, value, pid) says yes
 * (the value is read only when @val_size is not 0), counting each off
 * *@in_hash when set.
 */
int map_delete_matching(int map_fd, size_t key_size, size_t val_size, map_match_fn match,
			uint32_t pid, __u64 *in_hash)
{
	int deleted = 0;

	if (key_size > 64 || val_size > sizeof(union map_value))
		return -EINVAL;
	/* No batches here (before 5.6), or one failed: key by key, from the
	 * start (what went is not found again). */
	if (map_delete_batched(map_fd, key_size, val_size, match, pid, in_hash, &deleted))
		deleted += map_delete_key_by_key(map_fd, key_size, val_size, match, pid,
						 in_hash);
	return deleted;
}

bool map_key_pid_is(const void *key, const union map_value *val, uint32_t pid)
{
	return *(const __u32 *)key == pid;
}

int probe_session__forget_pid(struct probe_session *ps, uint32_t pid)
{
	int (*const forgets[])(struct probe_session *, uint32_t) = {
		probe_session__forget_pid_calls, probe_session__forget_pid_fds,
		probe_session__forget_pid_aggregates, probe_session__mem_forget_pid,
	};
	int err = 0;

	for (size_t i = 0; i < sizeof(forgets) / sizeof(forgets[0]); i++) {
		int e = forgets[i](ps, pid);

		if (e < 0 && !err)
			err = e;
	}
	return err;
}
