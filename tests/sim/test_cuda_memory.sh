#!/usr/bin/env bash
# cuda-app's device memory over the simulated CUDA pair, from the ground
# truth alone (memcheck.py cuda): in every --alloc-mode, through the runtime
# and through the driver, on two devices with a leak and an allocation
# larger than the device at step 3: every allocation freed once with its
# size unless leaked, the failed one recorded as failed (result 2) and
# changing nothing (a replay of the device's capacity agrees with every
# call's outcome), the calls each mode makes; caching and vmm place tensors
# inside what they reserved, which exceeds them. A small device that a leak
# fills fails exactly the allocations that do not fit, and the run goes on.
# --alloc-rate holds its rate.
. tests/harness/test.sh

app=$OUTPUT/sim/cuda/cuda-app
[[ -x $app ]] || test_skip "$app is not built"

for mode in direct caching vmm pool; do
	for api in runtime driver; do
		t=$TEST_TMP/$mode-$api.jsonl
		expect_exit 0 "$mode through the $api" -- "$app" --mode "$api" --steps 12 \
			--step-time 200 --launches 1 --alloc-mode "$mode" --allocs-per-step 7 \
			--mem-leak 3145728 --devices 2 --oom-step 3 --truth "$t"
		out=$("$PYTHON" tests/sim/memcheck.py cuda truth="$t" mode="$mode" steps=12 \
			leak=3145728 devices=2 allocs=7 oom_step=3) ||
			fail "memcheck $mode $api: $out"
	done
done

# 64 MiB devices: a 4 MiB leak a step runs out; the calls that fail are
# exactly those that do not fit, and later steps go on.
t=$TEST_TMP/full.jsonl
expect_exit 0 "a leak filling the device" -- "$app" --steps 40 --step-time 200 \
	--launches 1 --alloc-mode direct --allocs-per-step 4 --mem-leak 4194304 \
	--device-memory 67108864 --truth "$t"
out=$("$PYTHON" tests/sim/memcheck.py cuda truth="$t" mode=direct steps=40 leak=4194304 \
	allocs=4 capacity=67108864) || fail "memcheck full device: $out"
failed=$(grep -c '"failed":true' "$t")
((failed >= 20)) || fail "only $failed allocations failed on a full device"

# The benchmark's load: --alloc-rate 10000 holds about 10,000 allocations a
# second (at least 8,000 asked, one more try on a busy machine).
ok=0
for try in 1 2; do
	t=$TEST_TMP/rate$try.jsonl
	expect_exit 0 "10,000 allocations a second" -- "$app" --steps 1000 --launches 0 \
		--alloc-mode direct --allocs-per-step 10 --alloc-rate 10000 --truth "$t"
	rate=$("$PYTHON" -c 'import json,sys
t = sorted(r["t_call"] for r in map(json.loads, open(sys.argv[1])) if r["type"] == "mem_alloc")
print(int(len(t) / ((t[-1] - t[0]) / 1e9)))' "$t")
	echo "allocations: $rate/s"
	((rate >= 8000)) && ok=1 && break
done
((ok)) || fail "below 8000 allocations/s twice"

# Without --alloc-mode no memory call is made.
t=$TEST_TMP/none.jsonl
expect_exit 0 "no alloc mode" -- "$app" --steps 3 --step-time 200 --truth "$t"
! grep -q '"mem_' "$t" || fail "memory lines without --alloc-mode"

test_done
