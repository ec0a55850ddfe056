#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Nothing captured is lost, as a new user would find out otherwise:

- two records under one --session, one after the other, and two at once
  (as two in the same second under the default session, the local time to
  the second), each keep their own capture: the second goes to SESSION-2
  and says so; the first file is untouched (before: the second replaced it);
- `record -o` into a logdir it cannot write (a read-only mount) fails at
  once, before it attaches, not after the window;
- `record -- CMD` whose command is killed by a signal exits 128 + the
  signal, as a shell would, and says so (before: 0), its capture written.
"""
import hashlib
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (ACCELTRACE, running_trainer, check, finish, protoc_decodes, record,
                 require_root, tmpdir, trainer_cmd)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def reused_session():
    work = tmpdir()
    logdir = os.path.join(work, "logs")
    t = running_trainer("--steps", "0", "--duration", "120s", "--step-time", "2ms")
    if not t:
        return
    rc1, s1, err1 = record("--pid", str(t.pid), "--duration", "1s", "--logdir", logdir,
                           "--session", "run")
    if not check(rc1 == 0 and s1, "first record: exit %d: %s" % (rc1, err1[-400:])):
        t.stop()
        return
    first = digest(s1["path"])
    rc2, s2, err2 = record("--pid", str(t.pid), "--duration", "1s", "--logdir", logdir,
                           "--session", "run")
    if check(rc2 == 0 and s2, "second record: exit %d: %s" % (rc2, err2[-400:])):
        check(s1["path"] != s2["path"], "reused --session: its own file (%s, %s)"
              % (s1["path"], s2["path"]))
        check(s2["session"] == "run-2" and s2.get("session_asked") == "run",
              "reused --session: the second in session run-2, said in the summary (%s, %s)"
              % (s2["session"], s2.get("session_asked")))
        check("holds a capture of this host already" in err2,
              "reused --session: said on stderr: %s" % err2[-400:])
        check(digest(s1["path"]) == first, "reused --session: the first capture untouched")
        check(protoc_decodes(s1["path"]) and protoc_decodes(s2["path"]),
              "reused --session: both decode")

    # Two records at once under one session (as two in the same second
    # under the default one): both choose it when they open their files,
    # and whichever commits second moves on (the rename never replaces).
    procs = [subprocess.Popen([ACCELTRACE, "record", "-j", "--pid", str(t.pid),
                               "--duration", "1s", "--logdir", os.path.join(work, "same"),
                               "--session", "together"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    t.stop()
    paths = []
    for p, (out, err) in zip(procs, outs):
        if check(p.returncode == 0, "same second: exit %d: %s" % (p.returncode, err[-400:])):
            paths.append(json.loads(out)["path"])
    if len(paths) == 2:
        found = sorted(os.path.relpath(os.path.join(d, f), work)
                       for d, _, fs in os.walk(os.path.join(work, "same")) for f in fs)
        check(paths[0] != paths[1] and len(found) == 2,
              "same second: two captures, two files (%s; on disk %s)" % (paths, found))


def unwritable_logdir():
    if subprocess.run(["unshare", "-m", "true"]).returncode:
        check(False, "unshare -m is not available")
        return
    work = tmpdir()
    t = running_trainer("--steps", "0", "--duration", "120s", "--step-time", "2ms")
    if not t:
        return
    mnt = os.path.join(work, "ro")
    os.makedirs(mnt)
    script = ("mount -t tmpfs -o ro tmpfs %s && exec %s record --pid %d --duration 20s "
              "--logdir %s/logs" % (mnt, os.path.abspath(ACCELTRACE), t.pid, mnt))
    start = time.monotonic()
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                       capture_output=True, text=True, timeout=120)
    took = time.monotonic() - start
    t.stop()
    check(p.returncode == 1 and "read-only file system" in p.stderr,
          "read-only logdir: exit 1 naming the reason (%d): %s" % (p.returncode,
                                                                  p.stderr[-600:]))
    # Before it attached: not a 20 s window later (attaching alone takes
    # a while on a loaded machine; the window would add 20 s).
    check(took < 10, "read-only logdir: refused before the window (%.1f s)" % took)


def command_killed():
    work = tmpdir()
    cmd = trainer_cmd("--steps", "0", "--duration", "60s", "--step-time", "5ms",
                      "--crash-after", "300")
    p = subprocess.run([ACCELTRACE, "record", "-j", "--duration", "30s", "--logdir",
                        os.path.join(work, "logs"), "--"] + cmd,
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 128 + 6, "command killed by SIGABRT: exit 134, as a shell (%d): %s"
          % (p.returncode, p.stderr[-400:]))
    check("killed by signal 6" in p.stderr, "command killed: said on stderr")
    try:
        path = json.loads(p.stdout)["path"]
    except ValueError:
        path = ""
    check(path and os.path.exists(path), "command killed: its capture written (%s)" % path)


if __name__ == "__main__":
    require_root()
    reused_session()
    unwritable_logdir()
    command_killed()
    finish()
