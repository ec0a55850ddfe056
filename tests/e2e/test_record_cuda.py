#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""CUDA's two layers, on the simulated pair (tests/sim/cuda_*.c): a runtime
(libsimrt.so, libcudart's part) that reaches its driver (libsimdrv.so,
libcuda's part) through a private table, so the driver's exported
functions never see its calls, as with the real pair. Neither file name
matches a pack's hint: both are recognised by their exports.

- probes --pid: both libraries recognised by exports, the runtime probes
  placed;
- record --pid, for each way of calling: every launch, copy, graph launch
  and synchronisation in the window captured exactly once, as the truth
  lists them:
    runtime   the runtime API only (PyTorch's way)
    driver    the driver API only (XLA's way)
    mixed     both, from one thread
    nested    the runtime API, the runtime calling the driver's exported
              functions (SIMRT_DRIVER=exported): the driver calls inside
              runtime calls are marked nested, not counted again;
- record -- CMD of the runtime-only loop.

Without the runtime pack, record sees nothing of the runtime-only loop.
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
from e2e import (OUTPUT, acceltrace, capture_of, check, check_bounds, finish, record,
                 skip, tmpdir, truth, truth_split)

APP = os.path.join(OUTPUT, "sim", "cuda", "cuda-app")
LAUNCH = {"cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC",
          "cuLaunchKernel", "cuLaunchKernel_ptsz"}
COPY = {"cudaMemcpy", "cudaMemcpyAsync", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2"}
GRAPH = {"cudaGraphLaunch", "cuGraphLaunch"}
SYNC = {"cudaStreamSynchronize", "cuStreamSynchronize"}


class App:
    def __init__(self, mode, tp, env_mode=None, steps="0", duration="40"):
        env = dict(os.environ)
        env.pop("SIMRT_DRIVER", None)
        if env_mode:
            env["SIMRT_DRIVER"] = env_mode
        self.lines = []
        self.proc = subprocess.Popen([APP, "--mode", mode, "--steps", steps,
                                      "--duration", duration, "--step-time", "1000",
                                      "--truth", tp],
                                     stderr=subprocess.PIPE, text=True, env=env,
                                     start_new_session=True)
        self.pid = self.proc.pid
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_running(self):
        for _ in range(200):
            if any(" running " in l for l in self.lines):
                return True
            time.sleep(0.05)
        return check(False, "cuda-app did not start: %s" % self.lines)

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def counted(e):
    return not e.stats.get("nested_in_runtime_call")


def compare(what, s, T):
    """Every launch, copy, graph launch and stream sync in the window once."""
    cap = capture_of(s)
    ev = [e for e in cap.events if counted(e)]
    groups = [
        ("launches", "launch", LAUNCH, "t_call", lambda r: (r["a"], r["b"]),
         lambda e: (e.stats.get("grid_x"), e.stats.get("grid_y"))),
        ("copies", ("h2d", "d2h"), COPY, "t_call", lambda r: r["a"],
         lambda e: e.stats.get("bytes")),
        ("graph launches", "graph", GRAPH, "t_call", lambda r: r["a"],
         lambda e: e.stats.get("stream")),
        ("stream synchronizations", "stream_sync", SYNC, "t_call", lambda r: r["a"],
         lambda e: e.stats.get("stream")),
    ]
    for name, ops, names, t0, tkey, ckey in groups:
        ops = ops if isinstance(ops, tuple) else (ops,)
        recs = [r for r in T if r["type"] == "cuda" and r["op"] in ops]
        inside, over = truth_split(recs, t0, "t_return", s, tkey)
        got = collections.Counter(ckey(e) for e in ev if e.name in names)
        check_bounds("%s: %s" % (what, name), got, inside, over)
    nested = [e for e in cap.events if not counted(e)]
    return cap, nested


def probes_check(app):
    rc, out, err = acceltrace("probes", "-j", "--pid", str(app.pid))
    if not check(rc == 0, "probes --pid: exit %d: %s" % (rc, err)):
        return
    d = json.loads(out)
    libs = {os.path.basename(l["path"]): l for l in d["processes"][0]["libraries"]}
    rt, drv = libs.get("libsimrt.so"), libs.get("libsimdrv.so")
    check(rt and rt["pack"] == "CUDA runtime" and
          rt["recognised_by"] == "exports cudaLaunchKernel",
          "probes: libsimrt.so is a CUDA runtime by its exports: %s" % rt)
    check(drv and drv["pack"] == "CUDA driver" and "cuLaunchKernel" in drv["recognised_by"],
          "probes: libsimdrv.so is a CUDA driver by its exports: %s" % drv)
    proc = d["processes"][0]
    check(proc.get("cuda_runtime_layer") == "static" and
          proc.get("cuda_runtime_library", "").endswith("libsimrt.so"),
          "probes: the runtime layer is exported by libsimrt.so, not a libcudart: %s"
          % {k: proc.get(k) for k in ("cuda_runtime_layer", "cuda_runtime_library")})
    placed = {p["function"] for p in d["probes"] if p["library"].endswith("libsimrt.so")
              and not p["refused"]}
    want = {"cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC",
            "cudaMemcpy", "cudaMemcpyAsync", "cudaGraphLaunch", "cudaStreamSynchronize",
            "cudaEventSynchronize", "cudaDeviceSynchronize", "cudaEventRecord"}
    check(want <= placed, "probes: the runtime probes placed in libsimrt.so: missing %s"
          % sorted(want - placed))


def by_pid(work, mode, env_mode=None, probes=False):
    label = env_mode and "%s (%s)" % (mode, env_mode) or mode
    tp = os.path.join(work, "truth-%s-%s.jsonl" % (mode, env_mode or ""))
    app = App(mode, tp, env_mode)
    if not app.wait_running():
        app.stop()
        return
    if probes:
        probes_check(app)
    rc, s, err = record("--pid", str(app.pid), "--duration", "2s",
                        "--logdir", os.path.join(work, "logs-" + label.replace(" ", "")))
    app.stop()
    if not check(rc == 0 and s, "%s: record --pid exited %d: %s" % (label, rc, err)):
        return
    T = truth(tp, app.pid)
    cap, nested = compare(label, s, T)
    if env_mode == "exported":
        check(len(nested) > 100, "%s: driver calls inside runtime calls marked nested (%d)"
              % (label, len(nested)))
        check(all(e.name.startswith("cu") and not e.name.startswith("cuda") for e in nested),
              "%s: only driver calls are nested: %s" % (label, nested[:3]))
    else:
        check(not nested, "%s: nothing nested: %s" % (label, nested[:3]))
    check(not s["losses"], "%s: no losses: %s" % (label, s["losses"]))


def command(work):
    tp = os.path.join(work, "truth-cmd.jsonl")
    rc, s, err = record("--duration", "1s", "--logdir", os.path.join(work, "logs-cmd"),
                        "--", APP, "--mode", "runtime", "--steps", "0", "--duration", "6",
                        "--truth", tp)
    if not check(rc == 0 and s, "record -- CMD exited %d: %s" % (rc, err)):
        return
    compare("record -- CMD", s, truth(tp))


if __name__ == "__main__":
    if os.geteuid() != 0:
        skip("needs root (loads BPF programs)")
    if not os.path.exists(APP):
        check(False, "the simulated CUDA pair is not built: " + APP)
        finish()
    work = tmpdir()
    by_pid(work, "runtime", probes=True)
    by_pid(work, "driver")
    by_pid(work, "mixed")
    by_pid(work, "runtime", env_mode="exported")
    command(work)
    finish()
