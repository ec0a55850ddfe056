// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "probe/uprobe_multi.h"

/*
 * union bpf_attr's link_create as the kernel reads it for uprobe_multi
 * (include/uapi/linux/bpf.h, 6.6+): prog_fd, target_fd, attach_type and
 * flags, then the attach-type union at offset 16, 8-aligned. Checked
 * against this kernel's BTF (bpftool btf dump file /sys/kernel/btf/vmlinux).
 */
struct link_create_uprobe_multi {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t multi_flags;	/* BPF_F_UPROBE_MULTI_RETURN */
	uint32_t pid;
};
_Static_assert(sizeof(struct link_create_uprobe_multi) <= sizeof(union bpf_attr),
	       "bpf_attr holds the uprobe_multi fields");
_Static_assert(__builtin_offsetof(struct link_create_uprobe_multi, path) == 16,
	       "the attach-type union starts at 16");
_Static_assert(__builtin_offsetof(struct link_create_uprobe_multi, pid) == 56,
	       "uprobe_multi.pid as the kernel has it");

#define UPROBE_MULTI_RETURN 1u	/* BPF_F_UPROBE_MULTI_RETURN */

int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offsets,
			 const uint64_t *cookies, uint32_t cnt, bool ret, int pid)
{
	union bpf_attr attr;
	struct link_create_uprobe_multi *lc = (void *)&attr;
	int fd;

	if (!cnt || cnt > UPROBE_MULTI_MAX)
		return -EINVAL;
	memset(&attr, 0, sizeof(attr));
	lc->prog_fd = prog_fd;
	lc->attach_type = UPROBE_MULTI_ATTACH_TYPE;
	lc->path = (uint64_t)(uintptr_t)path;
	lc->offsets = (uint64_t)(uintptr_t)offsets;
	lc->cookies = (uint64_t)(uintptr_t)cookies;
	lc->cnt = cnt;
	lc->multi_flags = ret ? UPROBE_MULTI_RETURN : 0;
	lc->pid = pid > 0 ? (uint32_t)pid : 0;
	fd = syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

int uprobe_multi__try(char *detail, size_t len)
{
	/* r0 = 0; exit */
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = UPROBE_MULTI_ATTACH_TYPE);
	const char *env = getenv("ACCELTRACE_NO_UPROBE_MULTI");
	uint64_t offset = 0, cookie = 0;
	char path[64];
	int prog = -1, file = -1, link, err;

	if (env && env[0] && strcmp(env, "0")) {
		snprintf(detail, len, "turned off by ACCELTRACE_NO_UPROBE_MULTI");
		return -EPERM;
	}
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "at_uprobe_multi", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), &opts);
	if (prog < 0) {
		err = -errno;
		snprintf(detail, len, "a uprobe_multi program was refused: %s", strerror(-err));
		return err;
	}
	/* A one-byte file of acceltrace's own that no process maps: the link
	 * installs no breakpoint anywhere. */
	file = memfd_create("acceltrace-uprobe-multi", MFD_CLOEXEC);
	if (file < 0 || write(file, "\xc3", 1) != 1) {
		err = -errno;
		snprintf(detail, len, "no file to try it on: %s", strerror(-err));
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", file);
	link = uprobe_multi__attach(prog, path, &offset, &cookie, 1, false, getpid());
	if (link < 0) {
		err = link;
		snprintf(detail, len, "the kernel makes no uprobe_multi link: %s (Linux 6.6+)",
			 strerror(-err));
		goto out;
	}
	close(link);
	err = 0;
	snprintf(detail, len, "one link for many offsets, with a pid filter");
out:
	if (file >= 0)
		close(file);
	close(prog);
	return err;
}
