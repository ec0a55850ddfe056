#!/usr/bin/env bash
# The trainer's scenarios, each checked against its ground truth: the plugin
# loaded late, thread churn, several trainers at once, a long host op, an
# input-bound pipeline, and device trace buffers small enough to overflow.
. tests/harness/test.sh

trainer=$OUTPUT/sim/tpu-trainer
[[ -x $trainer ]] || test_skip "$trainer is not built"
check() { "$PYTHON" tests/sim/simcheck.py "$@" || fail "simcheck $1"; }
common=(--compile-ms 0 --step-time 500us)

d=$TEST_TMP/late
expect_exit 0 "late load" -- "$trainer" "${common[@]}" --steps 20 --late-load 700ms \
	--truth "$d/truth.jsonl" --device-dir "$d/dev"
check late_load truth="$d/truth.jsonl" min_ms=700

d=$TEST_TMP/churn
expect_exit 0 "thread churn" -- "$trainer" "${common[@]}" --duration 1s --thread-churn 60 \
	--truth "$d/truth.jsonl" --device-dir "$d/dev"
check churn truth="$d/truth.jsonl" min_threads=30

d=$TEST_TMP/many
expect_exit 0 "three trainers" -- "$trainer" "${common[@]}" --trainers 3 --steps 40 \
	--truth "$d/truth.jsonl" --device-dir "$d/dev-%p"
check trainers truth="$d/truth.jsonl" n=3 steps=40
expect_exit 2 "--trainers without %p" -- "$trainer" --trainers 2 --device-dir "$d/x"

d=$TEST_TMP/host
expect_exit 0 "long host op" -- "$trainer" "${common[@]}" --steps 8 --long-host-op 800ms \
	--long-host-op-step 5 --truth "$d/truth.jsonl" --device-dir "$d/dev"
check host_op truth="$d/truth.jsonl" min_ms=800 step=5

d=$TEST_TMP/input
expect_exit 0 "input bound" -- "$trainer" --compile-ms 0 --step-time 2ms --steps 150 \
	--input-bound 0.5 --readers 2 --truth "$d/truth.jsonl" --device-dir "$d/dev"
check input_bound truth="$d/truth.jsonl" lo=0.35 hi=0.65

d=$TEST_TMP/overflow
expect_exit 0 "overflowing trace buffers" -- "$trainer" "${common[@]}" --steps 100 \
	--trace-records 128 --truth "$d/truth.jsonl" --device-dir "$d/dev"
check overflow truth="$d/truth.jsonl" trace_dir="$d/dev/devtrace" capacity=128

# Failing to load the plugin is an error, said on stderr.
expect_exit 1 "missing plugin" -- "$trainer" --plugin "$TEST_TMP/nope/libtpu.so" --steps 5 \
	--device-dir "$TEST_TMP/nope-dev"
contains "$err" "dlopen" "says the plugin could not be loaded"
contains "$err" "reason=error" "ends with an error"

test_done
