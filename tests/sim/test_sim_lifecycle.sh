#!/usr/bin/env bash
# How a run ends: SIGTERM stops it cleanly with the ground truth flushed; a
# crash (--crash-after) aborts with the truth written up to the crash; a
# device op lasting minutes is visible in flight in its core's trace buffer
# and is cut short, marked cancelled, when the trainer is stopped.
. tests/harness/test.sh

trainer=$OUTPUT/sim/tpu-trainer
[[ -x $trainer ]] || test_skip "$trainer is not built"
# A trainer started in the background goes with the test, whatever happens.
pid=
trap '[[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$TEST_TMP"' EXIT
check() { "$PYTHON" tests/sim/simcheck.py "$@" || fail "simcheck $1"; }

# Waits for the trainer's "running" line in $1 (up to 5 s).
wait_running() {
	for _ in $(seq 100); do
		grep -q 'running minor' "$1" && return 0
		sleep 0.05
	done
	fail "the trainer did not start: $(cat "$1")"
}

# SIGTERM in the middle of a run.
d=$TEST_TMP/term
"$trainer" --duration 60s --step-time 1ms --compile-ms 0 --truth "$d/truth.jsonl" \
	--device-dir "$d/dev" 2>"$TEST_TMP/term.err" &
pid=$!
wait_running "$TEST_TMP/term.err"
sleep 0.5
start=$EPOCHREALTIME
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[[ $rc -eq 0 ]] || fail "exit $rc after SIGTERM"
(( ${EPOCHREALTIME/./} - ${start/./} < 3000000 )) || fail "took more than 3 s to stop"
contains "$(cat "$TEST_TMP/term.err")" "reason=signal" "says why it stopped"
check signal truth="$d/truth.jsonl"

# A crash after 25 steps.
d=$TEST_TMP/crash
expect_exit 134 "crash (SIGABRT)" -- "$trainer" --steps 100 --crash-after 25 \
	--step-time 500us --compile-ms 0 --truth "$d/truth.jsonl" --device-dir "$d/dev"
contains "$err" "crashing after 25 steps" "says it crashes"
check crash truth="$d/truth.jsonl" after=25

# A device op of ten minutes: in flight, then cut short by SIGTERM.
d=$TEST_TMP/long
"$trainer" --steps 10 --step-time 500us --compile-ms 0 --long-device-op 10m \
	--long-device-op-step 3 --truth "$d/truth.jsonl" --device-dir "$d/dev" \
	2>"$TEST_TMP/long.err" &
pid=$!
wait_running "$TEST_TMP/long.err"
sleep 1.5
check inflight trace_file="$d/dev/devtrace/core2.devtrace" name=convolution.77 state=running
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[[ $rc -eq 0 ]] || fail "exit $rc after SIGTERM during the long op"
check inflight trace_file="$d/dev/devtrace/core2.devtrace" name=convolution.77 state=cancelled
check long_op truth="$d/truth.jsonl" min_ms=1400 cancelled=1
check signal truth="$d/truth.jsonl"

# And one that runs to its end (a short "long" op, 1.2 s).
d=$TEST_TMP/long2
expect_exit 0 "long op to completion" -- "$trainer" --steps 6 --step-time 500us \
	--compile-ms 0 --long-device-op 1200ms --long-device-op-step 2 \
	--truth "$d/truth.jsonl" --device-dir "$d/dev"
check long_op truth="$d/truth.jsonl" min_ms=1200 cancelled=0
check run truth="$d/truth.jsonl" trace_dir="$d/dev/devtrace" cores=4 steps=6 minor=94 fetch_every=10

test_done
