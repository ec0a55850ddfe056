/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Destroying many BPF links at once. Each detach waits for an RCU grace
 * period in the kernel (30-40 ms here for tracepoints and uprobes), so
 * closing forty links one after another takes seconds; closed from several
 * threads, the waits overlap and the whole takes about one grace period.
 */
#ifndef ACCELTRACE_BPF_LINKS_H
#define ACCELTRACE_BPF_LINKS_H

#include <stddef.h>

struct bpf_link;

/* Destroys every non-NULL link and sets it to NULL. */
void bpf_links__destroy_all(struct bpf_link **links, size_t n);
/* The same, with links held as bare fds too (uprobe_multi's): closes
 * every fd >= 0 and sets it to -1, all in the same grace period. */
void bpf_links__destroy_mixed(struct bpf_link **links, size_t n_links, int *fds,
			      size_t n_fds);

#endif /* ACCELTRACE_BPF_LINKS_H */
