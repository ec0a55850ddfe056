#!/usr/bin/env bash
# The device node is used the way a driver is: a real character device
# (/dev/null's 1:3) under the device directory, opened by the trainer, with
# gasket setup, interrupt-registration and DMA-map ioctls of the real
# numbers, or in --submit-ioctl mode a DRM accel node with one submit ioctl
# per execution. strace, when installed, confirms the numbers the kernel
# saw. Without the privilege to mknod the simulator runs without a node and
# says so.
. tests/harness/test.sh

trainer=$OUTPUT/sim/tpu-trainer
[[ -x $trainer ]] || test_skip "$trainer is not built"
# A trainer started in the background goes with the test, whatever happens.
pid=
trap '[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$TEST_TMP"' EXIT
require_root "mknod of the device node"

# Gasket mode, looked at from outside while it runs.
dir=$TEST_TMP/gasket
"$trainer" --duration 20s --step-time 1ms --truth "$dir/truth.jsonl" \
	--device-dir "$dir/dev" --compile-ms 0 2>"$TEST_TMP/gasket.err" &
pid=$!
for _ in $(seq 100); do
	grep -q running "$TEST_TMP/gasket.err" && break
	sleep 0.05
done
node=$dir/dev/accel0
[[ -c $node ]] || fail "$node is not a character device"
[[ $(stat -c '%t:%T' "$node") == 1:3 ]] || fail "$node is $(stat -c '%t:%T' "$node"), expected 1:3"
fds=$(ls -l "/proc/$pid/fd" 2>/dev/null)
contains "$fds" "$node" "the trainer has the node open"
sleep 1.6   # the loop flushes the truth every second
efds=$("$PYTHON" -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "ioctl" and r["name"] == "GASKET_IOCTL_REGISTER_INTERRUPT": print(r["event_fd"])' "$dir/truth.jsonl")
[[ $(wc -w <<<"$efds") -eq 4 ]] || fail "4 REGISTER_INTERRUPT records while running, got '$efds'"
for fd in $efds; do
	[[ $(readlink "/proc/$pid/fd/$fd") == "anon_inode:[eventfd]" ]] ||
		fail "registered fd $fd is $(readlink "/proc/$pid/fd/$fd"), not an eventfd"
done
kill -TERM "$pid"
wait "$pid" || fail "trainer exited $? after SIGTERM"
pid=
[[ -e $node ]] && fail "$node left behind"
"$PYTHON" tests/sim/simcheck.py ioctls truth="$dir/truth.jsonl" mode=gasket \
	node="$node" || fail "gasket ioctls"

have_strace=0
command -v strace >/dev/null && have_strace=1
for mode in gasket accel; do
	dir=$TEST_TMP/st-$mode
	flags=()
	[[ $mode == accel ]] && flags=(--submit-ioctl)
	node=$dir/dev/$([[ $mode == accel ]] && echo accel/accel0 || echo accel0)
	cmd=("$trainer" "${flags[@]}" --steps 30 --step-time 300us --truth "$dir/truth.jsonl"
	     --device-dir "$dir/dev" --compile-ms 0)
	st=()
	if ((have_strace)); then
		mkdir -p "$dir"
		st=(strace -f -qq -e trace=ioctl -e raw=ioctl -o "$dir/strace.txt")
	fi
	expect_exit 0 "$mode run" -- "${st[@]}" "${cmd[@]}"
	contains "$err" "node=$node" "$mode node path"
	"$PYTHON" tests/sim/simcheck.py ioctls truth="$dir/truth.jsonl" mode=$mode \
		steps=30 node="$node" strace="$( ((have_strace)) && echo "$dir/strace.txt")" ||
		fail "$mode ioctls"
done
((have_strace)) || skip_part "no strace; the kernel's view of the ioctls was not checked"

# Without privilege: no node, said on stderr, the run still completes.
shared=$(mktemp -d)
chmod 0777 "$shared"
expect_exit 0 "unprivileged run" -- setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$trainer" --steps 20 --step-time 300us --truth "$shared/truth.jsonl" \
	--trace-dir "$shared/trace" --compile-ms 0
contains "$err" "no device node" "says there is no node"
contains "$err" "running without" "says it runs without"
contains "$err" "done steps=20 reason=steps" "completes"
"$PYTHON" tests/sim/simcheck.py run truth="$shared/truth.jsonl" trace_dir="$shared/trace" \
	cores=4 steps=20 minor=94 || fail "unprivileged run checks"
grep -q '"type":"ioctl"' "$shared/truth.jsonl" && fail "ioctls without a node"
rm -rf "$shared"

test_done
