#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace record's CPU priority, seen from outside (docs/record.md,
--cpu-priority), as test_daemon_cpu_priority.py sees the daemon's:

- By default, once the window opens, every thread of record runs under
  SCHED_IDLE, and the command it launched does not (launched before, it
  inherits nothing).
- With every CPU busy (a spinning process per CPU, nice 0), record is
  starved: it sees its run delay, takes SCHED_OTHER back on every thread,
  says why, and still writes the capture at the first Ctrl-C.
- --cpu-priority normal keeps it at SCHED_OTHER from the start; a bad
  value is a usage error naming it.
"""
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (ACCELTRACE, acceltrace, check, finish, holds_for, require_root,  # noqa: E402
                 tmpdir, trainer_cmd, wait_for)


def policies(pid):
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        try:
            out[int(tid)] = os.sched_getscheduler(int(tid))
        except OSError:
            pass
    return out


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def start_record(*args):
    work = tmpdir()
    cmd = [ACCELTRACE, "record", "-j", "--logdir", os.path.join(work, "logs"), *args,
           "--", *trainer_cmd("--duration", "60s", "--step-time", "1ms")]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def end_record(p):
    kids = children(p.pid)
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    # record waits for its command once the capture is written.
    for k in kids:
        try:
            os.kill(k, signal.SIGTERM)
        except ProcessLookupError:
            pass
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
    return p.returncode, out, err


def idle_by_default():
    p = start_record()
    try:
        # Idle from the window's open; the first check of its run delay
        # comes a second later, so it is seen before a busy host starves it.
        idle = wait_for(lambda: policies(p.pid) and
                        all(v == os.SCHED_IDLE for v in policies(p.pid).values()),
                        30, every=0.02)
        pols = policies(p.pid)
        kids = children(p.pid)
        check(idle, "every thread of record runs SCHED_IDLE once the window opens: %s" % pols)
        check(kids and all(os.sched_getscheduler(k) == os.SCHED_OTHER for k in kids),
              "the command it launched runs SCHED_OTHER: %s" % kids)

        hogs = [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"])
                for _ in range(os.cpu_count() or 1)]
        try:
            took_back = wait_for(lambda: os.sched_getscheduler(p.pid) == os.SCHED_OTHER, 20)
            pols = policies(p.pid)
        finally:
            for h in hogs:
                h.kill()
                h.wait()
        check(took_back, "starved by a busy process on every CPU, record takes "
              "normal priority back")
        check(all(v == os.SCHED_OTHER for v in pols.values()), "on every thread: %s" % pols)
    finally:
        rc, out, err = end_record(p)
    check("starved of CPU" in err, "and says why: %s" % err[-1000:])
    check(rc == 0 and '"path"' in out, "the capture is written at Ctrl-C (exit %d): %s"
          % (rc, err[-1000:]))


def normal():
    p = start_record("--cpu-priority", "normal")
    try:
        # Attached, the trainer launched; and past the first check of the
        # run delay: normal throughout.
        wait_for(lambda: children(p.pid), 30, what="record launches its command")
        check(holds_for(lambda: all(v == os.SCHED_OTHER for v in policies(p.pid).values()),
                        2.5, "--cpu-priority normal: every thread SCHED_OTHER"),
              "--cpu-priority normal: SCHED_OTHER: %s" % policies(p.pid))
    finally:
        rc, out, err = end_record(p)
    check(rc == 0, "--cpu-priority normal: the capture written (exit %d): %s" % (rc, err[-1000:]))
    rc, _, err = acceltrace("record", "--cpu-priority", "low", "--", "true")
    check(rc == 2 and "--cpu-priority" in err and "idle or normal" in err,
          "a bad --cpu-priority is a usage error naming it: %d %s" % (rc, err))


if __name__ == "__main__":
    require_root()
    idle_by_default()
    normal()
    finish()
