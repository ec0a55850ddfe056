# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# End-to-end tests: acceltrace against the simulated TPU stack's ground
# truth. Each is an executable script (exit 0/1/77) that needs the binary
# and the simulator built.
TESTS += $(wildcard tests/e2e/test_*.py tests/e2e/test_*.sh)

# Servers the tests start, from the npm registry at the versions the lock
# file pins (tests/e2e/servers/): s3rver, an S3-API server, for the bucket
# logdir tests. Installed once into the build directory.
TEST_SERVERS := $(OUTPUT)/test-servers/node_modules/.bin/s3rver
$(TEST_SERVERS): tests/e2e/servers/package.json tests/e2e/servers/package-lock.json
	$(call msg,NPM,$(OUTPUT)/test-servers)
	$(Q)mkdir -p $(OUTPUT)/test-servers
	$(Q)cp tests/e2e/servers/package.json tests/e2e/servers/package-lock.json $(OUTPUT)/test-servers/
	$(Q)cd $(OUTPUT)/test-servers && npm ci --no-audit --no-fund --loglevel=error
	$(Q)touch $@
test: $(TEST_SERVERS)
