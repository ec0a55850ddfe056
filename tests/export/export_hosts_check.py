# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks a multi-host session's one Perfetto trace and one Chrome JSON
trace (acceltrace convert SESSION_DIR) against each host's XSpace, read by
decoders acceltrace did not write (Python's protobuf, gzip and json):
- one process group per host: every process is named after its host
  ("h1: python3" or "h1"), every host has one, no two processes share a pid
  and no two threads a tid (hosts commonly share pids: they are remapped);
- device tracks are named after their host ("h1 /device:TPU:0");
- each host's spans are exactly its XSpace's (by track, name, start, end),
  on the wall clock from its own capture's start (profile_start_time), or
  from the earliest start of the others when it has none;
- flows start and end once, within a host.

Usage: export_hosts_check.py PERFETTO JSON_GZ HOST=XPLANE...  (exit 0 when
they agree)."""
import collections
import gzip
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import export_check as ec  # noqa: E402

REALTIME = 1
check = ec.check


def want_spans(hosts):
    """{host: Counter((kind, line), name, start, end)} on the wall clock."""
    read = {h: ec.xspace_spans(p) for h, p in hosts}
    reals = [r for _, _, _, r in read.values() if r]
    base = min(reals) if reals else 0
    out = {}
    for h, (spans, clock, zero, real) in read.items():
        shift = (real or base) - zero
        out[h] = collections.Counter({(lab, n, s + shift, e + shift): k
                                      for (lab, n, s, e), k in spans.items()})
    return out, base


def strip(host, name):
    for sep in (": ", " "):
        if name.startswith(host + sep):
            return name[len(host) + len(sep):]
    return None if name != host else ""


def perfetto_check(path, pb, hosts):
    t = pb.Trace()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    tracks, names, per_track = {}, {}, collections.defaultdict(list)
    snapshot, clocks = None, set()
    fo, fi = collections.Counter(), collections.Counter()
    for i, p in enumerate(t.packet):
        for n in p.interned_data.event_names:
            names[n.iid] = n.name
        which = p.WhichOneof("data")
        if which == "clock_snapshot":
            snapshot = {c.clock_id: c.timestamp for c in p.clock_snapshot.clocks}
        elif which == "track_descriptor":
            tracks[p.track_descriptor.uuid] = p.track_descriptor
        elif which == "track_event":
            ev = p.track_event
            clocks.add(p.timestamp_clock_id)
            if ev.type in (1, 3):
                fo.update((ev.track_uuid, x) for x in ev.flow_ids)
                fi.update((ev.track_uuid, x) for x in ev.terminating_flow_ids)
            # Counters (device memory, under the process) are checked by
            # test_export_memory.sh; this check is of slices and instants.
            if ev.type != 4:
                per_track[ev.track_uuid].append((p.timestamp, i, ev.type,
                                                 names.get(ev.name_iid)))
    check(clocks == {REALTIME}, "perfetto: every packet on CLOCK_REALTIME: %s" % clocks)
    # Processes: one group (at least) per host, named after it, pids unique.
    procs = {}
    for d in tracks.values():
        if d.HasField("process"):
            check(d.process.pid not in procs, "perfetto: pid %d has one process" % d.process.pid)
            owner = [h for h in hosts if strip(h, d.process.process_name) is not None]
            check(len(owner) == 1, "perfetto: process %r (pid %d) named after one host"
                  % (d.process.process_name, d.process.pid))
            procs[d.process.pid] = owner[0] if owner else None
    for h in hosts:
        check(h in procs.values(), "perfetto: host %s has a process group" % h)
    tids = collections.Counter(d.thread.tid for d in tracks.values() if d.HasField("thread"))
    check(all(n == 1 for n in tids.values()),
          "perfetto: no tid on two threads: %s" % [t for t, n in tids.items() if n > 1][:5])

    def where(uuid):
        """(host, (kind, line label)) of a track with slices."""
        d = tracks[uuid]
        if d.HasField("thread"):
            return procs.get(d.thread.pid), ("host", d.thread.thread_name)
        parent = tracks.get(d.parent_uuid)
        if parent is not None and parent.HasField("thread"):
            return procs.get(parent.thread.pid), ("host", d.name)
        while parent is not None and parent.parent_uuid in tracks:
            parent = tracks[parent.parent_uuid]
        dev = parent.name if parent is not None else ""
        for h in hosts:
            s = strip(h, dev)
            if s and s.startswith("/device:"):
                return h, (s, d.name)
        check(False, "perfetto: device track %r named after no host" % dev)
        return None, (dev, d.name)

    got = collections.defaultdict(collections.Counter)
    for uuid, evs in per_track.items():
        host, label = where(uuid)
        stack = []
        for ts, _, typ, name in sorted(evs, key=lambda x: (x[0], x[1])):
            if typ == 1:
                stack.append((name, ts))
            elif typ == 2 and check(stack, "perfetto: an end without a begin"):
                n, s = stack.pop()
                got[host][(label, n, s, ts)] += 1
            elif typ == 3:
                got[host][(label, name, ts, ts)] += 1
    # A flow ends on the host it started on.
    host_of = {}
    for (uuid, fid), n in fo.items():
        check(n == 1, "perfetto: flow %x started once" % fid)
        host_of[fid] = where(uuid)[0]
    for (uuid, fid), n in fi.items():
        check(host_of.get(fid) == where(uuid)[0], "perfetto: flow %x within a host" % fid)
    return got, snapshot, len(procs)


def json_check(path, hosts):
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    procs, threads = {}, {}
    for e in doc["traceEvents"]:
        if e["ph"] == "M":
            if e["name"] == "process_name":
                check(e["pid"] not in procs, "json: pid %d named once" % e["pid"])
                procs[e["pid"]] = e["args"]["name"]
            else:
                threads[(e["pid"], e["tid"])] = e["args"]["name"]
    owner = {}
    for pid, name in procs.items():
        hs = [h for h in hosts if strip(h, name) is not None]
        if check(len(hs) == 1, "json: process %r named after one host" % name):
            owner[pid] = (hs[0], strip(hs[0], name))
    for h in hosts:
        check(any(o[0] == h for o in owner.values()), "json: host %s has a process" % h)
    zero = doc["otherData"]["zero_ns"]
    got = collections.defaultdict(collections.Counter)
    for e in doc["traceEvents"]:
        if e["ph"] not in ("X", "i"):
            continue
        host, pname = owner.get(e["pid"], (None, ""))
        label = (pname if pname.startswith("/device:") else "host",
                 threads[(e["pid"], e["tid"])])
        start = zero + round(float(e["ts"]) * 1000)
        end = start + round(float(e.get("dur", 0)) * 1000)
        got[host][(label, e["name"], start, end)] += 1
    return got, doc


def main(perfetto, json_gz, *pairs):
    hosts = [tuple(p.split("=", 1)) for p in pairs]
    names = [h for h, _ in hosts]
    pb, desc = ec.schema()
    print("Perfetto trace decoded with " + desc)
    want, base = want_spans(hosts)
    got, snapshot, n_procs = perfetto_check(perfetto, pb, names)
    check(snapshot and snapshot.get(REALTIME) == base,
          "perfetto: the clock snapshot at the earliest capture start %d: %s" % (base, snapshot))
    jgot, doc = json_check(json_gz, names)
    check(doc["otherData"]["clock"] == ("CLOCK_REALTIME" if base else
                                        "none (the XSpace's own times)"),
          "json: otherData.clock %r" % doc["otherData"]["clock"])
    for h in names:
        ec.diff("perfetto host %s" % h, want[h], got.get(h, collections.Counter()))
        ec.diff("json host %s" % h, want[h], jgot.get(h, collections.Counter()))
    stray = set(got) - set(names) | set(jgot) - set(names)
    check(not stray, "spans on no host's tracks: %s" % stray)
    print("%d hosts, %d processes, %d spans agree" % (len(names), n_procs,
                                                      sum(sum(c.values()) for c in want.values())))
    return 1 if ec.failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
