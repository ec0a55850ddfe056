/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A compiled program of the simulated device: a module name and a list of
 * ops, each with a category, a duration, flops and bytes. Programs arrive as
 * HLO-like text (docs/simulator.md, "Programs"): the first line is
 * `HloModule <name>`, and every line with `sim_ns=` is an op named by its
 * `%name`, whose category comes from the opcode prefix of the name
 * (convolution.1, fusion.2, all-reduce.3, infeed.0, outfeed.4, ...).
 */
#ifndef ACCELTRACE_SIM_PROGRAM_H
#define ACCELTRACE_SIM_PROGRAM_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#define SIM_MAX_CORES 16
#define SIM_MAX_OPS 32
#define SIM_NAME_LEN 48

struct sim_op {
	char name[SIM_NAME_LEN];
	int category;			/* enum devtrace_category */
	uint64_t duration_ns;
	uint64_t flops;
	uint64_t bytes;
	__u32 name_id[SIM_MAX_CORES];	/* per core devtrace name ids */
};

struct sim_program {
	char module[SIM_NAME_LEN];
	int nops;
	struct sim_op ops[SIM_MAX_OPS];
	uint64_t output_bytes;		/* per device */
	__u32 module_name_id[SIM_MAX_CORES];
	uint64_t exec_count[SIM_MAX_CORES];	/* device step numbers */
};

/* Parses `code`; returns 0 or -EINVAL with a reason in `err`. */
int sim_program_parse(const char *code, size_t len, struct sim_program *p,
		      char *err, size_t err_len);
/* "convolution", "fusion", ... for an enum devtrace_category. */
const char *sim_category_name(int category);

#endif /* ACCELTRACE_SIM_PROGRAM_H */
