/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the running kernel offers, found by trying each mechanism rather than
 * by reading version numbers, and which mechanism each kind of probe will use.
 */
#ifndef ACCELTRACE_KERNEL_FEATURES_H
#define ACCELTRACE_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

enum feature_id {
	FEAT_BTF,
	FEAT_RINGBUF,
	FEAT_TRACEFS,
	FEAT_SYSCALL_TP,
	FEAT_RAW_TP,
	FEAT_TP_BTF,
	FEAT_UPROBE,
	FEAT_FENTRY,
	FEAT_KPROBE,
	FEAT_IO_URING,
	FEAT_CAP_BPF,
	FEAT_CAP_PERFMON,
	FEAT_CAP_SYS_ADMIN,
	FEAT_MEMCG_ACCOUNTING,
	FEAT_UPROBE_MULTI,	/* one link for many uprobes (6.6+) */
	FEAT__COUNT,
};

struct feature_result {
	bool available;
	bool probed;		/* false: could not be tried (see detail) */
	char detail[192];
	int err;		/* a BPF mechanism's refusal: its errno, else 0 */
	char kernel_said[160];	/* the last line of the verifier's log, or "" */
};

struct features {
	struct feature_result r[FEAT__COUNT];
	bool tracefs_mounted_by_us;
};

/* The kinds of probe acceltrace places, each with its own fallback order. */
enum probe_class {
	PROBE_DRIVER,		/* the driver interface: device-node syscalls */
	PROBE_DRIVER_FUNCTIONS,	/* hooks inside driver code, where a pack names one */
	PROBE_RUNTIME,		/* runtime libraries: PJRT, libtpu, libcuda */
	PROBE_SCHED,		/* thread identity and states */
	PROBE_FILE_IO,		/* input threads' file reads */
	PROBE_IRQ,		/* device interrupts */
	PROBE__COUNT,
};

enum probe_mechanism {
	MECH_NONE,
	MECH_FENTRY,
	MECH_KPROBE,
	MECH_TP_BTF,
	MECH_RAW_TP,
	MECH_SYSCALL_TP,
	MECH_UPROBE,
};

struct probe_choice {
	enum probe_mechanism mech;
	/* Why this one: the better mechanisms that are missing. */
	char reason[192];
};

/*
 * Tries every feature. Mounts tracefs when it is missing and we may.
 * Returns 0; individual results say what failed.
 */
int features__probe(struct features *f);
/* Tries only what attaching probes needs; cheaper than a full probe. */
int features__probe_feature(struct features *f, enum feature_id id);

const char *feature_name(enum feature_id id);
const char *feature_key(enum feature_id id);
const char *probe_class_name(enum probe_class pc);
const char *probe_class_key(enum probe_class pc);
const char *probe_mechanism_name(enum probe_mechanism m);

struct probe_choice features__choose(const struct features *f,
				     enum probe_class pc);
/* Optional classes: acceltrace runs without them. */
bool probe_class_optional(enum probe_class pc);
/*
 * True when this process may load BPF programs and place probes (CAP_BPF
 * and CAP_PERFMON, or CAP_SYS_ADMIN); else false, @why saying what it
 * needs first ("needs root: ..."). A capget only: callers ask it before
 * any work.
 */
bool features__privileged(char *why, size_t len);
/* True when acceltrace can run; missing[] names what is not there. */
bool features__can_run(const struct features *f, char *missing, size_t len);

/*
 * How runtime uprobes are attached on this kernel: uprobe_multi links
 * (one per library file and program, for all the probes placed there at
 * once), or one perf uprobe per probe. Either way a `record --pid` of a few
 * processes attaches them for those processes only (pid-filtered: the
 * kernel installs no breakpoint in any other); @why says why this mode.
 */
enum runtime_attach_mode {
	RT_ATTACH_PERF_UPROBE,
	RT_ATTACH_UPROBE_MULTI,
};
enum runtime_attach_mode features__runtime_attach(const struct features *f,
						  char *why, size_t len);
const char *runtime_attach_mode_name(enum runtime_attach_mode m);

/* Ensures tracefs is reachable, mounting it where permitted. */
int features__ensure_tracefs(bool *mounted_by_us, char *where, size_t len);

#endif /* ACCELTRACE_KERNEL_FEATURES_H */
