/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel's uprobe_multi link (Linux 6.6+): one link for many offsets of
 * one file, each with its own cookie, optionally only for one process. The
 * libbpf acceltrace builds against (1.1) has no attach call for it (1.3
 * added one), so the link is made with bpf(BPF_LINK_CREATE) directly.
 * A program attached this way must be loaded with the expected attach type
 * UPROBE_MULTI_ATTACH_TYPE, and can then not be attached as a perf uprobe:
 * the session decides at load time (kernel_features: FEAT_UPROBE_MULTI).
 */
#ifndef ACCELTRACE_UPROBE_MULTI_H
#define ACCELTRACE_UPROBE_MULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* enum bpf_attach_type's BPF_TRACE_UPROBE_MULTI (include/uapi/linux/bpf.h
 * since 6.6; the installed uapi header predates it). */
#define UPROBE_MULTI_ATTACH_TYPE 48
/* Most offsets in one link (the kernel's own limit is far higher; ours
 * bounds the arrays built per call). */
#define UPROBE_MULTI_MAX 1024

/*
 * Attaches program @prog_fd at @cnt @offsets of the file @path (entry, or
 * return with @ret), cookie @cookies[i] for offset i; @pid > 0: only that
 * process (the kernel then installs the breakpoints in no other). Returns
 * the link's fd (closing it detaches) or -errno.
 */
int uprobe_multi__attach(int prog_fd, const char *path, const uint64_t *offsets,
			 const uint64_t *cookies, uint32_t cnt, bool ret, int pid);

/*
 * Whether this kernel makes uprobe_multi links: loads a trivial program of
 * that attach type and links it to a file nobody maps. 0 when it does, or
 * -errno; @detail says what was tried or why not. ACCELTRACE_NO_UPROBE_MULTI=1
 * in the environment says no (-EPERM) without trying: tests force the
 * per-probe fallback with it.
 */
int uprobe_multi__try(char *detail, size_t len);

#endif /* ACCELTRACE_UPROBE_MULTI_H */
