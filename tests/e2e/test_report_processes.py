#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Two jobs on one host, one whole-host capture (record -a): `report` gives
each its own answer (docs/report.md, "Several processes").

Job A is input-bound about 30 %, job B not at all, at different step
times. The report of each process (report -j: one report per process,
named by pid and command) has that process's step time and input-bound
share within the report bar's tolerances of its own ground truth (3
points, 2 % of the step), its input pipeline holds only its own threads,
and counts each host-to-device transfer once (the memory probe's twin of
the call makes no second span). `report --pid` gives the one asked; a pid
the capture does not hold is refused with the processes it does. The
capture's /host:CPU stat acceltrace.thread_pids, read with Python's
protobuf, names a process for every thread line.
"""
import json
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import acceltrace, check, finish, record, require_root, running_trainer, tmpdir, truth  # noqa: E402
from test_report_sim import executions, truth_in_window  # noqa: E402
import xspace  # noqa: E402

# name, step ms, --input-bound
JOBS = [("jobA", 10.0, 0.3), ("jobB", 5.0, 0.0)]


def report_json(*args):
    rc, out, err = acceltrace("report", "-j", *args)
    if not check(rc == 0, "report %s exited %d: %s" % (args, rc, err[-500:])):
        return None
    return json.loads(out)


def truth_figures(T, s):
    """(input-bound %, step ms) of the truth over the window, as
    test_report_sim measures them."""
    steps = truth_in_window(T, s)
    allx = executions(T, "train_step")
    a, b = steps[0]["t_start"], steps[-1]["t_start"]
    busy = sum(max(0, min(r["t_end"], b) - max(r["t_start"], a)) for r in allx)
    return 100.0 * (1 - busy / (b - a)), (b - a) / 1e6 / (len(steps) - 1)


def thread_pids(path):
    """{tid: pid} from the capture's acceltrace.thread_pids, and the host
    plane's thread lines' display ids."""
    pb2 = xspace.xplane_pb2()
    space = pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    host = [p for p in space.planes if p.name == "/host:CPU"][0]
    names = {k: m.name for k, m in host.stat_metadata.items()}
    raw = [s.bytes_value for s in host.stats if names.get(s.metadata_id) ==
           "acceltrace.thread_pids"]
    pairs = {}
    if raw:
        for i in range(0, len(raw[0]) - 7, 8):
            tid, pid = struct.unpack_from("<II", raw[0], i)
            pairs[tid] = pid
    lines = {l.display_id for l in host.lines if l.id < (1 << 62)}
    return pairs, lines


def main():
    require_root()
    work = tmpdir()
    jobs = []
    for name, step_ms, ib in JOBS:
        tp = os.path.join(work, name + ".jsonl")
        t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "%gms" % step_ms,
                            "--fetch-every", "0", "--input-bound", str(ib),
                            "--main-thread-name", name, truth=tp)
        if not t:
            for _, u, _ in jobs:
                u.stop()
            return
        jobs.append((name, t, tp))
    try:
        rc, s, err = record("-a", "--duration", "3s", "--logdir", os.path.join(work, "logs"))
    finally:
        for _, t, _ in jobs:
            t.stop()
    if not check(rc == 0 and s, "record -a exited %d: %s" % (rc, err[-500:])):
        return
    path = s["path"]

    d = report_json(path)
    reports = (d or {}).get("reports", [])
    by_pid = {r["process"]["pid"]: r for r in reports if r.get("process")}
    check(len(reports) == 2 and set(by_pid) == {t.pid for _, t, _ in jobs},
          "a report per job: %s" % [r.get("process") for r in reports])
    for (name, t, tp), (_, step_ms, ib) in zip(jobs, JOBS):
        r = by_pid.get(t.pid)
        if not r:
            continue
        want_pct, want_ms = truth_figures(truth(tp, t.pid), s)
        got_pct, got_ms = r["input_bound_pct"], r["steps"]["avg_ms"]
        print("%s (pid %d): input-bound %.1f%% (truth %.1f%%), step %.3f ms (truth %.3f ms)"
              % (name, t.pid, got_pct, want_pct, got_ms, want_ms))
        check(r["process"]["name"] == name, "%s: named by its command: %s" % (name, r["process"]))
        check(r["processes_with_device"] == 2, "%s: the capture's 2 jobs said" % name)
        check(abs(got_pct - want_pct) <= 3.0,
              "%s: input_bound_pct %.2f, its truth %.2f" % (name, got_pct, want_pct))
        check(abs(got_ms - want_ms) <= 0.02 * want_ms,
              "%s: steps.avg_ms %.4f, its truth %.4f" % (name, got_ms, want_ms))
        rows = r["input_pipeline"]["ops"]
        mine = ("(pid %d)" % t.pid, "(pid %d," % t.pid)
        check(rows and all(any(m in row["thread"] for m in mine) for row in rows),
              "%s: its input rows are its own threads': %s"
              % (name, sorted({row["thread"] for row in rows})))
        check(all(row["thread_id"] < (1 << 32) for row in rows),
              "%s: no input row on a pseudo-thread id" % name)
        h2d = [row for row in rows if row["name"].startswith("PJRT_Client_BufferFromHostBuffer")]
        check(len(h2d) >= 1 and all(row["name"] == "PJRT_Client_BufferFromHostBuffer"
                                    for row in h2d),
              "%s: each transfer counted once, as itself: %s"
              % (name, [(row["name"], row["count"]) for row in h2d]))

    a_name, a, _ = jobs[0]
    one = report_json("--pid", str(a.pid), path)
    check(one and one.get("process", {}).get("pid") == a.pid and "reports" not in one,
          "report --pid %d: that process's report alone" % a.pid)
    rc, out, err = acceltrace("report", "--pid", "1", path)
    check(rc == 1 and "no process 1 in this capture" in err and a_name in err,
          "report --pid 1: refused, naming the processes there are (%d: %s)" % (rc, err))

    pairs, lines = thread_pids(path)
    pids = {t.pid for _, t, _ in jobs}
    check(lines and all(pairs.get(tid) in pids for tid in lines),
          "acceltrace.thread_pids names a job for every thread line: %d lines, %d pairs, "
          "unnamed %s" % (len(lines), len(pairs), [t for t in lines if pairs.get(t) not in pids]))


if __name__ == "__main__":
    main()
    finish()
