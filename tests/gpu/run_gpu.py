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
  torch memory  record -- PYTHON torch_memory.py, with PyTorch's caching
                allocator on cudaMalloc and on expandable segments

and checks, for each: executions (JAX: PJRT_LoadedExecutable_Execute) or
kernel launches (PyTorch: counted once whichever CUDA layer they went
through, against torch.profiler's launches per step) equal the ground
truth within 1%; device planes are /device:GPU:N; JAX's modules carry
their jit_* names; and the step time with acceltrace attached is within 2%
of the step time without it.

The device timeline comes from the in-process agent (docs/agent.md):
`record -- CMD` loads it, and the --pid targets are started with it (as a
fleet's deployment would), dormant until record asks. Checked against the
frameworks' own profilers, run on the same loop: GPU kernels per step
equal JAX's profiler capture and torch.profiler's count within 1%, the
kernel names are the same, every kernel is joined to its host launch
(a host event with its correlation_id), and report's device idle is
within 2 points of the one report computes from JAX's own capture. The
agent loaded and dormant costs within noise of not loaded (a row each).
The figures go to stdout as one JSON object and, when $OUT is set, to
$OUT/gpu-figures.json.

For memory: torch.cuda.memory_reserved() at each step's end minus
acceltrace's bytes in use of GPU_0_cuda_reserved is one constant (what
was reserved before the probes), so the two agree on every change.

  sudo tests/gpu/run_gpu.py [--only jax|torch|memory]
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
AGENT = os.path.abspath(os.path.join(OUTPUT, "libacceltrace-agent.so"))
WITH_AGENT = dict(os.environ, CUDA_INJECTION64_PATH=AGENT)
PYTHON = os.environ.get("PYTHON", "python3")
LAUNCH = {"cudaLaunchKernel", "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC",
          "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
          "cuLaunchKernelEx_ptsz", "cudaGraphLaunch", "cuGraphLaunch",
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

    def __init__(self, cmd, env=None):
        self.lines = []
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True, env=env)
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


record_logs = []


def record(args, timeout=900, env=None):
    p = subprocess.run([ACCELTRACE, "record", "-j"] + args, capture_output=True,
                       text=True, timeout=timeout, env=env)
    record_logs.append("$ record %s\n%s" % (" ".join(args), p.stderr))
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


def is_kernel(name):
    return not name.startswith("Memcpy") and not name.startswith("Memset")


def gpu_kernels(cap):
    """Kernel events on the GPU planes' stream lines (any producer's)."""
    return [e for e in cap.events if e.plane.startswith("/device:GPU:") and
            e.line.name.startswith("Stream #") and is_kernel(e.name)]


def report_json(path):
    p = subprocess.run([ACCELTRACE, "report", "-j", path], capture_output=True, text=True)
    if not check(p.returncode == 0, "report %s: %s" % (path, p.stderr[-500:])):
        return {}
    return json.loads(p.stdout)


def timeline_checks(label, cap, path, inside, ref):
    """The agent's kernels against the framework profiler's (@ref:
    kernels_per_step, kernel_names, device_idle_pct where known)."""
    if not inside or not ref:
        return
    t0, t1 = inside[0]["t0"], inside[-1]["t1"]
    kernels = [e for e in gpu_kernels(cap) if t0 <= e.start < t1]
    per_step = len(kernels) / float(len(inside))
    figures[label + ".kernels_per_step"] = round(per_step, 3)
    check(within(per_step, ref["kernels_per_step"], 1.0),
          "%s: %.3f GPU kernels a step, the framework's profiler %.3f (1%%)"
          % (label, per_step, ref["kernels_per_step"]))
    ours, theirs = {e.name for e in kernels}, set(ref["kernel_names"])
    figures[label + ".kernel_names"] = len(ours)
    check(ours == theirs, "%s: kernel names differ: only ours %s; only theirs %s"
          % (label, sorted(ours - theirs)[:5], sorted(theirs - ours)[:5]))
    host = {e.stats.get("correlation_id") for e in cap.events
            if not e.plane.startswith("/device:") and e.stats.get("correlation_id")}
    joined = sum(1 for e in kernels if e.stats.get("correlation_id") in host)
    figures[label + ".kernels_joined_pct"] = round(100.0 * joined / max(len(kernels), 1), 2)
    check(joined >= 0.99 * len(kernels), "%s: %d of %d kernels joined to a host launch"
          % (label, joined, len(kernels)))
    busy = sum(e.end - e.start for e in kernels) / float(len(inside)) / 1e3
    figures[label + ".kernel_us_per_step"] = round(busy, 2)
    if "kernel_us_per_step" in ref:
        check(within(busy, ref["kernel_us_per_step"], 5.0),
              "%s: %.2f us of kernels a step, the framework's profiler %.2f (5%%)"
              % (label, busy, ref["kernel_us_per_step"]))
    if "device_idle_pct" in ref:
        idle = report_json(path).get("device_idle_pct")
        figures[label + ".device_idle_pct"] = idle
        check(idle is not None and abs(idle - ref["device_idle_pct"]) <= 2.0,
              "%s: report's device idle %s%%, from JAX's own capture %.2f%% (2 points)"
              % (label, idle, ref["device_idle_pct"]))


def jax_reference(work):
    """JAX's own profiler on the same loop: kernels a step, their names,
    and report's device idle of that capture."""
    pdir = os.path.join(work, "jax-profile")
    n = 200
    job = Job([PYTHON, os.path.join(HERE, "jax_train.py"), "--truth",
               os.path.join(work, "jax.ref.truth.jsonl"), "--duration", "1s",
               "--profile-steps", str(n), "--profile-dir", pdir])
    rc = job.wait()
    found = [os.path.join(d, f) for d, _, fs in os.walk(pdir) for f in fs
             if f.endswith(".xplane.pb")]
    if not check(rc == 0 and found, "jax reference: exit %d, captures %s: %s"
                 % (rc, found, job.lines[-5:])):
        return None
    cap = xspace.Capture(found[0], 0)
    kernels = gpu_kernels(cap)
    ref = {"kernels_per_step": len(kernels) / float(n),
           "kernel_us_per_step": sum(e.end - e.start for e in kernels) / float(n) / 1e3,
           "kernel_names": sorted({e.name for e in kernels}),
           "device_idle_pct": report_json(found[0]).get("device_idle_pct", -100.0)}
    figures["jax.profiler.kernels_per_step"] = ref["kernels_per_step"]
    figures["jax.profiler.kernel_us_per_step"] = round(ref["kernel_us_per_step"], 2)
    figures["jax.profiler.kernel_names"] = len(ref["kernel_names"])
    figures["jax.profiler.device_idle_pct"] = ref["device_idle_pct"]
    if os.environ.get("OUT"):
        shutil.copy(found[0], os.path.join(os.environ["OUT"], "jax-profiler.xplane.pb"))
    return ref


def in_window(steps, s, key):
    return [r for r in steps if s["window_start_ns"] <= r[key] < s["window_stop_ns"]]


def record_script(work, label, script_name):
    """Records a training script for 5 s, launched (label "*.launched";
    record loads the agent) or by --pid once it runs (started with the
    agent, dormant until record asks): (record summary or None, the
    truth's steps)."""
    tp = os.path.join(work, label + ".truth.jsonl")
    script = [PYTHON, os.path.join(HERE, script_name), "--truth", tp]
    logdir = os.path.join(work, label)
    if label.endswith(".launched"):
        s = record(["--duration", "5s", "--logdir", logdir, "--", *script,
                    "--duration", "20s"])
        return s, truth(tp) if os.path.exists(tp) else []
    job = Job(script + ["--duration", "25s"], env=WITH_AGENT)
    if not check(job.wait_for("pid"), "%s: %s did not start: %s"
                 % (label, script_name, job.lines[-5:])):
        job.wait()
        return None, []
    s = record(["--pid", str(job.pid), "--duration", "5s", "--logdir", logdir])
    job.wait()
    return s, truth(tp)


def jax_case(work, launched, ref):
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
    inside = [r for r in steps if s["window_start_ns"] <= r["t0"] and
              r["t1"] < s["window_stop_ns"]]
    timeline_checks(label, cap, s["path"], inside, ref)
    return step_ms(want)


def torch_case(work, launched, per_step, ref):
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
    by_name = {}
    for e in launches:
        by_name[e.name] = by_name.get(e.name, 0) + 1
    figures[label + ".launches_by_name"] = by_name
    check(within(len(launches), want, 1.0),
          "%s: %d kernel launches in %d steps, torch.profiler's rate gives %.1f (1%%)"
          % (label, len(launches), len(inside), want))
    device_checks(label, cap, False)
    timeline_checks(label, cap, s["path"], inside, ref)
    return step_ms(inside)


def memory_case(work, expandable):
    """torch.cuda.memory_reserved() over a loop against acceltrace's bytes
    in use of GPU_0_cuda_reserved (what the process's allocator reserved
    from CUDA): at each step's end inside the window, the two differ by
    one constant (what was reserved before the probes, or not through the
    probed calls), which must not drift; and the growth agrees exactly."""
    label = "torch.memory" + (".expandable" if expandable else "")
    tp = os.path.join(work, label + ".truth.jsonl")
    env = dict(os.environ)
    if expandable:
        env["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    s = record(["--duration", "5s", "--logdir", os.path.join(work, label), "--", PYTHON,
                os.path.join(HERE, "torch_memory.py"), "--truth", tp, "--duration", "15s"],
               timeout=300, env=env)
    if not s:
        return
    cap = xspace.Capture(s["path"], s["window_start_ns"])
    ev = sorted((e for e in cap.events
                 if e.name in ("MemoryAllocation", "MemoryDeallocation") and
                 e.stats.get("allocator_name") == "GPU_0_cuda_reserved"),
                key=lambda e: e.start)
    steps = [r for r in truth(tp) if s["window_start_ns"] <= r["t0"] and
             r["t1"] < s["window_stop_ns"]]
    if not check(ev and steps, "%s: %d memory events, %d truth steps in the window"
                 % (label, len(ev), len(steps))):
        return
    offsets, i, cur = [], 0, None
    for r in steps:
        while i < len(ev) and ev[i].start <= r["t1"]:
            cur = ev[i].stats.get("bytes_allocated")
            i += 1
        if cur is not None:
            offsets.append(r["reserved"] - cur)
    grew = steps[-1]["reserved"] - steps[0]["reserved"]
    figures[label + ".steps"] = len(steps)
    figures[label + ".events"] = len(ev)
    figures[label + ".reserved_growth"] = grew
    figures[label + ".offset_min"] = min(offsets) if offsets else None
    figures[label + ".offset_max"] = max(offsets) if offsets else None
    check(offsets and grew > 0 and max(offsets) == min(offsets),
          "%s: memory_reserved() minus acceltrace's in use is one constant over %d "
          "steps (min %s, max %s; reserved grew %d bytes)"
          % (label, len(offsets), min(offsets) if offsets else None,
             max(offsets) if offsets else None, grew))


def baseline(script, work, name, extra=(), env=None):
    tp = os.path.join(work, name + ".truth.jsonl")
    job = Job([PYTHON, os.path.join(HERE, script), "--truth", tp, "--duration", "10s",
               *extra], env=env)
    rc = job.wait()
    if not check(rc == 0, "%s: exit %d: %s" % (name, rc, job.lines[-5:])):
        return None, job
    steps = truth(tp)
    return step_ms(steps[len(steps) // 5:]), job


def dormant_cost(label, off, dormant):
    """The agent loaded and never asked: no slower than not loaded (2%
    allowed; run-to-run noise on these VMs is a few % either way)."""
    if off and dormant:
        pct = 100.0 * (dormant - off) / off
        figures[label + ".step_ms_agent_dormant"] = round(dormant, 4)
        figures[label + ".agent_dormant_pct"] = round(pct, 2)
        check(pct <= 2.0, "%s: step time %.3f ms with the agent dormant vs %.3f ms "
              "without (%+.1f%%)" % (label, dormant, off, pct))


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
    ap.add_argument("--only", choices=("jax", "torch", "memory"))
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
    if not check(os.path.exists(AGENT), "%s is not built" % AGENT):
        return 1
    if a.only in (None, "jax"):
        off, _ = baseline("jax_train.py", work, "jax.off")
        dormant, _ = baseline("jax_train.py", work, "jax.dormant", env=WITH_AGENT)
        dormant_cost("jax", off, dormant)
        ref = jax_reference(work)
        on = jax_case(work, False, ref)
        overhead("jax", off, on)
        jax_case(work, True, ref)
    if a.only in (None, "torch"):
        # torch.profiler in a process of its own: it leaves CUPTI set up,
        # which would slow the baseline measured after it.
        refpath = os.path.join(work, "torch.reference.json")
        job = Job([PYTHON, os.path.join(HERE, "torch_train.py"), "--truth",
                   os.path.join(work, "torch.ref.truth.jsonl"), "--duration", "1s",
                   "--count-launches", "200", "--reference", refpath])
        job.wait()
        per_step = float(job.value("launches_per_step") or 0)
        off, _ = baseline("torch_train.py", work, "torch.off")
        figures["torch.profiler_launches_per_step"] = per_step
        ref = None
        if os.path.exists(refpath):
            with open(refpath) as f:
                ref = json.load(f)
            figures["torch.profiler.kernels_per_step"] = ref["kernels_per_step"]
            figures["torch.profiler.kernel_names"] = len(ref["kernel_names"])
        dormant, _ = baseline("torch_train.py", work, "torch.dormant", env=WITH_AGENT)
        dormant_cost("torch", off, dormant)
        if check(per_step > 0, "torch.profiler counted no launches"):
            on = torch_case(work, False, per_step, ref)
            overhead("torch", off, on)
            torch_case(work, True, per_step, ref)
    if a.only in (None, "memory"):
        memory_case(work, False)
        memory_case(work, True)
    figures["failures"] = failures
    text = json.dumps(figures, indent=1, sort_keys=True)
    print(text)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "gpu-figures.json"), "w") as f:
            f.write(text)
        with open(os.path.join(os.environ["OUT"], "record-stderr.log"), "w") as f:
            f.write("\n".join(record_logs))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
