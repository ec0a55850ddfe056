// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A dead process's entries dropped from a BPF hash map
 * (probe/map_walk.c): over a table several batches long, every entry of
 * that process goes and every other stays, matched by key or by value,
 * with the caller's count of entries kept in step; and each of its two
 * ways on its own (the batches must work here, Linux 5.6+; the key-by-key
 * walk is what older kernels get).
 */
#include <errno.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "test.h"
#include "probe/probe_session_internal.h"

/* As the live-allocation table's: (pid, address) -> 40 bytes. */
struct walk_key {
	__u32 pid;
	__u32 pad;
	__u64 addr;
};

#define ENTRIES 50000	/* ~3 batches of 1 MiB of keys and values */
#define PIDS 5

static int make_table(void)
{
	struct { __u64 v[5]; } val = {};
	struct walk_key k = {};
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "walk_test", sizeof(k), sizeof(val),
				ENTRIES, NULL);

	if (fd < 0)
		return -errno;
	for (int i = 0; i < ENTRIES; i++) {
		k.pid = 100 + i % PIDS;
		k.addr = 0x1000ull * i;
		val.v[0] = k.pid;
		if (bpf_map_update_elem(fd, &k, &val, BPF_NOEXIST))
			return -errno;
	}
	return fd;
}

static int count_pid(int fd, __u32 pid)
{
	struct walk_key k, next;
	int n = 0;
	bool have = !bpf_map_get_next_key(fd, NULL, &k);

	while (have) {
		have = !bpf_map_get_next_key(fd, &k, &next);
		n += k.pid == pid;
		k = next;
	}
	return n;
}

/* The value's first word names the process (as an open call's header). */
static bool value_pid_is(const void *key, const union map_value *val, uint32_t pid)
{
	(void)key;
	return *(const __u64 *)val == pid;
}

int main(void)
{
	__u64 in_hash = ENTRIES;
	int fd, n;

	test_require_root("creates BPF maps");
	fd = make_table();
	if (!ASSERT_GE(fd, 0, "a table of 50,000 entries"))
		return test_exit();

	n = map_delete_matching(fd, sizeof(struct walk_key), 0, map_key_pid_is, 102, &in_hash);
	ASSERT_EQ(n, ENTRIES / PIDS, "every entry of the process, by key");
	ASSERT_EQ(in_hash, ENTRIES - ENTRIES / PIDS, "each counted off");
	ASSERT_EQ(count_pid(fd, 102), 0, "none of it left");
	for (__u32 p = 100; p < 100 + PIDS; p++)
		if (p != 102)
			ASSERT_EQ(count_pid(fd, p), ENTRIES / PIDS, "the others' all kept");

	n = map_delete_matching(fd, sizeof(struct walk_key), sizeof(__u64), value_pid_is, 104,
				NULL);
	ASSERT_EQ(n, ENTRIES / PIDS, "every entry of another, by value");
	ASSERT_EQ(count_pid(fd, 104), 0, "none of it left");
	ASSERT_EQ(count_pid(fd, 100), ENTRIES / PIDS, "the others' kept");

	ASSERT_EQ(map_delete_matching(fd, sizeof(struct walk_key), 0, map_key_pid_is, 102, NULL),
		  0, "a second walk finds nothing");

	/* Each way alone: not one falling back on the other unseen. */
	n = -1;
	ASSERT_OK(map_delete_batched(fd, sizeof(struct walk_key), 0, map_key_pid_is, 100, NULL,
				     &n), "batches work here");
	ASSERT_EQ(n, ENTRIES / PIDS, "in batches: every entry of the process");
	ASSERT_EQ(count_pid(fd, 100), 0, "none of it left");
	n = map_delete_key_by_key(fd, sizeof(struct walk_key), sizeof(__u64), value_pid_is, 101,
				  NULL);
	ASSERT_EQ(n, ENTRIES / PIDS, "key by key: every entry of the process");
	ASSERT_EQ(count_pid(fd, 101), 0, "none of it left");
	ASSERT_EQ(count_pid(fd, 103), ENTRIES / PIDS, "the last one's all kept");
	ASSERT_EQ(map_delete_matching(fd, 65, 0, map_key_pid_is, 100, NULL), -EINVAL,
		  "a key longer than the walk holds refused");
	close(fd);
	return test_exit();
}
