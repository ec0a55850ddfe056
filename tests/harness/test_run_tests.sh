#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# tests/run-tests.sh itself, on made-up tests: passes, fails and skips are
# counted; a passing test's "SKIP-PART:" lines are counted and listed; a
# WARNING the kernel logs while a test runs fails it (or, with
# TEST_KERNEL_LOG=warn, is listed) while an ordinary kernel line does not;
# a kernel log that cannot be read is said once and fails nothing. The
# kernel log is a file of /dev/kmsg's form here (KERNEL_LOG), so that no
# WARNING is written into the host's own log.
. "$(dirname "$0")/test.sh"
# The runner running this test may check its kernel log in another mode
# (TEST_KERNEL_LOG=warn) or against another list: not the runs below.
unset TEST_KERNEL_LOG KERNEL_LOG_KNOWN

runner=tests/run-tests.sh
fake=$TEST_TMP/fake
mkdir -p "$fake"
klog=$TEST_TMP/kmsg
printf '6,100,1000,-;an early line\n' >"$klog"

mk() {	# mk NAME BODY: a test script
	printf '#!/bin/bash\n%s\n' "$2" >"$fake/$1"
	chmod +x "$fake/$1"
}
mk pass.sh 'exit 0'
mk partial.sh 'echo "SKIP-PART: no widget here"; echo checked the rest; echo "SKIP-PART: no gadget"; exit 0'
mk skip.sh 'echo "SKIP: needs a unicorn"; exit 77'
mk fail.sh 'echo "FAIL: it broke" >&2; exit 1'
mk quiet_kernel.sh "printf '6,101,2000,-;eth0: link up\n' >>'$klog'; exit 0"
mk splat.sh "printf '4,102,3000,-;WARNING: CPU: 0 PID: 1 at kernel/fake.c:1 fake+0x0/0x10\n SUBSYSTEM=fake\n' >>'$klog'; exit 0"

run() {	# run [VAR=value...]: the runner over the fake tests; output in $out
	out=$(env TEST_LOG_DIR="$TEST_TMP/logs" KERNEL_LOG="$klog" "$@" "$runner" \
		"$fake/pass.sh" "$fake/partial.sh" "$fake/skip.sh" "$fake/fail.sh" \
		"$fake/quiet_kernel.sh" "$fake/splat.sh" 2>&1)
	rc=$?
}

run
[[ $rc -ne 0 ]] || fail "a failed test: the runner exits non-zero"
contains "$out" "3 passed, 2 failed, 1 skipped, 2 parts skipped" "the final counts"
grep -qE "^PASS  .*partial.sh .*\(2 parts skipped\)" <<<"$out" ||
	fail "a partly skipped pass says how many parts: $out"
contains "$out" "Parts skipped (in passing tests):
  $fake/partial.sh: no widget here
  $fake/partial.sh: no gadget" "each skipped part listed with its reason"
contains "$out" "SKIP  $fake/skip.sh" "a skip"
grep -q "^SKIP  .*skip.sh *needs a unicorn$" <<<"$out" || fail "a skip's reason: $out"
grep -q "^FAIL  .*splat.sh *the kernel logged: WARNING: CPU: 0 PID: 1 at kernel/fake.c:1" <<<"$out" ||
	fail "a WARNING in the kernel log fails the test that ran: $out"
grep -q "^PASS  .*quiet_kernel.sh" <<<"$out" || fail "an ordinary kernel line fails nothing: $out"
grep -q "^PASS  .*pass.sh" <<<"$out" || fail "a test run after records that came before it passes"
grep -q "fake.c:1" "$TEST_TMP/logs/"*splat.sh.log ||
	fail "the kernel's lines are kept in the test's log"
contains "$out" "Kernel log splats" "splats listed at the end"
[[ $out != *"cannot be read"* ]] || fail "a readable kernel log read: $out"

# Flagged only: the test passes, the splat is still listed.
printf '6,100,1000,-;an early line\n' >"$klog"
run TEST_KERNEL_LOG=warn
contains "$out" "4 passed, 1 failed, 1 skipped, 2 parts skipped" "warn: the splat fails nothing"
contains "$out" "kernel log: WARNING: CPU: 0" "warn: the splat is shown under its test"
contains "$out" "Kernel log splats" "warn: and listed at the end"

# A splat of the known list (the kernel's own, reached by a test's work)
# fails nothing; one beside it that is not known still fails.
printf '6,100,1000,-;an early line\n' >"$klog"
printf 'WARNING: .* at kernel/fake\\.c:1 fake\n' >"$TEST_TMP/known.txt"
run KERNEL_LOG_KNOWN="$TEST_TMP/known.txt"
contains "$out" "4 passed, 1 failed, 1 skipped, 2 parts skipped" "a known splat fails nothing"
mk splat2.sh "printf '4,103,3000,-;WARNING: CPU: 0 PID: 1 at kernel/fake.c:1 fake\n4,104,3001,-;BUG: kernel NULL pointer dereference\n' >>'$klog'; exit 0"
printf '6,100,1000,-;an early line\n' >"$klog"
out=$(env TEST_LOG_DIR="$TEST_TMP/logs" KERNEL_LOG="$klog" KERNEL_LOG_KNOWN="$TEST_TMP/known.txt" \
	"$runner" "$fake/splat2.sh" 2>&1)
grep -q "^FAIL  .*splat2.sh *the kernel logged: BUG: kernel NULL pointer" <<<"$out" ||
	fail "an unknown splat beside a known one still fails: $out"

# A kernel log that cannot be read: said once, nothing fails for it.
out=$(TEST_LOG_DIR="$TEST_TMP/logs" KERNEL_LOG=$TEST_TMP/nonexistent "$runner" \
	"$fake/pass.sh" "$fake/splat.sh" 2>&1)
rc=$?
[[ $rc -eq 0 ]] || fail "an unreadable kernel log fails nothing (exit $rc): $out"
[[ $(grep -c "cannot be read" <<<"$out") -eq 1 ]] || fail "it is said once: $out"

# The host's own log, where it can be read: an ordinary line (written as
# root, at info level) is read past and fails nothing.
if [[ $(id -u) -eq 0 && -w /dev/kmsg ]]; then
	mk kmsg_line.sh "echo '<6>acceltrace run-tests self-test: an ordinary line' >/dev/kmsg"
	out=$(TEST_LOG_DIR="$TEST_TMP/logs" "$runner" "$fake/kmsg_line.sh" 2>&1)
	rc=$?
	[[ $rc -eq 0 && $out != *"cannot be read"* ]] ||
		fail "/dev/kmsg read after a test (exit $rc): $out"
else
	skip_part "not root: the host's /dev/kmsg not read"
fi
test_done
