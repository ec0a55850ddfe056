// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's capabilities after start-up (privileges.h), through the raw
 * capget/capset and prctl calls: no libcap.
 */
#include <errno.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <unistd.h>

#define LOG_CONTEXT "daemon"
#include "lib/log.h"
#include "daemon/privileges.h"

/* Older headers than the kernels acceltrace supports (5.15). */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

#define CAP_ENTRY(c, w) { c, #c, w }

static const struct privilege kept[] = {
	CAP_ENTRY(CAP_BPF, "probes for processes that start later, detail turned on "
		  "and off, the kernel's tables read and written"),
	CAP_ENTRY(CAP_PERFMON, "uprobes and tracepoints attached through perf events"),
	/* perf_uprobe_event_init() asks for CAP_SYS_ADMIN again (CAP_PERFMON
	 * sufficed from 5.8 until a security fix restored the check): without
	 * it no uprobe reaches a process that starts after start-up. */
	CAP_ENTRY(CAP_SYS_ADMIN, "uprobes created through perf events for processes "
		  "and libraries that appear later (the kernel asks for it)"),
	CAP_ENTRY(CAP_SYS_PTRACE, "other users' processes: /proc/PID/maps, fd, root, io, "
		  "and their memory (PJRT tables, programs)"),
	CAP_ENTRY(CAP_CHECKPOINT_RESTORE, "a mapping's file (a library, a devtrace "
		  "buffer) opened through /proc/PID/map_files"),
	CAP_ENTRY(CAP_DAC_READ_SEARCH, "libraries and devtrace buffers readable by "
		  "their owner only"),
	CAP_ENTRY(CAP_DAC_OVERRIDE, "the in-process agent's control page of another "
		  "user's process, written to turn device detail on"),
	CAP_ENTRY(CAP_SYS_NICE, "normal CPU priority taken back from SCHED_IDLE when "
		  "starved (cpu_priority.h)"),
};

const struct privilege *privileges_kept(size_t *n)
{
	*n = sizeof(kept) / sizeof(kept[0]);
	return kept;
}

/* Whether the running kernel knows @cap (the bounding set answers). */
static bool kernel_knows(int cap)
{
	return prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0;
}

static uint64_t kept_caps(void)
{
	uint64_t mask = 0;

	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		mask |= 1ull << kept[i].cap;
	return mask;
}

static int capget_v3(struct __user_cap_data_struct data[2])
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };

	return syscall(SYS_capget, &hdr, data) ? -errno : 0;
}

int privileges_drop(uint64_t *kept_mask)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};
	uint64_t keep = kept_caps(), have;
	bool bounding = true;
	int err, cap;

	err = capget_v3(data);
	if (err)
		return err;
	have = data[0].permitted | (uint64_t)data[1].permitted << 32;
	/* Nothing executed from here on gains privileges (setuid, file caps). */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	/* The bounding set needs CAP_SETPCAP, dropped last (capset below).
	 * Without it whoever started the daemon chose the bounding set. */
	for (cap = 0; cap < 64 && kernel_knows(cap); cap++) {
		if ((keep >> cap) & 1 || !prctl(PR_CAPBSET_READ, cap, 0, 0, 0))
			continue;
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) {
			bounding = false;
			if (errno != EPERM)
				return -errno;
			break;
		}
	}
	if (!bounding)
		log_info("privileges: the bounding set stays as it was given "
			 "(no CAP_SETPCAP to lower it)");
	/* EINVAL: a kernel without ambient capabilities has none to clear. */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	keep &= have;
	data[0].effective = data[0].permitted = (uint32_t)keep;
	data[1].effective = data[1].permitted = (uint32_t)(keep >> 32);
	data[0].inheritable = data[1].inheritable = 0;
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	if (kept_mask)
		*kept_mask = keep;
	return 0;
}
