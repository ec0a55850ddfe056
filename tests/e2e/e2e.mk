# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# End-to-end tests: acceltrace against the simulated TPU stack's ground
# truth. Each is an executable script (exit 0/1/77) that needs the binary
# and the simulator built.
TESTS += $(wildcard tests/e2e/test_*.py tests/e2e/test_*.sh)
