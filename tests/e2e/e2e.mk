# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# End-to-end tests: acceltrace against the simulated TPU stack's ground
# truth. Each is an executable script (exit 0/1/77) that needs the binary
# and the simulator built.
TESTS += $(wildcard tests/e2e/test_*.py tests/e2e/test_*.sh)

# The daemon's flight-recorder captures against the truth: not in `make
# test` while it is unreliable on 2-core machines (ring losses when the
# daemon traces several fast trainers, and a rare unexplained gap: issue
# 14). Run it with `make test-daemon-capture`.
.PHONY: test-daemon-capture
test-daemon-capture: all
	$(Q)OUTPUT=$(OUTPUT) ACCELTRACE=$(OUTPUT)/acceltrace tests/run-tests.sh \
		--timeout $(TEST_TIMEOUT) tests/e2e/daemon_capture.py
