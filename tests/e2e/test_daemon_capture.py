#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace daemon's flight recorder against the simulator's ground truth.

- `acceltrace trigger` yields a capture of the N seconds before it plus
  --duration after, in XProf's layout, holding every execution the truth
  has inside that span (and nothing outside it); `--at --session` takes a
  wall-clock window under the given session name.
- A rule (a step over a threshold, set by a SIGHUP reload of the
  configuration file) triggers such a capture by itself, around the slow
  step.
- SIGTERM during a triggered window writes the capture, up to the signal.
- SIGKILL leaves no BPF program or link of the daemon's behind.

The flight recorder keeps 10 s here, not the default 60 s: the mechanism is
the same (only the start it moves is nearer), and it keeps the suite short.
"""
import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (PLUGIN, acceltrace, running_trainer, capture_of, check, check_bounds, finish,
                 protoc_decodes, require_root, skip, sleep_until_mono_ns, tmpdir, truth,
                 truth_split, uprobes_of, wait_for)
from daemon import Daemon

KEEP_S = 10
# The recorder's start moves every tenth of N: it reaches back N to 1.1 N.
TRIM_SLACK_S = KEEP_S / 10 + 0.3


def executes_match(what, s, tp, pid):
    """Every truth Execute of @pid inside the capture's window is in it, and
    nothing captured lies outside."""
    cap = capture_of(s)
    got = collections.Counter(e.stats.get("launch_id")
                              for e in cap.named("PJRT_LoadedExecutable_Execute")
                              if (e.line.id & 0xffffffff) == pid)
    recs = [r for r in truth(tp, pid) if r["type"] == "execute"]
    inside, over = truth_split(recs, "t_call", "t_return", s, lambda r: r["launch_id"])
    # Losses (a ring buffer full on a loaded host) explain missing spans:
    # the capture's warnings say so, and so does the failure.
    lost = [w for w in cap.space.warnings if "ring buffer" in w or "lost" in w]
    # Where the missing ones lie, relative to the window's stop (ms).
    missing = sorted((r["t_return"] - s["window_stop_ns"]) / 1e6 for r in recs
                     if r["launch_id"] in (inside - got))
    note = " (capture warns: %s)" % lost if lost else ""
    if missing:
        note += " (missing end %.1f to %.1f ms from the stop)" % (missing[0], missing[-1])
    check_bounds(what + note, got, inside, over)
    return cap


def probed(d):
    """The daemon's uprobes on the simulator's plugin: the trainer found,
    its runtime probed (every Execute from then on is seen)."""
    return uprobes_of(d.pid, os.path.abspath(PLUGIN[94]))


def window_s(s):
    return (s["window_stop_ns"] - s["window_start_ns"]) / 1e9


def in_logdir(d, s, session=None):
    rel = os.path.relpath(s["path"], d.logdir).split(os.sep)
    ok = len(rel) == 4 and rel[:2] == ["plugins", "profile"] and rel[3].endswith(".xplane.pb")
    ok = ok and (session is None or rel[2] == session)
    check(ok, "capture in XProf's layout under the logdir: %s" % s["path"])
    check(protoc_decodes(s["path"]), "protoc decodes %s as an XSpace" % s["path"])


def triggers_and_rule():
    work = tmpdir()
    conf = os.path.join(work, "daemon.conf")
    with open(conf, "w") as f:
        f.write("flight-recorder = %ds\n" % KEEP_S)
    d = Daemon(work, "--config", conf)
    if not d.wait_ready():
        d.stop()
        return
    tp = os.path.join(work, "truth.jsonl")
    # 2 ms steps: a few thousand records a second, far from the ring's size.
    # Long enough for every part below (it is stopped after the last).
    t = running_trainer("--steps", "0", "--duration", "300s", "--step-time", "2ms",
                        "--no-truth-ops", truth=tp)
    if not t:
        d.stop()
        return
    # The window of the trigger below reaches KEEP_S back (a tenth more at
    # most): all of it after the daemon probed the trainer.
    if not wait_for(lambda: probed(d), 30, what="the daemon probes the trainer's runtime"):
        t.stop()
        d.stop()
        return
    time.sleep(KEEP_S + TRIM_SLACK_S)

    # A trigger about a process the daemon does not trace (init): refused
    # at once, naming it, before any window.
    t0 = time.monotonic()
    rc, s, err = d.trigger("--pid", "1", "--duration", "5s")
    check(rc == 1 and "pid 1 is not traced" in err and time.monotonic() - t0 < 4,
          "trigger --pid of an untraced process refused at once: exit %d in %.1f s: %s"
          % (rc, time.monotonic() - t0, err.strip()))

    # A trigger now about the trainer, with 2 s after it.
    before = time.monotonic_ns()
    rc, s, err = d.trigger("--duration", "2s", "--pid", str(t.pid))
    if check(rc == 0 and s, "trigger: exit %d: %s" % (rc, err)):
        rc2, out, _ = acceltrace("report", "-j", s["path"])
        j = json.loads(out) if rc2 == 0 else {}
        first = j.get("reports", [j])[0]
        check(first.get("focus_pid") == t.pid and
              ("--pid %d" % t.pid) in str(first.get("capture_reason")),
              "trigger --pid: the capture is about the trainer: %r, %r"
              % (first.get("focus_pid"), first.get("capture_reason")))
        in_logdir(d, s)
        check(KEEP_S + 2 - 0.1 <= window_s(s) <= KEEP_S + 2 + TRIM_SLACK_S,
              "the capture spans the %d s before the trigger and 2 s after: %.2f s"
              % (KEEP_S, window_s(s)))
        # The trigger is when the daemon reads the request: a process start
        # and a loop turn after `before`.
        check(0 <= s["window_stop_ns"] - (before + 2e9) < 1e9,
              "it stops 2 s after the trigger (%.3f s after before + 2 s)"
              % ((s["window_stop_ns"] - before - 2e9) / 1e9))
        executes_match("trigger: executes of the %d s before and 2 s after" % KEEP_S,
                       s, tp, t.pid)

    # A wall-clock time and a session name, as a fleet's fan-out sends them.
    # The window it asks for reaches KEEP_S back: the recorder holds that
    # much once KEEP_S has passed since the last capture's stop, where its
    # window began again.
    if s:
        sleep_until_mono_ns(s["window_stop_ns"] + int((KEEP_S + TRIM_SLACK_S) * 1e9))
    else:
        time.sleep(KEEP_S + TRIM_SLACK_S)
    at = time.time() + 2
    mono_at = time.monotonic_ns() + 2e9
    rc, s, err = d.trigger("--at", "%.3f" % at, "--duration", "1s", "--session", "fleet_run")
    if check(rc == 0 and s, "trigger --at: exit %d: %s" % (rc, err)):
        in_logdir(d, s, session="fleet_run")
        check(abs(s["window_stop_ns"] - (mono_at + 1e9)) < 0.1e9,
              "--at: the window stops --duration after the wall-clock time (%.3f s off)"
              % ((s["window_stop_ns"] - mono_at - 1e9) / 1e9))
        check(KEEP_S - 0.1 <= window_s(s) - 1 <= KEEP_S + TRIM_SLACK_S,
              "--at: %d s before the time and 1 s after: %.2f s" % (KEEP_S, window_s(s)))
        executes_match("trigger --at: executes", s, tp, t.pid)

    # A rule, turned on by a reload: a step over 150 ms (a 400 ms checkpoint).
    with open(conf, "a") as f:
        f.write("rule-step-time-over = 150ms\nrule-cooldown = 1s\n")
    d.proc.send_signal(signal.SIGHUP)
    wait_for(lambda: any("reloaded" in l for l in d.lines), 10, every=0.1,
             what="SIGHUP reloads the configuration")
    tp2 = os.path.join(work, "truth2.jsonl")
    t2 = running_trainer("--steps", "0", "--duration", "6s", "--step-time", "2ms",
                         "--no-truth-ops", "--long-host-op", "400ms",
                         "--long-host-op-step", "750", truth=tp2)
    wait_for(lambda: [c for c in d.captures() if "threshold" in c["why"]], 20)
    rule = [c for c in d.captures() if "threshold" in c["why"]]
    if check(rule, "the step-time rule triggered a capture: %s" % d.lines[-5:]) and t2:
        s = rule[0]
        check("pid %d" % t2.pid in s["why"], "the rule names the slow trainer: %s" % s["why"])
        t2.stop()
        in_logdir(d, s)
        ops = [r for r in truth(tp2, t2.pid) if r["type"] == "host_op"]
        check(ops and s["window_start_ns"] <= ops[0]["t_start"] and
              ops[0]["t_end"] <= s["window_stop_ns"],
              "the rule's capture holds the slow step's checkpoint")
        executes_match("rule: executes of the slow trainer", s, tp2, t2.pid)
        # The report leads with why the capture was taken.
        rc, out, _ = acceltrace("report", s["path"])
        lead = out.split("\n\n")[1] if rc == 0 and "\n\n" in out else ""
        check(lead.startswith("Captured because\n  rule: step time") and
              "pid %d" % t2.pid in lead, "the report leads with the rule: %r" % lead)
        rc, out, _ = acceltrace("report", "-j", s["path"])
        j = json.loads(out) if rc == 0 else {}
        reports = j.get("reports", [j])
        reasons = [r.get("capture_reason") for r in reports]
        check(reasons and all(str(r).startswith("rule: step time") for r in reasons),
              "report -j capture_reason, each process's report: %r" % reasons)
        check(reports[0].get("focus_pid") == t2.pid and
              (reports[0].get("process") or {"pid": t2.pid}).get("pid") == t2.pid,
              "the rule's capture is about the slow trainer, reported first: %r"
              % [(r.get("focus_pid"), r.get("process")) for r in reports])
    elif t2:
        t2.stop()

    # SIGTERM during a triggered window: the capture is written up to it.
    result = {}

    def ask():
        result["r"] = d.trigger("--duration", "60s")

    def asked():
        return sum(1 for l in list(d.lines) if "daemon: trigger (" in l)

    before = asked()
    asker = threading.Thread(target=ask)
    asker.start()
    wait_for(lambda: asked() > before, 30, every=0.05,
             what="the daemon takes the 60 s trigger (logs it)")
    # The window runs on past the trigger, so that a stop at the signal is
    # told apart from one at the trigger (the check below allows 1 s).
    time.sleep(3)
    killed_at = time.monotonic_ns()
    rc_d = d.stop(signal.SIGTERM)
    asker.join(timeout=60)
    t.stop()
    check(rc_d == 0, "the daemon exits 0 after SIGTERM: %d\n%s" % (rc_d, "\n".join(d.lines)))
    rc, s, err = result.get("r", (1, None, "no answer"))
    if check(rc == 0 and s, "SIGTERM during a window: the trigger got its capture: %s" % err):
        in_logdir(d, s)
        check(abs(s["window_stop_ns"] - killed_at) < 1e9,
              "the window ends at SIGTERM (%.3f s off)" % ((s["window_stop_ns"] - killed_at) / 1e9))
        executes_match("SIGTERM: executes", s, tp, t.pid)


def bpf_ids_held(pid):
    """The BPF program and link ids @pid holds open, read from its fds'
    fdinfo (prog_id:, link_id:), as the kernel reports them."""
    progs, links = set(), set()
    fd_dir = "/proc/%d/fd" % pid
    for fd in os.listdir(fd_dir):
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                info = f.read()
        except OSError:
            continue
        for line in info.splitlines():
            if line.startswith("prog_id:") and "bpf-prog" in target:
                progs.add(int(line.split()[1]))
            elif line.startswith("link_id:"):
                links.add(int(line.split()[1]))
    return progs, links


def bpf_ids_alive(kind):
    out = subprocess.run(["bpftool", kind, "show", "-j"], capture_output=True, text=True).stdout
    try:
        return {o["id"] for o in json.loads(out or "[]")}
    except ValueError:
        return set()


def sigkill_leaves_nothing():
    work = tmpdir()
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "1ms")
    d = Daemon(work)
    if not d.wait_ready() or not t:
        d.stop()
        if t:
            t.stop()
        return
    wait_for(lambda: probed(d), 30, what="the daemon probes the trainer's runtime")
    progs, links = bpf_ids_held(d.pid)
    check(progs and links, "the daemon holds BPF programs (%d) and links (%d)"
          % (len(progs), len(links)))
    check(progs <= bpf_ids_alive("prog"), "bpftool lists the daemon's programs")
    d.stop(signal.SIGKILL)
    left, links_left = progs, links

    def gone():
        nonlocal left, links_left
        left = progs & bpf_ids_alive("prog")
        links_left = links & bpf_ids_alive("link")
        return not left and not links_left

    wait_for(gone, 10)
    t.stop()
    check(not left, "SIGKILL: none of the daemon's %d BPF programs remains: %s"
          % (len(progs), sorted(left)))
    check(not links_left, "SIGKILL: none of its %d links (uprobes, tracepoints) remains: %s"
          % (len(links), sorted(links_left)))


if __name__ == "__main__":
    require_root()
    if subprocess.run(["which", "bpftool"], capture_output=True).returncode:
        skip("bpftool missing")
    triggers_and_rule()
    sigkill_leaves_nothing()
    finish()
