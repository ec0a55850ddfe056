#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# GPU stream lines read with decoders acceltrace did not write: protoc
# --decode and Python's google.protobuf (module generated from
# user/output/xplane.proto at test time). The capture comes from
# `test_xspace_streams --emit` (see tests/output/test_xspace_streams.c for
# what it holds): two GPUs, streams with kernels, copies and memsets, an
# estimated XLA Modules line beside them. Checked: the lines of each GPU
# plane (ids, rows, names), that each stream line's name says what its
# events are (recomputed here from the event names, as XLA's CUPTI
# collector names its lines), and the events' correlation ids and args.
set -u
cd "$(dirname "$0")/../.."
. tests/harness/test.sh

EMIT=$OUTPUT/tests/output/test_xspace_streams
emit_for_decode "$EMIT"
FILE=$TEST_TMP/streams.xplane.pb
[[ -s $FILE ]] || { fail "no stream capture"; test_done; }

# ---- protoc --decode
text=$(protoc --decode=tensorflow.profiler.XSpace -I user/output user/output/xplane.proto <"$FILE" 2>"$TEST_TMP/protoc.err") ||
	fail "protoc --decode failed: $(cat "$TEST_TMP/protoc.err")"
for want in 'name: "/device:GPU:0"' 'name: "/device:GPU:1"' 'name: "Stream #7(Compute)"' \
	'name: "Stream #9(MemcpyH2D,Memset)"' 'display_name: "Stream #9(MemcpyH2D,Memset)"' \
	'name: "Stream #2(MemcpyD2H)"' 'id: 4611686018427387906' 'id: 4294967303'; do
	contains "$text" "$want" "protoc text"
done

# ---- Python google.protobuf
cat >"$TEST_TMP/check.py" <<'EOF'
import sys
sys.path.insert(0, "tests/harness")
import xspace
xplane_pb2 = xspace.xplane_pb2()	# the generated module, made by protoc

failures = []
def check(cond, what):
    if not cond:
        failures.append(what)

xs = xplane_pb2.XSpace()
xs.ParseFromString(open(sys.argv[2], "rb").read())
P = {p.name: p for p in xs.planes}
check(list(P) == ["/host:CPU", "/device:GPU:0", "/device:GPU:1", "Task Environment"],
      f"planes {list(P)}")
US = 10**6  # ps
MOVED = 1 << 62

def stats(p, e):
    out = {}
    for s in e.stats:
        kind = s.WhichOneof("value")
        v = getattr(s, kind)
        out[p.stat_metadata[s.metadata_id].name] = (
            p.stat_metadata[v].name if kind == "ref_value" else v)
    return out

def name(p, e):
    return p.event_metadata[e.metadata_id].name

ORDER = ["Compute", "MemcpyH2D", "MemcpyD2H", "MemcpyD2D", "MemcpyP2P", "MemcpyOther", "Memset"]
def work(n):
    if n == "Memset":
        return "Memset"
    if not n.startswith("Memcpy"):
        return "Compute"
    return n if n in ORDER else "MemcpyOther"

g0, g1 = P["/device:GPU:0"], P["/device:GPU:1"]
got = [(l.id, l.display_id, l.name, l.display_name, len(l.events)) for l in g0.lines]
S7, S9 = "Stream #7(Compute)", "Stream #9(MemcpyH2D,Memset)"
S5 = "Stream #5(Compute,MemcpyD2D,MemcpyP2P,MemcpyOther,Memset)"
want = [(2, 2, "XLA Modules", "", 4),
        (MOVED | 2, MOVED | 2, "Stream #2(MemcpyD2H)", "Stream #2(MemcpyD2H)", 1),
        (5, 5, S5, S5, 5),
        (7, 7, S7, S7, 10), (7 + (1 << 32), 7, S7, S7, 1),
        (9, 9, S9, S9, 8)]
check(got == want, f"GPU:0 lines {got}")
got1 = [(l.id, l.display_id, l.name, len(l.events)) for l in g1.lines]
check(got1 == [(7, 7, S7, 1)], f"GPU:1 lines {got1}")

for p in (g0, g1):
    check(len({l.id for l in p.lines}) == len(p.lines), f"{p.name}: line ids unique")
    rows = {}
    for l in p.lines:
        if l.name.startswith("Stream #"):
            rows.setdefault(l.display_id, []).append(l)
    for rid, ls in rows.items():
        # One stream: the same name on each of its lines, saying what it runs.
        evs = [e for l in ls for e in l.events]
        kinds = sorted({work(name(p, e)) for e in evs}, key=ORDER.index)
        stream = rid & 0xffffffff
        check(all(l.name == f"Stream #{stream}({','.join(kinds)})" for l in ls),
              f"{p.name} stream {stream}: {[l.name for l in ls]} for {kinds}")
        for e in evs:
            st = stats(p, e)
            check(st.get("stream_id") == stream, f"{name(p, e)}: stream_id {st}")
            check(isinstance(st.get("correlation_id"), int) and st["correlation_id"] > 0,
                  f"{name(p, e)}: correlation_id {st}")
        for l in ls:
            prev, stack = None, []
            for e in l.events:
                start, end = e.offset_ps, e.offset_ps + e.duration_ps
                check(prev is None or prev < (start, -e.duration_ps) or prev == (start, -e.duration_ps),
                      f"{l.name}: sorted")
                prev = (start, -e.duration_ps)
                while stack and stack[-1] <= start and stack[-1] < end:
                    stack.pop()
                check(not stack or stack[-1] >= end, f"{l.name}: nested")
                stack.append(end)

s9 = g0.lines[5].events
check([name(g0, e) for e in s9[:2]] == ["MemcpyH2D", "Memset"], "stream 9 order")
h2d = stats(g0, s9[0])
check(h2d == {"stream_id": 9, "bytes": 4096, "correlation_id": 200}, f"MemcpyH2D stats {h2d}")
corr = [s for s in s9[0].stats if g0.stat_metadata[s.metadata_id].name == "correlation_id"]
check(corr and corr[0].WhichOneof("value") == "uint64_value", "correlation_id as uint64")
check(s9[0].offset_ps == 100 * US and s9[0].duration_ps == 20 * US, "MemcpyH2D times")
s7 = g0.lines[3].events
check(name(g0, s7[0]) == "warmup_kernel" and stats(g0, s7[0]).get("acceltrace.clipped") == "start",
      "stream 7 begins with the clipped kernel")
check([name(g0, e) for e in s7[1:3]] == ["gemm_fusion_dot_2", "loop_fusion"], "stream 7 kernels")
check(stats(g0, s7[1]).get("correlation_id") == 500, "kernel correlation")
check(name(g0, g0.lines[4].events[0]) == "graph_branch_b", "overlap on the extra line")
mods = g0.lines[0].events
check(all(stats(g0, e).get("acceltrace.estimated") == 1 for e in mods), "estimated modules")
check(any("spans wholly outside" in w and w.startswith("2 ") for w in xs.warnings),
      f"two spans outside the window: {list(xs.warnings)}")

for f in failures:
    print("FAIL:", f, file=sys.stderr)
sys.exit(1 if failures else 0)
EOF
"$PYTHON" "$TEST_TMP/check.py" "$TEST_TMP" "$FILE" || fail "python checks"
test_done
