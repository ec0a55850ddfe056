# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# `make check-sanitize`: the C module tests of user/ (tests/<folder>/test_*.c)
# built with AddressSanitizer and UndefinedBehaviorSanitizer, every finding
# fatal, into a build directory of their own (SANITIZE_OUTPUT), and run by
# the usual runner. The same make, called again with OUTPUT and CFLAGS set,
# builds libacceltrace, the binary and the agent sanitized too; the BPF
# objects and the simulator keep their own flags.
SANITIZE_OUTPUT ?= build-sanitize
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
# A finding stops the test with its report: exit 1, a failure to the runner.
SANITIZE_ENV := ASAN_OPTIONS=abort_on_error=0:exitcode=1:detect_leaks=1:strict_string_checks=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=1 \
	LSAN_OPTIONS=exitcode=1

# test_xspace_stream measures the writer's peak heap and its speed by
# replacing malloc with its own counter over glibc's: neither holds under
# ASan's allocator and its slowdown, so it runs in make test only.
SANITIZE_EXCLUDED := tests/output/test_xspace_stream.c
SANITIZE_TEST_SRCS := $(filter-out $(SANITIZE_EXCLUDED), \
	$(wildcard $(patsubst %,tests/%/test_*.c,$(USER_DIRS))))
SANITIZE_TEST_BINS = $(patsubst tests/%.c,$(OUTPUT)/tests/%,$(SANITIZE_TEST_SRCS))

.PHONY: check-sanitize sanitize-run
check-sanitize:
	$(Q)$(MAKE) OUTPUT=$(SANITIZE_OUTPUT) CFLAGS="-g -O1 $(SANITIZE_FLAGS)" \
		LDFLAGS="$(SANITIZE_FLAGS)" sanitize-run

# Called by check-sanitize with OUTPUT=$(SANITIZE_OUTPUT).
sanitize-run: all $(SANITIZE_TEST_BINS)
	$(Q)$(SANITIZE_ENV) OUTPUT=$(OUTPUT) ACCELTRACE=$(OUTPUT)/acceltrace \
		TEST_LOG_DIR=$(OUTPUT)/test-logs \
		tests/run-tests.sh --timeout $(TEST_TIMEOUT) $(SANITIZE_TEST_BINS)
