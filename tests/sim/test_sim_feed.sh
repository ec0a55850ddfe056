#!/usr/bin/env bash
# Infeed and outfeed through the exported TPU C API, both flavours: the
# device's infeed ops wait for and consume what infeed_enqueue sends, and
# outfeed_dequeue's calls return only after the device produced the data.
# The readers are slowed (--input-bound) so the device really waits.
. tests/harness/test.sh

trainer=$OUTPUT/sim/tpu-trainer
[[ -x $trainer ]] || test_skip "$trainer is not built"

for mode in infeed infeed-raw; do
	dir=$TEST_TMP/$mode
	expect_exit 0 "trainer --feed $mode" -- "$trainer" --feed $mode --steps 120 \
		--step-time 500us --cores 4 --batch-bytes 16384 --input-bound 0.6 \
		--truth "$dir/truth.jsonl" --device-dir "$dir/dev" --compile-ms 0
	contains "$err" "done steps=120 reason=steps" "$mode exit line"
	"$PYTHON" tests/sim/simcheck.py feed truth="$dir/truth.jsonl" \
		trace_dir="$dir/dev/devtrace" cores=4 steps=120 \
		raw=$([[ $mode == infeed-raw ]] && echo 1 || echo 0) \
		slice_bytes=4096 expect_waits=1 || fail "$mode checks"
done

# Waits longer than a second: clock syncs inside them, records in order.
dir=$TEST_TMP/stall
expect_exit 0 "infeed stalls" -- "$trainer" --feed infeed --steps 2 --step-time 600ms \
	--cores 2 --readers 1 --batch-bytes 4096 --input-bound 0.7 --fetch-every 0 \
	--truth "$dir/truth.jsonl" --device-dir "$dir/dev" --compile-ms 0
"$PYTHON" tests/sim/simcheck.py feed truth="$dir/truth.jsonl" trace_dir="$dir/dev/devtrace" \
	cores=2 steps=2 slice_bytes=2048 expect_waits=1 long_waits=1 || fail "long infeed waits"

test_done
