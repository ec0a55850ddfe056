#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace record -a: two simulated trainers at once are both captured,
and nothing from an unrelated process that reads files all the while.
Then a trainer is killed while acceltrace keeps running: the capture is
still written, and no uprobe on the plugin outlives the last process that
mapped it (checked with bpftool, which lists acceltrace's perf links)."""
import collections
import json
import os
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (ACCELTRACE, PLUGIN, Trainer, running_trainer, capture_of, check, check_bounds, skip,
                 finish, holds_for, record, require_root, tmpdir, truth, truth_split, uprobes_of,
                 wait_for)
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
    # 2 ms steps: two trainers writing their truth and a busy reader on two
    # CPUs whose uprobe trap costs 5 us (2026-11-28) leave `record` too
    # little CPU at 1 ms to keep every record, even at normal priority
    # (ring losses, said in the capture); this test is about whose events
    # are captured, test_record_no_loss about keeping up.
    t = Trainer("--trainers", "2", "--steps", "0", "--duration", "40s",
                "--step-time", "2ms", "--device-dir", "/run/acceltrace-sim/%p",
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


def planned_uprobes(pid, needle):
    """What `acceltrace probes` says record attaches in process @pid on
    files whose path contains @needle: a Counter of (kind, path, offset),
    as uprobes_of() lists them."""
    p = subprocess.run([ACCELTRACE, "-j", "probes", "--pid", str(pid)], capture_output=True,
                       text=True)
    plan = collections.Counter()
    try:
        probes = json.loads(p.stdout)["probes"]
    except (ValueError, KeyError):
        check(False, "probes --pid %d: %s" % (pid, p.stderr))
        return plan
    for pr in probes:
        if pr.get("refused") or pr.get("mechanism") != "uprobe" or needle not in pr["library"]:
            continue
        plan[("uprobe", pr["library"], pr["attach_offset"])] += 1
        if pr.get("return_probe"):
            plan[("uretprobe", pr["library"], pr["attach_offset"])] += 1
    return plan


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
    # Every probe `acceltrace probes` plans for the plugin, each once:
    # symbols (GetPjrtApi, the TPU C API) and the table's slots, placed as
    # the library and its table are found.
    plan = planned_uprobes(t.pid, plugin)
    check(plan, "probes plans uprobes on the plugin")
    placed = lambda: collections.Counter(uprobes_of(rec.pid, plugin))
    wait_for(lambda: placed() == plan, 30,
             what="record -a places every planned uprobe on the plugin, once each")
    first = placed()
    t.stop(sig=signal.SIGKILL)
    wait_for(lambda: not uprobes_of(rec.pid, plugin), 10)
    check(not uprobes_of(rec.pid, plugin),
          "no uprobe on the plugin after its last process died: %s"
          % uprobes_of(rec.pid, plugin))
    # A later process of the same library gets every probe back: symbols
    # (GetPjrtApi, the TPU C API) as well as the table's slots, once each.
    t2 = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "1ms",
                         env=env, plugin_flag=False)
    if t2:
        if wait_for(lambda: placed() == first, 30,
                    what="a later process of the library: the %d uprobes again, as for "
                    "the first" % sum(first.values())):
            # And none twice: one placed again late would show meanwhile.
            if not holds_for(lambda: placed() == first, 1,
                             "a later process of the library: no uprobe placed twice"):
                print("beyond the first's: %s" % (placed() - first), file=sys.stderr)
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
