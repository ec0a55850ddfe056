#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The agent's PJRT backend (docs/agent.md, "The PJRT backend") against the
simulated plugin's profiler extension, with the simulator's own devtrace
buffers turned off (--no-devtrace): every device op and execution in the
capture comes from the plugin's XSpace, collected by the agent.

- launched (record -- CMD preloads the agent): every op of the truth
  inside the window is on its core's XLA Ops line, nothing else is, times
  within 10 us of the truth; every whole execution is linked to its host
  Execute by its run id; no execution is drawn twice (the runtime's
  estimate and the plugin's);
- --no-agent: no device op, executions estimated from the host only;
- by PID, the trainer started with LD_PRELOAD: the same ops;
- the simulator writing its own devtrace buffers as well: the agent stays
  off (state "no runtime"), and the ops are not doubled.
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (OUTPUT, capture_of, check, check_bounds, finish, protoc_decodes, record,
                 require_root, running_trainer, tmpdir, trainer_cmd, truth, truth_split)

US = 1000
AGENT = os.path.abspath(os.path.join(OUTPUT, "libacceltrace-agent.so"))
TRAINER_ARGS = ("--steps", "0", "--duration", "30s", "--step-time", "1ms",
                "--fetch-every", "10")


def check_ops(what, s, T):
    """The capture's device ops and executions against the truth."""
    cap = capture_of(s)
    cores = cap.plane_stat("acceltrace.core")
    ops = cap.line_events("/device:TPU", "XLA Ops")
    key = lambda r: (r["core"], r["launch_id"], r["name"])
    # The agent's first collection, at its activation, restarts the
    # plugin's session just before the window opens; the simulator reports
    # an event up to 0.5 ms before it ends, so an op ending in the
    # window's first millisecond may fall in that gap (docs/agent.md).
    w0 = s["window_start_ns"]
    edge = [r for r in T if r["type"] == "op" and w0 <= r["t_start"] and r["t_end"] < w0 + 1000 * US]
    inside, over = truth_split([r for r in T if r["type"] == "op" and r not in edge],
                               "t_start", "t_end", s, key, tolerance_ns=20 * US)
    over.update(key(r) for r in edge)
    captured = collections.Counter((cores.get(e.plane), e.stats.get("launch_id"), e.name)
                                   for e in ops)
    check_bounds("%s: device ops per (core, launch, name)" % what, captured, inside, over)
    by_key = {key(r): r for r in T if r["type"] == "op"}
    errs = [abs(cap.true_start(e) - by_key[k]["t_start"]) for e in ops
            for k in [(cores.get(e.plane), e.stats.get("launch_id"), e.name)] if k in by_key]
    check(errs and max(errs) <= 10 * US,
          "%s: op starts within 10 us of the truth (worst %s ns over %d)"
          % (what, max(errs) if errs else None, len(errs)))
    mods = cap.line_events("/device:TPU", "XLA Modules")
    estimated = [e for e in mods if e.stats.get("acceltrace.estimated")]
    check(mods and not estimated, "%s: executions from the plugin's trace only "
          "(%d of %d estimated from the host)" % (what, len(estimated), len(mods)))
    host = {e.stats.get("correlation_id") for e in cap.on_plane_prefix("/host:CPU")
            if e.stats.get("correlation_id")}
    w1 = s["window_stop_ns"]
    whole = [e for e in mods if cap.true_start(e) >= w0 + 5000 * US and cap.true_end(e) <= w1]
    unlinked = [e for e in whole if e.stats.get("correlation_id") not in host]
    check(whole and not unlinked, "%s: every execution linked to its host Execute by its "
          "run id (%d of %d not)" % (what, len(unlinked), len(whole)))
    check(protoc_decodes(s["path"]), "%s: protoc decodes the capture" % what)


def launched():
    what = "launched"
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    cmd = trainer_cmd("--steps", "3000", "--step-time", "1ms", "--no-devtrace", truth=tp)
    rc, s, err = record("--duration", "1s", "--logdir", os.path.join(work, "logs"), "--", *cmd)
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err[-800:])):
        return
    T = truth(tp, s["processes"][0]["pid"])
    check(all(r.get("trace_dir", "") == "" for r in T if r["type"] == "client_create"),
          "%s: the simulator wrote no devtrace buffer of its own" % what)
    check_ops(what, s, T)

    what = "--no-agent"
    rc, s, err = record("--no-agent", "--duration", "1s", "--logdir",
                        os.path.join(work, "logs2"), "--", *cmd)
    if check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err[-800:])):
        check(s["spans"]["device_op"] == 0 and s["spans"]["device_module"] > 0,
              "%s: no device op, executions estimated from the host (%s)"
              % (what, s["spans"]))


def by_pid():
    what = "by pid"
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    env = dict(os.environ, LD_PRELOAD=AGENT)
    t = running_trainer(*TRAINER_ARGS, "--no-devtrace", truth=tp, env=env)
    if not t:
        return
    rc, s, err = record("--pid", str(t.pid), "--duration", "1s",
                        "--logdir", os.path.join(work, "logs"))
    t.stop()
    if check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err[-800:])):
        check_ops(what, s, truth(tp, t.pid))


def own_buffers():
    """The simulator's own buffers and the agent both present: one source."""
    what = "own devtrace buffers"
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    rc, s, err = record("--duration", "1s", "--logdir", os.path.join(work, "logs"), "--",
                        *trainer_cmd("--steps", "3000", "--step-time", "1ms", truth=tp))
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err[-800:])):
        return
    check(not any("agent" in w for w in s.get("warnings", [])),
          "%s: the agent said nothing (%s)" % (what, s.get("warnings")))
    check_ops(what, s, truth(tp, s["processes"][0]["pid"]))


if __name__ == "__main__":
    require_root()
    launched()
    by_pid()
    own_buffers()
    finish()
