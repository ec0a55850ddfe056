#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""acceltrace on real frameworks on a real GPU (never in CI: exits 77
without one).

Runs the two training scripts beside it, each writing its own ground truth
(CLOCK_MONOTONIC per step), and records them the two ways users do:

  jax, --pid    record --pid on a running jax_train.py
  jax, launched record -- PYTHON jax_train.py (the window opens at the first
                execution of a repeated program, not in start-up)
  torch, --pid  record --pid on a running torch_train.py
  torch, launched

and checks, for each: executions (JAX: PJRT_LoadedExecutable_Execute) or
kernel launches (PyTorch: counted once whichever CUDA layer they went
through, against torch.profiler's launches per step) equal the ground
truth within 1%; device planes are /device:GPU:N; JAX's modules carry
their jit_* names; and the step time with acceltrace attached is within 2%
of the step time without it. The figures go to stdout as one JSON object
and, when $OUT is set, to $OUT/gpu-figures.json.

  sudo tests/gpu/run_gpu.py [--only jax|torch]
  env: PYTHON (the interpreter with jax/torch; default python3),
       OUTPUT (build dir, default build), OUT
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import xspace  # noqa: E402

OUTPUT = os.environ.get("OUTPUT", "build")
ACCELTRACE = os.path.join(OUTPUT, "acceltrace")
PYTHON = os.environ.get("PYTHON", "python3")
LAUNCH = {"cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC",
          "cuLaunchKernel", "cuLaunchKernel_ptsz", "cudaGraphLaunch", "cuGraphLaunch",
          "cuGraphLaunch_ptsz"}
failures = []
figures = {}


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


def has_gpu():
    if not os.path.exists("/dev/nvidia0") or not shutil.which("nvidia-smi"):
        return False
    return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0


class Job:
    """A training script; its stderr read in the background."""

    def __init__(self, cmd):
        self.lines = []
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True)
        self.pid = self.proc.pid
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def value(self, key):
        for line in list(self.lines):
            for word in line.split():
                if word.startswith(key + "="):
                    return word.split("=", 1)[1]
        return None

    def wait_for(self, key, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            v = self.value(key)
            if v is not None:
                return v
            if self.proc.poll() is not None:
                break
            time.sleep(0.1)
        return None

    def wait(self, timeout=600):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.pid, signal.SIGKILL)
            return self.proc.wait()


def truth(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def step_ms(steps):
    """Median step time (t0 to the next t0) over the given truth steps."""
    d = sorted(b["t0"] - a["t0"] for a, b in zip(steps, steps[1:]))
    return d[len(d) // 2] / 1e6 if d else None


def record(args, timeout=900):
    p = subprocess.run([ACCELTRACE, "record", "-j"] + args, capture_output=True,
                       text=True, timeout=timeout)
    if not check(p.returncode == 0, "record %s: exit %d: %s" % (args, p.returncode,
                                                               p.stderr[-2000:])):
        return None
    return xspace.record_summary(p.stdout)


def within(got, want, pct):
    return want > 0 and abs(got - want) <= want * pct / 100.0


def device_checks(label, cap, want_jit):
    planes = sorted(n for n in cap.planes if n.startswith("/device:"))
    check(planes and all(n.startswith("/device:GPU:") for n in planes),
          "%s: device planes are GPU planes: %s" % (label, planes))
    if want_jit:
        names = {e.name for e in cap.line_events("/device:", "XLA Modules")}
        check(any(n.startswith("jit_") for n in names),
              "%s: modules named as JAX named them (jit_*): %s" % (label, sorted(names)[:5]))
    figures[label + ".device_planes"] = planes


def in_window(steps, s, key):
    return [r for r in steps if s["window_start_ns"] <= r[key] < s["window_stop_ns"]]


def record_script(work, label, script_name):
    """Records a training script for 5 s, launched (label "*.launched") or
    by --pid once it runs: (record summary or None, the truth's steps)."""
    tp = os.path.join(work, label + ".truth.jsonl")
    script = [PYTHON, os.path.join(HERE, script_name), "--truth", tp]
    logdir = os.path.join(work, label)
    if label.endswith(".launched"):
        s = record(["--duration", "5s", "--logdir", logdir, "--", *script,
                    "--duration", "20s"])
        return s, truth(tp) if os.path.exists(tp) else []
    job = Job(script + ["--duration", "25s"])
    if not check(job.wait_for("pid"), "%s: %s did not start: %s"
                 % (label, script_name, job.lines[-5:])):
        job.wait()
        return None, []
    s = record(["--pid", str(job.pid), "--duration", "5s", "--logdir", logdir])
    job.wait()
    return s, truth(tp)


def jax_case(work, launched):
    label = "jax.launched" if launched else "jax.pid"
    s, steps = record_script(work, label, "jax_train.py")
    if not s:
        return
    cap = xspace.Capture(s["path"], s["window_start_ns"])
    execs = [e for e in cap.named("PJRT_LoadedExecutable_Execute")
             if s["window_start_ns"] <= e.start < s["window_stop_ns"]]
    want = in_window(steps, s, "t_exec")
    figures[label + ".executions"] = len(execs)
    figures[label + ".truth_steps"] = len(want)
    check(within(len(execs), len(want), 1.0),
          "%s: %d executions in the window, the truth has %d steps (1%%)"
          % (label, len(execs), len(want)))
    device_checks(label, cap, True)
    return step_ms(want)


def torch_case(work, launched, per_step):
    label = "torch.launched" if launched else "torch.pid"
    s, steps = record_script(work, label, "torch_train.py")
    if not s:
        return
    cap = xspace.Capture(s["path"], s["window_start_ns"])
    # Steps wholly inside the window: their launches are all in it.
    inside = [r for r in steps if s["window_start_ns"] <= r["t0"] and
              r["t1"] < s["window_stop_ns"]]
    if not check(inside, "%s: no truth step inside the window" % label):
        return
    t0, t1 = inside[0]["t0"], inside[-1]["t1"]
    launches = [e for e in cap.events if e.name in LAUNCH and
                not e.stats.get("nested_in_runtime_call") and t0 <= e.start < t1]
    want = per_step * len(inside)
    figures[label + ".launches"] = len(launches)
    figures[label + ".launches_expected"] = round(want, 1)
    check(within(len(launches), want, 1.0),
          "%s: %d kernel launches in %d steps, torch.profiler's rate gives %.1f (1%%)"
          % (label, len(launches), len(inside), want))
    device_checks(label, cap, False)
    return step_ms(inside)


def baseline(script, work, name, extra=()):
    tp = os.path.join(work, name + ".truth.jsonl")
    job = Job([PYTHON, os.path.join(HERE, script), "--truth", tp, "--duration", "10s",
               *extra])
    rc = job.wait()
    if not check(rc == 0, "%s: exit %d: %s" % (name, rc, job.lines[-5:])):
        return None, job
    steps = truth(tp)
    return step_ms(steps[len(steps) // 5:]), job


def overhead(label, off, on):
    if off and on:
        pct = 100.0 * (on - off) / off
        figures[label + ".step_ms_off"] = round(off, 4)
        figures[label + ".step_ms_on"] = round(on, 4)
        figures[label + ".slowdown_pct"] = round(pct, 2)
        check(pct <= 2.0, "%s: step time %.3f ms attached vs %.3f ms without (%+.1f%%, "
              "2%% allowed)" % (label, on, off, pct))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", choices=("jax", "torch"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: needs root")
        return 77
    if not has_gpu():
        print("SKIP: no NVIDIA GPU here (this runner is for a lent GPU machine)")
        return 77
    if not os.path.exists(ACCELTRACE):
        print("FAIL: %s is not built (make)" % ACCELTRACE)
        return 1
    work = tempfile.mkdtemp(prefix="at-gpu-")
    if a.only in (None, "jax"):
        off, _ = baseline("jax_train.py", work, "jax.off")
        on = jax_case(work, False)
        overhead("jax", off, on)
        jax_case(work, True)
    if a.only in (None, "torch"):
        off, job = baseline("torch_train.py", work, "torch.off", ("--count-launches", "200"))
        per_step = float(job.value("launches_per_step") or 0)
        figures["torch.profiler_launches_per_step"] = per_step
        if check(per_step > 0, "torch.profiler counted no launches"):
            on = torch_case(work, False, per_step)
            overhead("torch", off, on)
            torch_case(work, True, per_step)
    figures["failures"] = failures
    text = json.dumps(figures, indent=1, sort_keys=True)
    print(text)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "gpu-figures.json"), "w") as f:
            f.write(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
