#!/usr/bin/env bash
# The simulator's ground truth agrees with its device trace buffers, at both
# PJRT minors: every execution, op, interrupt, completion, step, transfer
# and driver ioctl is where the other records say it must be, and every op
# in the truth is in its core's devtrace buffer at the same time (converted
# with the documented clock model), read by a decoder written from
# docs/devtrace.md.
. tests/harness/test.sh

trainer=$OUTPUT/sim/tpu-trainer
[[ -x $trainer ]] || test_skip "$trainer is not built"

for minor in 94 26; do
	dir=$TEST_TMP/m$minor
	expect_exit 0 "trainer at minor $minor" -- "$trainer" \
		--plugin "$OUTPUT/sim/pjrt-0.$minor/libtpu.so" --steps 120 \
		--step-time 300us --cores 4 --truth "$dir/truth.jsonl" \
		--device-dir "$dir/dev" --compile-ms 5
	contains "$err" "running minor=$minor cores=4" "startup line"
	contains "$err" "done steps=120 reason=steps" "exit line"
	"$PYTHON" tests/sim/simcheck.py run truth="$dir/truth.jsonl" \
		trace_dir="$dir/dev/devtrace" cores=4 steps=120 minor=$minor \
		feed=buffer fetch_every=10 || fail "minor $minor: truth and devtrace disagree"
done

# The same through TPU_LIBRARY_PATH, with two cores, no input pipeline.
dir=$TEST_TMP/env
expect_exit 0 "trainer via TPU_LIBRARY_PATH" -- env \
	TPU_LIBRARY_PATH="$OUTPUT/sim/pjrt-0.26/libtpu.so" "$trainer" --steps 40 \
	--step-time 200us --cores 2 --readers 0 --fetch-every 0 \
	--truth "$dir/truth.jsonl" --device-dir "$dir/dev" --compile-ms 0
contains "$err" "plugin=$OUTPUT/sim/pjrt-0.26/libtpu.so" "plugin from TPU_LIBRARY_PATH"
"$PYTHON" tests/sim/simcheck.py run truth="$dir/truth.jsonl" trace_dir="$dir/dev/devtrace" \
	cores=2 steps=40 minor=26 feed=buffer fetch_every=0 || fail "two cores: disagree"

test_done
