// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which mechanism each probe class gets from a given set of kernel features,
 * and what acceltrace says is missing when it cannot run. The feature sets
 * are made by hand so every fallback step is exercised on any kernel.
 */
#include <string.h>

#include "test.h"
#include "probe/kernel_features.h"

static void give(struct features *f, enum feature_id id)
{
	f->r[id].available = true;
	f->r[id].probed = true;
}

static struct features everything(void)
{
	struct features f = {};

	for (enum feature_id id = 0; id < FEAT__COUNT; id++)
		give(&f, id);
	return f;
}

int main(void)
{
	struct features f;
	struct probe_choice c;
	char missing[512];

	/* A kernel with everything uses the richest mechanisms. */
	f = everything();
	ASSERT_EQ(features__choose(&f, PROBE_DRIVER).mech, MECH_SYSCALL_TP, "driver interface: syscall tracepoints");
	ASSERT_EQ(features__choose(&f, PROBE_DRIVER_FUNCTIONS).mech, MECH_FENTRY, "driver functions: fentry first");
	ASSERT_EQ(features__choose(&f, PROBE_SCHED).mech, MECH_TP_BTF, "sched: tp_btf first");
	ASSERT_EQ(features__choose(&f, PROBE_RUNTIME).mech, MECH_UPROBE, "runtime: uprobes");
	ASSERT_TRUE(features__can_run(&f, missing, sizeof(missing)), "can run");
	ASSERT_STREQ(missing, "", "nothing missing");

	/* Our CI kernels: no fentry, no kprobes. */
	f.r[FEAT_FENTRY].available = false;
	f.r[FEAT_KPROBE].available = false;
	c = features__choose(&f, PROBE_DRIVER_FUNCTIONS);
	ASSERT_EQ(c.mech, MECH_NONE, "no driver-function hooks");
	ASSERT_STRCONTAINS(c.reason, "fentry", "reason names fentry");
	ASSERT_STRCONTAINS(c.reason, "kprobes", "reason names kprobes");
	ASSERT_EQ(features__choose(&f, PROBE_DRIVER).mech, MECH_SYSCALL_TP, "driver interface unaffected");
	ASSERT_TRUE(features__can_run(&f, missing, sizeof(missing)), "still runs without them");

	/* fentry refused but kprobes present: kprobes for driver functions. */
	f = everything();
	f.r[FEAT_FENTRY].available = false;
	ASSERT_EQ(features__choose(&f, PROBE_DRIVER_FUNCTIONS).mech, MECH_KPROBE, "driver functions: kprobe second");

	/* No tracefs-based tracepoints and no BTF tracepoints. */
	f = everything();
	f.r[FEAT_SYSCALL_TP].available = false;
	f.r[FEAT_TP_BTF].available = false;
	f.r[FEAT_FENTRY].available = false;
	f.r[FEAT_KPROBE].available = false;
	ASSERT_EQ(features__choose(&f, PROBE_FILE_IO).mech, MECH_RAW_TP, "file I/O: raw_tp");
	ASSERT_EQ(features__choose(&f, PROBE_DRIVER).mech, MECH_RAW_TP, "driver: raw_tp");
	ASSERT_EQ(features__choose(&f, PROBE_SCHED).mech, MECH_RAW_TP, "sched: raw_tp");

	/* No uprobes and no privileges: cannot run, and says what is missing. */
	f = everything();
	f.r[FEAT_UPROBE].available = false;
	f.r[FEAT_CAP_BPF].available = false;
	f.r[FEAT_CAP_SYS_ADMIN].available = false;
	c = features__choose(&f, PROBE_RUNTIME);
	ASSERT_EQ(c.mech, MECH_NONE, "runtime: no mechanism");
	ASSERT_STRCONTAINS(c.reason, "uprobes", "runtime reason names uprobes");
	ASSERT_FALSE(features__can_run(&f, missing, sizeof(missing)), "cannot run");
	ASSERT_STRCONTAINS(missing, "CAP_BPF", "missing names CAP_BPF");
	/* Without the privilege every load is refused: only it is named,
	 * not the refusals that follow from it. */
	ASSERT_FALSE(strstr(missing, "uprobes"), "no privilege: only the privilege named");

	/* Privileged, no uprobes: the feature and the class it leaves bare. */
	f = everything();
	f.r[FEAT_UPROBE].available = false;
	ASSERT_FALSE(features__can_run(&f, missing, sizeof(missing)), "cannot run");
	ASSERT_STRCONTAINS(missing, "uprobes", "missing names uprobes");
	ASSERT_STRCONTAINS(missing, "runtime libraries", "missing names the probe class");
	return test_exit();
}
