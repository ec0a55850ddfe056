#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# make demo-fleet in CI: scripts/demo-fleet.sh --check builds the three
# hosts (network and UTS namespaces, cgroups, a daemon scoped to each),
# Prometheus, one capture of the fleet as one session and the report, and
# asserts what it shows (demo-fleet-check.py: each host's file decodes with
# Python's protobuf and holds its own trainer only, Prometheus saw all
# three, the report names the slow host by about its slowdown). Then:
# nothing of it is left (namespaces, links, cgroups, processes, files).
# Skipped only where this kernel or machine cannot make a network namespace.
. "$(dirname "$0")/../harness/test.sh"

[[ $(id -u) -eq 0 ]] || test_skip "needs root (namespaces, cgroups, BPF)"
probe=atfleet-probe-$$
if ! ip netns add "$probe" 2>/dev/null; then
	test_skip "cannot make a network namespace here"
fi
ip netns del "$probe"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! timeout 240 scripts/demo-fleet.sh --check "$OUTPUT" >"$log" 2>&1; then
	fail "scripts/demo-fleet.sh --check failed:"
	sed 's/^/  | /' "$log" >&2
fi
grep -q "all checks held" "$log" || fail "the demo's checks did not all run and hold"
grep -q "^   FAIL" "$log" && fail "a check failed: $(grep '^   FAIL' "$log")"
if grep -q "no --profiler-listen yet" "$log"; then
	skip_part "the daemon has no ProfilerService yet: the fleet was captured through its control sockets"
fi
if grep -q "no fleet section" "$log"; then
	skip_part "report has no fleet section yet: the straggler was checked on per-host step times"
fi

# Torn down: nothing of the demo stays.
ip netns list | grep -q atfleet && fail "network namespaces left: $(ip netns list)"
ip link show atfleet-br0 >/dev/null 2>&1 && fail "the bridge is left"
for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
	[[ -d $m/acceltrace-demo-fleet ]] && fail "the cgroups are left in $m"
done
[[ -e /run/acceltrace-demo-fleet ]] && fail "the work directory is left"
pgrep -f 'prometheus --config.file=/run/acceltrace-demo-fleet' >/dev/null &&
	fail "Prometheus is left running"
test_done
