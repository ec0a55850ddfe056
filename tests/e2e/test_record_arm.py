#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A window of work, not of start-up (docs/record.md, "Arming"):
a trainer that starts as JAX does (its input pipeline transfers batches,
two one-off initialisation programs are compiled and run once each, then
the training step compiles for 1.5 s before the first step), recorded with
`record --duration 1s -- CMD`:
- by default the window opens at the first execution of the program that
  runs again (the training step), so it holds a second of steps (every
  Execute the truth has inside it) and no start-up program, and record
  says how long it waited and (with -v) what it saw meanwhile;
- with --from-start it opens at the first device activity once the probes
  settled (here the second start-up program), so the window lies in the
  training step's compile and holds (nearly) no step: the behaviour
  before, kept on request;
- with --now, on a running trainer stuck in a 30-s host checkpoint
  (--long-host-op: it executes nothing), the window opens within the 2 s
  the probes may take, and a capture of its threads is written, where
  waiting for an execution would have given up after 30 s with none;
  its report names the main thread, off CPU most of the window.
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (acceltrace, check, check_bounds, finish, record, require_root,  # noqa: E402
                 running_trainer, tmpdir, trainer_cmd, truth, truth_split, capture_of)

COMPILE_MS = 1500
INIT_BASE = 1000000000      # launch ids of the start-up programs


def run(from_start):
    what = "--from-start" if from_start else "default"
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    cmd = trainer_cmd("--init-programs", "2", "--compile-ms", str(COMPILE_MS),
                      "--duration", "7s", "--step-time", "2ms", truth=tp)
    # -v: what the target did while record waited is a diagnostic.
    args = ["-v", "--duration", "1s", "--logdir", os.path.join(work, "logs")]
    if from_start:
        args.append("--from-start")
    rc, s, err = record(*args, "--", *cmd, timeout=60)
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err[-2000:])):
        return
    T = truth(tp, s["processes"][0]["pid"])
    execs = [r for r in T if r["type"] == "execute"]
    steps = [r for r in execs if r["launch_id"] < INIT_BASE]
    inits = [r for r in execs if r["launch_id"] >= INIT_BASE]
    if not check(len(inits) == 2 and steps, "%s: the truth has 2 start-up programs "
                 "and steps" % what):
        return
    first_step = min(r["t_call"] for r in steps)
    w0 = s["window_start_ns"]
    cap = capture_of(s)
    got = collections.Counter(e.stats.get("launch_id") for e in cap.on_plane_prefix("/host:CPU")
                              if e.stats.get("launch_id") is not None and
                              "Execute" in e.name)
    in_window = sum(n for lid, n in got.items() if lid < INIT_BASE)
    if from_start:
        check(w0 < first_step - (COMPILE_MS - 600) * 1000000,
              "%s: the window opened in start-up, %.3f s before the first step"
              % (what, (first_step - w0) / 1e9))
        check(in_window < 50, "%s: the window is start-up: %d steps" % (what, in_window))
        return
    check(abs(w0 - first_step) < 2000000,
          "%s: the window opened at the first step (%.3f ms away)"
          % (what, (w0 - first_step) / 1e6))
    check(not any(lid >= INIT_BASE for lid in got),
          "%s: no start-up program in the window" % what)
    inside, over = truth_split(steps, "t_call", "t_return", s, lambda r: r["launch_id"])
    check(len(inside) > 200, "%s: a second of steps in the truth (%d)" % (what, len(inside)))
    check_bounds("%s: executes" % what, got, inside, over)
    check(s.get("arm_wait_ns", 0) > 2 * (COMPILE_MS - 300) * 1000000,
          "%s: record says it waited through start-up (%.3f s)"
          % (what, s.get("arm_wait_ns", 0) / 1e9))
    # A -- CMD is traced from its first instruction, its runtime not yet
    # loaded: said so, not "0 runtime libraries, 0 probes".
    check("no runtime library loaded yet" in err and "0 runtime libraries" not in err,
          "%s: the wait before the runtime loads is said as such: %s" % (what, err[:600]))
    check("armed after" in err and "compile" in err,
          "%s: record says what it saw while it waited: %s" % (what, err[-1000:]))
    # Compile's programs were read in the trainer at each call's entry and
    # name the executions as the framework named the module.
    col = s.get("collector", {})
    check(col.get("programs_read", 0) >= 2 and col.get("programs_unnamed") == 0,
          "%s: Compile's programs read at entry: %s" % (what, {k: col.get(k) for k in
                                                               ("programs_read",
                                                                "programs_unnamed")}))
    names = {e.name for e in cap.line_events("/device:", "XLA Modules")}
    check(names == {"train_step"}, "%s: device executions named by the module: %s"
          % (what, names))


def now_in_checkpoint():
    work = tmpdir()
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "2ms",
                        "--long-host-op", "30s", "--long-host-op-step", "3")
    if not t:
        return
    try:
        rc, s, err = record("--pid", str(t.pid), "--now", "--duration", "1s",
                            "--logdir", os.path.join(work, "logs"))
    finally:
        t.stop()
    if not check(rc == 0 and s, "--now: record exited %d: %s" % (rc, err[-500:])):
        return
    print("--now: the window opened after %.3f s" % (s["arm_wait_ns"] / 1e9))
    check(s["arm_wait_ns"] <= 2.5e9, "--now: opened within the probes' 2 s, not at an "
          "execution: %.3f s" % (s["arm_wait_ns"] / 1e9))
    check(t.pid in {p["pid"] for p in s["processes"]},
          "--now: the stuck trainer's threads are in the capture")
    check(s["window_stop_ns"] - s["window_start_ns"] == 1000000000, "--now: a 1-s window")
    # No step completed: the report says which thread waited (the main
    # thread, in its checkpoint), not "capture a longer window".
    rc, out, err = acceltrace("report", "-j", s["path"])
    d = json.loads(out) if rc == 0 else {}
    waits = d.get("threads_waiting", [])
    check(waits and waits[0]["thread_id"] == t.pid and waits[0]["off_cpu_pct"] >= 50 and
          d["recommendation"].startswith("No step completed: the job was waiting"),
          "--now: the report names the waiting main thread: %s; %r"
          % (waits[:2], d.get("recommendation")))


def main():
    require_root()
    run(False)
    run(True)
    now_in_checkpoint()
    finish()


if __name__ == "__main__":
    main()
