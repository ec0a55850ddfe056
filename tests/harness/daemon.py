# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Running `acceltrace daemon` in end-to-end tests: started on a socket and
logdir of its own, its stderr collected, stopped by a signal."""
import json
import os
import re
import signal
import socket
import subprocess
import threading
import time

from e2e import ACCELTRACE, check


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    def __init__(self, work, *args, listen="off", profiler_listen="off"):
        self.socket = os.path.join(work, "daemon.sock")
        self.logdir = os.path.join(work, "logs")
        self.listen = listen
        # Other tests' trainers may crash on purpose on this host: the
        # crash rule would take captures of them in the middle of ours.
        cmd = [ACCELTRACE, "daemon", "--socket", self.socket, "--logdir", self.logdir,
               "--listen", listen, "--profiler-listen", profiler_listen,
               "--rule-crash", "false"] + list(args)
        self.lines = []
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.pid = self.proc.pid
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_ready(self, timeout=30):
        """True once it says it watches the host (probes attached)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if any("watching every accelerator user" in l for l in list(self.lines)):
                return True
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        check(False, "the daemon did not start: %s" % "\n".join(self.lines))
        return False

    def profiler_port(self):
        """The ProfilerService's port, as the start line says (port 0: the
        one the kernel chose); None when off."""
        for l in list(self.lines):
            m = re.search(r"ProfilerService \S*:(\d+)$", l)
            if m:
                return int(m.group(1))
        return None

    def trigger(self, *args, timeout=120):
        """acceltrace trigger -j ...: (rc, summary dict or None, stderr)."""
        p = subprocess.run([ACCELTRACE, "trigger", "-j", "--socket", self.socket] + list(args),
                           capture_output=True, text=True, timeout=timeout)
        try:
            s = json.loads(p.stdout) if p.returncode == 0 else None
        except ValueError:
            s = None
        return p.returncode, s, p.stderr

    def captures(self):
        """Every 'capture written' the daemon logged: dicts like trigger's."""
        out = []
        for l in list(self.lines):
            m = re.search(r"capture written: (\S+) \(window_start_ns=(\d+) "
                          r"window_stop_ns=(\d+), [^;]*; (.*)\)$", l)
            if m:
                out.append({"path": m.group(1), "window_start_ns": int(m.group(2)),
                            "window_stop_ns": int(m.group(3)), "why": m.group(4)})
        return out

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=5)
        return self.proc.returncode
