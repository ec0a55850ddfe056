# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks device memory in a Perfetto trace and a Chrome JSON trace against
the XSpace (docs/capture-format.md, "Device memory"; docs/export.md): per
allocator a counter track "Device memory in use: <allocator_name>" under
its process, unit bytes, holding the timeline of acceltrace.memory_timelines
(each point at its span's end, absolute = window start + t) and every
allocation and free in the window (bytes_allocated at its time); no
MemoryAllocation / MemoryDeallocation / "Memory in use" slices.

The Perfetto trace is decoded by a protobuf wire reader written here from
Perfetto's upstream field numbers (trace_packet.proto, track_descriptor.proto,
counter_descriptor.proto, track_event.proto), not from the project's
perfetto_trace.proto: a wrong field number in the writer's schema fails.

Usage: export_memory_check.py XPLANE PERFETTO JSON_GZ [MIN_COUNTERS]"""
import collections
import decimal
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
import xspace  # noqa: E402

UNIT_SIZE_BYTES = 3
TYPE_COUNTER = 4
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """{field number: [values]}: ints for varints/fixed, bytes for messages."""
    out = collections.defaultdict(list)
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("wire type %d" % wt)
        out[num].append(v)
    return out


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def expected(path):
    """{(pid, counter name): [(ts_ns, bytes)]} from the XSpace."""
    pb2 = xspace.xplane_pb2()
    space = pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    zero = 0
    events = collections.defaultdict(list)
    timelines = []
    for p in space.planes:
        smeta = {k: v.name for k, v in p.stat_metadata.items()}
        pst = {smeta.get(s.metadata_id): s for s in p.stats}
        if p.name == "Task Environment" and "acceltrace.window_start_ns" in pst:
            zero = pst["acceltrace.window_start_ns"].uint64_value
        if p.name != "/host:CPU":
            continue
        if "acceltrace.memory_timelines" in pst:
            try:
                doc = json.loads(pst["acceltrace.memory_timelines"].str_value)
                timelines = doc["allocators"]
            except ValueError:
                pass  # malformed: the exports leave it out too
        for l in p.lines:
            if l.name.startswith("Device memory: "):
                continue
            for e in l.events:
                if p.event_metadata[e.metadata_id].name not in ("MemoryAllocation",
                                                                "MemoryDeallocation"):
                    continue
                st = {smeta.get(s.metadata_id): s for s in e.stats}
                name = smeta[st["allocator_name"].ref_value]
                key = (st["process_id"].int64_value, "Device memory in use: " + name)
                ts = (l.timestamp_ns * 1000 + e.offset_ps) // 1000
                events[key].append((ts, st["bytes_allocated"].int64_value))
    out = collections.defaultdict(list)
    for key, evs in events.items():
        out[key] = [(zero + t, v) for t, v in evs]
    for a in timelines:
        key = (a["pid"], "Device memory in use: " + a["allocator_name"])
        evs = events.get(key, [])
        lo = min((t for t, _ in evs), default=None)
        hi = max((t for t, _ in evs), default=None)
        for t, span, in_use, *_ in a["points"]:
            end = t + span
            if (lo is not None and lo <= end <= hi) or zero + end < 0:
                continue
            out[key].append((zero + end, in_use))
    return {k: sorted(v) for k, v in out.items()}


def perfetto_counters(path):
    with open(path, "rb") as f:
        trace = fields(f.read())
    tracks, names, values = {}, {}, collections.defaultdict(list)
    slice_names = set()
    for raw in trace[1]:  # Trace.packet
        p = fields(raw)
        for interned in p.get(12, []):  # TracePacket.interned_data
            for en in fields(interned).get(2, []):  # InternedData.event_names
                en = fields(en)
                names[en[1][0]] = en[2][0].decode()
        for td in p.get(60, []):  # TracePacket.track_descriptor
            td = fields(td)
            tracks[td[1][0]] = td
        for te in p.get(11, []):  # TracePacket.track_event
            te = fields(te)
            typ = te.get(9, [0])[0]
            if typ == TYPE_COUNTER:
                values[te[11][0]].append((p[8][0], signed(te[30][0])))
            elif typ in (1, 3) and 10 in te:
                slice_names.add(names.get(te[10][0]))
    out = {}
    for uuid, td in tracks.items():
        if 8 not in td:  # TrackDescriptor.counter
            continue
        unit = fields(td[8][0]).get(3, [0])[0]
        name = td[2][0].decode()
        check(unit == UNIT_SIZE_BYTES, "%s: unit %d, not bytes" % (name, unit))
        parent = tracks.get(td.get(5, [0])[0])
        pid = signed(fields(parent[3][0])[1][0]) if parent and 3 in parent else None
        check(pid is not None, "%s: not under a process track" % name)
        out[(pid, name)] = sorted(values[uuid])
    return out, slice_names


def json_counters(path):
    with gzip.open(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)  # exact: ts may need 19 digits
    zero = doc["otherData"]["zero_ns"]
    out = collections.defaultdict(list)
    for e in doc["traceEvents"]:
        if e["ph"] == "C":
            out[(e["pid"], e["name"])].append((zero + int(decimal.Decimal(e["ts"]) * 1000),
                                               e["args"]["bytes"]))
    names = {e["name"] for e in doc["traceEvents"] if e["ph"] in ("X", "i")}
    return {k: sorted(v) for k, v in out.items()}, names


def main(xplane, perfetto, json_gz, min_counters="1"):
    want = expected(xplane)
    check(len(want) >= int(min_counters), "%d allocators in the XSpace, expected at least %s"
          % (len(want), min_counters))
    hidden = {"MemoryAllocation", "MemoryDeallocation", "Memory in use"}
    for what, (got, slices) in (("perfetto", perfetto_counters(perfetto)),
                                ("json", json_counters(json_gz))):
        check(set(got) == set(want), "%s: counters %s, expected %s"
              % (what, sorted(got), sorted(want)))
        for key in want:
            g, w = got.get(key, []), want[key]
            check(g == w, "%s: %s: %d values, expected %d; first differing %s"
                  % (what, key, len(g), len(w),
                     next(((a, b) for a, b in zip(g, w) if a != b), None)))
        check(not slices & hidden, "%s: memory events as slices: %s" % (what, slices & hidden))
    print("%d counters, %d values agree" % (len(want), sum(len(v) for v in want.values())))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
