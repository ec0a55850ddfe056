#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace record --pid attaches its runtime uprobes for that process
only: another process mapping the same plugin file gets no breakpoint.

Two simulated trainers map one plugin; record --pid names the first. While
the probes are in place, each probed offset of the plugin's text is read
from both processes' memory (/proc/PID/mem) and from the file: the traced
trainer's holds the breakpoint (int3, 0xcc: this shows that the check sees
uprobes at all), the other's holds the file's own byte (with probes for
every process, pid -1, it would hold int3 too and trap on each call).
Run with uprobe_multi links (where the kernel has them: their fdinfo must
name the traced pid as their filter) and with the per-probe perf uprobes
(ACCELTRACE_NO_UPROBE_MULTI=1), so both attach paths run; the capture of
each has the traced trainer's executes and nobody else's.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (ACCELTRACE, PLUGIN, capture_of, check, finish, require_root, running_trainer,
                 skip_part, tmpdir, uprobe_holders, uprobe_multi_links, uprobes_of,
                 wait_for)
import xspace

INT3 = 0xcc


def text_mappings(pid, plugin):
    """(start, end, file offset) of @pid's executable mappings of @plugin."""
    st = os.stat(plugin)
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split()
            if len(fields) < 6 or "x" not in fields[1]:
                continue
            dev_major, dev_minor = (int(x, 16) for x in fields[3].split(":"))
            if int(fields[4]) != st.st_ino or os.makedev(dev_major, dev_minor) != st.st_dev:
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            out.append((start, end, int(fields[2], 16)))
    return out


def byte_at(pid, plugin, offset):
    """The byte @pid's memory holds at file offset @offset of @plugin's text,
    or None when it does not map that offset executable."""
    for start, end, off in text_mappings(pid, plugin):
        if off <= offset < off + (end - start):
            with open("/proc/%d/mem" % pid, "rb") as m:
                m.seek(start + offset - off)
                return m.read(1)[0]
    return None


def run(mode, env):
    plugin = os.path.abspath(PLUGIN[94])
    with open(plugin, "rb") as f:
        file_bytes = f.read()
    work = tmpdir()
    a = running_trainer("--steps", "0", "--duration", "40s", "--step-time", "1ms")
    b = running_trainer("--steps", "0", "--duration", "40s", "--step-time", "1ms")
    if not a or not b:
        for t in (a, b):
            if t:
                t.stop()
        return
    rec = subprocess.Popen([ACCELTRACE, "record", "-j", "--pid", str(a.pid), "--duration", "4s",
                            "--logdir", os.path.join(work, "logs")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # Placed: the Execute probe (a PJRT slot) is among the last.
        placed = lambda: len(uprobes_of(rec.pid, plugin)) >= 10
        if not check(wait_for(placed, 30, what="%s: probes placed" % mode),
                     "%s: record placed its probes on %s" % (mode, plugin)):
            return
        offsets = sorted({off for _, _, off in uprobes_of(rec.pid, plugin)})
        in_a = [o for o in offsets if byte_at(a.pid, plugin, o) == INT3]
        check(len(in_a) == len(offsets),
              "%s: the traced trainer holds a breakpoint at each of the %d probed offsets "
              "(%d do)" % (mode, len(offsets), len(in_a)))
        # Another tracer on this host (a whole-host daemon adopts any
        # trainer) puts breakpoints in b of its own: looked at only while
        # nobody but this record probes the plugin, a few times over.
        for _ in range(20):
            others = [p for p in uprobe_holders(plugin) if p != rec.pid]
            in_b = [o for o in offsets if byte_at(b.pid, plugin, o) == INT3]
            b_file = [o for o in offsets if byte_at(b.pid, plugin, o) == file_bytes[o]]
            if not others and not [p for p in uprobe_holders(plugin) if p != rec.pid]:
                break
            time.sleep(0.1)
        if others:
            skip_part("%s: other processes probe %s meanwhile (%s): the untraced trainer's "
                      "text not checked" % (mode, plugin, others))
        else:
            check(not in_b and len(b_file) == len(offsets),
                  "%s: the untraced trainer holds none, its text is the file's at all %d "
                  "(breakpoints at %s)" % (mode, len(offsets), [hex(o) for o in in_b]))
        links = uprobe_multi_links(rec.pid)
        if mode == "uprobe_multi":
            check(links and all(pid == a.pid for _, _, _, pid in links),
                  "%s: every uprobe_multi link filters on pid %d: %s"
                  % (mode, a.pid, [(k, pid, len(o)) for k, _, o, pid in links]))
            # One link per program, not one per probe.
            check(links and len(links) < len(offsets),
                  "%s: %d links for %d probed offsets" % (mode, len(links), len(offsets)))
        else:
            check(not links, "%s: no uprobe_multi link when turned off (%d)" % (mode, len(links)))
        out, err = rec.communicate(timeout=120)
    finally:
        if rec.poll() is None:
            rec.kill()
            rec.communicate()
        a.stop()
        b.stop()
    if not check(rec.returncode == 0, "%s: record exited %d: %s" % (mode, rec.returncode, err)):
        return
    s = xspace.record_summary(out)
    cap = capture_of(s)
    ex = cap.named("PJRT_LoadedExecutable_Execute", "/host:CPU")
    check(len(ex) > 1000, "%s: executes at 1 kHz for 4 s (%d)" % (mode, len(ex)))
    # Completion callbacks run on the simulator's device threads: a probe
    # for a process fires in all its threads, not only the one named.
    cb = cap.named("PJRT_Event_OnReady callback")
    ex_lines = {e.line.id for e in ex}
    check(len(cb) > 1000 and {e.line.id for e in cb} - ex_lines,
          "%s: completion callbacks recorded on other threads than Execute's (%d on lines %s; "
          "executes on %s)" % (mode, len(cb), sorted({e.line.id for e in cb})[:8],
                               sorted(ex_lines)[:8]))
    pids = [p.get("pid") for p in s.get("processes", [])]
    check(a.pid in pids and b.pid not in pids,
          "%s: the capture's processes are the traced trainer's (%d), not the other's (%d): %s"
          % (mode, a.pid, b.pid, pids))


def main():
    require_root()
    env = dict(os.environ)
    r = subprocess.run([ACCELTRACE, "doctor", "-j"], capture_output=True, text=True)
    if json.loads(r.stdout)["features"].get("uprobe_multi", {}).get("available"):
        run("uprobe_multi", env)
    else:
        skip_part("this kernel makes no uprobe_multi links (Linux 6.6+)")
    env["ACCELTRACE_NO_UPROBE_MULTI"] = "1"
    run("perf uprobes", env)
    finish()


if __name__ == "__main__":
    main()
