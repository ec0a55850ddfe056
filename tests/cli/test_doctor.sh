#!/usr/bin/env bash
# acceltrace doctor: finds features by trying them. On this project's kernels
# (tracepoints and uprobes, no kprobes, fentry refused) it must say exactly
# that; without privileges or tracefs it must name what is missing.
source tests/harness/test.sh
require_root "doctor loads BPF programs"

expect_exit 0 "doctor" -- "$ACCELTRACE" doctor
contains "$out" "acceltrace can run here" "doctor verdict"

expect_exit 0 "doctor --json" -- "$ACCELTRACE" doctor --json
json=$out
for k in btf ringbuf tracefs syscall_tracepoints raw_tracepoints uprobes \
	 fentry kprobes io_uring cap_bpf cap_perfmon cap_sys_admin \
	 bpf_memcg_accounting btf_tracepoints; do
	v=$(json_get "$json" "d['features']['$k']['probed']") ||
		fail "doctor JSON does not parse or lacks $k"
done
[[ $(json_get "$json" "d['can_run']") == True ]] || fail "can_run is not true"
for k in uprobes syscall_tracepoints ringbuf btf; do
	[[ $(json_get "$json" "d['features']['$k']['available']") == True ]] ||
		fail "$k should be available here"
done
[[ $(json_get "$json" "d['probes']['runtime']['mechanism']") == uprobe ]] ||
	fail "runtime probes should use uprobes"

# What the project's machines are known to lack must be reported as absent,
# and the driver probes must fall back to syscall tracepoints. Where a kernel
# does have them (not ours), the check does not apply.
if [[ ! -e /sys/bus/event_source/devices/kprobe ]] &&
   ! grep -qs '^CONFIG_KPROBES=y' "/boot/config-$(uname -r)"; then
	[[ $(json_get "$json" "d['features']['kprobes']['available']") == False ]] ||
		fail "kprobes reported available on a kernel without them"
	[[ $(json_get "$json" "d['probes']['driver']['mechanism']") == "syscall tracepoint" ]] ||
		fail "the driver interface should use syscall tracepoints"
	[[ $(json_get "$json" "d['features']['fentry']['available']") == True ||
	   $(json_get "$json" "d['probes']['driver_functions']['mechanism']") == none ]] ||
		fail "driver functions need fentry or kprobes"
fi

# A refused fentry (this project's kernels) is explained: the errno, the
# kernel's words or that it said none, why, and what it means for a capture.
if [[ $(json_get "$json" "d['features']['fentry']['available']") == False ]]; then
	e=$(json_get "$json" "d['features']['fentry']['errno']") || fail "fentry refused without an errno key"
	[[ $e == E* ]] || fail "fentry's errno is not named: '$e'"
	[[ -n $(json_get "$json" "d['features']['fentry']['why']") ]] || fail "fentry refused without a why"
	expect_exit 0 "doctor (plain)" -- "$ACCELTRACE" doctor
	contains "$out" "What the refusals mean" "plain doctor explains the refusals"
	contains "$out" "fentry/fexit: load refused: $e" "plain doctor names fentry's errno"
	contains "$out" "Why: " "plain doctor says why"
	contains "$out" "For you: driver functions" "plain doctor says what it means for the user"
fi

# Without privileges: non-zero, and the capability is named.
if command -v setpriv >/dev/null; then
	cp "$ACCELTRACE" "$TEST_TMP/acceltrace" && chmod 755 "$TEST_TMP" "$TEST_TMP/acceltrace"
	expect_exit 1 "doctor without privileges" -- \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$TEST_TMP/acceltrace" doctor
	contains "$err" "CAP_BPF" "unprivileged doctor names CAP_BPF"
	contains "$out" "cannot run here" "unprivileged verdict"
	[[ $out == *"uprobes                  no"* ]] || fail "unprivileged uprobes should be 'no'"
else
	fail "setpriv (util-linux) missing"
fi

# tracefs unmounted in a private mount namespace: doctor mounts it itself.
if unshare -m --propagation private true 2>/dev/null; then
	out=$(unshare -m --propagation private sh -c \
		'umount /sys/kernel/tracing 2>/dev/null; umount /sys/kernel/debug/tracing 2>/dev/null; exec "$0" doctor --json' \
		"$ACCELTRACE")
	[[ $(json_get "$out" "d['tracefs_mounted_by_acceltrace']") == True ]] ||
		fail "doctor did not mount a missing tracefs"
	[[ $(json_get "$out" "d['features']['syscall_tracepoints']['available']") == True ]] ||
		fail "syscall tracepoints unavailable after mounting tracefs"
else
	skip_part "no private mount namespace: doctor mounting a missing tracefs not checked"
fi

test_done
