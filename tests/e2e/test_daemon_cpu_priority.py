#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace daemon's CPU priority, seen from outside.

- By default every thread of the daemon (the loop, the metrics server's)
  runs under SCHED_IDLE, and the metrics say so.
- With every CPU busy (a spinning process per CPU, nice 0), the daemon is
  starved: it sees its run delay, takes normal priority back (SCHED_OTHER,
  every thread), logs why, and counts it in the metrics.
- --cpu-priority normal keeps it at SCHED_OTHER from the start.
"""
import os
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import check, finish, require_root, tmpdir, wait_for
from daemon import Daemon, free_port


def policies(pid):
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            out[int(tid)] = os.sched_getscheduler(int(tid))
        except OSError:
            pass
    return out


def metric(port, name):
    text = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=10).read()
    for line in text.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def main():
    work = tmpdir()
    port = free_port()
    d = Daemon(work, listen="127.0.0.1:%d" % port)
    if not d.wait_ready():
        d.stop()
        return
    pols = policies(d.pid)
    check(len(pols) >= 2 and all(p == os.SCHED_IDLE for p in pols.values()),
          "every thread of the daemon runs SCHED_IDLE: %s" % pols)
    check(any("cpu priority idle" in l for l in d.lines), "its start line says so")
    # Published every half second.
    check(wait_for(lambda: metric(port, "acceltrace_daemon_cpu_idle") == 1, 5),
          "acceltrace_daemon_cpu_idle 1")

    hogs = [subprocess.Popen(["/bin/sh", "-c", "while :; do :; done"])
            for _ in range(os.cpu_count() or 1)]
    try:
        took_back = wait_for(lambda: os.sched_getscheduler(d.pid) == os.SCHED_OTHER, 20)
        # Thread by thread: a starved daemon sets the others a moment
        # after its loop (it still runs SCHED_IDLE until it has).
        wait_for(lambda: all(p == os.SCHED_OTHER for p in policies(d.pid).values()), 5)
        pols = policies(d.pid)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    check(took_back, "starved by a busy process on every CPU, it takes normal priority back")
    check(all(p == os.SCHED_OTHER for p in pols.values()),
          "on every thread: %s" % pols)
    check(any("starved of CPU" in l for l in d.lines), "and logs why")
    check(wait_for(lambda: metric(port, "acceltrace_daemon_cpu_starved_total") == 1, 5),
          "acceltrace_daemon_cpu_starved_total 1")
    check(metric(port, "acceltrace_daemon_cpu_idle") == 0, "acceltrace_daemon_cpu_idle 0")
    check(d.stop() == 0, "SIGTERM: exit 0")

    n = Daemon(tmpdir(), "--cpu-priority", "normal")
    if n.wait_ready():
        check(all(p == os.SCHED_OTHER for p in policies(n.pid).values()),
              "--cpu-priority normal: SCHED_OTHER")
    n.stop()


if __name__ == "__main__":
    require_root()
    main()
    finish()
