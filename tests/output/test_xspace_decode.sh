#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Reads acceltrace's XSpace with decoders acceltrace did not write: protoc
# --decode and Python's google.protobuf (module generated from
# user/output/xplane.proto at test time). The capture comes from
# `test_xspace_writer --emit` (see tests/output/test_xspace_writer.c for what
# it holds). Also proves that both parsers accept the padded (non-minimal)
# varint the writer uses for plane lengths.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

EMIT=$OUTPUT/tests/output/test_xspace_writer
emit_for_decode "$EMIT"
FILE=$TEST_TMP/sample.xplane.pb
LOGFILE=$TEST_TMP/logdir/plugins/profile/2026_01_01_00_00_00/tpu-host_8470.xplane.pb
[[ -s $FILE ]] || fail "no sample file"
[[ -s $LOGFILE ]] || fail "no file at the XProf path $LOGFILE"
cmp -s "$FILE" "$LOGFILE" || fail "the two writes differ"

# ---- protoc --decode
text=$(protoc --decode=tensorflow.profiler.XSpace -I user/output user/output/xplane.proto <"$FILE" 2>"$TEST_TMP/protoc.err")
rc=$?
[[ $rc -eq 0 ]] || fail "protoc --decode failed: $(cat "$TEST_TMP/protoc.err")"
for want in 'name: "/host:CPU"' 'name: "/device:TPU:0"' 'name: "/device:TPU:1"' \
	'name: "Task Environment"' 'name: "Steps"' 'name: "XLA Modules"' \
	'name: "XLA Ops"' 'name: "acceltrace.true_start_ns"' 'str_value: "TPU v4"' \
	'hostnames: "tpu-host_8470"' 'name: "profile_start_time"' \
	'name: "acceltrace.thread_names"' 'display_name: "pt_data_worker (pid 100, was python3, data \"w\")"'; do
	contains "$text" "$want" "protoc text"
done
[[ $text != *"offset_ps: -"* && $text != *"duration_ps: -"* && $text != *"timestamp_ns: -"* ]] ||
	fail "protoc shows a negative time"

# ---- padded varints: the same tiny XSpace with a minimal and a padded length
printf '\x0a\x0b\x12\x09/host:CPU' >"$TEST_TMP/minimal.pb"
printf '\x0a\x8b\x80\x80\x80\x00\x12\x09/host:CPU' >"$TEST_TMP/padded.pb"
for f in minimal padded; do
	out=$(protoc --decode=tensorflow.profiler.XSpace -I user/output user/output/xplane.proto <"$TEST_TMP/$f.pb" 2>&1)
	contains "$out" 'name: "/host:CPU"' "protoc reads the $f length"
done

# ---- Python google.protobuf
protoc --python_out="$TEST_TMP" -I user/output user/output/xplane.proto || fail "protoc --python_out"
cat >"$TEST_TMP/check.py" <<'EOF'
import sys
sys.path.insert(0, sys.argv[1])
import xplane_pb2

failures = []
def check(cond, what):
    if not cond:
        failures.append(what)

# Padded varints.
for f in ("minimal", "padded"):
    xs = xplane_pb2.XSpace()
    xs.ParseFromString(open(f"{sys.argv[1]}/{f}.pb", "rb").read())
    check([p.name for p in xs.planes] == ["/host:CPU"], f"python reads the {f} length")

data = open(sys.argv[2], "rb").read()
xs = xplane_pb2.XSpace()
xs.ParseFromString(data)

check(list(xs.hostnames) == ["tpu-host_8470"], f"hostnames {list(xs.hostnames)}")
names = [p.name for p in xs.planes]
check(names == ["/host:CPU", "/device:TPU:0", "/device:TPU:1", "Task Environment"],
      f"planes {names}")
P = {p.name: p for p in xs.planes}
check(len({p.id for p in xs.planes}) == len(xs.planes), "plane ids unique")
check(P["/device:TPU:0"].id == 0 and P["/device:TPU:1"].id == 1, "TPU plane ids")

def stat_value(plane, st):
    kind = st.WhichOneof("value")
    if kind == "ref_value":
        return plane.stat_metadata[st.ref_value].name
    return getattr(st, kind)

def stats(plane, msg):
    return {plane.stat_metadata[s.metadata_id].name: stat_value(plane, s) for s in msg.stats}

total_events = 0
for p in xs.planes:
    # Metadata: ids equal keys; names unique; every reference resolves.
    for k, m in p.stat_metadata.items():
        check(k == m.id, f"{p.name}: stat metadata key {k} != id {m.id}")
    sm_names = [m.name for m in p.stat_metadata.values()]
    check(len(sm_names) == len(set(sm_names)), f"{p.name}: duplicate stat metadata names")
    check(all(sm_names), f"{p.name}: empty stat metadata name")
    for k, m in p.event_metadata.items():
        check(k == m.id, f"{p.name}: event metadata key {k} != id {m.id}")
        for s in m.stats:
            check(s.metadata_id in p.stat_metadata, f"{p.name}: metadata stat id")
    for s in p.stats:
        check(s.metadata_id in p.stat_metadata, f"{p.name}: plane stat id")
    for l in p.lines:
        check(l.timestamp_ns >= 0 and l.duration_ps >= 0, f"{p.name}/{l.name}: negative line time")
        stack = []
        prev = None
        for e in l.events:
            total_events += 1
            check(e.WhichOneof("data") == "offset_ps", f"{l.name}: offset_ps not set")
            check(e.metadata_id in p.event_metadata, f"{l.name}: unknown event metadata")
            check(e.offset_ps >= 0 and e.duration_ps >= 0, f"{l.name}: negative event time")
            ids = [s.metadata_id for s in e.stats]
            check(len(ids) == len(set(ids)), f"{l.name}: repeated stat in one event")
            for s in e.stats:
                check(s.metadata_id in p.stat_metadata, f"{l.name}: unknown stat id")
                check(s.WhichOneof("value") != "compressed_str_value", "compressed_str_value")
                if s.WhichOneof("value") == "ref_value":
                    check(s.ref_value in p.stat_metadata, f"{l.name}: dangling ref_value")
            start, end = e.offset_ps, e.offset_ps + e.duration_ps
            if prev is not None:
                check(prev[0] < start or (prev[0] == start and prev[1] >= end - start),
                      f"{p.name}/{l.name}: events not sorted at {start}")
            prev = (start, end - start)
            while stack and stack[-1] <= start and stack[-1] < end:
                stack.pop()
            check(not stack or stack[-1] >= end,
                  f"{p.name}/{l.name}: partial overlap at offset {start}")
            stack.append(end)
check(total_events == 18, f"events {total_events}, expected 18")

# Host plane.
host = P["/host:CPU"]
L = {}
for l in host.lines:
    L.setdefault(l.display_id, []).append(l)
check(sorted(L) == [100, 101, 200], f"host rows {sorted(L)}")
check(len(L[100]) == 2, "tid 100 split into two lines (partial overlap)")
check({l.id for l in L[100]} == {100, 100 + (1 << 32)}, "line ids of tid 100")
check(all(l.name == "python3" and l.display_name == "python3 (pid 100)" for l in L[100]),
      "tid 100 names")
check(L[200][0].display_name == "main (pid 200)", "pid in display names (two processes)")
# Renames: one line per thread, named by its latest name, the earlier names
# in its display name and the times in the plane stat acceltrace.thread_names.
check([(l.name, l.display_name) for l in L[101]] ==
      [("pt_data_worker", 'pt_data_worker (pid 100, was python3, data "w")')],
      f"tid 101 named by its latest name: {[(l.name, l.display_name) for l in L[101]]}")
import json
hist = json.loads(stats(host, host)["acceltrace.thread_names"])
# Each process's parent, container and pod (unknown: 0 and "").
procs = {p["pid"]: p for p in json.loads(stats(host, host)["acceltrace.processes"])["processes"]}
check(procs.get(200) == {"pid": 200, "ppid": 100, "name": "trainer2",
                         "container": "0123456789ab", "pod": "pod-uid-1"} and
      procs.get(100, {}).get("ppid") == 0 and procs.get(100, {}).get("container") == "",
      f"acceltrace.processes {procs}")
check(hist == [{"pid": 100, "tid": 101, "more": 0,
                "names": [{"name": "python3", "ns": -300}, {"name": 'data "w"', "ns": 15},
                          {"name": "pt_data_worker", "ns": 20}]}],
      f"thread name histories {hist}")
check([len(l.events) for l in L[100]] == [5, 1], "events per line of tid 100")

def ev_name(p, e):
    return p.event_metadata[e.metadata_id].name

l0 = L[100][0]
ev = {ev_name(host, e): e for e in l0.events}
A = ev["PjRtLoadedExecutable::Execute"]
sa = stats(host, A)
check(A.offset_ps == 0 and A.duration_ps == 5000 * 1000, "A clipped at the window start")
check(sa.get("acceltrace.true_start_ns") == -2000, f"A true start {sa}")
check(sa.get("acceltrace.true_end_ns") == 5000, "A true end")
check(sa.get("acceltrace.clipped") == "start", "A clipped side")
corr = [s for s in A.stats if host.stat_metadata[s.metadata_id].name == "correlation_id"]
check(len(corr) == 1 and corr[0].WhichOneof("value") == "uint64_value" and
      corr[0].uint64_value == 7, "correlation_id as uint64")
check(sa.get("launch_id") == 7, "u64 arg")
G = ev["train"]
sg = stats(host, G)
check(G.offset_ps == 0 and G.duration_ps == 1000000 * 1000, "G spans the window")
check(sg.get("acceltrace.clipped") == "both", "G clipped both sides")
check(sg.get("acceltrace.true_start_ns") == -100 and sg.get("acceltrace.true_end_ns") == 1000100,
      f"G true times {sg}")
check(sg.get("acceltrace.began_before_probes") == 1 and sg.get("acceltrace.open_at_stop") == 1,
      "G flags")
D = ev["Compile"]
sd = stats(host, D)
check(sd.get("acceltrace.clipped") == "end" and sd.get("acceltrace.ended_in_grace") == 1,
      f"D clipped at the end {sd}")
check(D.offset_ps + D.duration_ps == 1000000 * 1000, "D ends at the window stop")
B = ev["BufferFromHostBuffer"]
sb = stats(host, B)
check(sb == {"delta": -5, "ratio": 0.5, "dtype": "bf16", "bytes": 4096}, f"B args {sb}")
check("acceltrace.clipped" not in sb, "B not clipped")
check([ev_name(host, e) for e in l0.events[:2]] == ["train", "PjRtLoadedExecutable::Execute"],
      "after clipping, the longer span first")
check("before window" not in [m.name for m in host.event_metadata.values()],
      "span before the window not written")
reads = L[101][0].events
check(len(reads) == 3, "three file reads (thread instants cut by the budget)")
check(all(stats(host, e).get("path") == "/data/shard-0001" for e in reads), "path interned")
check(stats(host, reads[2]).get("acceltrace.error") == 1, "error flag")

# TPU planes.
t0 = P["/device:TPU:0"]
ps = stats(t0, t0)
check("TPU" in ps.get("device_type_string", ""), f"device_type_string {ps}")
check(ps.get("peak_teraflops_per_second") == 275.0 and
      ps.get("peak_hbm_bw_gigabytes_per_second") == 1200.0, "peaks")
check(isinstance(ps.get("peak_teraflops_per_second"), float), "peak is a double")
lines0 = [l.name for l in t0.lines]
check(lines0 == ["Steps", "XLA Modules", "XLA Ops", "XLA Ops"], f"TPU:0 lines {lines0}")
ops = [l for l in t0.lines if l.name == "XLA Ops"]
check(ops[0].display_id == ops[1].display_id, "XLA Ops lines share a row")
md = {m.name: m for m in t0.event_metadata.values()}
fm = stats(t0, md["fusion.1"])
check(fm == {"hlo_category": "convolution", "flops": 1000}, f"fusion.1 metadata stats {fm}")
check(stats(t0, md["jit_train_step"]) == {"program_id": 42}, "program_id on module metadata")
fus = [e for e in ops[0].events if ev_name(t0, e) == "fusion.1"]
check([stats(t0, e) for e in fus] == [{}, {}, {"flops": 2000}],
      f"per-occurrence stats only where they differ: {[stats(t0, e) for e in fus]}")
t1 = P["/device:TPU:1"]
ps1 = stats(t1, t1)
check(ps1.get("device_type_string") == "TPU v5e", f"type without TPU gets it {ps1}")
check("peak_teraflops_per_second" not in ps1, "unknown peaks left out")
st1 = t1.lines[0].events[0]
check(stats(t1, st1).get("acceltrace.estimated") == 1, "estimated flag")

# XProf's grouping: the step (correlation 7, on both cores) is step 0; its
# launch, module and Steps events carry group_id 0; a step number the
# producer gave (step_num 1 on TPU:0) is kept, else step_num is the number;
# group_id is declared on every host and device plane (IsXSpaceGrouped).
check(sa.get("group_id") == 0, f"host launch of the step grouped {sa}")
check(stats(t0, t0.lines[0].events[0]).get("group_id") == 0, "Steps event grouped")
check(stats(t0, t0.lines[0].events[0]).get("step_num") == 1, "producer's step_num kept")
check(stats(t1, st1).get("group_id") == 0 and stats(t1, st1).get("step_num") == 0,
      f"TPU:1 step numbered {stats(t1, st1)}")
check(stats(t0, t0.lines[1].events[0]).get("group_id") == 0, "module event grouped")
check("group_id" not in sb, "a span of no step has no group_id")
for p in xs.planes:
    names = {m.name for m in p.stat_metadata.values()}
    check(("group_id" in names) == (p.name != "Task Environment"),
          f"group_id declared on {p.name}: {'group_id' in names}")

# Task Environment.
te = P["Task Environment"]
ts = stats(te, te)
WS, WE, RT = 10000000000, 10001000000, 1700000000000000000
check(ts.get("profile_start_time") == WS + RT and ts.get("profile_stop_time") == WE + RT,
      f"task environment {ts}")
check(ts.get("acceltrace.window_start_ns") == WS, f"window start on CLOCK_MONOTONIC {ts}")
check(ts.get("acceltrace.capture_reason") == "rule: pid 100 crashed\ufffd(signal 9)",
      f"the capture's reason, a string, its newline replaced {ts}")
check(ts.get("acceltrace.focus_pid") == 100, f"the process it was taken for {ts}")
# What it did not keep: the budget's 5 thread instants, and the records
# lost on the way (the 12 ring buffer drops).
check(ts.get("acceltrace.dropped.thread_event") == 5 and
      not any(k.startswith("acceltrace.dropped.") and k != "acceltrace.dropped.thread_event"
              for k in ts), f"dropped spans per kind {ts}")
check(ts.get("acceltrace.lost_records") == 12, f"records lost {ts}")
check(all(s.WhichOneof("value") == "uint64_value" for s in te.stats
          if te.stat_metadata[s.metadata_id].name.startswith("profile_")), "wall times uint64")

# Warnings.
w = list(xs.warnings)
check("device 1 trace buffer wrapped" in w, f"capture warning {w}")
check("ring buffer drops: 12" in w, "loss counter")
check(not any(x.startswith("unreadable arguments") for x in w), "zero loss left out")
check(any("span budget of 19" in x and "5 thread_event (all)" in x for x in w), "budget warning")
check(any(x.startswith("1 spans wholly outside") for x in w), "outside-window warning")

for f in failures:
    print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
EOF
"$PYTHON" "$TEST_TMP/check.py" "$TEST_TMP" "$FILE" || fail "python checks"
test_done
