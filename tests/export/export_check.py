# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks that a Perfetto trace and a Chrome JSON trace hold what an XSpace
holds: the same spans (by track, name, start and end in ns, true times for
clipped spans) read by decoders acceltrace did not write: the XSpace and the
Perfetto trace with Python's protobuf (Perfetto's upstream schema when it is
available, see schema()), the JSON with Python's gzip and json.

Usage: export_check.py XPLANE PERFETTO JSON_GZ  (exit 0 when they agree)."""
import atexit
import collections
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
import xspace  # noqa: E402

MONOTONIC, REALTIME = 3, 1
MEMORY_EVENTS = ("MemoryAllocation", "MemoryDeallocation")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


def schema():
    """(module, description): Perfetto's upstream perfetto_trace.proto when
    found ($PERFETTO_TRACE_PROTO, else ../shared/reference/), else the
    project's subset (then only the decoder is independent)."""
    cands = [os.environ.get("PERFETTO_TRACE_PROTO", ""),
             "../shared/reference/perfetto_trace.proto"]
    path = next((c for c in cands if c and os.path.exists(c)), None)
    out = tempfile.mkdtemp(prefix="perfetto-pb2-")
    atexit.register(shutil.rmtree, out, True)
    if path:
        d, f = os.path.split(os.path.abspath(path))
        desc = "upstream schema " + path
    else:
        d, f = "user/export", "perfetto_trace.proto"
        desc = "the project's subset (no upstream schema found)"
    subprocess.run(["protoc", "--python_out=" + out, "-I", d, os.path.join(d, f)], check=True)
    sys.path.insert(0, out)
    mod = __import__(f[:-len(".proto")] + "_pb2")
    return mod, desc


def xspace_spans(path):
    """{(track label, name, start, end)} with absolute ns (true when clipped),
    and the clock the exports must use."""
    pb2 = xspace.xplane_pb2()
    space = pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    zero, clock, real = 0, None, None
    for p in space.planes:
        if p.name == "Task Environment":
            st = {p.stat_metadata[s.metadata_id].name: s for s in p.stats}
            if "profile_start_time" in st:
                real = st["profile_start_time"].uint64_value
            if "acceltrace.window_start_ns" in st:
                zero, clock = st["acceltrace.window_start_ns"].uint64_value, MONOTONIC
            elif real:
                zero, clock = real, REALTIME
    spans = collections.Counter()
    for p in space.planes:
        device = p.name.startswith("/device:")
        smeta = {k: v.name for k, v in p.stat_metadata.items()}
        for l in p.lines:
            label = (p.name if device else "host", l.display_name or l.name)
            if l.name.startswith("Device memory: "):
                continue  # a counter (export_memory_check.py), not slices
            for e in l.events:
                if p.event_metadata[e.metadata_id].name in MEMORY_EVENTS:
                    continue  # not slices: XProf hides them too; counters
                st = {smeta.get(s.metadata_id): s for s in e.stats}
                start = zero + (l.timestamp_ns * 1000 + e.offset_ps) // 1000
                end = start + e.duration_ps // 1000
                if clock and "acceltrace.true_start_ns" in st:
                    start = zero + st["acceltrace.true_start_ns"].int64_value
                    end = zero + st["acceltrace.true_end_ns"].int64_value
                spans[(label, p.event_metadata[e.metadata_id].name, start, end)] += 1
    return spans, clock, zero, real


def perfetto_spans(path, pb):
    t = pb.Trace()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    tracks, names, keys = {}, {}, {}
    stacks = collections.defaultdict(list)
    per_track = collections.defaultdict(list)
    spans = collections.Counter()
    flows_out, flows_in = collections.Counter(), collections.Counter()
    snapshot, clocks_used = None, set()
    for i, p in enumerate(t.packet):
        which = p.WhichOneof("data")
        check(p.trusted_packet_sequence_id == 1, "one sequence")
        for n in p.interned_data.event_names:
            names[n.iid] = n.name
        for n in p.interned_data.debug_annotation_names:
            keys[n.iid] = n.name
        if which == "clock_snapshot":
            check(i == 0 and p.sequence_flags & 1, "the clock snapshot first, clearing state")
            snapshot = {c.clock_id: c.timestamp for c in p.clock_snapshot.clocks}
        elif which == "track_descriptor":
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        elif which == "track_event":
            ev = p.track_event
            clocks_used.add(p.timestamp_clock_id)
            check(p.sequence_flags & 2, "events need the incremental state")
            if ev.type in (1, 3):
                if not check(ev.name_iid in names, "name iid %d interned before use" % ev.name_iid):
                    continue
                for a in ev.debug_annotations:
                    check(a.name_iid in keys, "annotation name iid interned before use")
                flows_out.update(ev.flow_ids)
                flows_in.update(ev.terminating_flow_ids)
            if ev.type in (1, 2, 3):
                per_track[ev.track_uuid].append(
                    (p.timestamp, i, ev.type, names.get(ev.name_iid, "")))
    # As trace processor does: each track's events in time order (stable
    # for equal times), an end closing the innermost open slice.
    for uuid, evs in per_track.items():
        evs.sort(key=lambda x: (x[0], x[1]))
        for ts, _, typ, name in evs:
            if typ == 1:
                stacks[uuid].append((name, ts))
            elif typ == 2:
                if check(stacks[uuid], "an end without a begin"):
                    n, start = stacks[uuid].pop()
                    spans[(uuid, n, start, ts)] += 1
            else:
                spans[(uuid, name, ts, ts)] += 1
    check(all(not s for s in stacks.values()), "every slice ended")

    def label(uuid):
        d = tracks[uuid]
        if d.HasField("thread"):
            return ("host", d.thread.thread_name)
        parent = tracks.get(d.parent_uuid)
        if parent is not None and parent.HasField("thread"):
            return ("host", d.name)
        return (parent.name if parent is not None else "", d.name)

    out = collections.Counter()
    for (uuid, name, s, e), n in spans.items():
        out[(label(uuid), name, s, e)] += n
    return out, snapshot, clocks_used, flows_out, flows_in


def json_spans(path):
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    procs, threads = {}, {}
    for e in doc["traceEvents"]:
        if e["ph"] == "M":
            (procs if e["name"] == "process_name" else threads)[
                (e["pid"], e.get("tid"))] = e["args"]["name"]
    spans = collections.Counter()
    starts, ends = collections.Counter(), collections.Counter()
    zero = doc["otherData"]["zero_ns"]
    rows = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] in ("X", "i"):
            proc = next((v for (pid, _), v in procs.items() if pid == e["pid"]), "")
            label = (proc if proc.startswith("/device:") else "host",
                     threads[(e["pid"], e["tid"])])
            start = zero + round(float(e["ts"]) * 1000)
            end = start + round(float(e.get("dur", 0)) * 1000)
            spans[(label, e["name"], start, end)] += 1
            rows[(e["pid"], e["tid"])].append((start, -end))
        elif e["ph"] == "s":
            starts[e["id"]] += 1
        elif e["ph"] == "f":
            ends[e["id"]] += 1
    # Complete events of one thread must nest (viewers stack them).
    bad = 0
    for evs in rows.values():
        stack = []
        for start, nend in sorted(evs):
            while stack and stack[-1] <= start:
                stack.pop()
            bad += bool(stack and -nend > stack[-1])
            if -nend > start:
                stack.append(-nend)
    check(not bad, "json: %d events overlap another of their thread partially" % bad)
    return spans, doc, starts, ends


def diff(what, want, got):
    missing, extra = want - got, got - want
    check(not missing and not extra,
          "%s: %d spans expected, %d found; missing %s; unexpected %s"
          % (what, sum(want.values()), sum(got.values()), list(missing.items())[:3],
             list(extra.items())[:3]))


def main(xplane, perfetto, json_gz):
    pb, desc = schema()
    print("Perfetto trace decoded with " + desc)
    want, clock, zero, real = xspace_spans(xplane)
    got, snapshot, used, fo, fi = perfetto_spans(perfetto, pb)
    diff("perfetto", want, got)
    if clock:
        check(used == {clock}, "packets on the clock %d: %s" % (clock, used))
        check(snapshot and snapshot.get(clock) == zero, "clock snapshot at the XSpace's zero")
        if clock == MONOTONIC and real:
            check(snapshot.get(REALTIME) == real, "the snapshot's wall clock")
    check(fo and fo == fi and max(fo.values()) == 1,
          "flows: %d started, %d ended, each once" % (sum(fo.values()), sum(fi.values())))
    jgot, doc, js, je = json_spans(json_gz)
    diff("json", want, jgot)
    check(js == je and sum(js.values()) == sum(fo.values()), "json flows match perfetto's")
    print("%d spans, %d flows agree" % (sum(want.values()), sum(fo.values())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
