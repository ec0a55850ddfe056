#!/usr/bin/env bash
# The trainer's device memory, from the ground truth alone (memcheck.py
# pjrt), at both PJRT minors: every buffer made is freed once with its
# size, except the leak's; a --mem-leak run grows device 0 by exactly the
# leak per step (within 1%) with one never-freed buffer per step; each eval
# phase's working set is made before its first eval step and deleted after
# its last, and holds device 0's peak; outputs are sized by the size query
# (--output-bytes), the rest by their shapes. A default run has memory lines
# too, and nothing left live. On a 40 MiB core the leak runs out of memory:
# the allocations that fail (RESOURCE_EXHAUSTED, in the truth) are exactly
# those that did not fit, and the run goes on to its last step.
. tests/harness/test.sh

trainer=$OUTPUT/sim/tpu-trainer
[[ -x $trainer ]] || test_skip "$trainer is not built"
common=(--step-time 200us --compile-ms 0 --fetch-every 5)

for minor in 94 26; do
	d=$TEST_TMP/m$minor
	expect_exit 0 "leak and eval at 0.$minor" -- "$trainer" \
		--plugin "$OUTPUT/sim/pjrt-0.$minor/libtpu.so" "${common[@]}" --steps 60 \
		--mem-leak 1048576 --eval-every 10 --eval-steps 3 --eval-mem 8388608 \
		--output-bytes 8192 --truth "$d/truth.jsonl" --device-dir "$d/dev"
	out=$("$PYTHON" tests/sim/memcheck.py pjrt truth="$d/truth.jsonl" leak=1048576 \
		eval_mem=8388608 output_bytes=8192) || fail "memcheck at 0.$minor: $out"
	contains "$out" "18 eval steps" "six eval phases of three at 0.$minor"
	contains "$out" "60 live at the end" "one leaked buffer per step at 0.$minor"
done

d=$TEST_TMP/full
expect_exit 0 "a leak filling a 40 MiB core" -- "$trainer" "${common[@]}" --steps 60 \
	--mem-leak 1048576 --device-memory 41943040 --truth "$d/truth.jsonl" \
	--device-dir "$d/dev"
contains "$err" "done steps=60" "the run goes on after out of memory"
out=$("$PYTHON" tests/sim/memcheck.py pjrt truth="$d/truth.jsonl" leak=1048576 \
	capacity=41943040) || fail "memcheck on a full core: $out"
contains "$out" "device 0: 2" "about twenty leaks failed"
contains "$out" "device 1: 0 allocations failed" "device 1 did not fill"

d=$TEST_TMP/default
expect_exit 0 "a default run" -- "$trainer" "${common[@]}" --steps 20 \
	--truth "$d/truth.jsonl" --device-dir "$d/dev"
out=$("$PYTHON" tests/sim/memcheck.py pjrt truth="$d/truth.jsonl") || fail "memcheck: $out"
contains "$out" ", 0 live at the end" "a default run frees every buffer"

# The checker fails a truth with a free missing.
awk '/"mem_free"/ && !done { done = 1; next } { print }' "$d/truth.jsonl" >"$d/cut.jsonl"
expect_exit 1 "memcheck fails a missing free" -- "$PYTHON" tests/sim/memcheck.py pjrt \
	truth="$d/cut.jsonl"

test_done
