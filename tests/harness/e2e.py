# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Helpers for acceltrace's end-to-end tests against the simulated TPU stack.

A test starts simulated trainers (tests/sim, with their ground truth), runs
acceltrace on them, decodes the capture with Python's protobuf (see
xspace.py) and compares what was captured with what happened. Checks
accumulate; finish() exits 0 (all held), 1 (some failed) or 77 (skipped);
skip_part() says that one part could not run here while the rest did.

Something a test needs to have happened (a trainer probed, a daemon past
its start-up, a line logged) is waited for with wait_for() on what shows
it, with a deadline and a failure that names it, never with a sleep that
guesses how long it takes.
"""
import atexit
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import xspace  # noqa: E402

OUTPUT = os.environ.get("OUTPUT", "build")
ACCELTRACE = os.environ.get("ACCELTRACE", os.path.join(OUTPUT, "acceltrace"))
TRAINER = os.path.join(OUTPUT, "sim", "tpu-trainer")
PLUGIN = {94: os.path.join(OUTPUT, "sim", "pjrt-0.94", "libtpu.so"),
          26: os.path.join(OUTPUT, "sim", "pjrt-0.26", "libtpu.so")}

_failures = []


def check(cond, what):
    """Records a failed check (printed) and returns cond."""
    if not cond:
        _failures.append(what)
        print("FAIL: " + what, file=sys.stderr, flush=True)
    return cond


_held = False  # set where the test ends through finish() with no failure, or skip()


def skip(why):
    global _held
    print("SKIP: " + why)
    _held = True
    sys.exit(77)


def skip_part(why):
    """One part of the test cannot run here while the rest does: a line
    tests/run-tests.sh counts and lists (the test still passes)."""
    print("SKIP-PART: " + why, flush=True)


def finish():
    if _failures:
        print("%d check(s) failed" % len(_failures), file=sys.stderr)
        sys.exit(1)
    global _held
    _held = True
    sys.exit(0)


def require_root():
    if os.geteuid() != 0:
        skip("needs root (loads BPF programs)")
    if not os.path.exists(TRAINER):
        check(False, "the simulator is not built: " + TRAINER)
        finish()


def wait_for(cond, timeout, every=0.2, what=None):
    """Polls cond() until it holds or timeout seconds pass; its last value.
    With @what (the thing that should have happened), a deadline passed is
    a failed check saying so."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(every)
    held = cond()
    if what is not None:
        check(held, "%s: not within %g s" % (what, timeout))
    return held


def holds_for(cond, seconds, what, every=0.1):
    """Checks that cond() keeps holding for @seconds (a thing that must not
    happen, given the time to happen); fails the check @what at once when
    it stops holding."""
    deadline = time.monotonic() + seconds
    while True:
        if not cond():
            return check(False, what)
        if time.monotonic() >= deadline:
            return True
        time.sleep(every)


def sleep_until_mono_ns(t_ns):
    """Waits until CLOCK_MONOTONIC reaches @t_ns: for a condition that is a
    time itself (a flight recorder's window reaching back past an event
    the test saw happen)."""
    left = (t_ns - time.monotonic_ns()) / 1e9
    if left > 0:
        time.sleep(left)


def uprobes_of(pid, needle):
    """The uprobes process @pid holds on files whose path contains
    @needle: (kind, path, offset) tuples, one per probed offset; kind is
    uprobe or uretprobe. Perf links are listed by bpftool; uprobe_multi
    links (one for many offsets, Linux 6.6+: bpftool 7.1 does not show
    them) by the kernel's fdinfo of each link, which lists its path and
    offsets."""
    out = subprocess.run(["bpftool", "perf", "show"], capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        f = line.split()
        # pid P fd N: prog_id I uprobe filename PATH offset OFF
        if not (len(f) >= 11 and f[0] == "pid" and f[1] == str(pid) and
                f[6] in ("uprobe", "uretprobe")):
            continue
        # acceltrace attaches through the descriptor it read the library
        # by (/proc/self/fd/N, as it named it): its fd N names the file.
        path = f[8]
        fd = re.fullmatch(r"/proc/self/fd/(\d+)", path)
        if fd:
            try:
                path = os.readlink("/proc/%d/fd/%s" % (pid, fd.group(1)))
            except OSError:
                continue
        if needle in path:
            found.append((f[6], path, int(f[10], 0)))
    for kind, path, offsets, _ in uprobe_multi_links(pid):
        if needle in path:
            found.extend((kind, path, off) for off in offsets)
    return found


def uprobe_holders(needle):
    """Every process holding uprobes (perf or uprobe_multi links) on a
    file whose path contains @needle: another tracer on this host (a
    whole-host daemon adopts any process that maps a runtime) installs
    breakpoints a test of its own must tell from theirs."""
    pids = set()
    out = subprocess.run(["bpftool", "perf", "show"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 11 and f[0] == "pid" and f[6] in ("uprobe", "uretprobe"):
            pids.add(int(f[1]))
    for d in os.listdir("/proc"):
        if d.isdigit() and uprobe_multi_links(int(d)):
            pids.add(int(d))
    return sorted(p for p in pids if uprobes_of(p, needle))


def uprobe_multi_links(pid):
    """Process @pid's uprobe_multi links, from the kernel's fdinfo:
    (uprobe or uretprobe, path, [offsets], filter pid or 0) each."""
    links = []
    try:
        fds = os.listdir("/proc/%d/fd" % pid)
    except OSError:
        return links
    for fd in fds:
        try:
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                text = f.read()
        except OSError:
            continue
        kind = re.search(r"^link_type:\s*(uprobe_multi|uretprobe_multi)$", text, re.M)
        path = re.search(r"^path:\s*(.*)$", text, re.M)
        if not kind or not path:
            continue
        fpid = re.search(r"^pid:\s*(\d+)$", text, re.M)
        # cookie offset ref_ctr_offset, one line per offset
        offs = [int(m.group(1), 16) for m in
                re.finditer(r"^\d+\s+0x([0-9a-f]+)\s+0x[0-9a-f]+$", text, re.M)]
        links.append((kind.group(1).replace("_multi", ""), path.group(1), offs,
                      int(fpid.group(1)) if fpid else 0))
    return links


def waits_for_events(pid):
    """True when a thread of @pid sleeps in epoll_wait: acceltrace's loop
    waiting on its ring buffers, so its start-up (programs attached, /proc
    scanned) is over. The kernel names the function a thread sleeps in in
    its wchan."""
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return False
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/wchan" % (pid, tid)) as f:
                if "epoll" in f.read():
                    return True
        except OSError:
            pass
    return False


_tmpdirs = []


def tmpdir():
    """A work folder, removed when the test ends with every check held (or
    skipped): a capture and its ground truth can take hundreds of MB, and a
    suite run that left them behind filled a CI machine's disk. A failed
    test, or one ended by an exception, keeps its folders, named on stderr,
    to be looked at; so does every test with AT_KEEP_TMP set."""
    path = tempfile.mkdtemp(prefix="at-e2e-")
    _tmpdirs.append(path)
    return path


def _remove_tmpdirs():
    if not _held or os.environ.get("AT_KEEP_TMP"):
        for path in _tmpdirs:
            print("kept: " + path, file=sys.stderr)
        return
    for path in _tmpdirs:
        shutil.rmtree(path, ignore_errors=True)


atexit.register(_remove_tmpdirs)


class Trainer:
    """A tpu-trainer process; its stderr is collected in the background."""

    def __init__(self, *args, truth=None, minor=94, env=None, plugin_flag=True,
                 plugin=None, wrap=()):
        """plugin: a plugin file to load instead of PLUGIN[minor]; wrap: a
        command that execs the trainer's (which it is given as arguments)."""
        cmd = list(wrap) + [TRAINER] + (["--plugin", plugin or PLUGIN[minor]] if plugin_flag else [])
        if truth:
            cmd += ["--truth", truth]
        cmd += list(args)
        self.lines = []
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True,
                                     env=env, start_new_session=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.pid = self.proc.pid

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def pids(self):
        """Every trainer process's pid (several with --trainers)."""
        out = []
        for line in list(self.lines):
            if line.startswith("tpu-trainer: pid=") and " index=" in line:
                out.append(int(line.split("pid=")[1].split()[0]))
        return out

    def wait_running(self, n=1, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if sum(1 for l in list(self.lines) if " running " in l) >= n:
                return True
            if self.proc.poll() is not None and n == 1:
                break
            time.sleep(0.05)
        check(False, "trainer did not start: %s" % "\n".join(self.lines))
        return False

    def stop(self, sig=signal.SIGTERM, timeout=20):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._reader.join(timeout=5)
        return self.proc.returncode


def running_trainer(*args, **kw):
    """A Trainer once it says it is running, or None (the failed check
    recorded, the process stopped)."""
    t = Trainer(*args, **kw)
    if t.wait_running():
        return t
    t.stop()
    return None


def renamed_plugin(name, minor=94, work=None):
    """A copy of the simulator's plugin under another file name (a new
    inode), in a directory of its own; the library it needs
    (libsimtruth.so, found through its RUNPATH $ORIGIN/..) is linked beside
    it. Returns the copy's absolute path."""
    work = work or tmpdir()
    d = os.path.join(work, "plugin")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, name)
    shutil.copyfile(PLUGIN[minor], path)
    os.chmod(path, 0o755)
    truth_lib = os.path.join(work, "libsimtruth.so")
    if not os.path.exists(truth_lib):
        os.symlink(os.path.abspath(os.path.join(OUTPUT, "sim", "libsimtruth.so")), truth_lib)
    return os.path.abspath(path)


def trainer_cmd(*args, truth=None, minor=94):
    """A trainer command line, for `record -- CMD`."""
    cmd = [TRAINER, "--plugin", PLUGIN[minor]]
    if truth:
        cmd += ["--truth", truth]
    return cmd + list(args)


def acceltrace(*args, timeout=120, input_signal_after=None, sig=signal.SIGINT, env=None):
    """Runs acceltrace (in @env, else this environment); returns
    (returncode, stdout, stderr). With input_signal_after, sends sig that
    many seconds after it started."""
    proc = subprocess.Popen([ACCELTRACE] + list(args), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    if input_signal_after is not None:
        time.sleep(input_signal_after)
        proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        check(False, "acceltrace %s timed out" % " ".join(args))
    return proc.returncode, out, err


def record(*args, **kw):
    """acceltrace record -j ...; returns (rc, summary or None, stderr)."""
    rc, out, err = acceltrace("record", "-j", *args, **kw)
    summary = None
    if rc == 0:
        try:
            summary = xspace.record_summary(out)
        except ValueError:
            check(False, "record -j printed no JSON: %r" % out[-500:])
    return rc, summary, err


def capture_of(summary):
    return xspace.Capture(summary["path"], summary["window_start_ns"])


def truth(path, pid=None):
    recs = xspace.load_truth(path)
    return [r for r in recs if pid is None or r.get("pid") == pid]


def protoc_decodes(path):
    """True when protoc --decode reads the capture as an XSpace."""
    with open(path, "rb") as f:
        p = subprocess.run(["protoc", "--decode=tensorflow.profiler.XSpace",
                            "-I", "user/output", "user/output/xplane.proto"], stdin=f,
                           capture_output=True)
    return p.returncode == 0 and b"/host:CPU" in p.stdout


def quantile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] if v else None


def check_bounds(what, captured, inside, overlapping):
    """Exact counts with window edges allowed for: every truth record
    entirely inside the window is captured, and everything captured is a
    truth record that overlaps it. Arguments are Counters of match keys."""
    missing = inside - captured
    extra = captured - overlapping
    ok = not missing and not extra and sum(inside.values()) > 0
    check(ok, "%s: captured %d, truth %d inside the window and %d overlapping it; "
          "missing %s; unexplained %s" % (what, sum(captured.values()),
                                          sum(inside.values()), sum(overlapping.values()),
                                          list(missing.items())[:5], list(extra.items())[:5]))
    return ok


def truth_split(recs, t0, t1, summary, key, tolerance_ns=200000):
    """Counters of key(rec) for records inside, and overlapping, the window.
    The simulator timestamps inside the functions acceltrace probes at their
    entry and return, so a call can overlap the window by acceltrace's clock
    and miss it by a few microseconds by the truth's: the overlapping set is
    widened by tolerance_ns on each side."""
    w0, w1 = summary["window_start_ns"], summary["window_stop_ns"]
    inside = collections.Counter(key(r) for r in recs if r[t0] >= w0 and r[t1] <= w1)
    over = collections.Counter(key(r) for r in recs
                               if r[t1] >= w0 - tolerance_ns and r[t0] <= w1 + tolerance_ns)
    return inside, over
