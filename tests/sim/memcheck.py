#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks of the simulator's device-memory ground truth, from the truth
alone (docs/simulator.md, "Device memory", and docs/simulator-cuda.md,
"Device memory of the CUDA pair"). Each command prints what it measured and exits 1 on a failure.

  memcheck.py pjrt truth=F [leak=B] [eval_mem=M] [output_bytes=O] [capacity=C]
  memcheck.py cuda truth=F mode=direct|caching|vmm|pool steps=N
              [leak=B] [devices=D] [allocs=K] [capacity=C] [oom_step=S]
"""
import bisect
import json
import sys

MIB = 1 << 20
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def pair(recs, layer):
    """Matches every free with the live allocation of its (device, addr), in
    time order (an address may be reused once freed). Returns the live
    allocations left, and the (alloc, free) pairs."""
    events = []
    for r in recs:
        if r.get("layer") != layer or r.get("failed"):
            continue
        if r["type"] == "mem_alloc":
            events.append((r["t_return"], 1, r))
        elif r["type"] == "mem_free":
            events.append((r["t_call"], 0, r))
    events.sort(key=lambda e: (e[0], e[1]))
    live, pairs = {}, []
    for _, is_alloc, r in events:
        key = (r["pid"], r["device"], r["addr"])
        if is_alloc:
            check(key not in live, "address %x allocated twice on device %d" %
                  (r["addr"], r["device"]))
            live[key] = r
        else:
            a = live.pop(key, None)
            if check(a is not None, "free of %x (%s) without an allocation" %
                     (r["addr"], r["api"])):
                check(a["bytes"] == r["bytes"], "free of %x: %d bytes, allocated %d" %
                      (r["addr"], r["bytes"], a["bytes"]))
                pairs.append((a, r))
    return list(live.values()), pairs


def in_use_at(recs, layer, device, t):
    """Bytes in use on the device at time t: allocations returned by t whose
    free had not been called."""
    total = 0
    for r in recs:
        if r.get("layer") != layer or r.get("failed") or r["device"] != device:
            continue
        if r["type"] == "mem_alloc" and r["t_return"] <= t:
            total += r["bytes"]
        elif r["type"] == "mem_free" and r["t_call"] <= t:
            total -= r["bytes"]
    return total


def peak(recs, layer, device):
    """(peak bytes, when), replaying allocations and frees in time order."""
    events = []
    for r in recs:
        if r.get("layer") != layer or r.get("failed") or r["device"] != device:
            continue
        if r["type"] == "mem_alloc":
            events.append((r["t_return"], r["bytes"]))
        elif r["type"] == "mem_free":
            events.append((r["t_call"], -r["bytes"]))
    events.sort(key=lambda e: (e[0], e[1]))
    cur, best, when = 0, 0, 0
    for t, d in events:
        cur += d
        if cur > best:
            best, when = cur, t
    return best, when


def check_capacity(recs, layer, capacity):
    """Each allocation's outcome against the device's capacity. Calls of
    several threads overlap, so the bytes in use when one ran are known
    between two bounds: a success must fit with the least that may have
    been in use, a failure must not fit with the most."""
    for dev in sorted({r["device"] for r in recs if r.get("layer") == layer}):
        mine = [r for r in recs if r.get("layer") == layer and r["device"] == dev]
        ok = [r for r in mine if r["type"] == "mem_alloc" and not r.get("failed")]
        frees = [r for r in mine if r["type"] == "mem_free"]

        def summed(rs, key):
            rs = sorted(rs, key=lambda r: r[key])
            ts, acc, total = [], [0], 0
            for r in rs:
                ts.append(r[key])
                total += r["bytes"]
                acc.append(total)
            return ts, acc

        def upto(table, t, strict=True):
            ts, acc = table
            return acc[bisect.bisect_left(ts, t) if strict else bisect.bisect_right(ts, t)]

        a_ret, a_call = summed(ok, "t_return"), summed(ok, "t_call")
        f_call, f_ret = summed(frees, "t_call"), summed(frees, "t_return")
        n_failed = 0
        for r in mine:
            if r["type"] != "mem_alloc":
                continue
            least = upto(a_ret, r["t_call"]) - upto(f_call, r["t_return"], False)
            most = upto(a_call, r["t_return"]) - upto(f_ret, r["t_call"])
            if not r.get("failed"):
                most -= r["bytes"]
                check(least + r["bytes"] <= capacity, "device %d: %d bytes allocated with at "
                      "least %d of %d in use" % (dev, r["bytes"], least, capacity))
            else:
                n_failed += 1
                check(most + r["bytes"] > capacity, "device %d: %d bytes failed with at most "
                      "%d of %d in use" % (dev, r["bytes"], most, capacity))
        print("device %d: %d allocations failed, each when it did not fit" % (dev, n_failed))


def slope(ys):
    n = len(ys)
    mx = (n - 1) / 2
    my = sum(ys) / n
    num = sum((i - mx) * (y - my) for i, y in enumerate(ys))
    return num / sum((i - mx) ** 2 for i in range(n))


def cmd_pjrt(args):
    recs = load(args["truth"])
    leak = int(args.get("leak", 0))
    eval_mem = int(args.get("eval_mem", 0))
    out_bytes = int(args.get("output_bytes", 1024))
    mem = [r for r in recs if r["type"] in ("mem_alloc", "mem_free")]
    steps = sorted((r for r in recs if r["type"] == "step" and r["module"] == "train_step"),
                   key=lambda r: r["step"])
    check(mem, "no memory truth")
    check(all(r["layer"] == "pjrt_buffers" for r in mem), "a layer other than pjrt_buffers")
    live, pairs = pair(recs, "pjrt_buffers")
    failed = [r for r in mem if r.get("failed")]
    print("%d allocations, %d freed, %d live at the end, %d failed" %
          (len(pairs) + len(live), len(pairs), len(live), len(failed)))
    check(all(r["addr"] == 0 and r["result"] == 8 for r in failed),
          "failed allocations not RESOURCE_EXHAUSTED: %s" % failed[:2])
    for r in mem:
        if r["type"] != "mem_alloc":
            continue
        if r["api"] == "PJRT_LoadedExecutable_Execute":
            check(r["size_from"] == "size_query" and r["bytes"] == out_bytes,
                  "output %x: %s %d bytes" % (r["addr"], r["size_from"], r["bytes"]))
        else:
            check(r["size_from"] == "shape", "%s sized from %s" % (r["api"], r["size_from"]))
    # Only the leak stays: one buffer of `leak` bytes on device 0 per step.
    check(all(a["device"] == 0 and a["bytes"] == leak for a in live),
          "live at the end: %s" % [(a["api"], a["device"], a["bytes"]) for a in live][:5])
    # The leak's buffers: one a step, or a failed allocation where it did
    # not fit.
    leak_steps = sorted([a["step"] for a in live] +
                        [r["step"] for r in failed if leak and r["bytes"] == leak])
    check(leak_steps == ([s["step"] for s in steps] if leak else []),
          "%d buffers never freed and %d failed, expected one a step of %d" %
          (len(live), len(failed), len(steps)))
    if "capacity" in args:
        check_capacity(recs, "pjrt_buffers", int(args["capacity"]))
    for dev in sorted({r["device"] for r in mem}):
        p, when = peak(recs, "pjrt_buffers", dev)
        print("device %d: peak %d bytes at %d" % (dev, p, when))
    if leak and len(steps) >= 10 and not failed:
        ys = [in_use_at(recs, "pjrt_buffers", 0, s["t_start"]) for s in steps]
        g = slope(ys)
        print("device 0 grows %.1f bytes/step (leak %d)" % (g, leak))
        check(abs(g - leak) <= leak / 100, "growth %.1f bytes/step, not %d within 1%%" %
              (g, leak))
    if eval_mem:
        check_eval(recs, eval_mem)


def check_eval(recs, eval_mem):
    """Each eval phase's working set is made before its first execution and
    deleted after its last completed; the peak is in an eval phase."""
    work = [(a, f) for a, f in pair(recs, "pjrt_buffers")[1]
            if f["api"] == "PJRT_Buffer_Delete"]
    evals = sorted((r for r in recs if r["type"] == "step" and r["module"] == "eval_step"),
                   key=lambda r: r["t_start"])
    ndev = len({a["device"] for a, _ in work})
    check(work and len(work) % ndev == 0, "%d working-set buffers on %d devices" %
          (len(work), ndev))
    held = 0
    for a, f in work:
        # BufferFromHostBuffer at PJRT 0.26, which has no uninitialised buffers.
        check(a["bytes"] == eval_mem and a["api"] in ("PJRT_Client_CreateUninitializedBuffer",
                                                      "PJRT_Client_BufferFromHostBuffer"),
              "working set %s of %d bytes" % (a["api"], a["bytes"]))
        inside = [e for e in evals if a["t_return"] <= e["t_start"] and e["t_end"] <= f["t_call"]]
        held += len(inside) > 0
    check(held == len(work), "%d of %d working sets held over eval steps" %
          (held, len(work)))
    n_eval = len(evals)
    covered = sum(1 for e in evals if any(a["t_return"] <= e["t_start"] and
                                          e["t_end"] <= f["t_call"] for a, f in work))
    check(covered == n_eval, "%d of %d eval steps inside a working set" % (covered, n_eval))
    p, when = peak(recs, "pjrt_buffers", 0)
    check(any(a["device"] == 0 and a["t_return"] <= when < f["t_call"] for a, f in work),
          "device 0's peak (%d bytes at %d) is outside the eval phases" % (p, when))
    print("%d eval steps in %d phases, each device holding %d bytes more" %
          (n_eval, len(work) // max(ndev, 1), eval_mem))


def cmd_cuda(args):
    recs = load(args["truth"])
    mode = args["mode"]
    steps = int(args["steps"])
    leak = int(args.get("leak", 0))
    devices = int(args.get("devices", 1))
    allocs = int(args.get("allocs", 4))
    capacity = int(args.get("capacity", 16 << 30))
    oom_step = int(args.get("oom_step", -1))
    mem = [r for r in recs if r["type"] in ("mem_alloc", "mem_free")]
    tensors = [r for r in recs if r["type"] == "mem_tensor"]
    check(all(r["layer"] == "cuda_reserved" for r in mem), "a layer other than cuda_reserved")
    live, pairs = pair(recs, "cuda_reserved")
    failed = [r for r in mem if r.get("failed")]
    print("%s: %d allocations, %d freed, %d live at the end, %d failed, %d tensor lines" %
          (mode, len(pairs) + len(live), len(pairs), len(live), len(failed), len(tensors)))
    check(all(r["type"] == "mem_alloc" and r["result"] == 2 and r["addr"] == 0
              for r in failed), "failed lines: %s" % failed[:2])
    if oom_step >= 0:
        check([r["step"] for r in failed if r["bytes"] > capacity] == [oom_step],
              "the out-of-memory allocation at step %d: %s" % (oom_step, failed))
    # Replay: an allocation succeeds exactly when it fits (one thread, so
    # the calls are in t_call order).
    used = {}
    for r in sorted(mem, key=lambda r: r["t_call"]):
        d = r["device"]
        cur = used.get(d, 0)
        if r["type"] == "mem_free":
            used[d] = cur - r["bytes"]
        elif r.get("failed"):
            check(cur + r["bytes"] > capacity, "allocation of %d failed with %d of %d in use"
                  % (r["bytes"], cur, capacity))
        else:
            check(cur + r["bytes"] <= capacity, "allocation of %d succeeded with %d of %d in use"
                  % (r["bytes"], cur, capacity))
            used[d] = cur + r["bytes"]
    check(all(0 <= used.get(d, 0) <= capacity for d in used), "in use at the end: %s" % used)
    check({r["device"] for r in mem} <= set(range(devices)), "devices used: %s" %
          sorted({r["device"] for r in mem}))
    apis = {r["api"] for r in mem}
    print("calls: %s" % " ".join(sorted(apis)))
    expected = {
        "direct": ({"cudaMalloc", "cudaMallocManaged", "cudaMallocPitch", "cudaFree"},
                   {"cuMemAlloc_v2", "cuMemAllocManaged", "cuMemAllocPitch_v2", "cuMemFree_v2"}),
        "caching": ({"cudaMalloc", "cudaFree"}, {"cuMemAlloc_v2", "cuMemFree_v2"}),
        "vmm": ({"cuMemCreate", "cuMemRelease"}, {"cuMemCreate", "cuMemRelease"}),
        "pool": ({"cudaMallocAsync", "cudaMallocAsync_ptsz", "cudaFreeAsync",
                  "cudaFreeAsync_ptsz"},
                 {"cuMemAllocAsync", "cuMemAllocAsync_ptsz", "cuMemAllocFromPoolAsync",
                  "cuMemAllocFromPoolAsync_ptsz", "cuMemFreeAsync", "cuMemFreeAsync_ptsz"}),
    }[mode]
    check(apis in expected, "calls %s" % sorted(apis))
    if mode in ("direct", "pool"):
        check(not tensors, "mem_tensor lines in %s mode" % mode)
        check(all(a.get("leak") for a in live), "live at the end and not leaked: %s" %
              [(a["api"], a["bytes"]) for a in live if not a.get("leak")][:3])
        # A leak that did not fit is a failed line instead.
        want = steps - sum(1 for r in failed if r.get("leak")) if leak else 0
        check(len(live) == want and
              all(a["bytes"] == leak and a["device"] == 0 for a in live),
              "%d leaked allocations, expected %d of %d bytes" % (len(live), want, leak))
        per_step = sum(1 for a, _ in pairs if a["step"] == 1)
        check(per_step == allocs * devices, "step 1 made %d allocations, expected %d" %
              (per_step, allocs * devices))
    else:
        check_reserved(recs, mode, tensors, steps, leak, devices, allocs)


def check_reserved(recs, mode, tensors, steps, leak, devices, allocs):
    """Caching and vmm modes: tensors lie in reserved memory, which is
    larger than the tensors in it; the leak's tensors stay; all reserved
    memory not holding a tensor is given back."""
    live_t, spans = {}, []
    events = sorted([(r["t_return"], 1, r) for r in recs
                     if r["type"] == "mem_alloc" and not r.get("failed")] +
                    [(r["t_call"], 0, r) for r in recs if r["type"] == "mem_free"] +
                    [(r["t"], 2, r) for r in tensors], key=lambda e: (e[0], e[1]))
    reserved, blocks, tensor_bytes, most_gap = {}, {}, {}, 0
    for _, kind, r in events:
        d = r["device"]
        if kind == 1:
            reserved[d] = reserved.get(d, 0) + r["bytes"]
            blocks[(d, r["addr"])] = r["bytes"]
        elif kind == 0:
            reserved[d] -= r["bytes"]
            blocks.pop((d, r["addr"]), None)
        elif r["op"] == "alloc":
            live_t[(d, r["addr"])] = r
            tensor_bytes[d] = tensor_bytes.get(d, 0) + r["bytes"]
            if mode == "caching":
                size = blocks.get((d, r["block"]))
                check(size is not None and r["addr"] + r["bytes"] <= r["block"] + size,
                      "tensor %x (%d bytes) outside a live block" % (r["addr"], r["bytes"]))
            check(tensor_bytes[d] <= reserved.get(d, 0), "device %d: %d bytes of tensors in "
                  "%d reserved" % (d, tensor_bytes[d], reserved.get(d, 0)))
        else:
            t = live_t.pop((d, r["addr"]), None)
            check(t is not None and t["bytes"] == r["bytes"], "tensor free of %x" % r["addr"])
            tensor_bytes[d] -= r["bytes"]
        if kind == 2:
            most_gap = max(most_gap, reserved.get(d, 0) - tensor_bytes.get(d, 0))
    n_alloc = sum(1 for r in tensors if r["op"] == "alloc")
    check(n_alloc == steps * (allocs * devices + (1 if leak else 0)),
          "%d tensors placed, expected %d" % (n_alloc, steps * (allocs * devices +
                                                                (1 if leak else 0))))
    leaked = [t for t in live_t.values() if t.get("leak")]
    check(len(live_t) == len(leaked) == (steps if leak else 0),
          "%d tensors live at the end, %d leaked" % (len(live_t), len(leaked)))
    print("reserved beyond tensors: up to %d bytes" % most_gap)
    check(most_gap > 0, "reserved memory never exceeded the tensors in it")
    if mode == "vmm":
        check(all(r["bytes"] % (2 * MIB) == 0 for r in recs if r["type"] == "mem_alloc"
                  and not r.get("failed")), "cuMemCreate not in 2 MiB multiples")
        check(all(v == 0 for v in reserved.values()), "vmm reserved at exit: %s" % reserved)
    else:
        check(all(reserved[d] == sum(s for (dd, _), s in blocks.items() if dd == d)
                  for d in reserved), "caching blocks")
        held = {(t["device"], t["block"]) for t in leaked}
        check(set(blocks) == held, "blocks kept at exit %d, holding a leaked tensor %d" %
              (len(blocks), len(held)))


def main(argv):
    if len(argv) < 2 or argv[1] not in ("pjrt", "cuda"):
        print(__doc__)
        return 2
    args = dict(a.split("=", 1) for a in argv[2:])
    {"pjrt": cmd_pjrt, "cuda": cmd_cuda}[argv[1]](args)
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
