// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * analyze/: program names from HLO text, StableHLO (MLIR) and a serialized
 * HloModuleProto, and refusals of what carries no name; the dominant
 * program, with several programs, several processes and a tie.
 */
#include "test.h"
#include "alloc_fail.h"
#include "analyze/program_name.h"
#include "analyze/steps.h"

static void test_program_names(void)
{
	const char proto[] = "\x0a\x08jit_step\x12\x02xx";
	const char bad_proto[] = "\x0a\x03j\x01p";
	char name[64], tiny[4];

	ASSERT_TRUE(pjrt_program_module_name("HloModule jit_train_step, entry={}", 34,
					     name, sizeof(name)) &&
		    !strcmp(name, "jit_train_step"), "HLO text");
	ASSERT_TRUE(pjrt_program_module_name("#loc = x\nmodule @jit_f.1 attributes {}", 38,
					     name, sizeof(name)) &&
		    !strcmp(name, "jit_f.1"), "MLIR module, not at the start");
	ASSERT_TRUE(pjrt_program_module_name(proto, sizeof(proto) - 1, name, sizeof(name)) &&
		    !strcmp(name, "jit_step"), "HloModuleProto field 1");
	ASSERT_FALSE(pjrt_program_module_name(bad_proto, sizeof(bad_proto) - 1, name,
					      sizeof(name)), "proto name with a control byte");
	ASSERT_FALSE(pjrt_program_module_name("\x0a\x40short", 7, name, sizeof(name)),
		     "proto length past the bytes");
	ASSERT_FALSE(pjrt_program_module_name("ENTRY main { }", 14, name, sizeof(name)),
		     "no module name");
	ASSERT_FALSE(pjrt_program_module_name("HloModule ", 10, name, sizeof(name)),
		     "empty name");
	ASSERT_TRUE(pjrt_program_module_name("HloModule abcdefgh", 18, tiny, sizeof(tiny)) &&
		    !strcmp(tiny, "abc"), "truncated to the buffer");
	ASSERT_FALSE(pjrt_program_module_name("HloModule x", 11, name, 0), "no room at all");
}

static void test_dominant_program(void)
{
	/* Program 1: 3 x 10 in pid 1; program 2: 1 x 25 in pid 1 and 1 x 25
	 * in pid 2 (50 in all, but 25 per process): per (pid, program),
	 * program 1 leads. */
	struct step_candidate c[] = {
		{ .pid = 1, .program = 1, .start_ns = 0, .end_ns = 10 },
		{ .pid = 1, .program = 2, .start_ns = 10, .end_ns = 35 },
		{ .pid = 1, .program = 1, .start_ns = 40, .end_ns = 50 },
		{ .pid = 2, .program = 2, .start_ns = 0, .end_ns = 25 },
		{ .pid = 1, .program = 1, .start_ns = 60, .end_ns = 70 },
	};
	struct step_candidate tie[] = {
		{ .pid = 1, .program = 7, .start_ns = 0, .end_ns = 10 },
		{ .pid = 1, .program = 5, .start_ns = 10, .end_ns = 20 },
	};
	struct step_candidate zero[] = { { .pid = 1, .program = 3 } };
	/* Program 9 stalled: one execution of 1000 beside 8 of program 1
	 * (80 in all), and program 4 a helper run twice a step, 1 each. */
	struct step_candidate stalled[19];
	uint32_t p = 0;

	for (int i = 0; i < 8; i++) {
		stalled[i] = (struct step_candidate){ .pid = 1, .program = 1,
						      .start_ns = 100 * i, .end_ns = 100 * i + 10 };
		stalled[8 + i] = (struct step_candidate){ .pid = 1, .program = 4,
							  .start_ns = 100 * i + 20,
							  .end_ns = 100 * i + 21 };
	}
	stalled[16] = (struct step_candidate){ .pid = 1, .program = 4, .start_ns = 900,
					       .end_ns = 901 };
	stalled[17] = (struct step_candidate){ .pid = 1, .program = 4, .start_ns = 910,
					       .end_ns = 911 };
	stalled[18] = (struct step_candidate){ .pid = 1, .program = 9, .start_ns = 1000,
					       .end_ns = 2000 };
	ASSERT_OK(steps_dominant_program(stalled, 19, &p), "a stalled program");
	ASSERT_EQ(p, 1, "the step: not the stalled one-off, not the frequent helper");

	ASSERT_OK(steps_dominant_program(c, 5, &p), "several programs");
	ASSERT_EQ(p, 1, "most device time in one process");
	ASSERT_OK(steps_dominant_program(tie, 2, &p), "tie");
	ASSERT_EQ(p, 7, "a tie goes to the program executed first");
	ASSERT_EQ(steps_dominant_program(zero, 1, &p), -ENOENT, "no device time");
	ASSERT_EQ(steps_dominant_program(c, 0, &p), -ENOENT, "nothing");
	alloc_fail_at(0, true);
	ASSERT_EQ(steps_dominant_program(c, 5, &p), -ENOMEM, "out of memory");
	alloc_fail_off();
}

int main(void)
{
	test_program_names();
	test_dominant_program();
	return test_exit();
}
