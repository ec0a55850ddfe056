#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# report over a session of several hosts (<host>.xplane.pb each, written by
# Python's protobuf with known step times): each host's report, then the
# fleet's, against the step times the files were made with: h3's 13 ms
# steps against h1's and h2's 10 ms make it the straggler, +3 ms (+30 %);
# a host without steps is listed and not counted; a fleet of equal hosts
# names none; a logdir of two such sessions gives "fleets"; every fleet
# key printed is in docs/report.md's fleet table and back.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

"$PYTHON" -c 'import google.protobuf' 2>/dev/null || test_skip "$PYTHON has no google.protobuf"
command -v protoc >/dev/null || test_skip "protoc is not installed"
LOGDIR=$TEST_TMP/logdir/plugins/profile
"$PYTHON" - "$LOGDIR" <<'PY' || { fail "writing the sessions"; test_done; }
import os, sys
sys.path.insert(0, "tests/report")
import synth_xspace as sx

def host(path, step_ms, n=21):
    """A TPU host: n steps of step_ms on a Steps line (step_num 0..), 6 ms busy each."""
    space = sx.pb2.XSpace()
    dev = sx.Plane(space, "/device:TPU:0", 0)
    steps, ops = dev.line("Steps", 1), dev.line("XLA Ops", 3)
    for i in range(n):
        t = int(i * step_ms * sx.MS)
        dev.event(steps, "train", t, 6 * sx.MS, step_num=i, group_id=i)
        dev.event(ops, "fusion.1", t, 6 * sx.MS, meta_stats={"hlo_category": "convolution"})
    sx.Plane(space, "/host:CPU", 1)
    open(path, "wb").write(space.SerializeToString())

def idle(path):
    space = sx.pb2.XSpace()
    sx.host_only(space)
    open(path, "wb").write(space.SerializeToString())

root = sys.argv[1]
for session, times in (("2024_01_01_00_00_00", {"h1": 10, "h2": 10, "h3": 13}),
                       ("2024_01_02_00_00_00", {"a": 10, "b": 10.1, "c": 10})):
    d = os.path.join(root, session)
    os.makedirs(d)
    for h, ms in times.items():
        host(os.path.join(d, h + ".xplane.pb"), ms)
idle(os.path.join(root, "2024_01_01_00_00_00", "h4.xplane.pb"))
PY
SLOW=$LOGDIR/2024_01_01_00_00_00 EQUAL=$LOGDIR/2024_01_02_00_00_00

expect_exit 0 "report a session of four hosts" -- "$ACCELTRACE" report "$SLOW"
contains "$out" "=== host h2 (2 of 4 in session 2024_01_01_00_00_00) ===" "each host headed by its name"
contains "$out" "Fleet: session 2024_01_01_00_00_00, 4 hosts" "a fleet section"
contains "$out" "h3 is a straggler: its median step is 3.000 ms (30.0%) longer" "the text names the straggler"
contains "$out" "h3 was the slowest on 20 of them" "steps aligned by number"
contains "$out" "no steps: not in the spread" "the host without steps is said"
expect_exit 0 "report a session of equal hosts" -- "$ACCELTRACE" report "$EQUAL"
contains "$out" "no straggler: the slowest host, b," "equal hosts: no straggler"

expect_exit 0 "report -j a session" -- "$ACCELTRACE" report -j "$SLOW"
echo "$out" >"$TEST_TMP/slow.json"
expect_exit 0 "report -j a logdir" -- "$ACCELTRACE" report -j "$TEST_TMP/logdir"
echo "$out" >"$TEST_TMP/logdir.json"
"$PYTHON" - docs/report.md "$TEST_TMP/slow.json" "$TEST_TMP/logdir.json" <<'PY' || fail "fleet JSON"
import json, math, re, sys
doc = open(sys.argv[1]).read()
d = json.load(open(sys.argv[2]))
ld = json.load(open(sys.argv[3]))
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)
f = d["fleet"]
want([r["host"] for r in d["reports"]] == ["h1", "h2", "h3", "h4"], "reports[].host")
by = {h["host"]: h for h in f["hosts"]}
MS = 10**6
for h, ms in (("h1", 10), ("h2", 10), ("h3", 13)):
    want(by[h]["steps"] == 20, "%s: 20 measured steps" % h)
    want(by[h]["step_time_mean_ns"] == ms * MS and by[h]["step_time_median_ns"] == ms * MS,
         "%s: mean and median %d ms: %s" % (h, ms, by[h]))
    want(abs(by[h]["device_idle_pct"] - 100 * (ms - 6) / ms) < 1e-6, "%s: device idle" % h)
    want(by[h]["input_bound_pct"] == 0, "%s: input-bound 0" % h)
want(by["h4"]["steps"] == 0 and by["h4"]["step_time_mean_ns"] is None, "h4: no steps, null")
want(f["hosts_with_steps"] == 3, "three hosts with steps")
want(f["session"] == "2024_01_01_00_00_00", "session")
want(f["slowest_host"] == "h3" and f["straggler"] == "h3", "h3 slowest and straggler")
want(f["fastest_host"] in ("h1", "h2"), "fastest")
want(f["straggler_gap_ns"] == 3 * MS and abs(f["straggler_gap_pct"] - 30) < 1e-9, "gap 3 ms, 30 %")
want(f["step_time_spread_ns"] == 3 * MS, "spread 3 ms")
means = [10, 10, 13]
m = sum(means) / 3
cv = math.sqrt(sum((x - m) ** 2 for x in means) / 3) / m
want(abs(f["step_time_cv"] - cv) < 1e-9, "cv %s, want %s" % (f["step_time_cv"], cv))
want(f["steps_aligned"] == 20 and by["h3"]["slowest_on_steps"] == 20, "aligned steps")
want("fleets" not in d, "one session: fleet, not fleets")
want("fleet" not in ld and len(ld["fleets"]) == 2, "a logdir of two sessions: fleets")
want(ld["fleets"][1]["straggler"] is None and ld["fleets"][1]["slowest_host"] == "b",
     "equal hosts: no straggler")
# Every fleet key printed is documented, and back.
table = doc.split("<!-- fleet-keys: begin -->")[1].split("<!-- fleet-keys: end -->")[0]
documented = set(re.findall(r"^\| `([^`]+)` \|", table, re.M))
printed = set("fleet." + k for k in f) | set("fleet.hosts[]." + k for k in f["hosts"][0])
want(printed == documented, "fleet keys: printed, not documented %s; documented, not "
     "printed %s" % (sorted(printed - documented), sorted(documented - printed)))
for b in bad:
    print("FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
test_done
