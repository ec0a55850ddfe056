#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace record --pid on a running simulated trainer, at both PJRT
minor versions (26: before LoadedExecutable_Fingerprint took slot 57; 94).

Everything the ground truth lists in the window must be in the capture, no
more and no less: executes, host-to-device and device-to-host transfers,
completions, file reads (on the right thread, with the right bytes and
offset), ioctls; device executions per core. Execute times: the uprobe span
must enclose the simulator's own (it timestamps inside the plugin), and be
within 50 us of it (p99) while the thread ran: a thread switched out
between the probe and the plugin's clock read is the scheduler's delay, not
the tracer's error, and --sched says when each thread was off CPU (at most
5% of the executes may be left out so). The capture decodes with protoc and
Python.
"""
import bisect
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (running_trainer, capture_of, check, check_bounds, finish, protoc_decodes,
                 quantile, record, require_root, tmpdir, truth, truth_split)


def off_cpu(cap):
    """Each thread line's off-CPU spans (--sched), as sorted starts and ends:
    a thread's spans do not overlap, so both are in order."""
    spans = collections.defaultdict(list)
    for e in cap.events:
        if e.name.startswith("off CPU"):
            spans[e.line.id].append((e.start, e.end))
    return {line: ([a for a, _ in sorted(v)], [b for _, b in sorted(v)])
            for line, v in spans.items()}


def off_during(off, line, a, b):
    """Whether the thread of @line was off CPU at some time in [a, b]."""
    starts, ends = off.get(line, ([], []))
    i = bisect.bisect_right(starts, b) - 1
    return i >= 0 and ends[i] >= a


def run(minor):
    work = tmpdir()
    truth_path = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "40s", "--step-time", "1ms",
                "--readers", "2", "--fetch-every", "10", truth=truth_path,
                minor=minor)
    if not t:
        return
    rc, s, err = record("--pid", str(t.pid), "--sched", "--duration", "2s",
                        "--logdir", os.path.join(work, "logs"))
    t.stop()
    if not check(rc == 0 and s, "minor %d: record exited %d: %s" % (minor, rc, err)):
        return
    lib = [l for l in s["libraries"] if l["pack"] == "PJRT plugin"]
    check(lib and lib[0]["table_found"] and lib[0]["pjrt_minor"] == minor,
          "minor %d: PJRT table found at that minor: %s" % (minor, lib))
    check(lib and lib[0]["table_found_by"] == "scan",
          "minor %d: a running process's table is found by scanning" % minor)
    check(protoc_decodes(s["path"]), "minor %d: protoc --decode reads the capture" % minor)
    cap = capture_of(s)
    T = truth(truth_path, t.pid)

    def typed(typ):
        return [r for r in T if r["type"] == typ]

    # Executes: by launch id, then times.
    ex_c = cap.named("PJRT_LoadedExecutable_Execute", "/host:CPU")
    inside, over = truth_split(typed("execute"), "t_call", "t_return", s,
                               lambda r: r["launch_id"])
    check(len(ex_c) > 1000, "minor %d: executes at 1 kHz for 2 s (%d)" % (minor, len(ex_c)))
    check_bounds("minor %d: executes" % minor,
                 collections.Counter(e.stats.get("launch_id") for e in ex_c), inside, over)
    ex_t = {r["launch_id"]: r for r in typed("execute")}
    off = off_cpu(cap)
    diffs, enclosed, switched = [], 0, 0
    for e in ex_c:
        r = ex_t.get(e.stats.get("launch_id"))
        if not r:
            continue
        s0, s1 = cap.true_start(e), cap.true_end(e)
        enclosed += s0 <= r["t_call"] and r["t_return"] <= s1
        if off_during(off, e.line.id, s0, r["t_call"]) or \
                off_during(off, e.line.id, r["t_return"], s1):
            switched += 1
            continue
        diffs.append(max(abs(s0 - r["t_call"]), abs(s1 - r["t_return"])))
    check(enclosed == len(ex_c), "minor %d: %d of %d execute spans enclose the "
          "plugin's own timestamps" % (minor, enclosed, len(ex_c)))
    check(sum(len(v[0]) for v in off.values()) > 0 and switched <= 0.05 * len(ex_c),
          "minor %d: off-CPU spans recorded, and at most 5%% of the executes switched out "
          "between the probe and the plugin's clock (%d of %d)" % (minor, switched, len(ex_c)))
    p99 = quantile(diffs, 0.99)
    check(p99 is not None and p99 <= 50000,
          "minor %d: execute times within 50 us of the truth at p99 while the thread ran "
          "(p99 %s ns, p50 %s ns; %d switched out left aside)"
          % (minor, p99, quantile(diffs, 0.5), switched))

    # Completions: one callback per device per launch.
    cb_c = cap.named("PJRT_Event_OnReady callback")
    inside, over = truth_split(typed("completion"), "t", "t", s,
                               lambda r: (r["launch_id"], r["device"]))
    check_bounds("minor %d: completions (launch id, device)" % minor,
                 collections.Counter((e.stats.get("correlation_id"), e.stats.get("device"))
                                     for e in cb_c), inside, over)

    # Transfers: per thread and byte count.
    for typ, name in (("h2d", "PJRT_Client_BufferFromHostBuffer"),
                      ("d2h", "PJRT_Buffer_ToHostBuffer")):
        inside, over = truth_split(typed(typ), "t_call", "t_return", s,
                                   lambda r: (r["tid"], r["bytes"]))
        check_bounds("minor %d: %s (thread, bytes)" % (minor, typ),
                     collections.Counter((e.line.id & 0xffffffff, e.stats.get("bytes"))
                                         for e in cap.named(name)), inside, over)

    # Device executions (the runtime's view), per (launch id, core).
    dev_c = cap.line_events("/device:TPU", "XLA Modules")
    plane_core = {p.name: p.id for p in cap.space.planes}
    inside, over = truth_split(typed("device_execution"), "t_start", "t_end", s,
                               lambda r: (r["launch_id"], r["core"]))
    # The runtime sees a device execution end at its callback, a little
    # after the device did: allow the window's edges that much.
    over_wide = collections.Counter(
        (r["launch_id"], r["core"]) for r in typed("device_execution")
        if r["t_end"] + 2000000 >= s["window_start_ns"] and
        r["t_start"] <= s["window_stop_ns"])
    check_bounds("minor %d: device executions (launch id, core)" % minor,
                 collections.Counter((e.stats.get("correlation_id"), plane_core[e.plane])
                                     for e in dev_c), inside, over_wide)
    cores = len({r["core"] for r in typed("device_execution")}) or 4
    steps = cap.line_events("/device:TPU", "Steps")
    check(len(steps) == len(dev_c), "minor %d: a step per device execution of the "
          "dominant program (%d steps, %d executions)" % (minor, len(steps), len(dev_c)))
    check(len([p for p in cap.planes if p.startswith("/device:TPU:")]) == cores,
          "minor %d: a /device:TPU plane per core" % minor)

    # File reads: thread, bytes and offset of every read.
    inside, over = truth_split(typed("file_read"), "t_call", "t_return", s,
                               lambda r: (r["tid"], r["bytes"], r["offset"]))
    check_bounds("minor %d: file reads (thread, bytes, offset)" % minor,
                 collections.Counter((e.line.id & 0xffffffff, e.stats.get("bytes"),
                                      e.stats.get("offset"))
                                     for e in cap.named("pread64")), inside, over)
    reader_names = {e.line.name for e in cap.named("pread64")}
    check(reader_names == {"pt_data_worker"}, "minor %d: reads are on the reader "
          "threads, by name: %s" % (minor, reader_names))

    # ioctls: decoded names, per thread.
    inside, over = truth_split(typed("ioctl"), "t", "t_return", s,
                               lambda r: (r["tid"], r["name"]))
    check_bounds("minor %d: ioctls (thread, decoded name)" % minor,
                 collections.Counter((e.line.id & 0xffffffff, e.name) for e in cap.events
                                     if e.name.startswith("GASKET_IOCTL_")), inside, over)
    check(not s["losses"], "minor %d: no losses: %s" % (minor, s["losses"]))


if __name__ == "__main__":
    require_root()
    run(94)
    run(26)
    finish()
