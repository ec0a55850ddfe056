#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Device memory in the XSpace, read by a decoder acceltrace did not write
# (Python's google.protobuf, module generated from user/output/xplane.proto
# at test time), against docs/capture-format.md "Device memory": the
# capture of `test_xspace_memory --emit` (see tests/output/
# test_xspace_memory.c) has its MemoryAllocation / MemoryDeallocation
# events on their threads' lines with XProf's stat names, types and values
# (group_id the step the event fell in), a line for a thread with only
# memory events, the allocator's counter line ("Memory in use", a point at
# the window's start, none after it), the whole timeline as the plane stat
# acceltrace.memory_timelines (times before the window negative), the
# budget's drop as acceltrace.memory_events_dropped, and no negative time;
# a point's figure past int64 written as int64's largest, and the timeline
# read whole by acceltrace's own report.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

EMIT=$OUTPUT/tests/output/test_xspace_memory
emit_for_decode "$EMIT"
cat >"$TEST_TMP/check.py" <<'EOF'
import json, sys
sys.path.insert(0, "tests/harness")
import xspace
xplane_pb2 = xspace.xplane_pb2()	# the generated module, made by protoc

failures = []
def check(cond, what):
    if not cond:
        failures.append(what)

xs = xplane_pb2.XSpace()
xs.ParseFromString(open(sys.argv[2], "rb").read())
host = [p for p in xs.planes if p.name == "/host:CPU"][0]
ev_names = {k: v.name for k, v in host.event_metadata.items()}
st_names = {k: v.name for k, v in host.stat_metadata.items()}

def stats(msg):
    """name -> (oneof kind, value), refs read through stat metadata."""
    out = {}
    for st in msg.stats:
        kind = st.WhichOneof("value")
        val = getattr(st, kind)
        if kind == "ref_value":
            val = st_names[val]
        out[st_names[st.metadata_id]] = (kind, val)
    return out

lines = {l.id: l for l in host.lines}
for l in host.lines:
    for e in l.events:
        check(e.offset_ps >= 0 and e.duration_ps >= 0, f"negative time on {l.name}")

# Thread 101: its span line, and its memory events on one more row of it.
check(101 in lines and (101 | 1 << 32) in lines, f"thread 101's lines: {sorted(lines)}")
mem101 = lines.get(101 | 1 << 32)
if mem101:
    check(mem101.display_id == 101, "the memory row shares the thread's display_id")
    check(mem101.name == "python3", f"its name {mem101.name}")
    check([ev_names[e.metadata_id] for e in mem101.events] ==
          ["MemoryAllocation", "MemoryAllocation"], "two allocations on 101")
    check([e.offset_ps for e in mem101.events] == [300000000, 800000000], "their times")
    a = stats(mem101.events[0])
    want = {
        "allocator_name": ("ref_value", "TPU_0_pjrt_buffers"),
        "bytes_allocated": ("int64_value", 131072),
        "bytes_reserved": ("int64_value", 0),
        "peak_bytes_in_use": ("int64_value", 131072),
        "requested_bytes": ("int64_value", 131072),
        "allocation_bytes": ("int64_value", 131072),
        "addr": ("int64_value", 0xb0),
        "device_ordinal": ("int64_value", 0),
        "group_id": ("int64_value", 0),
        "region_type": ("ref_value", "pjrt_buffer"),
        "data_type": ("int64_value", 1),
        "acceltrace.element_type": ("ref_value", "f32"),
        "tensor_shapes": ("ref_value", "[128,256]"),
        "process_id": ("int64_value", 100),
        "acceltrace.api": ("ref_value", "PJRT_Client_BufferFromHostBuffer"),
        "acceltrace.size_from": ("ref_value", "shape"),
    }
    check(a == want, f"allocation stats {a}")
    # XProf's memory id is whichever of the two comes last: the allocator.
    order = [st_names[st.metadata_id] for st in mem101.events[0].stats]
    check(order.index("device_ordinal") < order.index("allocator_name"),
          f"device_ordinal before allocator_name: {order}")
    b = stats(mem101.events[1])
    check("group_id" not in b, f"no step after the last: {b.get('group_id')}")
    check(b.get("acceltrace.size_from") == ("ref_value", "call"), "size from the call")
    check(b.get("region_type") == ("ref_value", "reserved"), "reserved")
    check(b.get("allocator_name") == ("ref_value", "GPU_1_cuda_reserved"), "cuda allocator")
    check(b.get("device_ordinal") == ("int64_value", 1), "device 1")
    check(b.get("acceltrace.untracked") == ("int64_value", 1), "past the live table: said")
    check("acceltrace.untracked" not in stats(mem101.events[0]), "not said of one within it")

# Thread 102: only a free; its own line.
l102 = lines.get(102)
check(l102 is not None and l102.name == "worker", "a line for the memory-only thread")
check(l102 is not None and l102.display_name == "worker (pid 100)",
      "labelled with its pid as every thread line of a two-process capture: %r"
      % (l102 and l102.display_name))
if l102:
    check([ev_names[e.metadata_id] for e in l102.events] == ["MemoryDeallocation"], "the free")
    f = stats(l102.events[0])
    check(f.get("group_id") == ("int64_value", 1), f"the free in step 1: {f.get('group_id')}")
    check(f.get("allocation_bytes") == ("int64_value", 0), "size unknown: 0")
    check(f.get("acceltrace.size_unknown") == ("int64_value", 1), "said unknown")
    check(f.get("acceltrace.device_guessed") == ("int64_value", 1), "said guessed")
    check("acceltrace.size_from" not in f, "no size_from for an unknown size")
    check(f.get("addr") == ("int64_value", -0x10000), "a full 64-bit address, as int64 (XProf reads IntValue)")
    check(f.get("bytes_allocated") == ("int64_value", 4096), "in use after")
    check(f.get("peak_bytes_in_use") == ("int64_value", 8192), "peak")

# The counter line.
cl = lines.get(1 << 62)
check(cl is not None, f"counter line id 2^62: {sorted(lines)}")
if cl:
    check(cl.name == "Device memory: TPU_0_pjrt_buffers (pid 100)", f"counter name {cl.name}")
    check([ev_names[e.metadata_id] for e in cl.events] == ["Memory in use"] * 2,
          "two points: the window's start and one in it")
    check([e.offset_ps for e in cl.events] == [0, 500000000], "at 0 and 500 us")
    pts = [stats(e) for e in cl.events]
    check([p["bytes_allocated"] for p in pts] == [("int64_value", 20), ("int64_value", 30)],
          f"in use {pts}")
    check(pts[0]["acceltrace.min_bytes"] == ("int64_value", 15), "min")
    check(pts[0]["acceltrace.max_bytes"] == ("int64_value", 22), "max")
    check(pts[0]["acceltrace.span_ns"] == ("int64_value", 1000), "span")
    check(pts[1]["peak_bytes_in_use"] == ("int64_value", 32), "peak")

# Plane stats.
ps = stats(host)
tl = ps.get("acceltrace.memory_timelines")
check(tl is not None and tl[0] == "str_value", "memory_timelines is a string")
if tl:
    d = json.loads(tl[1])
    check(d["version"] == 1, "version")
    a = d["allocators"]
    check(len(a) == 1, "one allocator")
    check({k: a[0][k] for k in ("allocator_name", "pid", "device_ordinal", "layer")} ==
          {"allocator_name": "TPU_0_pjrt_buffers", "pid": 100, "device_ordinal": 0,
           "layer": "pjrt_buffers"}, f"allocator {a[0]}")
    check(a[0]["points"] == [[-500000, 1000, 10, 5, 12, 12], [-100000, 1000, 20, 15, 22, 22],
                             [500000, 10, 30, 25, 32, 32],
                             [1000100, 10, 40, 35, 42, 2**63 - 1]],
          f"points {a[0]['points']}")
check(ps.get("acceltrace.memory_events_dropped") == ("int64_value", 1), "dropped")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
EOF
"$PYTHON" "$TEST_TMP/check.py" "$TEST_TMP" "$TEST_TMP/memory.xplane.pb" || fail "python checks"
# acceltrace's own reader takes the timelines whole (a number past int64
# once made it say "the memory timelines stat is malformed").
json=$("$ACCELTRACE" report -j "$TEST_TMP/memory.xplane.pb" 2>"$TEST_TMP/report.err") ||
	fail "report failed: $(cat "$TEST_TMP/report.err")"
[[ $(json_get "$json" "any('malformed' in l for l in d['losses'])") == False ]] ||
	fail "report: the timelines read as malformed: $(json_get "$json" "d['losses']")"
[[ $(json_get "$json" "[m['timeline']['points'] for m in d['memory']['devices'] if m['pid'] == 100 and m['layer'] == 'pjrt_buffers']") == "[4]" ]] ||
	fail "report: the timeline's 4 points: $(json_get "$json" "d['memory']")"
# 1.5 ms of timeline: no rate an hour (it made 85 MB/h once).
[[ $(json_get "$json" "[(m['timeline']['growth_bytes_per_hour'], m['timeline']['too_short_for_rate']) for m in d['memory']['devices'] if m['layer'] == 'pjrt_buffers']") == "[(None, True)]" ]] ||
	fail "report: a rate an hour from 1.5 ms: $(json_get "$json" "d['memory']")"
test_done
