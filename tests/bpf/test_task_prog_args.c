// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The task programs read only the tracepoint arguments every kernel
 * acceltrace supports (docs/build.md: 5.15) passes: sched_switch's
 * (preempt, prev, next), without the prev_state added in 5.18, and
 * sched_process_exit's task, without the group_dead added in 6.16. A
 * program that reads an argument the running kernel lacks does not load
 * (tp_btf: the verifier checks the prototype) or attach (raw_tp: the
 * context is checked against the argument count), so this is checked on
 * the compiled object, whatever the kernel running the test.
 *
 * Each program's instructions are walked in order, following the registers
 * that hold the context pointer (r1 at entry, and its copies), and the
 * highest offset loaded from it is compared with the last argument allowed.
 */
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

#include "test.h"
#include "acceltrace.skel.h"

/* The highest context offset @prog loads from, or -1 when none. */
static int max_ctx_offset(const struct bpf_program *prog)
{
	const struct bpf_insn *insns = bpf_program__insns(prog);
	size_t n = bpf_program__insn_cnt(prog);
	bool ctx[11] = { [1] = true };
	int max = -1;

	for (size_t i = 0; i < n; i++) {
		const struct bpf_insn *in = &insns[i];
		__u8 cls = BPF_CLASS(in->code);

		if (cls == BPF_LDX && ctx[in->src_reg] && in->off > max)
			max = in->off;
		if (cls == BPF_JMP && BPF_OP(in->code) == BPF_CALL) {
			for (int r = 0; r <= 5; r++)
				ctx[r] = false;	/* clobbered by the call */
			continue;
		}
		if (cls == BPF_ALU64 && BPF_OP(in->code) == BPF_MOV && BPF_SRC(in->code) == BPF_X &&
		    in->off == 0) {
			ctx[in->dst_reg] = ctx[in->src_reg];
			continue;
		}
		/* Any other write to a register ends its life as the context. */
		if (cls == BPF_LDX || cls == BPF_ALU || cls == BPF_ALU64 ||
		    (cls == BPF_LD && in->code == (BPF_LD | BPF_IMM | BPF_DW)))
			ctx[in->dst_reg] = false;
		if (cls == BPF_LD && in->code == (BPF_LD | BPF_IMM | BPF_DW))
			i++;	/* the second half of a 64-bit immediate */
	}
	return max;
}

static void check(struct acceltrace *skel, const char *name, int last_arg)
{
	const struct bpf_program *prog = bpf_object__find_program_by_name(skel->obj, name);
	char what[128];
	int max;

	if (!ASSERT_OK_PTR(prog, name))
		return;
	max = max_ctx_offset(prog);
	snprintf(what, sizeof(what), "%s reads arguments 0..%d only (highest offset %d)", name,
		 last_arg, max);
	ASSERT_TRUE(max >= 0 && max <= last_arg * 8, what);
}

int main(void)
{
	struct acceltrace *skel = acceltrace__open();

	if (!ASSERT_OK_PTR(skel, "open the object (nothing loaded)"))
		return test_exit();
	for (int f = 0; f < 2; f++) {
		const char *flavour = f ? "raw_tp" : "tp_btf";
		char name[64];

		snprintf(name, sizeof(name), "%s_switch", flavour);
		check(skel, name, 2);	/* preempt, prev, next */
		snprintf(name, sizeof(name), "%s_exit", flavour);
		check(skel, name, 0);	/* task */
	}
	acceltrace__destroy(skel);
	return test_exit();
}
