/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A process's container and Kubernetes pod, read from its cgroup path the
 * way container runtimes name their scopes: systemd's driver
 * ("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<UID>.slice/
 * cri-containerd-<ID>.scope", "docker-<ID>.scope", "crio-<ID>.scope",
 * "libpod-<ID>.scope") and cgroupfs' ("/kubepods/burstable/pod<UID>/<ID>",
 * "/docker/<ID>"). ID is 64 hex digits; UID a pod's UID, whose dashes
 * systemd spells as underscores.
 */
#ifndef ACCELTRACE_CGROUP_LABELS_H
#define ACCELTRACE_CGROUP_LABELS_H

struct cgroup_labels {
	char container[65];	/* "" outside a container */
	char pod[65];		/* "" outside a Kubernetes pod */
};

void cgroup_labels_parse(const char *cgroup_path, struct cgroup_labels *out);

#endif /* ACCELTRACE_CGROUP_LABELS_H */
