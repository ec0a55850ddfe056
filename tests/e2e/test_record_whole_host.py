#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace record -a: two simulated trainers at once are both captured,
and nothing from an unrelated process that reads files all the while.
Then a trainer is killed while acceltrace keeps running: the capture is
still written, and no uprobe on the plugin outlives the last process that
mapped it (checked with bpftool, which lists acceltrace's perf links)."""
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (ACCELTRACE, PLUGIN, Trainer, running_trainer, capture_of, check, check_bounds, skip,
                 finish, record, require_root, tmpdir, truth, truth_split)
import xspace  # noqa: E402


def unrelated_reader(work):
    """A process that reads a file in a loop: not an accelerator user."""
    path = os.path.join(work, "unrelated.bin")
    with open(path, "wb") as f:
        f.write(os.urandom(1 << 20))
    return subprocess.Popen(["/bin/sh", "-c", "while :; do cat %s >/dev/null; done" % path])


def two_trainers():
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    other = unrelated_reader(work)
    t = Trainer("--trainers", "2", "--steps", "0", "--duration", "40s",
                "--step-time", "1ms", "--device-dir", "/run/acceltrace-sim/%p",
                truth=tp)
    if not t.wait_running(n=2):
        t.stop()
        other.kill()
        return
    rc, s, err = record("-a", "--duration", "2s", "--logdir", os.path.join(work, "logs"))
    t.stop()
    other.kill()
    other.wait()
    if not check(rc == 0 and s, "-a: record exited %d: %s" % (rc, err)):
        return
    pids = set(t.pids())
    captured = {p["pid"] for p in s["processes"]}
    check(len(pids) == 2 and pids <= captured, "-a: both trainers %s are in the "
          "capture %s" % (pids, captured))
    check(other.pid not in captured, "-a: the unrelated process is not traced")
    cap = capture_of(s)
    check(not [e for e in cap.events if e.line.name == "cat"],
          "-a: no event from the unrelated reader")
    T = truth(tp)
    ex = cap.named("PJRT_LoadedExecutable_Execute")
    for pid in pids:
        # Host lines are per thread; the execute thread's tid is the pid.
        got = collections.Counter(e.stats.get("launch_id") for e in ex
                                  if (e.line.id & 0xffffffff) == pid)
        inside, over = truth_split([r for r in T if r["type"] == "execute" and
                                    r["pid"] == pid], "t_call", "t_return", s,
                                   lambda r: r["launch_id"])
        check_bounds("-a: executes of trainer %d" % pid, got, inside, over)


def uprobes_of_acceltrace(pid, needle):
    """acceltrace's uprobes in a file whose path holds needle. They are
    attached through /proc/self/fd/N, the descriptor the library was read
    through (so bpftool shows that name): acceltrace's fd N names the file."""
    out = subprocess.run(["bpftool", "perf", "show"], capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        m = re.match(r"pid %d .* filename (\S+)" % pid, line)
        if not m:
            continue
        name = m.group(1)
        fd = re.fullmatch(r"/proc/self/fd/(\d+)", name)
        if fd:
            try:
                name = os.readlink("/proc/%d/fd/%s" % (pid, fd.group(1)))
            except OSError:
                continue
        if needle in name:
            found.append(line)
    return found


def target_dies():
    work = tmpdir()
    # Its own copy of the plugin: another process using the shared build
    # (another test, a benchmark) must not keep this library's probes alive.
    plugin_dir = os.path.join(work, "pjrt-copy")
    os.makedirs(plugin_dir)
    plugin = os.path.join(plugin_dir, "libtpu.so")
    shutil.copy(PLUGIN[94], plugin)
    env = dict(os.environ, TPU_LIBRARY_PATH=plugin)
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "1ms",
                env=env, plugin_flag=False)
    if not t:
        return
    logdir = os.path.join(work, "logs")
    rec = subprocess.Popen([ACCELTRACE, "record", "-j", "-a", "--logdir", logdir],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    plugin = plugin_dir
    deadline = time.time() + 20
    while time.time() < deadline and not uprobes_of_acceltrace(rec.pid, plugin):
        time.sleep(0.2)
    check(uprobes_of_acceltrace(rec.pid, plugin), "uprobes on the plugin while it runs")
    time.sleep(1.5)
    first = uprobes_of_acceltrace(rec.pid, plugin)
    t.stop(sig=signal.SIGKILL)
    deadline = time.time() + 10
    while time.time() < deadline and uprobes_of_acceltrace(rec.pid, plugin):
        time.sleep(0.2)
    check(not uprobes_of_acceltrace(rec.pid, plugin),
          "no uprobe on the plugin after its last process died: %s"
          % uprobes_of_acceltrace(rec.pid, plugin))
    # A later process of the same library gets every probe back: symbols
    # (GetPjrtApi, the TPU C API) as well as the table's slots, once each.
    t2 = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "1ms",
                         env=env, plugin_flag=False)
    if t2:
        deadline = time.time() + 20
        while (time.time() < deadline and
               len(uprobes_of_acceltrace(rec.pid, plugin)) < len(first)):
            time.sleep(0.2)
        time.sleep(1)
        again = uprobes_of_acceltrace(rec.pid, plugin)
        check(len(again) == len(first),
              "a later process of the library: %d uprobes again, as for the first (%d)"
              % (len(again), len(first)))
        t2.stop()
    rec.send_signal(signal.SIGINT)
    out, err = rec.communicate(timeout=60)
    check(rec.returncode == 0, "-a after the target died: exit %d: %s" % (rec.returncode, err))
    if rec.returncode == 0:
        s = xspace.record_summary(out)
        check(os.path.getsize(s["path"]) > 0, "capture written")
        procs = {p["pid"]: p for p in s["processes"]}
        check(t.pid in procs and procs[t.pid]["exited"], "the dead trainer is marked exited")
        check("error" not in err.lower(), "no error when the target died: %s" % err)


if __name__ == "__main__":
    require_root()
    if subprocess.run(["which", "bpftool"], capture_output=True).returncode:
        skip("bpftool missing")
    two_trainers()
    target_dies()
    finish()
