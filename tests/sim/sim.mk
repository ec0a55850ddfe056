# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The simulated TPU stack (docs/simulator.md): a PJRT plugin built at two
# PJRT minors, the trainer that drives it, the ground-truth library both
# write through, and the simulator's own tests. Included by the top Makefile.
#
#   $(OUTPUT)/sim/pjrt-0.94/libtpu.so   PJRT 0.94 (129 slots)
#   $(OUTPUT)/sim/pjrt-0.26/libtpu.so   PJRT 0.26 (88 slots)
#   $(OUTPUT)/sim/libsimtruth.so        ground-truth log, shared by both
#   $(OUTPUT)/sim/tpu-trainer           the trainer
#   $(OUTPUT)/sim/cuda/libsimdrv.so     a CUDA driver (libcuda's part)
#   $(OUTPUT)/sim/cuda/libsimrt.so      a CUDA runtime (libcudart's part)
#   $(OUTPUT)/sim/cuda/cuda-app         the loop that drives them
#   $(OUTPUT)/sim/cuda/libcupti.so.13   a CUPTI (Activity API) over them
#                                       (and libcupti.so, a link to it)
#   $(OUTPUT)/sim/cuda/libsiminject.so  a CUDA_INJECTION64_PATH library
#                                       for the tests: a small CUPTI client

SIM_OUT := $(OUTPUT)/sim
SIM_MINORS := 26 94

# Like CET wheel builds: functions begin `endbr64; push %rbp`, which is where
# the tracer puts its uprobes. gcc would otherwise move the push past an early
# return (shrink-wrapping) or drop the frame of a function ending in a tail
# call; test_pjrt_table checks every table function's first bytes.
SIM_CFLAGS := -g -O2 -fcf-protection=full -fno-omit-frame-pointer \
	-fno-shrink-wrap -fno-optimize-sibling-calls \
	$(WARNINGS) $(WERROR) -std=gnu11 -D_GNU_SOURCE -Iinclude -Itests/sim -MMD -MP

SIM_PLUGIN_SRCS := plugin_api plugin_error plugin_event plugin_client \
	plugin_exec plugin_buffer plugin_feed plugin_options plugin_runtime \
	plugin_profiler \
	devnode device devclock devtrace_writer sim_program sim_fs
SIM_TRAINER_SRCS := trainer_main trainer_flags trainer_pjrt trainer_input \
	trainer_feed trainer_loop trainer_mem trainer_threads trainer_queue devnode_setup sim_fs
# Pieces the tests link directly.
SIM_LIB_SRCS := devclock devtrace_writer devtrace_reader sim_program

SIM_PLUGINS := $(foreach m,$(SIM_MINORS),$(SIM_OUT)/pjrt-0.$(m)/libtpu.so)
SIM_TRUTH_LIB := $(SIM_OUT)/libsimtruth.so
SIM_TRAINER := $(SIM_OUT)/tpu-trainer
SIM_CUDA_OUT := $(SIM_OUT)/cuda
SIM_CUDA_DRV := $(SIM_CUDA_OUT)/libsimdrv.so
SIM_CUDA_RT := $(SIM_CUDA_OUT)/libsimrt.so
SIM_CUDA_APP := $(SIM_CUDA_OUT)/cuda-app
SIM_CUPTI := $(SIM_CUDA_OUT)/libcupti.so.13
SIM_INJECT := $(SIM_CUDA_OUT)/libsiminject.so
SIM_TARGETS := $(SIM_TRUTH_LIB) $(SIM_PLUGINS) $(SIM_TRAINER) \
	$(SIM_CUDA_DRV) $(SIM_CUDA_RT) $(SIM_CUDA_APP) \
	$(SIM_CUPTI) $(SIM_CUDA_OUT)/libcupti.so $(SIM_INJECT)

.PHONY: sim
sim: $(SIM_TARGETS)
all: sim

$(SIM_OUT) $(SIM_OUT)/pic $(SIM_OUT)/obj $(SIM_OUT)/tests $(SIM_CUDA_OUT) \
$(foreach m,$(SIM_MINORS),$(SIM_OUT)/obj-$(m) $(SIM_OUT)/pjrt-0.$(m)):
	$(Q)mkdir -p $@

# Objects depend on this file: a flag changed here rebuilds them.
$(SIM_OUT)/pic/%.o: tests/sim/%.c tests/sim/sim.mk | $(DEPS_STAMP) $(SIM_OUT)/pic
	$(call msg,CC,$@)
	$(Q)$(CC) $(SIM_CFLAGS) -fPIC -c $< -o $@

$(SIM_TRUTH_LIB): $(SIM_OUT)/pic/simtruth.o
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -Wl,-soname,libsimtruth.so -o $@ $^ -lpthread

# One object directory and one library per PJRT minor. The library keeps
# only the version script's exports and no .symtab (-s), like a release.
define sim_plugin_rule
$(SIM_OUT)/obj-$(1)/%.o: tests/sim/%.c tests/sim/sim.mk | $(DEPS_STAMP) $(SIM_OUT)/obj-$(1)
	$$(call msg,CC,$$@)
	$(Q)$(CC) $(SIM_CFLAGS) -fPIC -fvisibility=hidden -DSIM_PJRT_MINOR=$(1) -c $$< -o $$@

$(SIM_OUT)/pjrt-0.$(1)/libtpu.so: $(patsubst %,$(SIM_OUT)/obj-$(1)/%.o,$(SIM_PLUGIN_SRCS)) \
		$(SIM_TRUTH_LIB) tests/sim/plugin.map | $(SIM_OUT)/pjrt-0.$(1)
	$$(call msg,PLUGIN,$$@)
	$(Q)$(CC) -shared -s -Wl,--version-script=tests/sim/plugin.map \
		-Wl,-soname,libtpu.so -Wl,-z,now -o $$@ \
		$(patsubst %,$(SIM_OUT)/obj-$(1)/%.o,$(SIM_PLUGIN_SRCS)) \
		-L$(SIM_OUT) -lsimtruth -Wl,-rpath,'$$$$ORIGIN/..' -lpthread
endef
$(foreach m,$(SIM_MINORS),$(eval $(call sim_plugin_rule,$(m))))

$(SIM_OUT)/obj/%.o: tests/sim/%.c tests/sim/sim.mk | $(DEPS_STAMP) $(SIM_OUT)/obj
	$(call msg,CC,$@)
	$(Q)$(CC) $(SIM_CFLAGS) -c $< -o $@

$(SIM_TRAINER): $(patsubst %,$(SIM_OUT)/obj/%.o,$(SIM_TRAINER_SRCS)) $(SIM_TRUTH_LIB)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -o $@ $(patsubst %,$(SIM_OUT)/obj/%.o,$(SIM_TRAINER_SRCS)) \
		-L$(SIM_OUT) -lsimtruth -Wl,-rpath,'$$ORIGIN' -ldl -lpthread

# The CUDA pair: names no pack's hint matches, so only their exports tell
# what they are; stripped (-s) like a release, exports only.
$(SIM_CUDA_OUT)/%.o: tests/sim/%.c tests/sim/sim.mk | $(DEPS_STAMP) $(SIM_CUDA_OUT)
	$(call msg,CC,$@)
	$(Q)$(CC) $(SIM_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(SIM_CUDA_DRV): $(SIM_CUDA_OUT)/cuda_driver.o $(SIM_CUDA_OUT)/cuda_memory.o
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -s -Wl,-soname,libsimdrv.so -o $@ $^ -ldl -lpthread

$(SIM_CUDA_RT): $(SIM_CUDA_OUT)/cuda_runtime.o $(SIM_CUDA_OUT)/cuda_runtime_mem.o $(SIM_CUDA_DRV)
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -s -Wl,-soname,libsimrt.so -o $@ $(SIM_CUDA_OUT)/cuda_runtime.o \
		$(SIM_CUDA_OUT)/cuda_runtime_mem.o \
		-L$(SIM_CUDA_OUT) -lsimdrv -Wl,-rpath,'$$ORIGIN' -lpthread

$(SIM_CUDA_APP): $(SIM_CUDA_OUT)/cuda_app.o $(SIM_CUDA_OUT)/cuda_app_mem.o $(SIM_CUDA_RT) \
		$(SIM_CUDA_DRV) $(SIM_TRUTH_LIB)
	$(call msg,BINARY,$@)
	$(Q)$(CC) -o $@ $(SIM_CUDA_OUT)/cuda_app.o $(SIM_CUDA_OUT)/cuda_app_mem.o -L$(SIM_CUDA_OUT) -lsimrt -lsimdrv \
		-L$(SIM_OUT) -lsimtruth -Wl,-rpath,'$$ORIGIN:$$ORIGIN/..' -lpthread

# The simulated CUPTI: the real soname and exported names, nothing else
# exported; found by the driver's tools table at run time, never linked to
# it. It writes "cuda_device" truth lines through libsimtruth.so.
$(SIM_CUPTI): $(SIM_CUDA_OUT)/cupti_sim.o $(SIM_TRUTH_LIB)
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -s -Wl,-soname,libcupti.so.13 -o $@ $(SIM_CUDA_OUT)/cupti_sim.o \
		-L$(SIM_OUT) -lsimtruth -Wl,-rpath,'$$ORIGIN/..' -ldl -lpthread

$(SIM_CUDA_OUT)/libcupti.so: $(SIM_CUPTI)
	$(Q)ln -sfn libcupti.so.13 $@

# A test library for CUDA_INJECTION64_PATH; it reads CUPTI records through
# the agent's declarations (user/agent/cupti_abi.h), as the agent will.
$(SIM_CUDA_OUT)/cuda_inject.o: private SIM_CFLAGS += -Iuser/agent
$(SIM_INJECT): $(SIM_CUDA_OUT)/cuda_inject.o
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -Wl,-soname,libsiminject.so -o $@ $^ -ldl -lpthread

# ---------------------------------------------------------------- tests
# C tests are tests/sim/test_*.c linked with the simulator's pieces; they
# find the built stack through $OUTPUT. Scripts are tests/sim/test_*.sh.
SIM_TEST_C := $(wildcard tests/sim/test_*.c)
SIM_TEST_BINS := $(patsubst tests/sim/%.c,$(SIM_OUT)/tests/%,$(SIM_TEST_C))
SIM_TEST_SCRIPTS := $(wildcard tests/sim/test_*.sh)
SIM_LIB_OBJS := $(patsubst %,$(SIM_OUT)/obj/%.o,$(SIM_LIB_SRCS))

$(SIM_TEST_BINS): $(SIM_OUT)/tests/%: tests/sim/%.c tests/sim/sim.mk tests/harness/test.h $(SIM_LIB_OBJS) \
		$(SIM_TARGETS) | $(DEPS_STAMP) $(SIM_OUT)/tests
	$(call msg,TEST-CC,$@)
	$(Q)$(CC) $(SIM_CFLAGS) -Itests/harness -MF $@.d $< $(SIM_LIB_OBJS) $(SIM_TEST_EXTRA) \
		-L$(SIM_OUT) -lsimtruth -Wl,-rpath,'$$ORIGIN/..' -lelf -ldl -lpthread -o $@

# test_cupti_sim reads the simulated CUPTI's records through the agent's
# declarations: a reader written apart from the writer.
$(SIM_OUT)/tests/test_cupti_sim: private SIM_CFLAGS += -Iuser/agent

# test_plugin_profiler decodes the plugin's XSpace with protobuf-c's code
# generated from user/output/xplane.proto: a reader the plugin does not use.
$(SIM_OUT)/tests/test_plugin_profiler: private SIM_CFLAGS += -I$(OUTPUT)
$(SIM_OUT)/tests/test_plugin_profiler: private SIM_TEST_EXTRA := \
	$(OUTPUT)/user/xplane.pb-c.o -lprotobuf-c
$(SIM_OUT)/tests/test_plugin_profiler: $(OUTPUT)/user/xplane.pb-c.o

TESTS += $(SIM_TEST_BINS) $(SIM_TEST_SCRIPTS)

# user/devtrace/'s module tests and benchmark write buffers with the
# simulator's writer and clock: a second implementation of the format, not
# the reader's own idea of it.
SIM_DEVTRACE_OBJS := $(SIM_OUT)/obj/devtrace_writer.o $(SIM_OUT)/obj/devclock.o
SIM_DEVTRACE_USERS := $(filter $(OUTPUT)/tests/devtrace/%,$(TEST_C_BINS)) \
	$(OUTPUT)/bench/bench_devtrace
$(SIM_DEVTRACE_USERS): $(SIM_DEVTRACE_OBJS)
$(SIM_DEVTRACE_USERS): TEST_EXTRA_OBJS := $(SIM_DEVTRACE_OBJS)
$(SIM_DEVTRACE_USERS): TEST_EXTRA_CFLAGS := -Itests/sim

-include $(wildcard $(SIM_OUT)/*/*.d $(SIM_OUT)/tests/*.d)
