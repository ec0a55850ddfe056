#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The GPU's own timeline through the in-process agent (docs/agent.md), on
the simulated CUDA pair and its simulated CUPTI (tests/sim/cupti_sim.c),
against the simulator's ground truth of every piece of device work
({"type": "cuda_device"} lines: kernel, copy or memset, its stream, its
correlation id and its device start and end in CLOCK_MONOTONIC):

- record -- cuda-app, for each way of calling (runtime, driver, mixed):
  record loads the agent through CUDA_INJECTION64_PATH; every kernel and
  copy the truth has inside the window is in the capture, once, on the
  GPU plane's "Stream #N(...)" line of its stream, with its name and its
  times within 10 us; kernels per step equal the truth's; every kernel
  carries the correlation id of a host launch span (joined); report gives
  device idle and top ops from them; protoc reads the capture;
- record --pid on a process started with the agent (dormant until asked);
- the agent cannot start (CUPTI refuses, as on a host that restricts
  profiling to administrators): the process runs on, the capture is
  written with the host side and says why there are no kernels;
- --no-agent, and --pid on a process without the agent: no GPU lines, and
  the latter says so plainly;
- a process in a PID namespace of its own (a container's): its agent names
  it and its threads by the namespace's ids; the GPU plane is still the
  host process's, and its kernels are joined to its launches.
"""
import collections
import json
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (OUTPUT, acceltrace, capture_of, check, finish, protoc_decodes, record,
                 require_root, tmpdir, truth, wait_for)

APP = os.path.join(OUTPUT, "sim", "cuda", "cuda-app")
AGENT = os.path.abspath(os.path.join(OUTPUT, "libacceltrace-agent.so"))
CUPTI = os.path.abspath(os.path.join(OUTPUT, "sim", "cuda", "libcupti.so.13"))
TIME_NS = 10000		# device times against the truth after the clock fit
EDGE_NS = 2000000	# work this close to the window's edges may fall either side


def app_cmd(mode, tp, duration="12"):
    return [APP, "--mode", mode, "--steps", "0", "--duration", duration,
            "--step-time", "1000", "--truth", tp]


def agent_env(**extra):
    env = dict(os.environ, ACCELTRACE_AGENT_CUPTI=CUPTI)
    env.update(extra)
    return env


def gpu_events(cap):
    return [e for e in cap.events if e.plane.startswith("/device:GPU:") and
            e.line.name.startswith("Stream #")]


def host_correlations(cap):
    return {e.stats["correlation_id"] for e in cap.events
            if not e.plane.startswith("/device:") and e.stats.get("correlation_id")}


def check_timeline(label, s, truth_recs, pid):
    """Device work of the window: captured once each, on its stream's line,
    named and timed as the truth says, joined to its launch."""
    cap = capture_of(s)
    ws, we = s["window_start_ns"], s["window_stop_ns"]
    work = [r for r in truth_recs if r.get("type") == "cuda_device" and r["pid"] == pid and
            not r.get("dropped")]
    # Work launched and done inside the window (work launched before it
    # may run inside it, its launch outside).
    called = {(r["api"], r["a"], r["b"]): r["t_call"] for r in truth_recs
              if r.get("type") == "cuda" and r.get("pid", pid) == pid}
    inside = [r for r in work if ws + EDGE_NS <= r["t_start"] and r["t_end"] <= we - EDGE_NS
              and called.get((r.get("api"), r.get("a"), r.get("b")), ws + EDGE_NS) >= ws + EDGE_NS]
    events = gpu_events(cap)
    by_corr = collections.defaultdict(list)
    for e in events:
        by_corr[e.stats.get("correlation_id")].append(e)
    if not check(inside and events, "%s: device work in the window (truth %d, captured %d)"
                 % (label, len(inside), len(events))):
        return cap
    missing, wrong, late = [], [], []
    for r in inside:
        cands = [e for e in by_corr.get(r["corr"], [])
                 if e.line.name.startswith("Stream #%d(" % r["stream"])]
        want = r.get("name") if r["kind"] == "kernel" else \
            {"memset": "Memset"}.get(r["kind"], "Memcpy%s" % {"h2d": "H2D", "d2h": "D2H",
                                                             "d2d": "D2D"}.get(r.get("copy"), ""))
        match = [e for e in cands if e.name == want]
        if not match:
            (wrong if cands else missing).append((r["kind"], want, r["corr"],
                                                  [(e.name, e.line.name) for e in cands]))
            continue
        e = min(match, key=lambda e: abs(cap.true_start(e) - r["t_start"]))
        if (abs(cap.true_start(e) - r["t_start"]) > TIME_NS or
                abs(cap.true_end(e) - r["t_end"]) > TIME_NS):
            late.append((want, cap.true_start(e) - r["t_start"], cap.true_end(e) - r["t_end"]))
    check(not missing, "%s: %d of %d pieces of device work missing: %s"
          % (label, len(missing), len(inside), missing[:3]))
    check(not wrong, "%s: %d named or placed wrong: %s" % (label, len(wrong), wrong[:3]))
    check(not late, "%s: %d off their true times by more than 10 us: %s"
          % (label, len(late), late[:3]))
    # Once each: no piece of work drawn twice.
    inside_corr = {r["corr"] for r in inside}
    captured = [e for e in events if e.stats.get("correlation_id") in inside_corr]
    check(len(captured) == len(inside), "%s: %d captured of the window's, the truth has %d"
          % (label, len(captured), len(inside)))
    # Kernels per step: the truth's launches carry (a, b) = (step + 1, ...).
    kernels = [r for r in inside if r["kind"] == "kernel"]
    steps = {r["a"] for r in kernels if r.get("api", "").find("Graph") < 0}
    if steps:
        per_step = collections.Counter(r["a"] for r in kernels
                                       if r.get("api", "").find("Graph") < 0)
        got = collections.Counter()
        corr_step = {r["corr"]: r["a"] for r in kernels if r.get("api", "").find("Graph") < 0}
        for e in captured:
            st = corr_step.get(e.stats.get("correlation_id"))
            if st is not None and not e.name.startswith("Mem"):
                got[st] += 1
        check(all(got[k] == v for k, v in per_step.items()),
              "%s: kernels per step equal the truth's" % label)
    host = host_correlations(cap)
    kernel_events = [e for e in captured if not e.name.startswith("Mem")]
    unjoined = [e.name for e in kernel_events if e.stats.get("correlation_id") not in host]
    check(kernel_events and not unjoined, "%s: every kernel joined to its host launch "
          "(%d of %d not: %s)" % (label, len(unjoined), len(kernel_events), unjoined[:3]))
    check(protoc_decodes(s["path"]), "%s: protoc decodes the capture" % label)
    return cap


def check_report(label, path):
    rc, out, err = acceltrace("report", "-j", path)
    if not check(rc == 0, "%s: report: %s" % (label, err[-300:])):
        return
    r = json.loads(out)
    ops = [o.get("name", "") for o in r.get("top_ops", [])]
    check(r.get("device_idle_pct") is not None and 0 < r["device_idle_pct"] < 100,
          "%s: report measures device idle from the kernels: %s" % (label,
                                                                   r.get("device_idle_pct")))
    check(any(n.startswith("_Z") or n.startswith("Memcpy") for n in ops),
          "%s: report's top ops are the kernels: %s" % (label, ops[:3]))


def launched(work, mode):
    tp = os.path.join(work, "launched-%s.jsonl" % mode)
    rc, s, err = record("-d", "2s", "--logdir", os.path.join(work, "l-" + mode), "--",
                        *app_cmd(mode, tp, duration="6"), env=agent_env())
    if not check(rc == 0 and s, "record -- cuda-app --mode %s: rc %d: %s"
                 % (mode, rc, err[-800:])):
        return
    recs = truth(tp)
    pids = {r["pid"] for r in recs if r.get("type") == "cuda_device"}
    if not check(len(pids) == 1, "launched %s: one process wrote device truth: %s"
                 % (mode, pids)):
        return
    check_timeline("launched " + mode, s, recs, pids.pop())
    if mode == "runtime":
        check_report("launched runtime", s["path"])


class App:
    def __init__(self, tp, env):
        self.lines = []
        self.proc = subprocess.Popen(app_cmd("runtime", tp), stderr=subprocess.PIPE,
                                     text=True, env=env, start_new_session=True)
        self.pid = self.proc.pid
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stderr:
            self.lines.append(line)

    def running(self):
        return any("running" in l for l in self.lines)

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def by_pid(work, with_agent):
    label = "--pid, %s agent" % ("with" if with_agent else "without")
    tp = os.path.join(work, "pid-%d.jsonl" % with_agent)
    env = agent_env(CUDA_INJECTION64_PATH=AGENT) if with_agent else dict(os.environ)
    app = App(tp, env)
    try:
        if not check(wait_for(app.running, 20), "%s: cuda-app started" % label):
            return
        rc, s, err = record("--pid", str(app.pid), "-d", "2s", "--logdir",
                            os.path.join(work, "p%d" % with_agent))
    finally:
        app.stop()
    if not check(rc == 0 and s, "%s: rc %d: %s" % (label, rc, err[-800:])):
        return
    if with_agent:
        check("acceltrace agent found" in err, "%s: the agent was found" % label)
        check_timeline(label, s, truth(tp), app.pid)
        return
    cap = capture_of(s)
    check(not gpu_events(cap), "%s: no GPU kernels without the agent" % label)
    check("has no acceltrace agent" in err, "%s: says so plainly: %s" % (label, err[-600:]))
    check(any("no acceltrace agent" in w for w in cap.space.warnings),
          "%s: and in the capture: %s" % (label, list(cap.space.warnings)))
    check(any(e.name.startswith("cudaLaunchKernel") for e in cap.events),
          "%s: the host side is recorded as ever" % label)


def namespaced(work):
    """record --pid on cuda-app in a PID namespace of its own (unshare)."""
    label = "--pid, in a PID namespace"
    tp = os.path.join(work, "ns.jsonl")
    env = agent_env(CUDA_INJECTION64_PATH=AGENT)
    outer = subprocess.Popen(["unshare", "--pid", "--fork", *app_cmd("runtime", tp)],
                             stderr=subprocess.PIPE, text=True, env=env,
                             start_new_session=True)
    lines = []
    threading.Thread(target=lambda: lines.extend(outer.stderr), daemon=True).start()
    try:
        if not check(wait_for(lambda: any("running" in l for l in lines), 20),
                     "%s: cuda-app started: %s" % (label, lines[-3:])):
            return
        kids = subprocess.run(["pgrep", "-P", str(outer.pid)], capture_output=True,
                              text=True).stdout.split()
        if not check(len(kids) == 1, "%s: the namespaced process found: %s" % (label, kids)):
            return
        pid = int(kids[0])
        rc, s, err = record("--pid", str(pid), "-d", "2s", "--logdir", os.path.join(work, "ns"))
    finally:
        os.killpg(outer.pid, 9)
        outer.wait()
    if not check(rc == 0 and s, "%s: rc %d: %s" % (label, rc, err[-800:])):
        return
    cap = capture_of(s)
    events = gpu_events(cap)
    check(events, "%s: GPU kernels recorded" % label)
    planes = cap.plane_stat("acceltrace.pid")
    gpu_pids = {v for k, v in planes.items() if k.startswith("/device:GPU:")}
    check(gpu_pids == {pid}, "%s: the GPU plane is the host process's (%d): %s"
          % (label, pid, gpu_pids))
    host = host_correlations(cap)
    kernels = [e for e in events if not e.name.startswith("Mem")]
    joined = sum(1 for e in kernels if e.stats.get("correlation_id") in host)
    check(kernels and joined >= 0.99 * len(kernels),
          "%s: kernels joined through the namespace's thread ids: %d of %d"
          % (label, joined, len(kernels)))


def refused(work):
    tp = os.path.join(work, "refused.jsonl")
    rc, s, err = record("-d", "1s", "--logdir", os.path.join(work, "refused"), "--",
                        *app_cmd("runtime", tp, duration="4"),
                        env=agent_env(SIM_CUPTI_FAIL="privileges"))
    if not check(rc == 0 and s, "CUPTI refused: the capture is written: rc %d: %s"
                 % (rc, err[-800:])):
        return
    cap = capture_of(s)
    check(not gpu_events(cap), "CUPTI refused: no GPU kernels")
    why = [w for w in cap.space.warnings if "no device detail from the acceltrace agent" in w]
    check(why and "administrators" in why[0],
          "CUPTI refused: the capture says why: %s" % list(cap.space.warnings))
    check("acceltrace-agent: CUPTI refused" in err, "CUPTI refused: said in the process's log")
    check(sum(1 for e in cap.events if e.name.startswith("cudaLaunchKernel")) > 100,
          "CUPTI refused: the host side is recorded and the process ran on")


def no_agent_flag(work):
    tp = os.path.join(work, "no-agent.jsonl")
    rc, s, err = record("-d", "1s", "--no-agent", "--logdir", os.path.join(work, "na"), "--",
                        *app_cmd("runtime", tp, duration="4"), env=agent_env())
    if not check(rc == 0 and s, "--no-agent: rc %d: %s" % (rc, err[-500:])):
        return
    check(not gpu_events(capture_of(s)), "--no-agent: no GPU lines")
    check(not any(r.get("type") == "cuda_device" for r in truth(tp)),
          "--no-agent: CUPTI was never turned on in the process")


def main():
    require_root()
    for path in (APP, AGENT, CUPTI):
        if not os.path.exists(path):
            check(False, "%s is not built (make all)" % path)
            return finish()
    work = tmpdir()
    for mode in ("runtime", "driver", "mixed"):
        launched(work, mode)
    by_pid(work, True)
    by_pid(work, False)
    namespaced(work)
    refused(work)
    no_agent_flag(work)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
