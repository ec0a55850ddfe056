/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's settings: a configuration file of "key = value" lines ('#'
 * starts a comment) and flags with the same names (--flight-recorder 30s
 * is "flight-recorder = 30s"). Flags win over the file, also when SIGHUP
 * reloads it. docs/daemon.md lists every key.
 */
#ifndef ACCELTRACE_DAEMON_CONFIG_H
#define ACCELTRACE_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/rules.h"
#include "devmem/devmem_timeline.h"

#define DAEMON_DEFAULT_LISTEN "127.0.0.1:9464"
/* The ProfilerService (XProf's "Capture Profile"): docs/profiler-service.md. */
#define DAEMON_DEFAULT_PROFILER_LISTEN "127.0.0.1:8466"
#define DAEMON_DEFAULT_SOCKET "/run/acceltrace/daemon.sock"
#define DAEMON_DEFAULT_LOGDIR "/var/lib/acceltrace/logs"
#define DAEMON_DEFAULT_FLIGHT_NS (60 * 1000000000ull)
#define DAEMON_PATH_MAX 1024

struct daemon_config {
	char listen[128];		/* ADDR:PORT, or "off" */
	char profiler_listen[128];	/* ADDR:PORT (port 0: any), or "off" */
	char profiler_roots[DAEMON_PATH_MAX];	/* more repository roots, ':'-separated */
	char socket[DAEMON_PATH_MAX];
	char logdir[DAEMON_PATH_MAX];
	char textfile[DAEMON_PATH_MAX];	/* node_exporter textfile; "": none */
	/* Watch only processes inside this cgroup v2 directory's subtree
	 * (absolute, or relative to the cgroup2 mount); "": the whole host. */
	char cgroup[DAEMON_PATH_MAX];
	uint64_t textfile_interval_ns;
	uint64_t flight_recorder_ns;	/* the last N seconds kept */
	uint64_t max_events;		/* the flight recorder's span budget */
	uint64_t grace_ns;		/* after a capture's stop */
	uint64_t max_trigger_ns;	/* the longest window after a trigger */
	/* ProfilerService quotas, per logdir and client and hour
	 * (profile_quota.h); 0: none. */
	uint64_t profile_quota_captures;
	uint64_t profile_quota_bytes;
	uint64_t profile_quota_detail_ns;
	uint64_t rule_duration_ns;	/* the window after a rule's trigger */
	/* Detail: full always, or (sampled, the default) in slices of
	 * detail_slice_ns every detail_interval_ns and in a trigger's window
	 * after it; core probes run always. */
	bool detail_full;
	uint64_t detail_interval_ns;
	uint64_t detail_slice_ns;
	/* cpu-priority: idle (SCHED_IDLE while the daemon keeps up,
	 * cpu_priority.h) or normal. */
	bool cpu_idle;
	struct rules_config rules;
	/* memory-timeline-tiers: the device-memory timelines' resolution at
	 * each age, finest first (n 0: the timeline's defaults; for tests,
	 * which need short tiers: docs/daemon.md). */
	struct daemon_mem_tiers {
		struct devmem_tier t[DEVMEM_MAX_TIERS];
		uint32_t n;
	} mem_tiers;
	/* Keys given as flags (bit i: the i-th key): they win over the file. */
	uint64_t from_flags;
};

void daemon_config__defaults(struct daemon_config *c);
/*
 * Sets one key. @from_flag marks it as given on the command line. -ENOENT
 * for an unknown key, -EINVAL for a bad value; @err says which and why.
 */
int daemon_config__set(struct daemon_config *c, const char *key, const char *value,
		       bool from_flag, char *err, size_t err_len);
/*
 * Reads @path over @c's defaults, keeping what @flags set from the command
 * line: the new settings in @out only when the whole file is good, else
 * -errno with @err naming the file, line and problem.
 */
int daemon_config__load(const char *path, const struct daemon_config *flags,
			struct daemon_config *out, char *err, size_t err_len);
/* "ADDR:PORT" -> its parts; -EINVAL when malformed. */
/* The same, port 0 allowed when @any_port. */
int daemon_config__split_addr(const char *listen, char *addr, size_t addr_len,
			      uint16_t *port, bool any_port);
int daemon_config__split_listen(const char *listen, char *addr, size_t addr_len,
				uint16_t *port);
/* Every key, for --help and the docs' test. */
size_t daemon_config__num_keys(void);
const char *daemon_config__key(size_t i);

#endif /* ACCELTRACE_DAEMON_CONFIG_H */
