# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Benchmarks (docs/performance.md): the cost of tracing against its floor
# and against peers. Included by the top Makefile.
#
#   make bench        every benchmark (about 12 minutes on 2 cores); prints
#                     the results table in markdown, kept in
#                     $(OUTPUT)/bench/results.md
#   make bench-long   the 30-minute capture: acceltrace's RSS and CPU over time;
#                     then 30 minutes of the daemon on a leaking trainer: its
#                     RSS and memory timelines bounded, the leak in a capture
#                     from minute 0 (bench_long_memory.py; an hour in all)
#
# tests/bench/test_bench_smoke.sh runs each benchmark for about a second in
# `make test` and checks that it prints sane, parseable figures.

BENCH_OUT := $(OUTPUT)/bench
BENCH_PROGS := $(patsubst tests/bench/%.c,%,$(wildcard tests/bench/bench_*.c))
BENCH_BINS := $(patsubst %,$(BENCH_OUT)/%,$(BENCH_PROGS))

.PHONY: bench bench-long bench-bins

$(BENCH_OUT):
	$(Q)mkdir -p $@

$(BENCH_OUT)/bench.bpf.o: tests/bench/bench.bpf.c $(OUTPUT)/vmlinux.h | $(BENCH_OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BENCH_OUT)/bench.skel.h: $(BENCH_OUT)/bench.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name bench > $@

$(BENCH_OUT)/%: tests/bench/%.c tests/bench/bench.h $(BENCH_OUT)/bench.skel.h \
		$(LIBACCELTRACE) $(SKEL_HEADERS) | $(DEPS_STAMP)
	$(call msg,BENCH-CC,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -I$(BENCH_OUT) -Itests/bench $(TEST_EXTRA_CFLAGS) -MF $@.d $< \
		$(TEST_EXTRA_OBJS) $(LIBACCELTRACE) $(LIBS) -o $@

bench-bins: $(BENCH_BINS)

bench: all $(BENCH_BINS)
	$(Q)tests/bench/run_bench.sh $(OUTPUT)

bench-long: all
	$(Q)tests/bench/bench_long.sh $(OUTPUT)
	$(Q)OUTPUT=$(OUTPUT) tests/bench/bench_long_memory.py $(OUTPUT)

# The smoke run is part of `make test`.
TESTS += $(wildcard tests/bench/test_bench_smoke.sh)
test: $(BENCH_BINS)

-include $(wildcard $(BENCH_OUT)/*.d)
