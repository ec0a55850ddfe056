#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The capture window's promises (docs/record.md):
- a device execution longer than the whole window, and a host call (an
  outfeed blocked on it) that starts before the window and ends after it,
  are in the capture clipped to the window, marked open at stop, with their
  true start in stats; with --grace, with their true end too;
- Ctrl-C mid-window writes a valid capture; a second Ctrl-C aborts without
  writing; a target killed mid-window still yields a capture, its device
  work in flight ended at its exit and marked;
- --steps N ends the window where execution N + 1 began, holding exactly
  N; --windows 2 writes two session directories;
- no device activity: a clear non-zero exit saying what was not found;
- a full disk: a clear error, and no file left behind.
"""
import glob
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (ACCELTRACE, running_trainer, acceltrace, capture_of, check, finish,
                 protoc_decodes, record, require_root, tmpdir, trainer_cmd, truth)
import xspace  # noqa: E402

LONG = "long_step"


def long_op(grace):
    """The long program runs 8 s from step 300; the window is 2 s inside it."""
    what = "long op, grace %s" % grace
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    args = ["--delay", "1s", "--duration", "2s", "--logdir", os.path.join(work, "logs")]
    if grace:
        args += ["--grace", grace]
    # The plugin named in TPU_LIBRARY_PATH, as frameworks do: acceltrace
    # probes it before the trainer loads it.
    cmd = trainer_cmd("--feed", "infeed", "--steps", "400", "--step-time", "1ms",
                      "--long-device-op", "8s", "--long-device-op-step", "300", truth=tp)
    plugin = cmd[cmd.index("--plugin") + 1]
    del cmd[cmd.index("--plugin"):cmd.index("--plugin") + 2]
    os.environ["TPU_LIBRARY_PATH"] = os.path.abspath(plugin)
    rc, s, err = record(*args, "--", *cmd)
    del os.environ["TPU_LIBRARY_PATH"]
    if not check(rc == 0 and s, "%s: record exited %d: %s" % (what, rc, err)):
        return
    cap = capture_of(s)
    T = truth(tp, s["processes"][0]["pid"])
    w0, w1 = s["window_start_ns"], s["window_stop_ns"]
    dev_t = {r["core"]: r for r in T if r["type"] == "device_execution" and r["module"] == LONG}
    check(dev_t and all(r["t_start"] < w0 and r["t_end"] > w1 for r in dev_t.values()),
          "%s: the long op spans the whole window in the truth" % what)
    long_launch = next(iter(dev_t.values()))["launch_id"] if dev_t else None
    plane_core = {p.name: p.id for p in cap.space.planes}
    mods = [e for e in cap.line_events("/device:TPU", "XLA Modules")
            if e.stats.get("correlation_id") == long_launch]
    check(len(mods) == len(dev_t), "%s: the long execution on every core (%d of %d)"
          % (what, len(mods), len(dev_t)))
    for e in mods:
        r = dev_t.get(plane_core[e.plane])
        if not check(r, "%s: plane %s maps to a core of the truth" % (what, e.plane)):
            continue
        # Open at the stop, a span ends there (clipped at its start only);
        # with --grace it ends later, and is clipped on both sides.
        check(e.start == w0 and e.end == w1 and
              e.stats.get("acceltrace.clipped") == ("both" if grace else "start"),
              "%s: core %s clipped to the window (%s)" % (what, r["core"], e.stats))
        ts = cap.true_start(e)
        check(abs(ts - r["t_start"]) < 5000000,
              "%s: core %s true start %d within 5 ms of the truth %d"
              % (what, r["core"], ts, r["t_start"]))
        if grace:
            check(e.stats.get("acceltrace.ended_in_grace") == 1 and
                  abs(cap.true_end(e) - r["t_end"]) < 5000000,
                  "%s: core %s true end %d within 5 ms of the truth %d (%s)"
                  % (what, r["core"], cap.true_end(e), r["t_end"], e.stats))
        else:
            check(e.stats.get("acceltrace.open_at_stop") == 1,
                  "%s: core %s marked open at stop (%s)" % (what, r["core"], e.stats))
    # The outfeed call blocked on the long op: a host span across the window.
    out_t = [r for r in T if r["type"] == "outfeed" and r["t_call"] < w0 and r["t_return"] > w1]
    outs = [e for e in cap.named("TpuTransferManager_TransferLiteralFromOutfeed")
            if e.stats.get("acceltrace.clipped") == ("both" if grace else "start")]
    check(out_t and len(outs) == len(out_t),
          "%s: outfeed calls across the window: captured %d, truth %d"
          % (what, len(outs), len(out_t)))
    starts = sorted(cap.true_start(e) for e in outs)
    want = sorted(r["t_call"] for r in out_t)
    check(len(starts) == len(want) and all(abs(a - b) < 100000 for a, b in zip(starts, want)),
          "%s: outfeed true starts within 100 us of the truth" % what)
    if grace:
        ends = sorted(cap.true_end(e) for e in outs)
        want = sorted(r["t_return"] for r in out_t)
        check(all(e.stats.get("acceltrace.ended_in_grace") == 1 for e in outs) and
              len(ends) == len(want) and all(abs(a - b) < 100000 for a, b in zip(ends, want)),
              "%s: outfeed true ends within 100 us of the truth" % what)
    else:
        check(all(e.stats.get("acceltrace.open_at_stop") == 1 for e in outs),
              "%s: outfeed calls marked open at stop" % what)


def interrupted():
    work = tmpdir()
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "1ms")
    if not t:
        return
    logdir = os.path.join(work, "logs")
    rc, out, err = acceltrace("record", "-j", "--pid", str(t.pid), "--logdir", logdir,
                              input_signal_after=4)
    check(rc == 0, "Ctrl-C: exit 0 (%d): %s" % (rc, err))
    if rc == 0:
        s = xspace.record_summary(out)
        check(protoc_decodes(s["path"]) and s["spans"]["execute"] > 0,
              "Ctrl-C: a valid capture with executions")
    t.stop()
    # A second Ctrl-C while the first one finishes: abort, nothing written.
    # A device op that runs past the stop keeps the grace period going
    # (it ends early once nothing is open), so the second one finds it.
    # It starts about 3 s in, well after the probes are in place (an op
    # issued before them is not known to be open), and runs past the
    # first Ctrl-C at 8 s.
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "1ms",
                "--long-device-op", "40s", "--long-device-op-step", "3000")
    if not t:
        return
    logdir2 = os.path.join(work, "logs2")
    p = subprocess.Popen([ACCELTRACE, "record", "--pid", str(t.pid), "--logdir", logdir2,
                          "--grace", "30s"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(8)
    p.send_signal(signal.SIGINT)
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    check(p.returncode != 0 and "no capture written" in err,
          "second Ctrl-C: aborts with a message (%d): %s" % (p.returncode, err))
    check(not glob.glob(logdir2 + "/plugins/profile/*/*"), "second Ctrl-C: no file left")
    t.stop()


def target_killed():
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    # Device work is surely in flight at the kill: a one-minute op from step
    # 200 (about 1 s in). Between ordinary 5 ms steps the device can be idle,
    # waiting for the host, and a kill landing there has nothing to end.
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "5ms",
                        "--long-device-op", "60s", "--long-device-op-step", "200", truth=tp)
    if not t:
        return
    p = subprocess.Popen([ACCELTRACE, "record", "-j", "--pid", str(t.pid), "--logdir",
                          os.path.join(work, "logs")], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(4)
    killed = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    t.stop(sig=signal.SIGKILL)
    out, err = p.communicate(timeout=60)
    check(p.returncode == 0, "target killed: exit 0 (%d): %s" % (p.returncode, err))
    if p.returncode:
        return
    s = xspace.record_summary(out)
    check(s["processes"][0]["exited"], "target killed: the process is marked exited")
    cap = capture_of(s)
    exited = [e for e in cap.line_events("/device:TPU", "XLA Modules")
              if e.stats.get("acceltrace.target_exited") == 1]
    cores = {e.plane for e in cap.line_events("/device:TPU", "XLA Modules")}
    check(cores and {e.plane for e in exited if e.name == LONG} == cores,
          "target killed: the long execution in flight ended at the exit on every core, "
          "marked (%s on %d cores)" % ([(e.plane, e.name) for e in exited], len(cores)))
    check(all(killed <= e.end <= killed + 5 * 10**9 for e in exited),
          "target killed: it ends at the exit, not before the kill (%d, %s)"
          % (killed, [e.end for e in exited]))
    check(protoc_decodes(s["path"]), "target killed: the capture decodes")


def steps_and_windows():
    work = tmpdir()
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "2ms")
    if not t:
        return
    rc, s, err = record("--pid", str(t.pid), "--steps", "50", "--logdir",
                        os.path.join(work, "logs"))
    # It ends where step 51 began, even when step 51's records (and later
    # ones) came in one batch with step 50's.
    check(rc == 0 and s and s["spans"]["execute"] == 50,
          "--steps 50: the window holds 50 executions (%s): %s"
          % (s and s["spans"]["execute"], err))
    logdir = os.path.join(work, "logs2")
    rc, out, err = acceltrace("record", "--pid", str(t.pid), "--duration", "500ms",
                              "--windows", "2", "--interval", "300ms", "--session", "phase",
                              "--logdir", logdir)
    t.stop()
    sessions = sorted(os.path.basename(d) for d in glob.glob(logdir + "/plugins/profile/*"))
    check(rc == 0 and sessions == ["phase_w1", "phase_w2"],
          "--windows 2: two session directories (%s): %s" % (sessions, err))
    for d in sessions:
        files = glob.glob(os.path.join(logdir, "plugins/profile", d, "*.xplane.pb"))
        check(len(files) == 1 and protoc_decodes(files[0]), "--windows: %s decodes" % d)
    # Launched, Compile is seen once, before the first window: its module
    # name must still name the device work of the second. The trainer
    # starts as frameworks do (a one-off program first, compiles of 100 ms):
    # the training step's Compile comes long after GetPjrtApi returned, so
    # the slot probes are in place for it. (A Compile issued within a few
    # milliseconds of GetPjrtApi's return can be missed: docs/probes.md.)
    logdir = os.path.join(work, "logs3")
    cmd = trainer_cmd("--init-programs", "1", "--compile-ms", "100",
                      "--steps", "3000", "--step-time", "1ms")
    os.environ["TPU_LIBRARY_PATH"] = os.path.abspath(cmd[cmd.index("--plugin") + 1])
    del cmd[cmd.index("--plugin"):cmd.index("--plugin") + 2]
    rc, out, err = acceltrace("record", "--duration", "300ms", "--windows", "2",
                              "--interval", "200ms", "--session", "named", "--logdir", logdir,
                              "--", *cmd)
    del os.environ["TPU_LIBRARY_PATH"]
    check(rc == 0, "--windows, launched: exit %d: %s" % (rc, err))
    for d in ("named_w1", "named_w2"):
        files = glob.glob(os.path.join(logdir, "plugins/profile", d, "*.xplane.pb"))
        if not check(len(files) == 1, "--windows, launched: %s written" % d):
            continue
        cap = xspace.Capture(files[0], 0)
        names = {e.name for e in cap.line_events("/device:TPU", "XLA Modules")}
        check(names == {"train_step"}, "--windows, launched: %s device work named by "
              "its module: %s" % (d, names))


def no_activity():
    rc, out, err = acceltrace("record", "--arm-timeout", "2s", "--logdir", tmpdir(),
                              "--", "/bin/sleep", "10")
    check(rc == 1 and "no device activity" in err and "no runtime library mapped" in err,
          "no activity: exit 1 saying what was not found (%d): %s" % (rc, err))
    rc, out, err = acceltrace("record", "--pid", "999999999")
    check(rc != 0 and "999999999" in err, "a dead pid is named: %s" % err)


def full_disk():
    if subprocess.run(["unshare", "-m", "true"]).returncode:
        check(False, "unshare -m is not available")
        return
    work = tmpdir()
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "1ms")
    if not t:
        return
    mnt = os.path.join(work, "tiny")
    os.makedirs(mnt)
    script = ("mount -t tmpfs -o size=64k tmpfs %s && %s record --pid %d --duration 1s "
              "--logdir %s/logs; rc=$?; find %s -type f; exit $rc"
              % (mnt, os.path.abspath(ACCELTRACE), t.pid, mnt, mnt))
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                       capture_output=True, text=True, timeout=120)
    t.stop()
    check(p.returncode == 1 and "disk full" in p.stderr,
          "full disk: exit 1 with 'disk full' (%d): %s" % (p.returncode, p.stderr[-600:]))
    check(not p.stdout.strip(), "full disk: no capture file or temporary left: %s" % p.stdout)
    # Said before the window too: the capture's bound against the space free.
    warn = p.stderr.find("MiB free; the capture can take up to")
    opened = p.stderr.find("window open")
    check(warn >= 0 and (opened < 0 or warn < opened),
          "full disk: the space is said short before the window: %s" % p.stderr[:600])


if __name__ == "__main__":
    require_root()
    long_op(None)
    long_op("10s")
    interrupted()
    target_killed()
    steps_and_windows()
    no_activity()
    full_disk()
    finish()
