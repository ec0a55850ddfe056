#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace daemon's doors and what it keeps after start-up:

- a logdir it cannot write (a read-only mount) stops it at start, with the
  reason, before it loads anything;
- once started, every thread of it (the metrics server's included) holds
  only the capabilities docs/daemon.md lists, in its effective and
  permitted sets, none in its bounding set beyond them, no_new_privs set;
  and with them it still serves /metrics and captures a trainer that runs
  as another user (nobody), started after the drop;
- a control client that never sends its newline is answered "error timed
  out" and let go, and a trigger meanwhile is served;
- two triggers under one session each keep their capture: the second in
  SESSION-2, the first untouched.
"""
import hashlib
import os
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (ACCELTRACE, PLUGIN, TRAINER, capture_of, check, finish, require_root,
                 tmpdir, wait_for)
from daemon import Daemon, free_port

# docs/daemon.md's table (user/daemon/privileges.c).
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE, CAP_SYS_ADMIN = 1, 2, 19, 21
CAP_SYS_NICE, CAP_PERFMON, CAP_BPF, CAP_CHECKPOINT_RESTORE = 23, 38, 39, 40
KEPT = sum(1 << c for c in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE,
                            CAP_SYS_ADMIN, CAP_SYS_NICE, CAP_PERFMON, CAP_BPF,
                            CAP_CHECKPOINT_RESTORE))


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def unwritable_logdir():
    if subprocess.run(["unshare", "-m", "true"]).returncode:
        check(False, "unshare -m is not available")
        return
    work = tmpdir()
    mnt = os.path.join(work, "ro")
    os.makedirs(mnt)
    script = ("mount -t tmpfs -o ro tmpfs %s && exec %s daemon --socket %s/d.sock "
              "--listen off --logdir %s/logs" % (mnt, os.path.abspath(ACCELTRACE), work, mnt))
    try:
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        check(False, "read-only logdir: the daemon still runs after 60 s (killed)")
        return
    check(p.returncode == 1 and "cannot write captures" in p.stderr and
          "read-only file system" in p.stderr,
          "read-only logdir: the daemon stops at start, saying why (%d): %s"
          % (p.returncode, p.stderr[-600:]))
    check("watching every accelerator user" not in p.stderr,
          "read-only logdir: before it attached anything")


def thread_status(pid):
    """{tid: {field: value}} for every thread of @pid."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                out[tid] = dict(l.rstrip("\n").split(":\t", 1) for l in f if ":\t" in l)
        except OSError:
            pass
    return out


def privileges(d):
    check(any("privileges: kept CAP_BPF" in l for l in d.lines),
          "the daemon says what it kept: %s"
          % [l for l in d.lines if "privileges" in l])
    threads = thread_status(d.pid)
    check(len(threads) >= 2, "the daemon's threads, the metrics server's too (%d)"
          % len(threads))
    for tid, st in sorted(threads.items()):
        eff, prm = int(st.get("CapEff", "0"), 16), int(st.get("CapPrm", "0"), 16)
        bnd = int(st.get("CapBnd", "0"), 16)
        check(eff == KEPT and prm == KEPT,
              "thread %s (%s): effective and permitted are the kept ones (%x, %x, want %x)"
              % (tid, st.get("Name"), eff, prm, KEPT))
        check(bnd & ~KEPT == 0, "thread %s: nothing else in the bounding set (%x)"
              % (tid, bnd))
        check(st.get("NoNewPrivs") == "1", "thread %s: no_new_privs" % tid)


def silent_client_and_trigger(d, trainer_pid):
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.connect(d.socket)
    silent.sendall(b"trigger duration_ns=0")  # and never its newline
    opened = time.monotonic()
    rc, s, err = d.trigger("--duration", "1s", "--session", "twice")
    check(rc == 0 and s, "a trigger while a client holds its line: exit %d: %s" % (rc, err))
    silent.settimeout(15)
    try:
        reply = silent.recv(200).decode()
    except OSError as e:
        reply = "no reply: %s" % e
    took = time.monotonic() - opened
    check(reply.startswith("error timed out"),
          "the silent client told it timed out: %r" % reply)
    check(4.5 < took < 12, "after its 5 s deadline (%.1f s)" % took)
    silent.close()
    if not s:
        return
    cap = capture_of(s)
    execs = [e for e in cap.named("PJRT_LoadedExecutable_Execute")
             if (e.line.id & 0xffffffff) == trainer_pid]
    check(len(execs) > 10, "after the drop: the trainer running as nobody is captured "
          "(%d executes)" % len(execs))
    first = digest(s["path"])
    rc, s2, err = d.trigger("--duration", "0s", "--session", "twice")
    if check(rc == 0 and s2, "a second trigger under that session: exit %d: %s" % (rc, err)):
        check(os.path.basename(os.path.dirname(s2["path"])) == "twice-2",
              "the second in session twice-2: %s" % s2["path"])
        check(digest(s["path"]) == first, "the first capture untouched")
        check(any("holds a capture of this host already" in l for l in d.lines),
              "the daemon says why")
        check("holds a capture of this host already" in err, "so does trigger: %s" % err)


def started_daemon():
    work = tmpdir()
    port = free_port()
    d = Daemon(work, "--detail", "full", listen="127.0.0.1:%d" % port)
    if not d.wait_ready():
        d.stop()
        return
    truth_dir = tmpdir()
    os.chmod(truth_dir, 0o777)
    tp = os.path.join(truth_dir, "truth.jsonl")
    t = subprocess.Popen(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                          TRAINER, "--plugin", PLUGIN[94], "--steps", "0", "--duration", "90s",
                          "--step-time", "2ms", "--truth", tp],
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        privileges(d)
        body = [""]

        def scrape():
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                            timeout=10) as r:
                    body[0] = r.read().decode()
            except OSError as e:
                body[0] = str(e)
            return "acceltrace_traced_processes" in body[0]

        # The first text is published a loop turn after it says it watches.
        check(wait_for(scrape, 20), "/metrics served after the drop: %s" % body[0][:200])
        running = wait_for(lambda: os.path.exists(tp) and os.path.getsize(tp) > 10000, 30)
        if check(running, "the trainer running as nobody"):
            time.sleep(1)  # a second of its executions inside the window
            silent_client_and_trigger(d, t.pid)
    finally:
        t.terminate()
        t.wait(timeout=30)
        d.stop()


if __name__ == "__main__":
    require_root()
    unwritable_logdir()
    started_daemon()
    finish()
