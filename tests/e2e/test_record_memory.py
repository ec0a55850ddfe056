#!/usr/bin/python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Device memory against the simulator's ground truth (docs/simulator.md,
"Device memory"; the capture's form in docs/capture-format.md).

- record -- CMD of a trainer that leaks 1 MiB a train step on device 0 and
  holds 64 MiB more per device in eval phases: every allocation and free
  in the window is a MemoryAllocation / MemoryDeallocation event with its
  size; device 0's peak in use is exact (to the allocation), and in an eval
  phase; the report names the leak at 1 MiB a step (within 1%) on device 0
  and none elsewhere; the capture decodes with Python's protobuf under
  XProf's stat names, and carries the allocator's timeline.
- record --pid of a trainer running before the probes: frees of buffers
  made before them are counted and said, never sized.
- The CUDA pair's caching allocator (cuda-app --alloc-mode caching): what
  is counted is what it reserved (cudaMalloc blocks), not its tensors,
  each reservation once although the runtime calls the driver's exported
  cuMemAlloc inside cudaMalloc.
"""
import bisect
import collections
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
from e2e import (OUTPUT, acceltrace, capture_of, check, check_bounds, finish,  # noqa: E402
                 protoc_decodes, record, require_root, running_trainer, tmpdir,
                 trainer_cmd, truth, truth_split)

MIB = 1 << 20
LEAK = MIB
EVAL_MEM = 64 * MIB
APP = os.path.join(OUTPUT, "sim", "cuda", "cuda-app")
MEM_EVENTS = ("MemoryAllocation", "MemoryDeallocation")


def mem_truth(recs, layer):
    return [r for r in recs if r["type"] in ("mem_alloc", "mem_free") and
            r.get("layer") == layer and not r.get("failed")]


def replay_in_use(recs, device):
    """(time, bytes in use after) at each allocation (at its return) and free
    (at its call) of @device, from the process's start: as the kernel counts
    a launched process's memory."""
    ev = []
    for r in recs:
        if r["device"] != device:
            continue
        if r["type"] == "mem_alloc":
            ev.append((r["t_return"], 1, r["bytes"]))
        else:
            ev.append((r["t_call"], 0, -r["bytes"]))
    ev.sort()
    out, in_use = [], 0
    for t, _, d in ev:
        in_use += d
        out.append((t, in_use))
    return out


def attributable(recs):
    """@recs less the execution outputs' allocations and their frees."""
    out, outputs = [], set()
    # A handle is reused only after its Destroy was called: an allocation
    # returning it comes after that call.
    for r in sorted(recs, key=lambda r: r["t_return"] if r["type"] == "mem_alloc"
                    else r["t_call"]):
        if r["type"] == "mem_alloc" and r.get("size_from") == "size_query":
            outputs.add(r["addr"])
        elif r["type"] == "mem_free" and r["addr"] in outputs:
            outputs.discard(r["addr"])
        else:
            out.append(r)
    return out


def report_json(path):
    rc, out, err = acceltrace("report", "--json", path)
    if not check(rc == 0, "report --json: %s" % err[-500:]):
        return {}
    return json.loads(out)


def allocator(rep, name):
    for d in (rep.get("memory") or {}).get("devices", []):
        if d.get("allocator_name") == name:
            return d
    return None


def launched():
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    rc, s, err = record("--logdir", os.path.join(work, "logs"), "--",
                        *trainer_cmd("--duration", "4s", "--step-time", "3ms",
                                     "--mem-leak", str(LEAK), "--eval-every", "10",
                                     "--eval-steps", "3", "--eval-mem", str(EVAL_MEM),
                                     truth=tp), timeout=120)
    if not check(rc == 0 and s, "record -- trainer: %s" % err[-1500:]):
        return
    cap = capture_of(s)
    check(protoc_decodes(s["path"]), "the capture decodes with protoc")
    recs = truth(tp)
    mem = mem_truth(recs, "pjrt_buffers")
    w0, w1 = s["window_start_ns"], s["window_stop_ns"]

    # Every allocation and free in the window, each with its size; a free
    # of a buffer made before the probes (the first inputs, prefetched at
    # start-up) without one.
    def key(r):
        return ("alloc" if r["type"] == "mem_alloc" else "free", r["addr"])

    got = collections.Counter()
    sized = collections.defaultdict(set)
    unsized_frees = []
    for e in cap.events:
        if e.name in MEM_EVENTS and str(e.stats.get("allocator_name", "")).endswith(
                "_pjrt_buffers"):
            k = ("alloc" if e.name == "MemoryAllocation" else "free", e.stats.get("addr"))
            got[k] += 1
            if e.stats.get("allocation_bytes"):
                sized[k].add(e.stats["allocation_bytes"])
            else:
                unsized_frees.append(e)
    inside, over = truth_split(mem, "t_call", "t_return", s, key)
    check_bounds("PJRT allocations and frees in the window, by (op, address)",
                 got, inside, over)
    truth_bytes = collections.defaultdict(set)
    for r in mem:
        truth_bytes[key(r)].add(r["bytes"])
    wrong = [(k, v, truth_bytes.get(k)) for k, v in sized.items()
             if not v <= truth_bytes.get(k, set())]
    check(not wrong, "each size as the truth has it: %s" % wrong[:5])
    # The allocation an unsized free frees: the last one at its address
    # made before it (the plugin reuses buffer addresses all run long).
    made = collections.defaultdict(list)
    for r in mem:
        if r["type"] == "mem_alloc":
            made[r["addr"]].append(r["t_return"])
    for ts in made.values():
        ts.sort()

    def freed_alloc_made(e):
        ts = made.get(e.stats.get("addr"), [])
        i = bisect.bisect_right(ts, e.start)
        return ts[i - 1] if i else None

    bad = [(e.stats.get("addr"), freed_alloc_made(e)) for e in unsized_frees
           if not (e.name == "MemoryDeallocation" and e.stats.get("acceltrace.size_unknown") == 1
                   and freed_alloc_made(e) is not None and freed_alloc_made(e) < w0)]
    check(not bad, "only frees go unsized, said so, each of a buffer made before the window "
          "(%d; not so: %s)" % (len(unsized_frees), bad[:5]))
    check(all(e.stats.get("bytes_reserved") == 0 and "peak_bytes_in_use" in e.stats and
              "requested_bytes" in e.stats and "device_ordinal" in e.stats
              for e in cap.events if e.name in MEM_EVENTS),
          "each event carries XProf's stats (bytes_reserved 0, peak_bytes_in_use, "
          "requested_bytes, device_ordinal)")
    # Execution outputs are first seen by their size (the trainer asks it);
    # no call names their device.
    outputs = collections.Counter(
        ("alloc", r["addr"]) for r in mem if r["type"] == "mem_alloc" and
        r.get("size_from") == "size_query" and w0 <= r["t_return"] <= w1)
    got_out = collections.Counter(
        ("alloc", e.stats.get("addr")) for e in cap.named("MemoryAllocation")
        if e.stats.get("allocator_name") == "TPU_unknown_pjrt_buffers" and
        e.stats.get("acceltrace.size_from") == "size_query")
    check(outputs and not (outputs - got_out),
          "execution outputs, sized by the query: under TPU_unknown_pjrt_buffers "
          "(%d of %d)" % (sum((outputs & got_out).values()), sum(outputs.values())))

    # Device 0's peak in use in the window, exact, and when. The kernel
    # names no device for an execution's output: neither its allocation
    # nor its free (the truth's free line has no size_from: paired by
    # address, the handle the plugin may reuse after Destroy) is device 0's.
    known = attributable(mem)
    series = [(t, v) for t, v in replay_in_use(known, 0) if w0 <= t <= w1]
    if not check(series, "truth has device 0's memory in the window"):
        return
    peak = max(v for _, v in series)
    peak_t = next(t for t, v in series if v == peak)
    cap_peak = max((e.stats.get("bytes_allocated", 0) for e in cap.events
                    if e.name in MEM_EVENTS and e.stats.get("allocator_name") ==
                    "TPU_0_pjrt_buffers"), default=None)
    check(cap_peak == peak, "device 0's peak in the window: captured %s, truth %d" %
          (cap_peak, peak))

    rep = report_json(s["path"])
    d0 = allocator(rep, "TPU_0_pjrt_buffers")
    if not check(d0, "the report has device 0's PJRT buffers: %s" % rep.get("memory")):
        return
    check(d0.get("peak_bytes") == peak, "report: peak %s, truth %d" %
          (d0.get("peak_bytes"), peak))
    # The peak is in an eval phase: between an eval working set's
    # allocation and its free.
    phases = [(a["t_return"], f["t_call"]) for a in known if a["type"] == "mem_alloc" and
              a["device"] == 0 and a["bytes"] == EVAL_MEM
              for f in known if f["type"] == "mem_free" and f["addr"] == a["addr"] and
              f["device"] == 0 and f["t_call"] >= a["t_return"]]
    check(any(p0 <= peak_t <= p1 for p0, p1 in phases),
          "the truth's peak is in an eval phase")
    # The report's peak time is from the capture's first event; the first
    # event that reached the peak is when.
    pt = d0.get("peak_time_ns")
    origin = min(e.start for e in cap.events)
    at_peak = min((e.start for e in cap.events if e.name in MEM_EVENTS and
                   e.stats.get("allocator_name") == "TPU_0_pjrt_buffers" and
                   e.stats.get("bytes_allocated") == cap_peak), default=None)
    check(pt is not None and at_peak is not None and abs(origin + pt - at_peak) <= 1000,
          "report: the peak's time %s is its first event's (%s after the first event)"
          % (pt, at_peak and at_peak - origin))
    # The probe's time is the call's return as the uretprobe saw it; the
    # trainer's truth reads its clock around the call: 200 us either way.
    check(at_peak is not None and any(p0 - 200000 <= at_peak <= p1 + 200000
                                      for p0, p1 in phases),
          "the peak's event is in an eval phase (%s; phases %s)"
          % (at_peak, [(p0, p1) for p0, p1 in phases if abs(p0 - (at_peak or 0)) < 10**9][:3]))
    g = d0.get("growth_bytes_per_step")
    check(g is not None and abs(g - LEAK) <= 0.01 * LEAK and d0.get("leak"),
          "report: device 0 leaks %s bytes a step, truth %d (within 1%%), named a leak"
          % (g, LEAK))
    d1 = allocator(rep, "TPU_1_pjrt_buffers")
    check(d1 and not d1.get("leak") and abs(d1.get("growth_bytes_per_step") or 0) < 0.01 * LEAK,
          "report: device 1 does not leak: %s" % (d1 and d1.get("growth_bytes_per_step")))
    rc, text, err = acceltrace("report", s["path"])
    check(rc == 0 and "leak" in text.lower() and "TPU_0_pjrt_buffers" in text,
          "report's text names the leak: %s" % text[-2000:])

    # The allocator's timeline: a counter line, and the history as a stat.
    lines = {e.line.name for e in cap.events if e.name == "Memory in use"}
    check(any(n.startswith("Device memory: TPU_0_pjrt_buffers") for n in lines),
          "a counter line for device 0's buffers: %s" % lines)
    tl = cap.plane_stat("acceltrace.memory_timelines").get("/host:CPU")
    try:
        tl = json.loads(tl) if tl else None
    except ValueError:
        tl = None
    check(tl and any(a.get("allocator_name") == "TPU_0_pjrt_buffers" and a.get("points")
                     for a in tl.get("allocators", [])),
          "the timelines' plane stat holds device 0's points")


def attached():
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    # The first steps' buffers (inputs prefetched, outputs, the eval set)
    # are made before the probes; their frees come after.
    # Slow steps and many in flight: a step's input and output live until
    # it is reaped, --max-inflight steps later (~3 s), longer than record
    # takes to attach (~1 s). The prefetch queue holds host batches: it
    # does not make device buffers live longer.
    t = running_trainer("--steps", "0", "--duration", "60s", "--step-time", "200ms",
                        "--max-inflight", "16", truth=tp)
    if not t:
        return
    time.sleep(0.5)
    t_before = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    rc, s, err = record("--pid", str(t.pid), "--duration", "3s", "--from-start",
                        "--logdir", os.path.join(work, "logs"))
    t.stop()
    if not check(rc == 0 and s, "record --pid: %s" % err[-1500:]):
        return
    cap = capture_of(s)
    mem = mem_truth(truth(tp, t.pid), "pjrt_buffers")
    w0, w1 = s["window_start_ns"], s["window_stop_ns"]
    allocs = {}
    before = 0
    for r in sorted(mem, key=lambda r: r["t_call"]):
        if r["type"] == "mem_alloc":
            allocs[(r["device"], r["addr"])] = r
        else:
            a = allocs.pop((r["device"], r["addr"]), None)
            if a and a["t_return"] < t_before and w0 <= r["t_call"] and r["t_return"] <= w1:
                before += 1
    unknown = [e for e in cap.named("MemoryDeallocation")
               if e.stats.get("acceltrace.size_unknown") == 1]
    check(before > 0, "the truth has frees in the window of buffers made before record ran")
    check(len(unknown) >= before and
          all(e.stats.get("allocation_bytes", 0) == 0 for e in unknown),
          "frees of buffers made before the probes: %d captured unsized, truth at least %d"
          % (len(unknown), before))
    rep = report_json(s["path"])
    n = sum(d.get("frees_unknown_size", 0) for d in (rep.get("memory") or {}).get("devices", []))
    check(n == len(unknown), "report counts them: %d, capture %d" % (n, len(unknown)))
    rc, text, err = acceltrace("report", s["path"])
    check(rc == 0 and "before" in text, "and says so: %s" % text[-1500:])


def cuda_caching():
    work = tmpdir()
    tp = os.path.join(work, "truth.jsonl")
    env = dict(os.environ, SIMRT_DRIVER="exported")
    rc, s, err = record("--logdir", os.path.join(work, "logs"), "--",
                        APP, "--mode", "runtime", "--steps", "0", "--duration", "3",
                        "--step-time", "1000", "--alloc-mode", "caching",
                        "--allocs-per-step", "8", "--mem-leak", str(MIB),
                        "--truth", tp, env=env, timeout=120)
    if not check(rc == 0 and s, "record -- cuda-app --alloc-mode caching: %s" % err[-1500:]):
        return
    cap = capture_of(s)
    recs = truth(tp)
    reserved = mem_truth(recs, "cuda_reserved")
    tensors = [r for r in recs if r["type"] == "mem_tensor"]
    evs = [e for e in cap.events if e.name in MEM_EVENTS and
           e.stats.get("allocator_name") == "GPU_0_cuda_reserved"]
    allocs = [e for e in evs if e.name == "MemoryAllocation"]

    def key(r):
        return ("alloc" if r["type"] == "mem_alloc" else "free", r["addr"], r["bytes"])

    # Allocations are sized by the call, frees by their allocation; the
    # exception: empty_cache at exit gives back blocks reserved at start-up,
    # and a launched command's first ones can come before the probes on its
    # runtime attach (made before the probes: counted, never sized). Those
    # frees are matched to the truth's size, each with its block reserved
    # before the window.
    reserved_at = {}
    for r in sorted(reserved, key=lambda r: r["t_return"]):
        if r["type"] == "mem_alloc":
            reserved_at.setdefault(r["addr"], []).append(r)
    early = [e for e in evs if e.name == "MemoryDeallocation" and
             e.stats.get("acceltrace.size_unknown") == 1]
    check(all(e.stats.get("allocation_bytes", 0) == 0 and reserved_at.get(e.stats.get("addr"))
              and reserved_at[e.stats["addr"]][0]["t_return"] < s["window_start_ns"]
              for e in early),
          "frees unsized only of blocks reserved before the window (%d)" % len(early))

    def size_of(e):
        if e in early and reserved_at.get(e.stats.get("addr")):
            return reserved_at[e.stats["addr"]][0]["bytes"]
        return e.stats.get("allocation_bytes")

    got = collections.Counter(("alloc" if e.name == "MemoryAllocation" else "free",
                               e.stats.get("addr"), size_of(e)) for e in evs)
    inside, over = truth_split(reserved, "t_call", "t_return", s, key)
    check_bounds("cudaMalloc reservations (and frees), each once: the driver's "
                 "cuMemAlloc inside not counted again", got, inside, over)
    check(tensors and len(tensors) > len(allocs),
          "the allocator placed more tensors (%d) than it reserved blocks (%d)"
          % (len(tensors), len(allocs)))
    check(evs and all(e.stats.get("region_type") == "reserved" for e in evs),
          "said for what it is: region_type reserved")


if __name__ == "__main__":
    require_root()
    launched()
    attached()
    cuda_caching()
    finish()
