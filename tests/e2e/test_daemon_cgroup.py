#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace daemon --cgroup: a daemon that watches one cgroup's processes.

Two cgroup v2 directories, A and B, each with a simulated trainer running
before the daemon starts and one started after it (the second kind is
adopted by the kernel at its first runtime call or device open, the first
by the daemon's /proc scan). A daemon scoped to A:

- its capture (`acceltrace trigger`) holds A's two trainers' executions
  and, decoded with Python's protobuf, no line of any of B's threads; the
  trigger's summary lists A's processes only;
- its /metrics name A's pids only, B's none;
- a --cgroup that does not exist, or names a directory that is not a
  cgroup v2 one, stops it at once with a message naming the path (exit 1);
  one given relative to the cgroup2 mount works as the absolute one.
"""
import os
import shutil
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (ACCELTRACE, Trainer, capture_of, check, finish, require_root, skip,
                 tmpdir, wait_for)
from daemon import Daemon, free_port
import xspace  # noqa: E402

CGROUP2_MAGIC = 0x63677270


def cgroup2_mount():
    """Where cgroup v2 is mounted (alone or beside v1), or None."""
    for m in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        try:
            out = subprocess.run(["stat", "-f", "-c", "%t", m], capture_output=True,
                                 text=True).stdout.strip()
        except OSError:
            return None
        if out and int(out, 16) == CGROUP2_MAGIC:
            return m
    return None


def start_in(cgdir, work, name):
    """A trainer whose process enters @cgdir before the trainer's exec (so
    that nothing of it runs outside), once it runs; else None."""
    sh = os.path.join(work, name + ".sh")
    with open(sh, "w") as f:
        f.write('#!/bin/sh\necho $$ > "%s/cgroup.procs" || exit 99\nexec "$@"\n' % cgdir)
    os.chmod(sh, 0o755)
    t = Trainer("--steps", "0", "--duration", "60s", "--step-time", "2ms", "--readers", "1",
                "--data-dir", os.path.join(work, name + "-data"), wrap=[sh])
    if t.wait_running():
        return t
    t.stop()
    return None


def metric_pids(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
        body = r.read().decode()
    pids = set()
    for line in body.splitlines():
        if line.startswith("#") or 'pid="' not in line:
            continue
        pids.add(int(line.split('pid="')[1].split('"')[0]))
    return pids


def tids_of(pid):
    try:
        return {int(t) for t in os.listdir("/proc/%d/task" % pid)}
    except OSError:
        return set()


def bad_paths(work, mount):
    for path, says in (("acceltrace-no-such-cgroup", "no such cgroup"),
                       (work, "not a cgroup v2 directory")):
        p = subprocess.run([ACCELTRACE, "daemon", "--cgroup", path, "--listen", "off",
                            "--socket", os.path.join(work, "bad.sock"),
                            "--logdir", os.path.join(work, "bad-logs")],
                           capture_output=True, text=True, timeout=30)
        check(p.returncode == 1, "--cgroup %s: exit 1 (got %d)" % (path, p.returncode))
        check(path in p.stderr and says in p.stderr,
              "--cgroup %s: the error names it and says '%s': %s" % (path, says, p.stderr))
        check("watching" not in p.stderr, "--cgroup %s: the daemon did not start" % path)


def main():
    require_root()
    mount = cgroup2_mount()
    if not mount:
        skip("no cgroup v2 hierarchy mounted")
    work = tmpdir()
    base = os.path.join(mount, "acceltrace-test-%d" % os.getpid())
    cg = {k: os.path.join(base, k) for k in ("a", "b")}
    trainers, d = [], None
    try:
        for c in cg.values():
            os.makedirs(c)
        bad_paths(work, mount)
        a1 = start_in(cg["a"], work, "a1")
        b1 = start_in(cg["b"], work, "b1")
        trainers += [t for t in (a1, b1) if t]
        if not (a1 and b1):
            return
        port = free_port()
        # Relative to the cgroup2 mount, as a pod's manifest would name it.
        d = Daemon(work, "--cgroup", os.path.relpath(cg["a"], mount), "--flight-recorder",
                   "10s", listen="127.0.0.1:%d" % port)
        if not d.wait_ready():
            return
        check(any("of cgroup /%s" % os.path.relpath(cg["a"], mount) in l for l in d.lines),
              "the daemon says which cgroup it watches: %s" % d.lines)
        # Started after the daemon: adopted (or not) by the kernel.
        a2 = start_in(cg["a"], work, "a2")
        b2 = start_in(cg["b"], work, "b2")
        trainers += [t for t in (a2, b2) if t]
        if not (a2 and b2):
            return
        a_pids, b_pids = {a1.pid, a2.pid}, {b1.pid, b2.pid}
        wait_for(lambda: a_pids <= metric_pids(port), 20,
                 what="/metrics name both of cgroup A's trainers %s" % a_pids)
        got = metric_pids(port)
        check(not (got & b_pids), "/metrics name none of cgroup B's trainers %s: %s"
              % (b_pids, got))
        b_tids = set().union(*(tids_of(p) for p in b_pids))
        rc, s, err = d.trigger()
        if not check(rc == 0 and s, "trigger: %s" % err):
            return
        cap = capture_of(s)
        ex_pids = {e.line.id & 0xffffffff for e in cap.named("PJRT_LoadedExecutable_Execute")}
        check(a_pids <= ex_pids, "executions of both A trainers captured: %s" % ex_pids)
        # Host lines are threads (by tid); device planes say their process.
        lines = {ln.id & 0xffffffff for pl in cap.space.planes
                 if pl.name.startswith("/host:") for ln in xspace.thread_lines(pl)}
        check(not (lines & (b_pids | b_tids)),
              "no line of B's threads in the capture: %s" % sorted(lines & (b_pids | b_tids)))
        dev_pids = set()
        for pl in cap.space.planes:
            for st in pl.stats:
                if pl.stat_metadata[st.metadata_id].name == "acceltrace.pid":
                    dev_pids.add(st.int64_value)
        check(a_pids <= dev_pids and not (dev_pids & b_pids),
              "device planes of A's trainers %s, none of B's %s: %s"
              % (a_pids, b_pids, dev_pids))
        check(d.stop() == 0, "the daemon stops cleanly")
        d = None
    finally:
        if d:
            d.stop()
        for t in trainers:
            t.stop()
        for c in list(cg.values()) + [base]:
            try:
                os.rmdir(c)
            except OSError:
                pass
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
    finish()
