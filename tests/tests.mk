# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Module, BPF and CLI tests. Each test is one executable: exit 0 pass,
# 1 fail, 77 skip. Tests mirror the source folders: the tests of
# user/<folder>/ are tests/<folder>/test_*, those of bpf/ are tests/bpf/.
# C tests are linked with libacceltrace; scripts run as they are.
# (tests/e2e, tests/sim and tests/bench have makefiles of their own.)
# tests/user/ checks user/ as a whole (its layout rules). A test that needs
# more objects names them in TEST_EXTRA_OBJS (tests/sim/sim.mk does so for
# tests/devtrace/, which write buffers with the simulator's writer).
MODULE_TEST_DIRS := bpf user $(USER_DIRS)

TEST_C_SRCS := $(wildcard $(patsubst %,tests/%/test_*.c,$(MODULE_TEST_DIRS)))
TEST_C_BINS := $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(TEST_C_SRCS))
TEST_SCRIPTS := $(wildcard $(patsubst %,tests/%/test_*.sh,$(MODULE_TEST_DIRS)))

$(OUTPUT)/tests/%: tests/%.c tests/harness/test.h $(LIBACCELTRACE) $(SKEL_HEADERS) | $(DEPS_STAMP)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/harness $(TEST_EXTRA_CFLAGS) -MF $@.d $< $(TEST_EXTRA_OBJS) \
		$(LIBACCELTRACE) $(LIBS) -o $@

TESTS += $(TEST_C_BINS) $(TEST_SCRIPTS)
# tests/harness/: the runner (tests/run-tests.sh) checked on made-up tests.
TESTS += $(wildcard tests/harness/test_*.sh)
# tests/gpu/: scripts for a lent GPU machine (README there); make test
# checks that they run, on the CPU, and skip without a GPU.
TESTS += $(wildcard tests/gpu/test_*.sh)

-include $(wildcard $(OUTPUT)/tests/*/*.d)

# tests/agent/test_xspace_decode: the agent's own objects (the agent is a
# library of its own, not part of libacceltrace).
AGENT_TEST_OBJS := $(OUTPUT)/agent-obj/agent/xspace_decode.o \
	$(OUTPUT)/agent-obj/agent/tpu_buffers.o $(OUTPUT)/agent-obj/agent/name_index.o \
	$(OUTPUT)/agent-obj/agent/agent_files.o $(OUTPUT)/agent-obj/agent/agent_log.o
$(OUTPUT)/tests/agent/test_xspace_decode: $(AGENT_TEST_OBJS)
$(OUTPUT)/tests/agent/test_xspace_decode: TEST_EXTRA_OBJS := $(AGENT_TEST_OBJS)
