#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Names a traced process chooses, with bytes that are not UTF-8.

The simulated trainer names its main thread (and so its process) with a
byte 0xff and an escape character (--main-thread-name, PR_SET_NAME: any
process may name itself so):
- launched by `record`, its rename is seen by the kernel's task_rename: the
  capture decodes with /usr/bin/python3's protobuf (proto3 strings must be
  UTF-8) and with protoc, the main thread's line named with U+FFFD for each
  byte that is not UTF-8 or a control character;
- running under `acceltrace daemon`: /metrics passes `promtool check
  metrics`, the process's command label (read from /proc) holding U+FFFD.
"""
import os
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (capture_of, check, finish, protoc_decodes, record, require_root,  # noqa: E402
                 running_trainer, tmpdir, trainer_cmd, wait_for)
from daemon import Daemon, free_port  # noqa: E402

PROMTOOL = "/usr/bin/promtool"
# Bytes 0xff and ESC: str with a surrogate escape, which argv gets as 0xff.
NAME = "tr\udcffin\x1ber"
CLEAN = "tr\ufffdin\ufffder"


def metrics(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as r:
            return r.read()
    except OSError:
        return b""


def test_capture(work):
    rc, s, err = record("--duration", "2s", "--logdir", os.path.join(work, "logs"), "--",
                        *trainer_cmd("--steps", "0", "--duration", "30s", "--step-time", "2ms",
                                     "--main-thread-name", NAME))
    if not check(rc == 0 and s, "record exited %d: %s" % (rc, err)):
        return
    try:
        cap = capture_of(s)
    except Exception as e:  # noqa: BLE001 (what the decoder raises varies by version)
        check(False, "Python's protobuf refused the capture: %r" % e)
        return
    check(protoc_decodes(s["path"]), "protoc decodes the capture")
    host = cap.planes.get("/host:CPU")
    names = sorted({l.name for l in host.lines}) if host else []
    check(CLEAN in names, "the main thread's line named %r: %r" % (CLEAN, names))


def test_metrics(work):
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "2ms",
                        "--main-thread-name", NAME)
    if not t:
        return
    port = free_port()
    d = Daemon(work, "--flight-recorder", "5s", listen="127.0.0.1:%d" % port)
    try:
        if not d.wait_ready():
            return
        pid_label = ('pid="%d"' % t.pid).encode()
        if not check(wait_for(lambda: pid_label in metrics(port), 30),
                     "the daemon reports the trainer"):
            return
        text = metrics(port)
        p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True)
        check(p.returncode == 0, "promtool check metrics: %r %r" % (p.stdout, p.stderr))
        check(('command="%s"' % CLEAN).encode() in text, "the command label with U+FFFD")
        try:
            text.decode("utf-8")
        except UnicodeDecodeError as e:
            check(False, "the exposition is not UTF-8: %s" % e)
    finally:
        d.stop()
        t.stop()


def main():
    work = tmpdir()
    test_capture(work)
    test_metrics(work)


if __name__ == "__main__":
    require_root()
    main()
    finish()
