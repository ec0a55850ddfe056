#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A trainer stuck in one long device op (the simulator's --long-device-op,
30 s, at its 1500th step, 3 s in) recorded by PID for 5 s from its start, so
the window holds hundreds of normal steps and then the stall:
`report` leads with it (docs/report.md, "The text": STILL RUNNING, then
the recommendation), names the op and its program on every core, says how
long it had run at the window's stop (from the truth's launch of that
program, within 150 ms), calls the device stuck instead of asking for a
longer window, and does not take the stalled program for the step
program."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import acceltrace, check, finish, record, require_root, running_trainer, tmpdir, truth  # noqa: E402

CORES = 4


def main():
    require_root()
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "2ms",
                        "--cores", str(CORES), "--long-device-op", "30s",
                        "--long-device-op-step", "1500", truth=tp)
    if not t:
        return
    try:
        rc, s, err = record("--pid", str(t.pid), "--duration", "5s",
                            "--logdir", os.path.join(work, "logs"))
    finally:
        t.stop()
    if not check(rc == 0 and s, "record exited %d: %s" % (rc, err[-500:])):
        return
    launch = [r for r in truth(tp, t.pid) if r["type"] == "execute" and r["module"] == "long_step"]
    if not check(launch, "the truth has the long program's launch"):
        return
    want_ms = (s["window_stop_ns"] - launch[0]["t_call"]) / 1e6

    rc, out, err = acceltrace("report", "-j", s["path"])
    if not check(rc == 0, "report -j exited %d: %s" % (rc, err[-300:])):
        return
    d = json.loads(out)
    running = d["still_running"]
    print("still running: %s; truth: launched %.1f ms before the stop" % (running, want_ms))
    check(d["stuck"], "the device is said stuck")
    check(len(running) == CORES and
          all(x["name"] == "convolution.77" and x["program"] == "long_step" for x in running),
          "every core in convolution.77 of long_step: %s" % running)
    check(all(want_ms - 150 <= x["running_ms"] <= want_ms + 1 for x in running),
          "each had run since the launch, %.1f ms: %s" % (want_ms, [x["running_ms"] for x in running]))
    check(d["recommendation"].startswith("/device:TPU:") and "convolution.77" in
          d["recommendation"] and "longer window" not in d["recommendation"].split(";")[0],
          "the advice names the stuck op: %r" % d["recommendation"])
    check(d["steps"]["program"] == "train_step" and d["steps"]["count"] >= 100,
          "the stalled program is not the step program: %r, %d steps"
          % (d["steps"]["program"], d["steps"]["count"]))

    rc, text, err = acceltrace("report", s["path"])
    lines = text.splitlines()
    check(len(lines) > 3 and lines[2] == "STILL RUNNING when the window ended" and
          "convolution.77 (program long_step)" in lines[3] and "still is" in lines[3],
          "the text leads with it: %s" % lines[:5])


if __name__ == "__main__":
    main()
    finish()
