#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace report against the simulator's ground truth (docs/report.md):
- runs input-bound about 0 %, 30 % and 70 % (--input-bound): the report's
  input_bound_pct within 3 points of the truth (the share of the steps'
  time core 0 ran no execution) and steps.avg_ms within 2 % of the truth's
  step period over the window;
- train/eval alternation (--eval-every, two programs): the steps are
  exactly the train executions in the window (none of eval's), in the
  capture's Steps line (step_num 0.., group_id on the launches) and in the
  report; with the Steps line removed, the report finds the same steps
  from XLA Modules by the dominant-program rule.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (acceltrace, capture_of, check, finish, record, require_root,
                 running_trainer, tmpdir, truth)
import xspace  # noqa: E402

# Without a device trace, each idle gap is short by the launch and
# completion-callback latencies (tens to hundreds of µs on a loaded host;
# docs/report.md, Known bias): 10 ms steps keep that well inside 3 points.
STEP_MS = 10.0


def report_json(path):
    rc, out, err = acceltrace("report", "-j", path)
    if not check(rc == 0, "report %s exited %d: %s" % (path, rc, err[-500:])):
        return None
    return json.loads(out)


def capture(*trainer_args, window="3s", step_ms=STEP_MS):
    """(summary, truth records) of a window of a running trainer."""
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "%gms" % step_ms,
                        "--fetch-every", "0", *trainer_args, truth=tp)
    if not t:
        return None, None
    rc, s, err = record("--pid", str(t.pid), "--duration", window,
                        "--logdir", os.path.join(work, "logs"))
    t.stop()
    if not check(rc == 0 and s, "record %s exited %d: %s" % (trainer_args, rc, err[-500:])):
        return None, None
    return s, truth(tp, t.pid)


def executions(T, module, core=0):
    return sorted((r for r in T if r["type"] == "device_execution" and r["core"] == core
                   and r["module"] == module), key=lambda r: r["t_start"])


def truth_in_window(T, s, module="train_step"):
    """Core 0's executions of module starting in the window: the steps the
    report measures, start to next start."""
    w0, w1 = s["window_start_ns"], s["window_stop_ns"]
    return [r for r in executions(T, module) if w0 <= r["t_start"] <= w1]


def check_steps(what, s, T, d, module="train_step", other=()):
    """The capture's steps are exactly the truth's executions of module in
    the window, none of the other programs'. Without a device trace an
    execution spans its launch (Execute) to its completion, so the window
    holds those whose [launch, device end] overlaps it; all of them inside
    it must be there (0.2 ms of clock tolerance at the edges)."""
    w0, w1 = s["window_start_ns"], s["window_stop_ns"]
    call = {r["launch_id"]: r["t_call"] for r in T if r["type"] == "execute"}
    span = [(call.get(r["launch_id"], r["t_start"]), r["t_end"], r["launch_id"])
            for r in executions(T, module)]
    inside = {l for a, b, l in span if a >= w0 and b <= w1}
    over = {l for a, b, l in span if b >= w0 - 200000 and a <= w1 + 200000}
    cap = capture_of(s)
    steps = [e for e in cap.events if e.plane == "/device:TPU:0" and e.line.name == "Steps"]
    got = {e.stats.get("correlation_id") for e in steps}
    others = {r["launch_id"] for m in other for r in executions(T, m)}
    check(inside <= got <= over and not (got & others),
          "%s: the Steps line holds the %s executions: %d captured, %d inside, %d "
          "overlapping, %d of other programs among them"
          % (what, module, len(got), len(inside), len(over), len(got & others)))
    nums = sorted(e.stats.get("step_num") for e in steps)
    check(nums == list(range(len(steps))), "%s: step_num 0..%d" % (what, len(steps) - 1))
    if d:
        check(d["steps"]["count"] == len(steps),
              "%s: report found %d steps, the Steps line holds %d"
              % (what, d["steps"]["count"], len(steps)))
    return cap, steps, got


def input_bound(fraction):
    what = "input-bound %g" % fraction
    s, T = capture("--input-bound", str(fraction))
    if not s:
        return
    d = report_json(s["path"])
    if not d:
        return
    steps = truth_in_window(T, s)
    allx = executions(T, "train_step")
    a, b = steps[0]["t_start"], steps[-1]["t_start"]
    busy = sum(max(0, min(r["t_end"], b) - max(r["t_start"], a)) for r in allx)
    want_pct = 100.0 * (1 - busy / (b - a))
    want_ms = (b - a) / 1e6 / (len(steps) - 1)
    got_pct, got_ms = d["input_bound_pct"], d["steps"]["avg_ms"]
    print("%s: input-bound %.1f%% (truth %.1f%%), step %.4f ms (truth %.4f ms), %d steps"
          % (what, got_pct, want_pct, got_ms, want_ms, d["steps"]["count"]))
    check_steps(what, s, T, d)
    check(abs(got_pct - want_pct) <= 3.0,
          "%s: input_bound_pct %.2f, truth %.2f" % (what, got_pct, want_pct))
    check(abs(got_ms - want_ms) <= 0.02 * want_ms,
          "%s: steps.avg_ms %.4f, truth %.4f" % (what, got_ms, want_ms))
    verdict = ("HIGHLY" if want_pct >= 20 else "moderately" if want_pct >= 5 else "device-bound")
    check(verdict in d["recommendation"] or (verdict == "device-bound" and
                                              "not input-bound" in d["recommendation"]),
          "%s: recommendation %r" % (what, d["recommendation"]))


def without_steps_line(path, out):
    pb2 = xspace.xplane_pb2()
    space = pb2.XSpace()
    with open(path, "rb") as f:
        space.ParseFromString(f.read())
    for p in space.planes:
        keep = [l for l in p.lines if l.name != "Steps"]
        del p.lines[:]
        p.lines.extend(keep)
    with open(out, "wb") as f:
        f.write(space.SerializeToString())


def train_eval():
    what = "train/eval"
    s, T = capture("--eval-every", "4", "--eval-time", "1ms", window="2s", step_ms=2.0)
    if not s:
        return
    evals = executions(T, "eval_step")
    check(len(evals) > 10, "%s: the trainer ran evals (%d)" % (what, len(evals)))
    d = report_json(s["path"])
    cap, steps, got = check_steps(what, s, T, d, other=("eval_step",))
    launch = [e for e in cap.events if e.name == "PJRT_LoadedExecutable_Execute"
              and e.stats.get("correlation_id") in got]
    check(launch and all("group_id" in e.stats for e in launch),
          "%s: every launch of a step carries group_id" % what)
    bare = os.path.join(os.path.dirname(s["path"]), "bare.xplane.pb.copy")
    without_steps_line(s["path"], bare)
    d2 = report_json(bare)
    if d2:
        # The program is named as the capture names it (the train executable).
        want = d["steps"]["program"] if d else None
        check(d2["steps"]["program"] == want and d2["steps"]["count"] == len(steps) and
              "XLA Modules" in d2["steps"]["source"],
              "%s: without the Steps line, %d steps of %r by %r (want %d of %r)"
              % (what, d2["steps"]["count"], d2["steps"]["program"], d2["steps"]["source"],
                 len(steps), want))


if __name__ == "__main__":
    require_root()
    only = sys.argv[1:]
    for f in (0.0, 0.3, 0.7):
        if not only or "input" in only:
            input_bound(f)
    if not only or "eval" in only:
        train_eval()
    finish()
