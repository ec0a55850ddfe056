#!/usr/bin/env bash
# CUDA_INJECTION64_PATH in the simulated driver, and the simulated CUPTI
# seen from an injected client (libsiminject.so, cuda_inject.c):
#
# - every cuda-app mode reaches cuInit, which runs InitializeInjection once
#   (though the runtime calls cuInit again), and a cuInit from inside it
#   returns at once;
# - a missing library, or one without InitializeInjection, is one line on
#   stderr and the program goes on; an empty variable says nothing;
# - with the client enabling CUPTI from InitializeInjection (records on
#   CLOCK_MONOTONIC, kernel tids), for each way of calling (runtime, driver,
#   mixed, and the runtime through the exported driver functions): every
#   kernel, copy and memset record matches one "cuda_device" truth line
#   (stream, times, name, bytes) and that line one "cuda" call (api, a, b,
#   after the call began); graph launches are two kernels, launches one,
#   copies and memsets one; each device record shares its correlation id
#   with its outermost API record, and nested driver calls with theirs;
#   a stream's work does not overlap; nothing dropped;
# - SIM_CUPTI_FAIL=privileges: enabling fails, the program runs, no
#   cuda_device truth.
. tests/harness/test.sh

cuda=$OUTPUT/sim/cuda
app=$cuda/cuda-app
[[ -x $app && -f $cuda/libsiminject.so && -f $cuda/libcupti.so.13 ]] ||
	test_skip "the simulated CUDA stack is not built"
inject=$(realpath "$cuda/libsiminject.so")
cupti=$(realpath "$cuda/libcupti.so.13")
quick=(--steps 3 --step-time 100)

for mode in runtime driver mixed; do
	expect_exit 0 "$mode with an injection" -- env CUDA_INJECTION64_PATH="$inject" \
		"$app" --mode $mode "${quick[@]}"
	n=$(grep -c 'siminject: InitializeInjection' <<<"$err")
	[[ $n -eq 1 ]] || fail "$mode: InitializeInjection ran $n times: $err"
	[[ $(head -n1 <<<"$err") == "siminject: InitializeInjection"* ]] ||
		fail "$mode: InitializeInjection before anything else: $err"
done

expect_exit 0 "cuInit inside InitializeInjection" -- timeout 20 env \
	CUDA_INJECTION64_PATH="$inject" SIM_INJECT_REENTER=1 "$app" "${quick[@]}"
contains "$err" "siminject: cuInit inside InitializeInjection: 0" "re-entrant cuInit returns 0"

expect_exit 0 "a missing injection library" -- env \
	CUDA_INJECTION64_PATH="$TEST_TMP/nope.so" "$app" "${quick[@]}"
[[ $(grep -c '^libsimdrv:' <<<"$err") -eq 1 ]] || fail "a missing library: one line: $err"
contains "$err" "nope.so" "the line names the library"
contains "$err" "running mode=runtime" "the program goes on"

expect_exit 0 "a library without InitializeInjection" -- env \
	CUDA_INJECTION64_PATH="$(realpath "$OUTPUT/sim/libsimtruth.so")" "$app" "${quick[@]}"
[[ $(grep -c '^libsimdrv:' <<<"$err") -eq 1 ]] || fail "no InitializeInjection: one line: $err"
contains "$err" "has no InitializeInjection" "says what is missing"

expect_exit 0 "an empty CUDA_INJECTION64_PATH" -- env CUDA_INJECTION64_PATH= "$app" "${quick[@]}"
[[ $err != *libsimdrv:* ]] || fail "an empty variable is not an error: $err"

check_records() {
	"$PYTHON" - "$@" <<'EOF'
import json, sys

records, truth, mode, exported = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
R = [json.loads(l) for l in open(records)]
T = [json.loads(l) for l in open(truth)]
bad = []

def check(ok, what):
    if not ok:
        bad.append(what)
    return ok

check(R and R[-1] == {"dropped": 0}, "ends with nothing dropped: %s" % R[-1:])
dev = [r for r in R if r.get("kind") in ("kernel", "memcpy", "memset")]
api = [r for r in R if r.get("kind") in ("runtime", "driver")]
tdev = [t for t in T if t["type"] == "cuda_device"]
calls = [t for t in T if t["type"] == "cuda"]
check(dev and len(dev) == len(tdev), "%d device records, %d cuda_device truth lines"
      % (len(dev), len(tdev)))

order = lambda x: (x["corr"], x["kind"], x.get("start", x.get("t_start")))
for r, t in zip(sorted(dev, key=order), sorted(tdev, key=order)):
    same = (r["corr"] == t["corr"] and r["kind"] == t["kind"] and r["stream"] == t["stream"]
            and abs(r["start"] - t["t_start"]) <= 1000 and abs(r["end"] - t["t_end"]) <= 1000
            and (r["kind"] != "kernel" or r["name"] == t["name"])
            and (r["kind"] == "kernel" or r["bytes"] == t["bytes"])
            and (r["kind"] != "kernel" or r["graph_id"] == t["graph_id"])
            and not t["dropped"])
    if not check(same, "record %s is not truth %s" % (r, t)):
        break

# Each device truth line is the work of one call; each call its work.
by_call = {}
for t in tdev:
    by_call.setdefault((t["api"], t["a"], t["b"]), []).append(t)
want = {"launch": 1, "graph": 2, "h2d": 1, "d2h": 1, "memset": 1}
for c in calls:
    work = by_call.pop((c["api"], c["a"], c["b"]), [])
    n = want.get(c["op"], 0)
    check(len(work) == n, "%s %s (%d, %d): %d device lines, not %d"
          % (c["api"], c["op"], c["a"], c["b"], len(work), n))
    for w in work:
        check(w["t_start"] >= c["t_call"] + 3000, "work after its call: %s %s" % (c, w))
        check(w["tid"] == c["tid"], "truth tid is the caller's: %s" % w)
check(not by_call, "device work without a call: %s" % list(by_call)[:3])

# Correlation: the outermost API record of each piece of work, by name.
apis = {}
for a in api:
    apis.setdefault(a["corr"], []).append(a)
pid, tid = calls[0]["pid"], calls[0]["tid"]
for t in tdev:
    outer = [a for a in apis.get(t["corr"], [])
             if a["kind"] == ("runtime" if t["api"].startswith("cuda") else "driver")]
    check(len(outer) == 1 and outer[0]["api"] == t["api"],
          "corr %d: one %s record: %s" % (t["corr"], t["api"], outer))
for a in api:
    check(a["pid"] == pid and a["tid"] == tid and a["result"] == 0 and a["start"] <= a["end"],
          "API record pid/tid/result/times: %s" % a)
nested = [a for a in api if a["kind"] == "driver" and any(
    b["kind"] == "runtime" for b in apis[a["corr"]])]
if exported:
    check(len(nested) >= len([c for c in calls if c["op"] == "launch"]),
          "exported: driver calls inside runtime calls share their corr (%d)" % len(nested))
else:
    check(not nested, "private table: no driver records inside runtime calls: %s" % nested[:2])

# Each stream's work in order.
streams = {}
for r in dev:
    streams.setdefault(r["stream"], []).append((r["start"], r["end"]))
for s, spans in streams.items():
    spans.sort()
    for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
        if not check(e0 <= s1, "stream %d overlaps: %s %s" % (s, (s0, e0), (s1, e1))):
            break
if mode in ("runtime", "mixed"):
    check(any(len(r["name"]) > 56 for r in dev if r["kind"] == "kernel"), "a name over 56 bytes")
for b in bad[:10]:
    print("FAIL: %s: %s" % (mode, b), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}

for run in runtime driver mixed runtime-exported; do
	mode=${run%-exported}
	exported=0
	[[ $run == *-exported ]] && exported=1
	d=$TEST_TMP/$run
	mkdir -p "$d"
	expect_exit 0 "$run with a CUPTI client" -- env CUDA_INJECTION64_PATH="$inject" \
		SIM_INJECT_CUPTI="$cupti" SIM_INJECT_OUT="$d/records.jsonl" \
		SIMRT_DRIVER=$([[ $exported -eq 1 ]] && echo exported) \
		"$app" --mode "$mode" --steps 30 --step-time 200 --truth "$d/truth.jsonl"
	check_records "$d/records.jsonl" "$d/truth.jsonl" "$run" $exported ||
		fail "$run: records and truth disagree"
done

d=$TEST_TMP/privileges
mkdir -p "$d"
expect_exit 0 "CUPTI without the privilege" -- env CUDA_INJECTION64_PATH="$inject" \
	SIM_INJECT_CUPTI="$cupti" SIM_INJECT_OUT="$d/records.jsonl" SIM_CUPTI_FAIL=privileges \
	"$app" "${quick[@]}" --truth "$d/truth.jsonl"
contains "$err" "cuptiActivityEnable(10): 35" "enabling fails with INSUFFICIENT_PRIVILEGES"
contains "$err" "running mode=runtime" "the program goes on"
grep -q cuda_device "$d/truth.jsonl" && fail "no CUPTI, no cuda_device truth"

test_done
