# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The one entry point: dependencies, BPF objects, skeletons, the acceltrace
# binary, the simulator, tests, demo and benchmarks. Everything lands in
# $(OUTPUT). Quiet by default; V=1 prints the commands.

OUTPUT ?= build
CLANG ?= clang
CC ?= cc
AR ?= ar
BPFTOOL ?= bpftool
PROTOC_C ?= protoc-c
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64le/powerpc/' -e 's/riscv64/riscv/' -e 's/s390x/s390/')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s%s\n' "$(1)" "$(patsubst $(abspath $(OUTPUT))/%,%,$(2))" "$(if $(3), $(3))";
MAKEFLAGS += --no-print-directory
endif

# Warnings are errors in CI, so a warning cannot land; locally they warn.
ifneq ($(CI),)
WERROR := -Werror
endif

WARNINGS := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
CFLAGS ?= -g -O2
ALL_CFLAGS := $(CFLAGS) $(WARNINGS) $(WERROR) -std=gnu11 -D_GNU_SOURCE \
	-Iinclude -Iuser -I$(OUTPUT) -MMD -MP
ALL_LDFLAGS := $(LDFLAGS)
LIBS := -lbpf -lelf -lz -luring -lprotobuf-c -lmicrohttpd -lnghttp2 -lcurl -lcrypto -lpthread -lm

# -mcpu=v3: atomic exchange and compare-and-swap (Linux 5.12; acceltrace
# already needs 5.15 for bpf_get_attach_cookie).
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARNINGS) \
	-Wno-unused-function -Iinclude -Ibpf -I$(OUTPUT) -MMD -MP

.DELETE_ON_ERROR:
.DEFAULT_GOAL := all
.PHONY: all clean test demo demo-fleet deps

# ---------------------------------------------------------------- deps
# A fresh machine needs no manual step: the first build installs what is
# missing. The stamp is remade when the package list changes.
DEPS_STAMP := $(OUTPUT)/.deps-installed

$(DEPS_STAMP): scripts/install-deps.sh | $(OUTPUT)
	$(call msg,DEPS,checking build and test packages)
	$(Q)scripts/install-deps.sh
	$(Q)touch $@

deps: $(DEPS_STAMP)

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/user $(OUTPUT)/tests:
	$(Q)mkdir -p $@

# ---------------------------------------------------------------- BPF
# vmlinux.h comes from the build machine's kernel BTF: CO-RE relocates every
# field access against the running kernel's BTF at load time, so the header
# is only a type source (see docs/build.md).
$(OUTPUT)/vmlinux.h: | $(DEPS_STAMP) $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)if [ ! -r "$(VMLINUX_BTF)" ]; then \
		echo "error: no kernel BTF at $(VMLINUX_BTF); set VMLINUX_BTF=<file with BTF>" >&2; \
		exit 1; fi
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(OUTPUT)/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# Skeletons: each is one or more BPF objects statically linked into one.
# <name>_BPF lists the bpf/<file>.bpf.c files that make skeleton <name>.
BPF_SKELS := feature_probe acceltrace
feature_probe_BPF := feature_probe
acceltrace_BPF := acceltrace runtime syscalls task irq

define bpf_skel_rule
$(OUTPUT)/$(1).linked.o: $(patsubst %,$(OUTPUT)/bpf/%.bpf.o,$($(1)_BPF))
	$$(call msg,LINK-BPF,$$@)
	$(Q)$(BPFTOOL) gen object $$@ $$^
$(OUTPUT)/$(1).skel.h: $(OUTPUT)/$(1).linked.o
	$$(call msg,GEN-SKEL,$$@)
	$(Q)$(BPFTOOL) gen skeleton $$< name $(1) > $$@
endef
$(foreach s,$(BPF_SKELS),$(eval $(call bpf_skel_rule,$(s))))

SKEL_HEADERS := $(patsubst %,$(OUTPUT)/%.skel.h,$(BPF_SKELS))

# ---------------------------------------------------------------- user space
# user/ is one folder per concern (user/README.md); every folder's sources
# are found here, and each object lands under $(OUTPUT)/user/<folder>/.
USER_DIRS := $(patsubst user/%/,%,$(sort $(dir $(wildcard user/*/*.c user/*/*.proto))))

# Protobuf messages (user/<folder>/*.proto) compile with protoc-c into the
# build directory; every user object may include their headers.
PROTOS := $(wildcard user/*/*.proto)
PROTO_SRCS := $(patsubst %.proto,$(OUTPUT)/%.pb-c.c,$(notdir $(PROTOS)))
PROTO_HEADERS := $(PROTO_SRCS:.c=.h)
PROTO_OBJS := $(patsubst $(OUTPUT)/%.pb-c.c,$(OUTPUT)/user/%.pb-c.o,$(PROTO_SRCS))

vpath %.proto $(sort $(dir $(PROTOS)))
$(OUTPUT)/%.pb-c.c $(OUTPUT)/%.pb-c.h: %.proto | $(DEPS_STAMP) $(OUTPUT)
	$(call msg,PROTOC,$@)
	$(Q)$(PROTOC_C) --proto_path=$(dir $<) --c_out=$(OUTPUT) $<

# Generated sources are kept, not treated as intermediates and deleted.
.SECONDARY: $(PROTO_SRCS) $(PROTO_HEADERS)

$(OUTPUT)/user/%.pb-c.o: $(OUTPUT)/%.pb-c.c | $(OUTPUT)/user
	$(call msg,CC,$@)
	$(Q)$(CC) $(filter-out -Wextra,$(ALL_CFLAGS)) -c $< -o $@

# user/agent/ is not part of the binary: it is its own library (below).
USER_SRCS := $(filter-out user/agent/%,$(wildcard user/*/*.c))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS)) $(PROTO_OBJS)
LIB_OBJS := $(filter-out $(OUTPUT)/user/cli/main.o,$(USER_OBJS))
LIBACCELTRACE := $(OUTPUT)/libacceltrace.a

# Skeletons are included by probe/ only (the BPF session and feature
# detection): the edge makes them exist before those compiles, and -MMD
# records the real dependencies for rebuilds.
PROBE_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(wildcard user/probe/*.c))
$(PROBE_OBJS): $(SKEL_HEADERS)

$(OUTPUT)/user/%.o: user/%.c | $(DEPS_STAMP) $(OUTPUT)/user $(PROTO_HEADERS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIBACCELTRACE): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(OUTPUT)/acceltrace: $(OUTPUT)/user/cli/main.o $(LIBACCELTRACE)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) $^ $(LIBS) -o $@

# ---------------------------------------------------------------- agent
# The in-process agent (docs/agent.md): a shared library loaded into traced
# processes, sharing only include/acceltrace/ with the rest. Position
# independent, every symbol hidden but its entry points (agent.map), no
# undefined symbol left for the host process to supply (-z defs).
AGENT_SRCS := $(wildcard user/agent/*.c)
AGENT_OBJS := $(patsubst user/%.c,$(OUTPUT)/agent-obj/%.o,$(AGENT_SRCS))
AGENT_LIB := $(OUTPUT)/libacceltrace-agent.so

$(OUTPUT)/agent-obj/%.o: user/%.c | $(DEPS_STAMP) $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(AGENT_LIB): $(AGENT_OBJS) user/agent/agent.map
	$(call msg,LIB,$@)
	$(Q)$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,libacceltrace-agent.so \
		-Wl,--version-script=user/agent/agent.map -Wl,-z,defs \
		-o $@ $(AGENT_OBJS) -ldl -lpthread

all: $(OUTPUT)/acceltrace $(AGENT_LIB)

# ---------------------------------------------------------------- tests
# TESTS lists every test executable; tests/*.mk and tests/sim/*.mk add theirs.
TESTS :=
TEST_TIMEOUT ?= 300
include tests/tests.mk
-include tests/sim/sim.mk
-include tests/e2e/e2e.mk
# `make check-sanitize` (ASan+UBSan over the module tests) and `make fuzz`.
include tests/sanitize.mk
include tests/fuzz/fuzz.mk
# Benchmarks: `make bench` (tests/bench/bench.mk defines it).
-include tests/bench/bench.mk

# Tests find the binary and the build directory through the environment, so
# OUTPUT=elsewhere works for them too.
# Then the module tests again under ASan+UBSan (make check-sanitize, about
# a minute): both runs print their summary, and either failing fails. The
# sub-make has a line of its own, so `make -n test` runs no test.
TEST_FAILED := $(OUTPUT)/.test-failed
test: all $(TESTS)
	$(Q)rm -f $(TEST_FAILED)
	$(Q)OUTPUT=$(OUTPUT) ACCELTRACE=$(OUTPUT)/acceltrace TEST_LOG_DIR=$(OUTPUT)/test-logs \
		tests/run-tests.sh --timeout $(TEST_TIMEOUT) $(TESTS) || touch $(TEST_FAILED)
	@echo; echo "The module tests under ASan and UBSan (make check-sanitize):"
	$(Q)$(MAKE) check-sanitize || touch $(TEST_FAILED)
	$(Q)test ! -e $(TEST_FAILED)

# ---------------------------------------------------------------- install
# Man pages and shell completion are generated from the binary's own --help
# (scripts/gen-man.sh, scripts/gen-completion.sh), so they say what --help
# says. `make install` puts everything under $(DESTDIR)$(PREFIX); the agent
# goes to $(PREFIX)/lib/acceltrace/, where record looks for it from the
# binary ($(PREFIX)/bin/../lib/acceltrace/), so the two move together.
PREFIX ?= /usr/local
BINDIR := $(PREFIX)/bin
AGENTDIR := $(PREFIX)/lib/acceltrace
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/acceltrace
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
INSTALL ?= install

MAN_STAMP := $(OUTPUT)/man/.generated
COMPLETION := $(OUTPUT)/completion/acceltrace $(OUTPUT)/completion/_acceltrace
DOCS := README.md $(wildcard docs/*.md)

$(MAN_STAMP): $(OUTPUT)/acceltrace scripts/gen-man.sh
	$(call msg,GEN,$(OUTPUT)/man/)
	$(Q)rm -rf $(OUTPUT)/man && scripts/gen-man.sh $(OUTPUT)/acceltrace $(OUTPUT)/man
	$(Q)touch $@

$(COMPLETION) &: $(OUTPUT)/acceltrace scripts/gen-completion.sh
	$(call msg,GEN,$(OUTPUT)/completion/)
	$(Q)mkdir -p $(OUTPUT)/completion
	$(Q)scripts/gen-completion.sh $(OUTPUT)/acceltrace $(COMPLETION)

.PHONY: man completion install uninstall
man: $(MAN_STAMP)
completion: $(COMPLETION)

# The systemd unit names the installed binary and docs, wherever PREFIX put them.
install: all $(MAN_STAMP) $(COMPLETION)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -D -m 0755 $(OUTPUT)/acceltrace $(DESTDIR)$(BINDIR)/acceltrace
	$(Q)$(INSTALL) -D -m 0755 $(AGENT_LIB) $(DESTDIR)$(AGENTDIR)/libacceltrace-agent.so
	$(Q)$(INSTALL) -d $(DESTDIR)$(MANDIR)/man8
	$(Q)$(INSTALL) -m 0644 $(OUTPUT)/man/*.8 $(DESTDIR)$(MANDIR)/man8/
	$(Q)$(INSTALL) -D -m 0644 $(OUTPUT)/completion/acceltrace $(DESTDIR)$(BASHCOMPDIR)/acceltrace
	$(Q)$(INSTALL) -D -m 0644 $(OUTPUT)/completion/_acceltrace $(DESTDIR)$(ZSHCOMPDIR)/_acceltrace
	$(Q)$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR)
	$(Q)sed -e 's|/usr/local/bin/acceltrace|$(BINDIR)/acceltrace|' \
		-e 's|/usr/share/doc/acceltrace|$(DOCDIR)|' scripts/deploy/acceltrace.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/acceltrace.service
	$(Q)chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/acceltrace.service
	$(Q)$(INSTALL) -d $(DESTDIR)$(DOCDIR)
	$(Q)$(INSTALL) -m 0644 $(DOCS) $(DESTDIR)$(DOCDIR)/

# Removes what install put there (the man pages by the names it generates).
uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(BINDIR)/acceltrace $(DESTDIR)$(AGENTDIR)/libacceltrace-agent.so \
		$(DESTDIR)$(MANDIR)/man8/acceltrace.8 $(DESTDIR)$(MANDIR)/man8/acceltrace-*.8 \
		$(DESTDIR)$(BASHCOMPDIR)/acceltrace $(DESTDIR)$(ZSHCOMPDIR)/_acceltrace \
		$(DESTDIR)$(SYSTEMDUNITDIR)/acceltrace.service \
		$(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(DOCS)))
	$(Q)rmdir $(DESTDIR)$(AGENTDIR) $(DESTDIR)$(DOCDIR) 2>/dev/null || true

# ---------------------------------------------------------------- demo
# Records the simulated TPU trainer by PID into demo-logdir/.
demo: all
	$(Q)scripts/demo.sh $(OUTPUT)

# Three simulated hosts (network, UTS namespaces, cgroups) with a daemon
# each, one Prometheus, one capture of all three as one session, and the
# report naming the slow host (docs/demo-fleet.md). Root; tears down all.
demo-fleet: all
	$(Q)scripts/demo-fleet.sh $(OUTPUT)

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT)

-include $(wildcard $(OUTPUT)/bpf/*.d $(OUTPUT)/user/*/*.d $(OUTPUT)/user/*.d $(OUTPUT)/tests/*.d \
	$(OUTPUT)/agent-obj/agent/*.d)
