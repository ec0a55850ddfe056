#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Thread names: a rename is the thread's name history, not a line.

The simulated trainer, launched by `record` so that its threads are created
and renamed inside the capture: every thread names itself after it starts
(pthread_setname_np / PR_SET_NAME: it is born with its creator's name), and
--thread-churn makes short-lived pt_thread_pool threads (born churn_spawner,
each reading 4 KiB) all the time.
- every thread appears at most once on /host:CPU, named by its latest name
  (the truth's thread_start name), its earlier names in its display name;
- no line holds only a rename: no rename events at all, no empty line, and
  the threads that do nothing acceltrace traces (tpu_device_sim,
  churn_spawner: renamed, nothing else) have no line;
- the plane stat acceltrace.thread_names holds each renamed thread's
  history: born with its creator's name, then its own, in time order.
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (capture_of, check, finish, record, require_root, tmpdir,  # noqa: E402
                 trainer_cmd, truth)
import xspace  # noqa: E402


def histories(plane):
    smeta = {k: v.name for k, v in plane.stat_metadata.items()}
    for st in plane.stats:
        if smeta.get(st.metadata_id) == "acceltrace.thread_names":
            return {h["tid"]: h for h in json.loads(st.str_value)}
    return {}


def main():
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    rc, s, err = record("--duration", "2s", "--logdir", os.path.join(work, "logs"), "--",
                        *trainer_cmd("--steps", "0", "--duration", "30s", "--step-time", "1ms",
                                     "--thread-churn", "100", truth=tp))
    if not check(rc == 0 and s, "record exited %d: %s" % (rc, err)):
        return
    T = truth(tp)
    pids = {r["pid"] for r in T if r["type"] == "run_start"}
    if not check(len(pids) == 1, "one trainer expected, got %s" % pids):
        return
    pid = pids.pop()
    named = {r["tid"]: r["name"] for r in T if r["type"] == "thread_start" and r["pid"] == pid}
    cap = capture_of(s)
    host = cap.planes.get("/host:CPU")
    if not check(host is not None, "no /host:CPU plane"):
        return

    # No line holds only a rename: renames are no events, and no line is empty.
    renames = [e.name for e in cap.events if e.name.startswith("thread renamed")]
    check(not renames, "renames written as events: %s" % renames[:5])
    empty = [l.name for l in host.lines if not l.events]
    check(not empty, "empty lines: %s" % empty[:5])

    # One row per thread (extra lines of a row only for overlapping spans),
    # named by the thread's latest name.
    rows = collections.defaultdict(list)
    thread_lines = xspace.thread_lines(host)
    for l in thread_lines:
        rows[l.display_id].append(l)
    firsts = collections.Counter(l.display_id for l in thread_lines if l.id == l.display_id)
    check(all(n == 1 for n in firsts.values()),
          "a thread on more than one row: %s" % [t for t, n in firsts.items() if n > 1][:5])
    wrong, unnamed = [], []
    for tid, lines in rows.items():
        names = {(l.name, l.display_name) for l in lines}
        if tid not in named:
            continue
        if len(names) != 1 or lines[0].name != named[tid]:
            wrong.append((tid, named[tid], sorted(names)))
        elif not lines[0].display_name.startswith(named[tid] + " (was "):
            unnamed.append((tid, lines[0].display_name))
    check(not wrong, "lines not named by their thread's latest name: %s" % wrong[:5])
    check(not unnamed, "renamed threads without their earlier names: %s" % unnamed[:5])
    churn = [t for t in rows if named.get(t) == "pt_thread_pool"]
    check(len(churn) > 50, "churn threads with a line (their read): %d" % len(churn))

    # Renamed, and nothing else traced: no line.
    idle = {t for t, n in named.items() if n in ("tpu_device_sim", "churn_spawner")}
    check(len(idle) == 2, "truth names tpu_device_sim and churn_spawner: %s" % idle)
    check(not idle & set(rows), "threads that only renamed themselves have lines: %s"
          % sorted((t, named[t]) for t in idle & set(rows)))

    # The histories: every renamed thread with a line, in time order.
    H = histories(host)
    check(set(H) == set(rows), "histories for %d of %d lines (every thread is renamed)"
          % (len(set(H) & set(rows)), len(rows)))
    bad = []
    for tid, h in H.items():
        names = [n["name"] for n in h["names"]]
        times = [n["ns"] for n in h["names"] if "ns" in n]
        if (h["pid"] != pid or len(names) < 2 or h["more"] != 0 or
                names[-1] != rows[tid][0].name or times != sorted(times)):
            bad.append(h)
        elif named.get(tid) == "pt_thread_pool" and names != ["churn_spawner", "pt_thread_pool"]:
            bad.append(h)
    check(not bad, "histories not as the threads lived them: %s" % bad[:3])


if __name__ == "__main__":
    require_root()
    main()
    finish()
