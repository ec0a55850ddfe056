#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The device's own timeline, read from the simulator's devtrace buffers
(docs/devtrace.md), against its ground truth:
- every device op in the window is in the capture (counts per core equal,
  window edges allowed for), with times within 10 us of the truth although
  the device clock drifts 80 ppm and is offset by hours; the clock bound the
  capture records covers the actual error;
- each device execution is linked to its host Execute (same correlation_id);
- an overrun buffer gives a capture whose loss is counted and stated;
- a window wholly inside a ten-minute device op, attached to after the op
  began, shows the op (and its execution and step) with its true start;
- a corrupted buffer named by --devtrace is read without a crash, its bad
  records counted and stated;
- with -a, the buffers of a trainer that starts after acceltrace join the
  reading: its device ops are in the capture.
"""
import collections
import glob
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (ACCELTRACE, capture_of, check, check_bounds, finish, protoc_decodes, record,
                 require_root, running_trainer, tmpdir, truth, truth_split, wait_for,
                 waits_for_events)
import xspace  # noqa: E402

US = 1000


def device_ops(cap):
    return [e for e in cap.line_events("/device:TPU", "XLA Ops")
            if "acceltrace.infeed_wait" not in e.stats]


def ops_clock_and_links():
    what = "ops"
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "30s", "--step-time", "1ms",
                        "--feed", "infeed", "--input-bound", "0.3",
                        "--clock-drift-ppb", "80000",
                        "--clock-offset", str(7 * 3600 * 940000000), truth=tp)
    if not t:
        return
    rc, s, err = record("--pid", str(t.pid), "--duration", "1s",
                        "--logdir", os.path.join(work, "logs"))
    t.stop()
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err[-800:])):
        return
    check(protoc_decodes(s["path"]), "%s: protoc decodes the capture" % what)
    cap = capture_of(s)
    T = truth(tp)
    cores = cap.plane_stat("acceltrace.core")
    ops = device_ops(cap)
    # Every op of the truth inside the window is captured, per core.
    key = lambda r: (r["core"], r["launch_id"], r["name"])
    inside, over = truth_split([r for r in T if r["type"] == "op"], "t_start", "t_end",
                               s, key, tolerance_ns=20 * US)
    captured = collections.Counter((cores.get(e.plane), e.stats.get("launch_id"), e.name)
                                   for e in ops)
    check_bounds("%s: device ops per (core, launch, name)" % what, captured, inside, over)
    # Times within 10 us of the truth, drift and offset notwithstanding.
    by_key = {key(r): r for r in T if r["type"] == "op"}
    errs = []
    for e in ops:
        r = by_key.get((cores.get(e.plane), e.stats.get("launch_id"), e.name))
        if r:
            errs.append(abs(cap.true_start(e) - r["t_start"]))
            errs.append(abs(cap.true_end(e) - r["t_end"]))
    check(errs and max(errs) <= 10 * US,
          "%s: op times within 10 us of the truth (worst %s ns over %d)"
          % (what, max(errs) if errs else None, len(errs)))
    # Executions: the bound the capture states covers the real error.
    execs = {(r["core"], r["launch_id"]): r for r in T if r["type"] == "device_execution"}
    mods = cap.line_events("/device:TPU", "XLA Modules")
    bad = []
    for e in mods:
        r = execs.get((cores.get(e.plane), e.stats.get("correlation_id")))
        bound = e.stats.get("acceltrace.clock_bound_ns")
        if r is None or bound is None:
            bad.append(("no truth or bound", e))
            continue
        err_ns = abs(cap.true_start(e) - r["t_start"])
        if err_ns > bound or err_ns > 10 * US:
            bad.append((err_ns, bound, e))
    check(mods and not bad, "%s: execution starts within the stated clock bound (%d of %d bad: %s)"
          % (what, len(bad), len(mods), bad[:3]))
    # Each device execution is linked to its host Execute.
    host = {e.stats.get("correlation_id") for e in cap.on_plane_prefix("/host:CPU")
            if e.stats.get("correlation_id")}
    w0, w1 = s["window_start_ns"], s["window_stop_ns"]
    whole = [e for e in mods if cap.true_start(e) >= w0 + 5000 * US and cap.true_end(e) <= w1]
    unlinked = [e for e in whole if e.stats.get("correlation_id") not in host]
    check(whole and not unlinked, "%s: every execution linked to its host Execute "
          "(%d of %d not)" % (what, len(unlinked), len(whole)))
    # Infeed waits: the device waiting for host data, inside its infeed op.
    waits = [e for e in cap.line_events("/device:TPU", "XLA Ops")
             if "acceltrace.infeed_wait" in e.stats]
    check(waits and all(e.stats.get("hlo_category") == "infeed" for e in waits),
          "%s: infeed waits drawn, hlo_category infeed (%d)" % (what, len(waits)))
    # XProf's op metadata and step grouping.
    e = next((e for e in ops if e.stats.get("hlo_category") != "infeed"), None)
    check(e is not None and all(k in e.stats for k in
                                ("hlo_category", "flops", "bytes_accessed", "program_id",
                                 "group_id")),
          "%s: op stats for XProf: %s" % (what, e.stats if e else None))
    steps = cap.line_events("/device:TPU", "Steps")
    check(steps and all("group_id" in x.stats for x in steps), "%s: steps carry group_id" % what)


def overrun():
    what = "overrun"
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "0", "--duration", "30s", "--step-time", "100us",
                        "--trace-records", "16", truth=tp)
    if not t:
        return
    rc, s, err = record("--pid", str(t.pid), "--duration", "1s",
                        "--logdir", os.path.join(work, "logs"))
    t.stop()
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err[-800:])):
        return
    cap = capture_of(s)
    lost = [w for w in cap.space.warnings if "devtrace records lost" in w]
    check(lost and int(lost[0].rsplit(":", 1)[1]) > 0,
          "%s: the loss is counted and stated: %s" % (what, list(cap.space.warnings)))
    # What was read is real: every captured op is one of the truth's.
    T = truth(tp)
    cores = cap.plane_stat("acceltrace.core")
    real = {(r["core"], r["launch_id"], r["name"]) for r in T if r["type"] == "op"}
    fake = [e for e in device_ops(cap)
            if (cores.get(e.plane), e.stats.get("launch_id"), e.name) not in real]
    check(not fake, "%s: no op the device did not run (%s)" % (what, fake[:3]))


def long_op_running(tp, step):
    """True once the trainer's truth (flushed about every second, also while
    the device is busy) shows the step before @step finished and the long
    program launched: the device is in its long op."""
    try:
        recs = truth(tp)
    except (OSError, ValueError):	# not written yet, or a line half-flushed
        return False
    return (any(r["type"] == "step" and r["step"] == step - 1 for r in recs) and
            any(r["type"] == "execute" and r["module"] == "long_step" for r in recs))


def long_op_attached_late():
    what = "ten-minute op"
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    t = running_trainer("--steps", "1000", "--step-time", "1ms", "--long-device-op", "10m",
                        "--long-device-op-step", "200", truth=tp)
    if not t:
        return
    if not wait_for(lambda: long_op_running(tp, 200), 30,
                    what="%s: the trainer reaches its long op" % what):
        t.stop()
        return
    attach = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    rc, s, err = record("--pid", str(t.pid), "--duration", "1s",
                        "--logdir", os.path.join(work, "logs"))
    t.stop()			# SIGTERM cancels the op: the truth has its start
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err[-800:])):
        return
    cap = capture_of(s)
    T = truth(tp)
    cores = cap.plane_stat("acceltrace.core")
    long_ops = {r["core"]: r for r in T if r["type"] == "op" and r["module"] == "long_step"}
    check(long_ops and all(r["t_start"] < attach for r in long_ops.values()),
          "%s: began before record attached in the truth" % what)
    w0, w1 = s["window_start_ns"], s["window_stop_ns"]
    got = [e for e in device_ops(cap) if cores.get(e.plane) in long_ops and
           e.stats.get("launch_id") == long_ops[cores.get(e.plane)]["launch_id"]]
    check(len(got) == len(long_ops), "%s: on every core (%d of %d)"
          % (what, len(got), len(long_ops)))
    for e in got:
        r = long_ops[cores[e.plane]]
        check(e.start == w0 and e.end == w1 and e.stats.get("acceltrace.clipped") == "start"
              and e.stats.get("acceltrace.open_at_stop") == 1,
              "%s: core %d fills the window, clipped, open at stop (%s)"
              % (what, r["core"], e.stats))
        check(abs(cap.true_start(e) - r["t_start"]) <= 10 * US,
              "%s: core %d true start %d within 10 us of the truth %d"
              % (what, r["core"], cap.true_start(e), r["t_start"]))
    mods = [e for e in cap.line_events("/device:TPU", "XLA Modules") if e.name == "long_step"]
    check(len(mods) == len(long_ops), "%s: its execution on every core (%d)" % (what, len(mods)))


def corrupted():
    what = "corrupted buffer"
    work = tmpdir()
    tdir = os.path.join(work, "trace")
    t = running_trainer("--steps", "300", "--step-time", "1ms", "--trace-dir", tdir)
    if not t:
        return
    t.proc.wait(timeout=60)
    t.stop()
    bufs = sorted(glob.glob(os.path.join(tdir, "core*.devtrace")))
    if not check(bufs, "%s: the trainer left its buffers in %s" % (what, tdir)):
        return
    with open(bufs[0], "r+b") as f:
        hdr = f.read(4096)
        rec_off = int.from_bytes(hdr[40:48], "little")
        f.seek(rec_off + 64 * 10)
        f.write(os.urandom(64 * 50))	# fifty slots of garbage
    # Read alongside a live trainer's window.
    t2 = running_trainer("--steps", "0", "--duration", "20s", "--step-time", "1ms")
    if not t2:
        return
    args = []
    for b in bufs:
        args += ["--devtrace", b]
    rc, s, err = record("--pid", str(t2.pid), "--duration", "500ms", *args,
                        "--logdir", os.path.join(work, "logs"))
    t2.stop()
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err[-800:])):
        return
    warnings = list(capture_of(s).space.warnings)
    check(any("devtrace records" in w for w in warnings),
          "%s: bad records counted and stated: %s" % (what, warnings))
    rc, s, err = record("--pid", str(os.getpid()), "--duration", "100ms",
                        "--devtrace", "/etc/hostname", "--logdir", os.path.join(work, "l2"))
    check(rc == 1 and "not a devtrace buffer" in err,
          "%s: a file that is no buffer refused by name (%d): %s" % (what, rc, err[-300:]))


def whole_host_late_process():
    what = "-a, a trainer started later"
    work = tmpdir()
    logdir = os.path.join(work, "logs")
    # 8 s: another trainer on the host may arm the window at once.
    rec = subprocess.Popen([ACCELTRACE, "record", "-j", "-a", "--duration", "8s",
                            "--logdir", logdir], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    # The trainer below is to start after acceltrace attached and scanned
    # the host: once its loop waits for events.
    wait_for(lambda: waits_for_events(rec.pid), 30,
             what="%s: acceltrace attached (its loop waiting for events)" % what)
    t = running_trainer("--steps", "0", "--duration", "30s", "--step-time", "1ms")
    try:
        out, err = rec.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        rec.kill()
        out, err = rec.communicate()
    if t:
        t.stop()
    if not check(rec.returncode == 0 and t, "%s: record exited %d: %s"
                 % (what, rec.returncode, err[-800:])):
        return
    s = xspace.record_summary(out)
    cap = capture_of(s)
    pids = cap.plane_stat("acceltrace.pid")
    ops = [e for e in device_ops(cap) if pids.get(e.plane) == t.pid]
    check(ops and s["spans"].get("device_op", 0) >= len(ops),
          "%s: its device ops are in the capture (%d)" % (what, len(ops)))


if __name__ == "__main__":
    require_root()
    ops_clock_and_links()  # noqa
    overrun()
    long_op_attached_late()
    corrupted()
    whole_host_late_process()
    finish()
