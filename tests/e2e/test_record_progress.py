#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What record says while it works (docs/record.md, "What it says while it
works"):
- on a pseudo-terminal, `record --pid TRAINER -d 2s` draws one line that
  updates in place ("\\r", the text, clear to the end of the line): the
  attach, the wait for the first step with its Ctrl-C hint, the window's
  elapsed / duration with its events and losses (a few times a second at
  most, never wider than the terminal), erased before the summary, which
  says where the capture is and how to open it; no diagnostics (devtrace
  buffers read, joins, clock fits);
- not on a terminal, one plain line per phase and no "\\r"; with -v the
  clock fits are one line per distinct fit, naming each of the trainer's
  devices once, not "device 0" per core;
- `-q` prints only the capture's path on stdout, and nothing on stderr;
- `--pid` on a process with no accelerator runtime (sleep) is said as soon
  as the probes are placed, and `-d 2s` bounds the wait: exit 1 about 2 s
  later saying no runtime was loaded, not after the 30 s arm timeout;
- with --arm-timeout given, that bounds the wait instead, and a runtime
  loaded meanwhile (ctypes.CDLL of the plugin) is said;
- `trigger -d 1s` on a pseudo-terminal counts the window after the trigger
  and then the daemon's writing, saying Ctrl-C stops only the waiting, and
  prints the path; `trigger -q` says nothing on stderr.
"""
import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (ACCELTRACE, PLUGIN, acceltrace, check, finish, require_root,  # noqa: E402
                 running_trainer, tmpdir, wait_for)
from daemon import Daemon  # noqa: E402

COLUMNS = 160
DIAGNOSTICS = ("reading devtrace buffer", "joined to their host", "clock fit",
               "device 0 clock")


def on_pty(args, timeout=90):
    """Runs acceltrace with stdout and stderr on a pseudo-terminal of
    COLUMNS columns; returns (exit status, everything it wrote)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(ACCELTRACE, [ACCELTRACE] + args)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, COLUMNS, 0, 0))
    out, deadline = b"", time.time() + timeout
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 1)
        if not r:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:     # EIO: the other side closed
            break
        if not data:
            break
        out += data
    else:
        os.kill(pid, signal.SIGKILL)
        check(False, "acceltrace %s on a pty did not finish" % " ".join(args))
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def progress_on_a_terminal(t, work):
    rc, out = on_pty(["record", "--pid", str(t.pid), "--duration", "2s", "--logdir",
                      os.path.join(work, "tty")])
    if not check(rc == 0, "pty: record exited %d: %r" % (rc, out[-1500:])):
        return
    head, sep, summary = out.partition("\r\x1b[Kcapture written: ")
    if not check(sep, "pty: the line is erased before the summary: %r" % out[-1500:]):
        return
    # What the updating line showed: each draw is "\r" TEXT "\x1b[K".
    draws = re.findall(r"\r([^\r\n]*)\x1b\[K", head)
    check(all(len(d) < COLUMNS for d in draws),
          "pty: no draw wider than the terminal: %s" % max(draws, key=len, default=""))
    check(any(d.startswith("attaching to pid %d" % t.pid) for d in draws),
          "pty: the attach is said: %s" % draws[:3])
    arming = [d for d in draws if d.startswith("waiting for the first step")]
    check(arming and all("Ctrl-C to stop" in d for d in arming),
          "pty: the wait for the first step with its Ctrl-C hint: %s" % arming)
    check(any(re.search(r"\d+ runtime librar(y|ies), \d+ probes", d) for d in arming),
          "pty: what was placed is said: %s" % arming)
    window = [d for d in draws if re.match(r"window \d+\.\d / 2\.0 s, \d+ events?, "
                                           r"(nothing|\d+ records?) lost in the kernel; Ctrl-C", d)]
    check(window, "pty: the window's elapsed / duration, events and losses: %s"
          % draws[-6:])
    events = [int(re.search(r", (\d+) event", d).group(1)) for d in window]
    check(events and events == sorted(events) and events[-1] > 0,
          "pty: the events counted up: %s" % events)
    # A few times a second at most: 2 s of window, 5 a second, and slack.
    check(len(window) <= 14, "pty: %d window draws in 2 s" % len(window))
    check(not any(d in out for d in DIAGNOSTICS),
          "pty: no diagnostics without -v: %r" % [d for d in DIAGNOSTICS if d in out])
    check("\r" not in summary.replace("\r\n", "\n"),
          "pty: the summary is plain lines: %r" % summary[:400])
    check("window 2.000 s" in summary and "open it: tensorboard --logdir" in summary and
          ("losses: none" in summary or "loss: " in summary),
          "pty: the summary says the window, losses and how to open it: %r" % summary)


def plain_lines_and_verbose(t, work):
    rc, out, err = acceltrace("record", "-v", "--pid", str(t.pid), "--duration", "1s",
                              "--logdir", os.path.join(work, "plain"))
    if not check(rc == 0, "plain: record -v exited %d: %s" % (rc, err[-1500:])):
        return
    check("\r" not in err, "plain: no carriage return when not on a terminal")
    ours = [l for l in err.splitlines() if l.startswith("acceltrace: record: ")]
    for what in ("attaching to pid %d" % t.pid, "waiting for the first step",
                 "window open after", "window closed after"):
        n = sum(what in l for l in ours)
        check(n == 1, "plain: one line '%s' (%d)" % (what, n))
    fits = [l for l in err.splitlines() if "clock fit" in l]
    devices = []
    for l in fits:
        m = re.search(r"clock fits? of devices? ([0-9, -]+):", l)
        if not check(m, "-v: a clock fit names its devices: %s" % l):
            continue
        for part in m.group(1).split(", "):
            lo, _, hi = part.partition("-")
            devices += range(int(lo), int(hi or lo) + 1)
    check(sorted(devices) == [0, 1, 2, 3],
          "-v: the clock fits name each of the 4 devices once: %s" % fits)
    check(not any("device 0 clock:" in l for l in err.splitlines()),
          "-v: no per-core 'device 0 clock' lines")


def quiet(t, work):
    rc, out, err = acceltrace("record", "-q", "--pid", str(t.pid), "--duration", "1s",
                              "--logdir", os.path.join(work, "quiet"))
    check(rc == 0 and re.fullmatch(r"/\S+\.xplane\.pb\n", out) and
          os.path.exists(out.strip()),
          "-q: stdout is the capture's path alone (%d): %r" % (rc, out[-500:]))
    check(err == "", "-q: nothing on stderr: %r" % err[-500:])


class Timed:
    """acceltrace with each stderr line's arrival time."""

    def __init__(self, *args):
        self.t0 = time.monotonic()
        self.lines = []
        self.proc = subprocess.Popen([ACCELTRACE] + list(args), stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append((time.monotonic() - self.t0, line.rstrip("\n")))

    def first(self, needle):
        return next((t for t, l in self.lines if needle in l), None)

    def wait(self, timeout=60):
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.reader.join(timeout=5)
        return self.proc.returncode, time.monotonic() - self.t0

    def text(self):
        return "\n".join("%.2f %s" % tl for tl in self.lines)


def no_runtime(work):
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        r = Timed("record", "--pid", str(sleeper.pid), "--duration", "2s",
                  "--logdir", os.path.join(work, "none"))
        rc, took = r.wait()
    finally:
        sleeper.kill()
        sleeper.wait()
    said = r.first("maps no accelerator runtime")
    placed = r.first("waiting for an accelerator runtime to be loaded, up to 2 s (--duration)")
    gave_up = r.first("no accelerator runtime was loaded within --duration 2.0 s")
    check(said is not None and placed is not None,
          "sleep: said at once, and the wait bounded by --duration:\n%s" % r.text())
    check(rc == 1 and gave_up is not None, "sleep: exit 1 (%s) saying no runtime was "
          "loaded:\n%s" % (rc, r.text()))
    start = r.first("attaching to pid %d" % sleeper.pid)
    took_attach = next((float(m.group(1)) for _, l in r.lines
                        for m in [re.search(r"probes placed in (\d+\.\d) s", l)] if m), None)
    if said is not None and start is not None and took_attach is not None:
        check(said - start <= took_attach + 1.0,
              "sleep: said within a second of the probes being placed (%.2f s after "
              "attaching began, which took %.1f s)" % (said - start, took_attach))
    else:
        check(False, "sleep: the attach and its time said:\n%s" % r.text())
    if said is not None and gave_up is not None:
        check(gave_up - said >= 1.5, "sleep: said %.2f s before giving up, not at the end"
              % (gave_up - said))
        check(gave_up - said < 6, "sleep: gave up %.2f s after saying so (--duration 2s)"
              % (gave_up - said))
    check(took < 20, "sleep: exited after %.1f s, not at the 30 s arm timeout" % took)


LOADER = """
import ctypes, os, sys, time
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
ctypes.CDLL(sys.argv[1])
print("loaded", flush=True)
time.sleep(60)
"""


def late_load(work):
    go = os.path.join(work, "go")
    loader = subprocess.Popen(["/usr/bin/python3", "-c", LOADER, PLUGIN[94], go],
                              stdout=subprocess.PIPE, text=True)
    try:
        r = Timed("record", "--pid", str(loader.pid), "--duration", "4s",
                  "--arm-timeout", "8s", "--logdir", os.path.join(work, "late"))
        check(wait_for(lambda: r.first("maps no accelerator runtime") is not None, 30,
                       what="the missing runtime said"), "late load: said first")
        open(go, "w").close()
        rc, took = r.wait()
    finally:
        loader.kill()
        loader.wait()
    loaded = r.first("a runtime was loaded")
    check(loaded is not None, "late load: the load is said:\n%s" % r.text())
    check(r.first("waiting up to 8.0 s for one to be loaded") is not None,
          "late load: --arm-timeout given bounds the wait, not --duration:\n%s" % r.text())
    check(rc == 1 and r.first("no execution of a program within 8.0 s") is not None and
          r.first("within --duration") is None,
          "late load: the arm timeout bounds the wait (%s):\n%s" % (rc, r.text()))


def trigger(work):
    d = Daemon(work, "--flight-recorder", "2s")
    try:
        if not d.wait_ready():
            return
        rc, out = on_pty(["trigger", "--socket", d.socket, "-d", "1s"])
        draws = re.findall(r"\r([^\r\n]*)\x1b\[K", out)
        check(rc == 0 and re.search(r"\r\x1b\[K/\S+\.xplane\.pb\r\n$", out),
              "trigger on a pty: the line erased, then the path (%d): %r" % (rc, out[-600:]))
        check(any(d.startswith("asking the daemon for a capture now") and
                  "Ctrl-C stops waiting (the daemon still captures)" in d for d in draws),
              "trigger on a pty: what it asks, and what Ctrl-C does: %s" % draws[:2])
        check(any(re.match(r"capturing \d\.\d / 1\.0 s after the trigger", d) for d in draws),
              "trigger on a pty: the window after the trigger counted: %s" % draws[:6])
        p = subprocess.run([ACCELTRACE, "trigger", "-q", "--socket", d.socket],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0 and p.stdout.endswith(".xplane.pb\n") and p.stderr == "",
              "trigger -q: the path, nothing on stderr (%d): %r %r"
              % (p.returncode, p.stdout, p.stderr))
    finally:
        d.stop()


def main():
    require_root()
    work = tmpdir()
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "2ms",
                        "--cores", "4")
    if t:
        try:
            progress_on_a_terminal(t, work)
            plain_lines_and_verbose(t, work)
            quiet(t, work)
        finally:
            t.stop()
    no_runtime(work)
    late_load(work)
    trigger(work)
    finish()


if __name__ == "__main__":
    main()
