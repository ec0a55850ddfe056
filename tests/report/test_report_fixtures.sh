#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# acceltrace report on real H100 captures with per-step ground truth
# (fixtures/h100/: JAX's own profiler, GPU stream lines with 11 kernels a
# step and no step markers; and acceltrace's capture of the same loop):
# the steps are found and steps.avg_ms is within 2% of the truth's step
# period (t0 to next t0) over the same steps.
#
# The truth's clock (CLOCK_MONOTONIC of the run) is not the capture's, so
# the capture's steps are placed in the truth by their periods: the offset
# into the truth whose step periods best match the capture's (decoded with
# Python's protobuf, not our reader).
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

FIXTURES=${ACCELTRACE_FIXTURES:-tests/fixtures/h100}
[[ -r $FIXTURES/jax-profiler.xplane.pb ]] ||
	test_skip "no H100 fixtures at $FIXTURES (set ACCELTRACE_FIXTURES)"
"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"

for name in jax-profiler acceltrace-jax-pid; do
	"$ACCELTRACE" report -j "$FIXTURES/$name.xplane.pb" >"$TEST_TMP/$name.json" ||
		{ fail "$name: report failed"; continue; }
	"$PYTHON" - "$FIXTURES/$name" "$TEST_TMP/$name.json" <<'PY' || fail "$name: step time"
import json, sys
sys.path.insert(0, "tests/harness")
import xspace

base, report = sys.argv[1], json.load(open(sys.argv[2]))
truth = [json.loads(l) for l in open(base + ".truth.jsonl")]
space = xspace.xplane_pb2().XSpace()
space.ParseFromString(open(base + ".xplane.pb", "rb").read())

# The capture's step starts, as XProf would see them: a Steps line, else
# the first kernel of each launch (correlation id) of the step program.
starts = None
for p in space.planes:
    if not p.name.startswith("/device:"):
        continue
    names = {k: v.name for k, v in p.stat_metadata.items()}
    for l in p.lines:
        if l.name == "Steps":
            starts = sorted(l.timestamp_ns * 1000 + e.offset_ps for e in l.events)
    if starts is None:
        first = {}
        for l in p.lines:
            for e in l.events:
                st = {names.get(s.metadata_id): s for s in e.stats}
                if "correlation_id" in st and "program_id" in st:
                    c = st["correlation_id"].uint64_value or st["correlation_id"].int64_value
                    t = l.timestamp_ns * 1000 + e.offset_ps
                    first[c] = min(first.get(c, t), t)
        starts = sorted(first.values())
cap = [(b - a) / 1e9 for a, b in zip(starts, starts[1:])]
tper = [(b["t0"] - a["t0"]) / 1e6 for a, b in zip(truth, truth[1:])]
n = len(cap)
best = min(range(len(tper) - n + 1),
           key=lambda k: sum(abs(x - y) for x, y in zip(cap, tper[k:k + n])))
want = sum(tper[best:best + n]) / n
got = report["steps"]["avg_ms"]
ok = report["steps"]["count"] == len(starts) and abs(got - want) <= 0.02 * want
print("%s: %d steps, avg %.4f ms, truth %.4f ms over truth steps %d..%d (%+.2f%%)"
      % (base, report["steps"]["count"], got, want, best, best + n, 100 * (got - want) / want))
if "jax-profiler" in base and report["steps"]["count"] != len(truth):
    print("the JAX capture holds all %d steps; found %d" % (len(truth), report["steps"]["count"]))
    ok = False
sys.exit(0 if ok else 1)
PY
done
test_done
