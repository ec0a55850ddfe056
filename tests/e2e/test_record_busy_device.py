#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A window asked while the device is busy with one long execution opens at
once, seen from the host alone (docs/record.md, "When the window opens").

The trainer writes no devtrace buffer (its trace directory cannot be
made), so only the host's probes know the device is busy: they saw the
long execution launched, and its completion has not come. record --pid
takes two windows: the first while the trainer steps, the second asked
12 s later, when the 40-s execution has been running for seconds. The
second must arm at once and hold the long execution, clipped at the
window's start with its true start in stats; waiting for the launch after
it would time out (--arm-timeout 5s).
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import acceltrace, check, finish, require_root, running_trainer, tmpdir, truth
import xspace  # noqa: E402

LONG = "long_step"


def summaries(stdout):
    """Every window's JSON summary that `record -j` printed, in order."""
    dec, out, i = json.JSONDecoder(), [], 0
    text = stdout.strip()
    while i < len(text):
        j = text.find("{", i)
        if j < 0:
            break
        obj, i = dec.raw_decode(text, j)
        out.append(obj)
    return out


def main():
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "70s", "--step-time", "1ms",
                        "--long-device-op", "40s", "--long-device-op-step", "3000",
                        "--trace-dir", "/proc/acceltrace-no-such-dir/%p", truth=tp)
    if not t:
        return
    rc, out, err = acceltrace("record", "-j", "--pid", str(t.pid), "--duration", "300ms",
                              "--windows", "2", "--interval", "12s", "--arm-timeout", "5s",
                              "--logdir", os.path.join(work, "logs"), timeout=90)
    t.stop()
    sums = summaries(out) if rc == 0 else []
    if not check(rc == 0 and len(sums) == 2,
                 "busy device: two windows (exit %d, %d summaries): %s" % (rc, len(sums), err)):
        return
    T = truth(tp, t.pid)
    dev_t = [r for r in T if r["type"] == "device_execution" and r["module"] == LONG]
    if not check(dev_t, "busy device: the long execution ran (truth)"):
        return
    launched = min(r["t_start"] for r in dev_t)
    ended = max(r["t_end"] for r in dev_t)
    s1, s2 = sums
    # The case asked about: the probes saw the launch, and the second
    # window was asked over a second into the execution.
    if s1["probes_attached_ns"] > launched or s1["window_stop_ns"] > launched:
        print("SKIP-PART: the trainer reached its long step before the first window "
              "ended (a loaded machine): the case did not arise")
        return
    w0, w1 = s2["window_start_ns"], s2["window_stop_ns"]
    check(launched + 1000000000 < w0 < ended,
          "busy device: the second window opens during the long execution "
          "(%.3f s after its start, it ran %.3f s)" % ((w0 - launched) / 1e9,
                                                      (ended - launched) / 1e9))
    check(s2["arm_wait_ns"] < 1500000000,
          "busy device: armed at once, not at the next launch (waited %.3f s)"
          % (s2["arm_wait_ns"] / 1e9))
    cap = xspace.Capture(s2["path"], w0)
    launch_id = dev_t[0]["launch_id"]
    mods = [e for e in cap.line_events("/device:TPU", "XLA Modules")
            if e.stats.get("correlation_id") == launch_id]
    # Every core. The first window's close read records past its stop
    # and carried them; they were once replayed only when this window
    # opened, after the interval's records, and took the events and
    # callback arguments the long execution had reused: on no core then.
    print("busy device: the long execution on %d of %d cores" % (len(mods), len(dev_t)))
    check(mods, "busy device: the long execution in the second window")
    check(len(mods) == len(dev_t), "busy device: the long execution on every core "
          "(%d of %d)" % (len(mods), len(dev_t)))
    stale = [e for e in cap.line_events("/device:TPU", "XLA Modules")
             if e.stats.get("acceltrace.open_at_stop") and cap.true_start(e) < launched - 5000000]
    check(not stale, "busy device: no execution that completed before the long one is "
          "shown open at the stop (%s)" % [e.stats for e in stale])
    for e in mods:
        check(e.start == w0 and e.end == w1 and e.stats.get("acceltrace.clipped") == "start",
              "busy device: clipped at the window's start and open at its stop (%s)" % e.stats)
        check(abs(cap.true_start(e) - launched) < 50000000,
              "busy device: its true start %d near the truth's %d"
              % (cap.true_start(e), launched))


if __name__ == "__main__":
    require_root()
    main()
    finish()
