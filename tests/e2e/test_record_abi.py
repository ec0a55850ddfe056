#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A PJRT plugin under a name acceltrace has never heard of is found by its
ABI (it exports GetPjrtApi), not by its file name: the simulator's plugin
copied to vendor_runtime_v3.so.

- probes --pid: the library, the PJRT pack, the table found by scanning;
- probes -a: the trainer is found among the host's processes;
- record --pid on the running trainer: executes and completions exactly as
  the ground truth lists them in the window;
- a trainer that loads the renamed plugin late, named by TPU_LIBRARY_PATH:
  the GetPjrtApi return probe is placed before the load, and the table
  comes from its return (or from a scan after the mapping is caught, when
  that comes first).

Before recognition by exports, acceltrace said "no runtime library mapped"
for all of these.
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (Trainer, acceltrace, capture_of, check, check_bounds, finish, record,
                 renamed_plugin, require_root, running_trainer, tmpdir, truth, truth_split)

NAME = "vendor_runtime_v3.so"


def typed(T, typ):
    return [r for r in T if r["type"] == typ]


def ours(libs, path):
    return [l for l in libs if os.path.basename(l["path"]) == os.path.basename(path)]


def probes(work, plugin, t):
    rc, out, err = acceltrace("probes", "-j", "--pid", str(t.pid))
    if not check(rc == 0, "probes --pid: exit %d: %s" % (rc, err)):
        return
    d = json.loads(out)
    libs = ours(d["processes"][0]["libraries"], plugin) if d["processes"] else []
    check(libs and libs[0]["pack"] == "PJRT plugin" and libs[0]["pjrt"],
          "probes: %s is a PJRT plugin by its exports: %s" % (NAME, libs))
    check(libs and libs[0]["table_found"] and libs[0]["table_found_by_scan"],
          "probes: its table found by scanning: %s" % libs)
    check(libs and libs[0].get("recognised_by") == "exports GetPjrtApi",
          "probes: recognised by exporting GetPjrtApi: %s" % libs[:1])
    ex = [p for p in d["probes"] if p["function"] == "PJRT_LoadedExecutable_Execute"]
    check(ex and ex[0]["library"].endswith(NAME),
          "probes: Execute probed in %s: %s" % (NAME, ex))

    rc, out, err = acceltrace("probes", "-j", "-a")
    if check(rc == 0, "probes -a: exit %d: %s" % (rc, err)):
        d = json.loads(out)
        mine = [p for p in d["processes"] if p["pid"] == t.pid]
        check(mine and ours(mine[0]["libraries"], plugin),
              "probes -a: the trainer found by its plugin's exports: %s"
              % [p["pid"] for p in d["processes"]])


def running(work, plugin):
    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "40s", "--step-time", "1ms",
                        truth=tp, plugin=plugin)
    if not t:
        return
    probes(work, plugin, t)
    rc, s, err = record("--pid", str(t.pid), "--duration", "2s",
                        "--logdir", os.path.join(work, "logs"))
    t.stop()
    if not check(rc == 0 and s, "record --pid: exited %d: %s" % (rc, err)):
        return
    lib = ours(s["libraries"], plugin)
    check(lib and lib[0]["pack"] == "PJRT plugin" and lib[0]["table_found"] and
          lib[0]["table_found_by"] == "scan" and lib[0]["pjrt_minor"] == 94,
          "record: %s probed as a PJRT plugin, table found by scan: %s" % (NAME, lib))
    cap = capture_of(s)
    T = truth(tp, t.pid)
    ex_c = cap.named("PJRT_LoadedExecutable_Execute")
    check(len(ex_c) > 1000, "executes at 1 kHz for 2 s (%d)" % len(ex_c))
    inside, over = truth_split(typed(T, "execute"), "t_call", "t_return", s,
                               lambda r: r["launch_id"])
    check_bounds("executes", collections.Counter(e.stats.get("launch_id") for e in ex_c),
                 inside, over)
    inside, over = truth_split(typed(T, "completion"), "t", "t", s,
                               lambda r: (r["launch_id"], r["device"]))
    check_bounds("completions (launch id, device)",
                 collections.Counter((e.stats.get("correlation_id"), e.stats.get("device"))
                                     for e in cap.named("PJRT_Event_OnReady callback")),
                 inside, over)
    check(not s["losses"], "no losses: %s" % s["losses"])


def late_load(work, plugin):
    tp = os.path.join(work, "truth-late.jsonl")
    env = dict(os.environ)
    env["TPU_LIBRARY_PATH"] = plugin
    t = Trainer("--steps", "0", "--duration", "40s", "--step-time", "1ms",
                "--late-load", "3s", truth=tp, env=env, plugin_flag=False)
    rc, s, err = record("--pid", str(t.pid), "--duration", "2s",
                        "--logdir", os.path.join(work, "logs-late"))
    t.stop()
    if not check(rc == 0 and s, "late load: record exited %d: %s" % (rc, err)):
        return
    lib = ours(s["libraries"], plugin)
    # The mapping is also caught at its mmap exit, and the quick rescans
    # that follow may find the filled table by scan before GetPjrtApi's
    # return record is read (more often on a loaded machine): either finds it.
    check(lib and lib[0]["table_found_by"] in ("GetPjrtApi return", "scan") and
          lib[0]["table_found"] and not lib[0]["table_refused"],
          "late load: TPU_LIBRARY_PATH's %s recognised and its table found (by "
          "GetPjrtApi's return or a scan): %s" % (NAME, lib))
    T = truth(tp, t.pid)
    cap = capture_of(s)
    inside, over = truth_split(typed(T, "execute"), "t_call", "t_return", s,
                               lambda r: r["launch_id"])
    check_bounds("late load: executes",
                 collections.Counter(e.stats.get("launch_id") for e in
                                     cap.named("PJRT_LoadedExecutable_Execute")),
                 inside, over)


if __name__ == "__main__":
    require_root()
    work = tmpdir()
    plugin = renamed_plugin(NAME, work=work)
    running(work, plugin)
    late_load(work, plugin)
    finish()
