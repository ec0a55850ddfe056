#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Host-side tracing against the simulator's ground truth:
- --children: a launched trainer that forks a second one after starting;
  both are traced, each with its own executions;
- thread churn: short-lived threads (each named pt_thread_pool, reading
  4 KiB of a data file) appear by name with their reads on their own thread,
  their rename in their name history;
- --sched: traced threads' off-CPU time is recorded."""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (running_trainer, capture_of, check, check_bounds, finish, record,
                 require_root, tmpdir, trainer_cmd, truth, truth_split)


def children():
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    rc, s, err = record("--children", "--duration", "1s", "--logdir",
                        os.path.join(work, "logs"), "--",
                        *trainer_cmd("--trainers", "2", "--steps", "2500", "--step-time", "1ms",
                                     "--device-dir", "/run/acceltrace-sim/%p", truth=tp))
    if not check(rc == 0 and s, "--children: record exited %d: %s" % (rc, err)):
        return
    T = truth(tp)
    pids = {r["pid"] for r in T if r["type"] == "run_start"}
    captured = {p["pid"] for p in s["processes"]}
    check(len(pids) == 2 and pids <= captured,
          "--children: both trainers %s traced (%s)" % (pids, captured))
    cap = capture_of(s)
    ex = cap.named("PJRT_LoadedExecutable_Execute")
    for pid in pids:
        got = collections.Counter(e.stats.get("launch_id") for e in ex
                                  if (e.line.id & 0xffffffff) == pid)
        inside, over = truth_split([r for r in T if r["type"] == "execute" and r["pid"] == pid],
                                   "t_call", "t_return", s, lambda r: r["launch_id"])
        check_bounds("--children: executes of trainer %d" % pid, got, inside, over)


def churn_and_sched():
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "40s", "--step-time", "1ms",
                "--thread-churn", "100", truth=tp)
    if not t:
        return
    rc, s, err = record("--pid", str(t.pid), "--sched", "--duration", "2s",
                        "--logdir", os.path.join(work, "logs"))
    t.stop()
    if not check(rc == 0 and s, "churn: record exited %d: %s" % (rc, err)):
        return
    T = truth(tp, t.pid)
    cap = capture_of(s)
    churn = {r["tid"] for r in T if r["type"] == "thread_start" and r.get("role") == "churn"
             and r["name"] == "pt_thread_pool"}
    reads = [r for r in T if r["type"] == "file_read" and r["tid"] in churn]
    inside, over = truth_split(reads, "t_call", "t_return", s,
                               lambda r: (r["tid"], r["bytes"], r["offset"]))
    got = collections.Counter((e.line.id & 0xffffffff, e.stats.get("bytes"),
                               e.stats.get("offset"))
                              for e in cap.named("pread64") if (e.line.id & 0xffffffff) in churn)
    check(sum(inside.values()) > 50, "churn: short-lived threads read in the window (%d)"
          % sum(inside.values()))
    check_bounds("churn: short-lived threads' reads (thread, bytes, offset)", got, inside, over)
    names = {e.line.name for e in cap.named("pread64") if (e.line.id & 0xffffffff) in churn}
    check(names == {"pt_thread_pool"}, "churn: their lines carry their name: %s" % names)
    # A rename is the thread's name history (docs/capture-format.md), not an event.
    host = cap.planes["/host:CPU"]
    smeta = {k: v.name for k, v in host.stat_metadata.items()}
    hist = {h["tid"]: [n["name"] for n in h["names"]] for st in host.stats
            if smeta.get(st.metadata_id) == "acceltrace.thread_names"
            for h in json.loads(st.str_value)}
    lined = {e.line.id & 0xffffffff for e in cap.named("pread64")} & churn
    started = {r["tid"] for r in T if r["type"] == "thread_start" and r["tid"] in lined and
               s["window_start_ns"] + 10**7 <= r["t"] <= s["window_stop_ns"] - 10**7}
    renamed = {t for t in started if hist.get(t) == ["churn_spawner", "pt_thread_pool"]}
    check(started and renamed == started,
          "churn: threads named in the window have their rename in their name history "
          "(%d of %d): %s" % (len(renamed), len(started),
                              [(t, hist.get(t)) for t in sorted(started - renamed)][:3]))
    check(not [e for e in cap.events if e.name.startswith("thread renamed")],
          "churn: no rename events")
    off = [e for e in cap.events if e.name.startswith("off CPU")]
    lines = {e.line.name for e in off}
    check(len(off) > 100 and {"tpu_runtime", "pt_data_worker"} <= lines,
          "--sched: off-CPU spans of traced threads (%d, on %s)" % (len(off), sorted(lines)[:8]))


if __name__ == "__main__":
    require_root()
    children()
    churn_and_sched()
    finish()
