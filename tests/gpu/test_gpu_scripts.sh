#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# The GPU scripts, on a machine without a GPU (CI): they compile; the
# PyTorch loop runs on the CPU and writes ground truth of the shape the
# runner reads (steps in order, CLOCK_MONOTONIC times that agree with the
# test's own clock), torch_memory.py's too (memory 0 on the CPU); JAX's loop says when JAX is missing; and the runner
# skips, saying why, where there is no GPU. On a GPU machine the runner is
# run by hand (tests/gpu/README.md), never by make test.
set -u
. "$(dirname "$0")/../harness/test.sh"

here=$(dirname "$0")
py=$PYTHON		# Debian's, with torch (test.sh)
work=$TEST_TMP

for f in truth_loop.py jax_train.py torch_train.py torch_memory.py run_gpu.py; do
	"$py" -m py_compile "$here/$f" 2>"$work/err" || fail "$f does not compile: $(cat "$work/err")"
done

if "$py" -c 'import torch' 2>/dev/null; then
	before=$("$py" -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
	"$py" "$here/torch_train.py" --device cpu --steps 10 --duration 120s --warmup 2 --count-launches 2 \
		--truth "$work/truth.jsonl" 2>"$work/torch.err" ||
		fail "torch_train.py on the CPU: $(tail -3 "$work/torch.err")"
	after=$("$py" -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))')
	grep -q '^running pid=' "$work/torch.err" || fail "no running line: $(cat "$work/torch.err")"
	grep -q '^done steps=10 ' "$work/torch.err" || fail "no done line: $(cat "$work/torch.err")"
	grep -q '^launches_per_step=0.000' "$work/torch.err" ||
		fail "the CPU loop counted launches: $(cat "$work/torch.err")"
	"$py" - "$work/truth.jsonl" "$before" "$after" <<'PY' || fail "torch truth"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
lo, hi = int(sys.argv[2]), int(sys.argv[3])
assert [r["step"] for r in recs] == list(range(10)), "steps 0..9 in order"
for a, b in zip(recs, recs[1:]):
    assert a["t1"] <= b["t0"], "steps do not overlap"
assert all(lo <= r["t0"] < r["t1"] <= hi for r in recs), "CLOCK_MONOTONIC, in the run"
PY
	"$py" "$here/torch_memory.py" --device cpu --steps 5 --leak-mb 1 --step-ms 1 \
		--truth "$work/mem.jsonl" 2>"$work/mem.err" ||
		fail "torch_memory.py on the CPU: $(tail -3 "$work/mem.err")"
	"$py" - "$work/mem.jsonl" <<'PY' || fail "torch_memory truth"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert [r["step"] for r in recs] == list(range(5)), "steps 0..4 in order"
assert all(r["reserved"] == 0 and r["allocated"] == 0 and r["t0"] < r["t1"] for r in recs)
PY
else
	skip_part "python3-torch missing: torch_train.py not run on the CPU"
fi

if ! "$py" -c 'import jax' 2>/dev/null; then
	"$py" "$here/jax_train.py" --truth "$work/j.jsonl" 2>"$work/jax.err"
	rc=$?
	[[ $rc -eq 77 ]] || fail "jax_train.py without JAX: exit $rc, not 77"
	grep -q 'JAX is not installed' "$work/jax.err" || fail "no reason: $(cat "$work/jax.err")"
fi

if [[ ! -e /dev/nvidia0 ]]; then
	"$py" "$here/run_gpu.py" >"$work/run.out" 2>&1
	rc=$?
	if [[ $(id -u) -eq 0 ]]; then
		[[ $rc -eq 77 ]] && grep -q 'no NVIDIA GPU' "$work/run.out" ||
			fail "run_gpu.py without a GPU: exit $rc: $(cat "$work/run.out")"
	else
		[[ $rc -eq 77 ]] || fail "run_gpu.py unprivileged: exit $rc"
	fi
fi
test_done
