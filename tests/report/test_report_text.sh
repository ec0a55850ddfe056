#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# report's text as a user reads it (issue 26), on the H100 fixtures and a
# synthetic XSpace (synth_xspace.py text_layout): no line wider than
# $COLUMNS in the tables; long C++ names fitted with a mark, never cut
# mid-word (void cutlass::Kernel2<...>(...)); threads that share a name
# told apart by their ids (two `reader` threads' pread64 rows, a process's
# python3 threads); "1 event", "1 device plane"; the window beside the
# events span; --steps N and --steps all; every step in JSON's
# steps.list, checked with /usr/bin/python3's json against the summary.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

FIXTURES=${ACCELTRACE_FIXTURES:-tests/fixtures/h100}
JAX=$FIXTURES/jax-profiler.xplane.pb
OURS=$FIXTURES/acceltrace-jax-pid.xplane.pb
[[ -r $JAX && -r $OURS ]] || test_skip "no H100 fixtures at $FIXTURES (set ACCELTRACE_FIXTURES)"
"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"
"$PYTHON" tests/report/synth_xspace.py "$TEST_TMP" || { fail "writing the synthetic XSpaces"; test_done; }
SYN=$TEST_TMP/text_layout.xplane.pb

# The tables' lines (from a header to the blank line after it).
tables() {
	awk '/^  (self %|count|  count) / || /^ +count +total ms/ { t = 1 } /^$/ { t = 0 } t'
}

for cols in 120 80; do
	for f in "$JAX" "$OURS" "$SYN"; do
		out=$(COLUMNS=$cols "$ACCELTRACE" report "$f") || { fail "report $f"; continue; }
		long=$(tables <<<"$out" | awk -v w="$cols" 'length($0) > w')
		[[ -z $long ]] || fail "$f at $cols columns: table lines wider: $long"
		grep -q '(cutl$' <<<"$out" && fail "$f: a name cut mid-word: $(grep '(cutl$' <<<"$out")"
		grep -Eq 'plane\(s\)|[^0-9]1 events' <<<"$out" &&
			fail "$f: grammar: $(grep -E 'plane\(s\)|[^0-9]1 events' <<<"$out")"
	done
done

out=$(COLUMNS=120 "$ACCELTRACE" report "$JAX")
contains "$out" "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align4>(...)" \
	"120 columns: the kernel's arguments folded, its template kept"
contains "$out" "1 device plane" "grammar"
contains "$out" "pjrt_async_work_runner/1391642173629522130 " "120 columns: a thread in full"
contains "$out" "window                 3.012 s" "JAX's window (profile_start/stop_time)"
contains "$out" "events span            3.054 s (first event's start to last event's end)" \
	"the events span, in record's words"
out=$(COLUMNS=80 "$ACCELTRACE" report "$JAX")
contains "$out" "void cutlass::Kernel2<...>(...)" "80 columns: its template folded too"
[[ $(grep -Ec 'pjrt\.\.\.[0-9]+ +H2D Dispatch' <<<"$out") -eq 3 ]] ||
	fail "80 columns: three H2D Dispatch threads told apart by their ends: $(grep 'H2D Dispatch' <<<"$out")"
out=$("$ACCELTRACE" report -w "$JAX")
contains "$out" "$(printf '%s' "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_32x3_nt_align4>(cutlass_80")" \
	"-w: names in full"

out=$(COLUMNS=120 "$ACCELTRACE" report "$OURS")
for tid in 569 570 762 770; do
	contains "$out" "python3 (pid 469, tid $tid) cuMemcpyHtoDAsync_v2" "a python3 thread's row with its tid"
done
contains "$out" "step loop thread: python3 (pid 469, tid 469)" "the loop thread with its tid"

out=$(COLUMNS=120 "$ACCELTRACE" report "$SYN")
contains "$out" "reader (tid 11) pread64" "two threads named reader: the first"
contains "$out" "reader (tid 12) pread64" "two threads named reader: the second"
grep -Eq 'python3 +pread64' <<<"$out" || fail "a thread whose name no other has keeps it: $out"
contains "$out" "- 1 event clipped to the capture window" "1 event, not 1 events"
contains "$out" "window                 0.050 s" "the window"
contains "$out" "events span            0.030 s" "the events span"

# Steps: 20 rows by default, N, all; JSON lists every one.
rows() { grep -Ec '^ +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+  \|'; }
out=$("$ACCELTRACE" report "$JAX")
[[ $(rows <<<"$out") -eq 20 ]] || fail "default: 20 step rows, got $(rows <<<"$out")"
contains "$out" "(489 more steps: --steps all shows every one, -j lists them in steps.list)" \
	"the rest of the steps said, with the way to them"
out=$("$ACCELTRACE" report --steps 3 "$JAX")
[[ $(rows <<<"$out") -eq 3 ]] || fail "--steps 3: 3 rows, got $(rows <<<"$out")"
out=$("$ACCELTRACE" report --steps all "$JAX")
[[ $(rows <<<"$out") -eq 509 ]] || fail "--steps all: 509 rows, got $(rows <<<"$out")"
grep -q "more step" <<<"$out" && fail "--steps all: no 'more steps' line"
expect_exit 2 "--steps with a bad value" -- "$ACCELTRACE" report --steps some "$JAX"
contains "$err" "--steps" "the bad value's message names the option"

for f in "$JAX" "$OURS" "$SYN"; do
	"$ACCELTRACE" report -j "$f" >"$TEST_TMP/r.json" || { fail "report -j $f"; continue; }
	"$PYTHON" - "$TEST_TMP/r.json" <<'PY' || fail "$f: steps.list"
import json, sys

r = json.load(open(sys.argv[1]))
s = r["steps"]
lst = s["list"]
ok = len(lst) == s["complete"]
if lst:
    times = [x["time_ms"] for x in lst]
    ok &= [x["index"] for x in lst] == list(range(len(lst)))
    ok &= abs(sum(times) / len(times) - s["avg_ms"]) < 1e-6 * max(1, s["avg_ms"])
    ok &= abs(min(times) - s["min_ms"]) < 1e-6 and abs(max(times) - s["max_ms"]) < 1e-6
    ok &= all(abs(x["input_ms"] + x["compute_ms"] + x["other_ms"] - x["time_ms"]) < 1e-3
              for x in lst)
    ok &= all(b["start_ms"] > a["start_ms"] for a, b in zip(lst, lst[1:]))
for o in r["input_pipeline"]["ops"]:
    ok &= isinstance(o["thread_id"], int)
print("%s: %d steps listed of %d measured" % (sys.argv[1], len(lst), s["complete"]))
sys.exit(0 if ok else 1)
PY
done
test_done
