# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# libFuzzer harnesses for every parser of outside input (tests/fuzz/README.md).
# Each tests/fuzz/fuzz_<name>.c is one harness, built with clang's
# -fsanitize=fuzzer,address,undefined against a copy of libacceltrace built
# the same way ($(OUTPUT)/fuzz/). Seeds are in tests/fuzz/corpus/<name>/.
#
#   make fuzz            every harness for FUZZ_SECONDS (default 600), one
#                        after another; FUZZ=name runs one
#   make test            every harness over its corpus, then FUZZ_SMOKE_SECONDS
#                        (default 5) of fuzzing: a crash fails the test
#   scripts/fuzz-campaign.sh   N minutes each, J at a time, a table of results
FUZZ_CC ?= clang
FUZZ_OUT := $(OUTPUT)/fuzz
FUZZ_SECONDS ?= 600
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
	$(WARNINGS) -Wno-unused-function -std=gnu11 -D_GNU_SOURCE \
	-Iinclude -Iuser -I$(OUTPUT) -Itests/fuzz -MMD -MP

FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(patsubst %,$(FUZZ_OUT)/fuzz_%,$(FUZZ_NAMES))
FUZZ_SMOKES := $(patsubst %,$(OUTPUT)/tests/fuzz/test_fuzz_%,$(FUZZ_NAMES))

# libacceltrace again, instrumented: the user/ sources the binary has.
FUZZ_LIB_OBJS := $(patsubst user/%.c,$(FUZZ_OUT)/obj/%.o,$(filter-out user/cli/main.c,$(USER_SRCS))) \
	$(patsubst $(OUTPUT)/%.pb-c.c,$(FUZZ_OUT)/obj/%.pb-c.o,$(PROTO_SRCS))
FUZZ_LIB := $(FUZZ_OUT)/libacceltrace-fuzz.a

$(FUZZ_OUT)/obj/%.o: user/%.c $(SKEL_HEADERS) | $(DEPS_STAMP) $(PROTO_HEADERS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_OUT)/obj/%.pb-c.o: $(OUTPUT)/%.pb-c.c | $(DEPS_STAMP)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) $(filter-out -Wextra,$(FUZZ_CFLAGS)) -c $< -o $@

$(FUZZ_LIB): $(FUZZ_LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(FUZZ_OUT)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_input.h $(FUZZ_LIB)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -MF $@.d $< $(FUZZ_EXTRA_OBJS) \
		$(FUZZ_LIB) $(LIBS) -o $@

# The agent is a library of its own (not in libacceltrace): its reader of a
# PJRT plugin's XSpace is linked in by name.
FUZZ_AGENT_OBJS := $(FUZZ_OUT)/obj/agent/xspace_decode.o
$(FUZZ_OUT)/fuzz_agent_xspace: $(FUZZ_AGENT_OBJS)
$(FUZZ_OUT)/fuzz_agent_xspace: FUZZ_EXTRA_OBJS := $(FUZZ_AGENT_OBJS)

# The smoke each harness is in make test: a script the runner can start.
$(OUTPUT)/tests/fuzz/test_fuzz_%: $(FUZZ_OUT)/fuzz_% tests/fuzz/fuzz.mk
	$(Q)mkdir -p $(dir $@)
	$(Q)printf '#!/bin/sh\n# make test: fuzz_%s over its corpus, then briefly.\nexec tests/fuzz/fuzz-run.sh --smoke %s\n' \
		$* $* >$@ && chmod +x $@

TESTS += $(FUZZ_SMOKES)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BINS)

# One harness (FUZZ=name) or all, each for FUZZ_SECONDS; new inputs go to
# $(FUZZ_OUT)/corpus/<name>, findings to $(FUZZ_OUT)/findings/<name>.
fuzz: $(if $(FUZZ),$(FUZZ_OUT)/fuzz_$(FUZZ),$(FUZZ_BINS))
	$(Q)for n in $(or $(FUZZ),$(FUZZ_NAMES)); do \
		OUTPUT=$(OUTPUT) tests/fuzz/fuzz-run.sh --seconds $(FUZZ_SECONDS) $$n || exit 1; done

-include $(wildcard $(FUZZ_OUT)/obj/*/*.d $(FUZZ_OUT)/obj/*.d $(FUZZ_OUT)/*.d)
