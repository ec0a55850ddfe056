# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Unit, BPF and CLI tests. Each test is one executable: exit 0 pass, 1 fail,
# 77 skip. C tests are tests/<dir>/test_*.c linked with libacceltrace;
# scripts are tests/<dir>/test_*.sh and run as they are.

TEST_C_SRCS := $(wildcard tests/unit/test_*.c tests/bpf/test_*.c)
TEST_C_BINS := $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(TEST_C_SRCS))
TEST_SCRIPTS := $(wildcard tests/cli/test_*.sh tests/unit/test_*.sh)

$(OUTPUT)/tests/%: tests/%.c tests/lib/test.h $(LIBACCELTRACE) $(SKEL_HEADERS) | $(DEPS_STAMP)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/lib -MF $@.d $< $(LIBACCELTRACE) $(LIBS) -o $@

TESTS += $(TEST_C_BINS) $(TEST_SCRIPTS)

-include $(wildcard $(OUTPUT)/tests/*/*.d)
