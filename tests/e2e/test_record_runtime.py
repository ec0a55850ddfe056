#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Runtime scenarios against the simulator's ground truth:
- TF-on-TPU feeding: TPU C API infeed/outfeed, literal and raw flavours,
  every call with its byte count, on the right thread;
- a plugin dlopen'ed after acceltrace attached: its PJRT table comes from
  GetPjrtApi's return (found through the trainer's TPU_LIBRARY_PATH, or
  named with --library), and executes are captured;
- record -- CMD: setup ioctls decoded (REGISTER_INTERRUPT's eventfds), so
  eventfd reads are completions of the right interrupt (core);
- per-submission ioctl mode: one DRM_IOCTL_IVPU_SUBMIT per execution.
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (PLUGIN, Trainer, running_trainer, capture_of, check, check_bounds, finish, record,
                 require_root, tmpdir, trainer_cmd, truth, truth_split)


def typed(T, typ):
    return [r for r in T if r["type"] == typ]


def tid_of(e):
    return e.line.id & 0xffffffff


def feeds(mode, infeed_names, outfeed_names):
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "40s", "--step-time", "1ms",
                "--feed", mode, truth=tp)
    if not t:
        return
    rc, s, err = record("--pid", str(t.pid), "--duration", "2s",
                        "--logdir", os.path.join(work, "logs"))
    t.stop()
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (mode, rc, err)):
        return
    cap = capture_of(s)
    T = truth(tp, t.pid)
    for typ, names in (("infeed", infeed_names), ("outfeed", outfeed_names)):
        inside, over = truth_split(typed(T, typ), "t_call", "t_return", s,
                                   lambda r: (r["tid"], r["bytes"]))
        got = collections.Counter((tid_of(e), e.stats.get("bytes"))
                                  for e in cap.events if e.name in names)
        check_bounds("%s: %s calls (thread, bytes)" % (mode, typ), got, inside, over)
    threads = {e.line.name for e in cap.events if e.name in outfeed_names}
    check(threads == {"outfeed_dequeue"}, "%s: outfeed calls on outfeed_dequeue: %s"
          % (mode, threads))


def late_load(how):
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    env = dict(os.environ)
    args = ["--steps", "0", "--duration", "40s", "--step-time", "1ms",
            "--late-load", "3s"]
    extra = []
    if how == "environment":
        env["TPU_LIBRARY_PATH"] = os.path.abspath(PLUGIN[94])
        t = Trainer(*args, truth=tp, env=env, plugin_flag=False)
    else:
        t = Trainer(*args, truth=tp)
        extra = ["--library", PLUGIN[94]]
    rc, s, err = record("--pid", str(t.pid), "--duration", "2s",
                        "--logdir", os.path.join(work, "logs"), *extra)
    t.stop()
    if not check(rc == 0 and s, "late load (%s): record exited %d: %s" % (how, rc, err)):
        return
    lib = [l for l in s["libraries"] if l["pack"] == "PJRT plugin"]
    check(lib and lib[0]["table_found_by"] == "GetPjrtApi return",
          "late load (%s): the table comes from GetPjrtApi's return: %s" % (how, lib))
    T = truth(tp, t.pid)
    load = [r for r in T if r["type"] == "plugin_load"]
    check(load and load[0]["t"] < s["window_start_ns"],
          "late load (%s): the window opens after the dlopen" % how)
    cap = capture_of(s)
    inside, over = truth_split(typed(T, "execute"), "t_call", "t_return", s,
                               lambda r: r["launch_id"])
    check_bounds("late load (%s): executes" % how,
                 collections.Counter(e.stats.get("launch_id") for e in
                                     cap.named("PJRT_LoadedExecutable_Execute")),
                 inside, over)


def launched(submit):
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    flags = ["--steps", "1500", "--step-time", "1ms"] + (["--submit-ioctl"] if submit else [])
    rc, s, err = record("--duration", "1s", "--logdir", os.path.join(work, "logs"),
                        "--", *trainer_cmd(*flags, truth=tp))
    what = "submit mode" if submit else "launched"
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err)):
        return
    pid = s["processes"][0]["pid"]
    T = truth(tp, pid)
    cap = capture_of(s)
    # eventfd reads: completions of the right interrupt (core) with the count.
    inside, over = truth_split(typed(T, "interrupt_read"), "t", "t", s,
                               lambda r: (r["tid"], r["count"]))
    reads = [e for e in cap.events if e.name == "eventfd read (device completion)"]
    check_bounds("%s: eventfd reads (thread, count)" % what,
                 collections.Counter((tid_of(e), e.stats.get("value")) for e in reads),
                 inside, over)
    if not submit:
        # gasket REGISTER_INTERRUPT gave each core's eventfd its interrupt.
        fd_core = {r["event_fd"]: r["core"] for r in typed(T, "interrupt_read")}
        bad = [e for e in reads if e.stats.get("interrupt") != fd_core.get(e.stats.get("fd"))]
        check(reads and not bad, "%s: eventfd reads carry their core's interrupt "
              "(%d of %d wrong)" % (what, len(bad), len(reads)))
        name = "GASKET_IOCTL_MAP_BUFFER"
    else:
        name = "DRM_IOCTL_IVPU_SUBMIT"
    inside, over = truth_split([r for r in typed(T, "ioctl") if r["name"] == name],
                               "t", "t_return", s, lambda r: r["tid"])
    got = collections.Counter(tid_of(e) for e in cap.named(name))
    check_bounds("%s: %s ioctls (thread)" % (what, name), got, inside, over)
    if submit:
        ex = cap.named("PJRT_LoadedExecutable_Execute")
        check(abs(len(ex) - sum(got.values())) <= 2,
              "submit mode: one submit per execution (%d submits, %d executes)"
              % (sum(got.values()), len(ex)))


if __name__ == "__main__":
    require_root()
    feeds("infeed", {"TpuTransferManager_TransferLiteralToInfeed"},
          {"TpuTransferManager_TransferLiteralFromOutfeed"})
    feeds("infeed-raw", {"TpuExecutor_EnqueueInfeed"}, {"TpuExecutor_DequeueOutfeed"})
    late_load("environment")
    late_load("--library")
    launched(False)
    launched(True)
    finish()
