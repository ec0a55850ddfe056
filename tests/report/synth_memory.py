# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""XSpaces with device memory in docs/capture-format.md's form ("Device
memory": MemoryAllocation / MemoryDeallocation on /host:CPU thread lines,
"Device memory: <allocator> (pid N)" counter lines, the plane stat
acceltrace.memory_timelines), written with Python's protobuf, each with
answers worked out by hand below. For tests/report/test_report_memory.sh
and tests/export/test_export_memory.sh.
Usage: synth_memory.py OUTDIR (writes one .xplane.pb per case)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from synth_xspace import MS, Plane, pb2  # noqa: E402

PID = 42
WINDOW_START_NS = 20_000 * 10**9  # CLOCK_MONOTONIC ns at the window start: 5.5 h up
BASE = 1_000_000        # in use before the window (not known one by one)
LEAK = 4096             # bytes leaked per step
ACT = (200_000, 100_000)  # activations, freed within their step
EVAL = 700_000          # the eval step's extra working set
EVAL_STEP = 6
STEPS = 10
HOUR_NS = 3_600_000_000_000
TL_RATE = 100_000       # timeline growth, bytes per hour


def task(space, window_ms):
    t = Plane(space, "Task Environment", 2)
    for name, v in (("profile_start_time", 1_700_000_000_000_000_000),
                    ("profile_stop_time", 1_700_000_000_000_000_000 + window_ms * 1_000_000),
                    ("acceltrace.window_start_ns", WINDOW_START_NS)):
        st = t.p.stats.add()
        st.metadata_id = t.stat_id(name)
        st.uint64_value = v
    t.plane_stat("acceltrace.probes_attached_ns", 1)


class Mem:
    """Allocations and frees of one allocator, with bytes in use after each."""

    def __init__(self, host, line, name, in_use, layer_region="pjrt_buffer", ordinal=0):
        self.host, self.line, self.name = host, line, name
        self.in_use, self.peak = in_use, in_use
        self.region, self.ordinal = layer_region, ordinal

    def ev(self, kind, t_ps, addr, size, group=None, unknown=False, api="api", shape=None,
           untracked=False):
        """untracked: past the kernel's live table, not in bytes_allocated."""
        h = self.host
        if kind == "MemoryAllocation":
            self.in_use += 0 if untracked else size
        elif not unknown:
            self.in_use -= size
        self.peak = max(self.peak, self.in_use)
        stats = {"allocator_name": self.name, "bytes_allocated": self.in_use,
                 "bytes_reserved": 0, "peak_bytes_in_use": self.peak,
                 "requested_bytes": 0 if unknown else size,
                 "allocation_bytes": 0 if unknown else size,
                 "device_ordinal": self.ordinal, "region_type": self.region,
                 "process_id": PID, "acceltrace.api": api}
        if group is not None:
            stats["group_id"] = group
        if untracked:
            stats["acceltrace.untracked"] = 1
        if unknown:
            stats["acceltrace.size_unknown"] = 1
            stats["acceltrace.size_from"] = "live_table"
        if shape:
            stats["acceltrace.element_type"], stats["tensor_shapes"] = shape
            stats["data_type"] = {"f32": 1, "bf16": 14}.get(shape[0], 0)
        e = h.event(self.line, kind, t_ps, 0, **stats)
        st = e.stats.add()
        st.metadata_id = h.stat_id("addr")
        # As the writer does: XProf reads addr with IntValue() (int64 only).
        st.int64_value = addr - (1 << 64) if addr >= 1 << 63 else addr


def timeline_json(allocs):
    return json.dumps({"version": 1, "allocators": allocs})


def leak_points(end_bytes):
    """3 h before the window: 10 min points, then 10 s points for the last
    10 min; in use rises TL_RATE bytes/h, ending at end_bytes at t = 0."""
    pts = []
    t = -3 * HOUR_NS
    while t < 0:
        span = 600_000_000_000 if t < -600_000_000_000 else 10_000_000_000
        end = t + span
        v = end_bytes + TL_RATE * end // HOUR_NS
        pts.append([t, span, v, v, v, v])
        t = end
    return pts


def counter_line(host, idx, name, points):
    line = host.line("Device memory: %s (pid %d)" % (name, PID), 2**62 + idx)
    for p in points:
        if p[0] >= 0:
            host.event(line, "Memory in use", p[0] * 1000, 0, bytes_allocated=p[2],
                       peak_bytes_in_use=p[5])


def mem_leak_eval(space, group_ids=True, timelines=None):
    """10 steps of 10 ms (a Steps line on the GPU). Each step allocates
    200000 + 100000 bytes of activations and leaks 4096; step 6 (eval)
    also allocates 700000 and frees it; step 3 frees two allocations made
    before the probes. A second allocator (cuda_reserved) reserves 2 MiB
    once, past the kernel's live table (untracked: not in its bytes in
    use, 3 MiB reserved before the window); a third (GPU_1, another device) is in the timeline only.

    Answers: in use at the start 1000000; peak 1000000 + 7 * 4096 +
    300000 + 700000 = 2028672 in step 6; end 1000000 + 10 * 4096; growth
    4096 B/step, a leak; allocations per step (30 + 1) / 10, frees
    (20 + 1 + 2) / 10; the largest live at the peak 700000, 200000,
    100000, then 4096s; 1000000 B at the peak made before the window.
    Timeline: 100000 B/h over 3 h, a leak."""
    task(space, 100)
    host = Plane(space, "/host:CPU", 1)
    line = host.line("python3 (pid %d)" % PID, PID)
    dev = Plane(space, "/device:GPU:0", 0)
    steps = dev.line("Steps", 1)
    pj = Mem(host, line, "GPU_0_pjrt_buffers", BASE)
    rs = Mem(host, line, "GPU_0_cuda_reserved", 3 << 20, "reserved")
    addr = 0x7F0000000000
    for i in range(STEPS):
        t = i * 10 * MS
        g = i if group_ids else None
        dev.event(steps, "train", t, 8 * MS, step_num=i)
        if i == 0:
            rs.ev("MemoryAllocation", t + MS // 20, 0x1000, 2 << 20, g, api="cuMemAlloc_v2",
                  untracked=True)
        a1, a2, lk = addr, addr + 0x100000, addr + 0x200000 + i * 0x1000
        pj.ev("MemoryAllocation", t + MS // 10, a1, ACT[0], g,
              api="PJRT_Client_BufferFromHostBuffer", shape=("f32", "[500,100]"))
        pj.ev("MemoryAllocation", t + 2 * MS // 10, a2, ACT[1], g)
        pj.ev("MemoryAllocation", t + 3 * MS // 10, lk, LEAK, g)
        if i == EVAL_STEP:
            pj.ev("MemoryAllocation", t + MS, addr + 0x9000000, EVAL, g, api="eval_buffer")
            pj.ev("MemoryDeallocation", t + 2 * MS, addr + 0x9000000, EVAL, g)
        if i == 3:
            for k in range(2):
                pj.ev("MemoryDeallocation", t + 3 * MS + k, 0x5000 + k, 0, g, unknown=True)
        pj.ev("MemoryDeallocation", t + 5 * MS, a1, ACT[0], g)
        pj.ev("MemoryDeallocation", t + 6 * MS, a2, ACT[1], g)
    if timelines is None:
        pts = leak_points(BASE)
        flat = [[-3 * HOUR_NS + k * 600_000_000_000, 600_000_000_000, 0, 0, 0, 0]
                for k in range(18)]
        other = [[-HOUR_NS, 600_000_000_000, 5 << 20, 5 << 20, 5 << 20, 5 << 20]]
        timelines = timeline_json([
            {"allocator_name": "GPU_0_pjrt_buffers", "pid": PID, "device_ordinal": 0,
             "layer": "pjrt_buffers", "points": pts},
            {"allocator_name": "GPU_0_cuda_reserved", "pid": PID, "device_ordinal": 0,
             "layer": "cuda_reserved", "points": flat},
            {"allocator_name": "GPU_1_cuda_reserved", "pid": PID, "device_ordinal": 1,
             "layer": "cuda_reserved", "points": other, "future_key": {"x": [1, 2.5]}}])
        counter_line(host, 0, "GPU_0_pjrt_buffers", pts + [[0, 0, BASE, BASE, BASE, BASE]])
    st = host.p.stats.add()  # a str_value, as the writer puts it
    st.metadata_id = host.stat_id("acceltrace.memory_timelines")
    st.str_value = timelines


def mem_steps_only(space):
    """The same without group_id: steps from the Steps line's ranges."""
    mem_leak_eval(space, group_ids=False)


def mem_bad_timeline(space):
    """A malformed timelines stat: said as a loss, the events still read."""
    mem_leak_eval(space, timelines='{"version": 1, "allocators": [{"allocator_name": ')


def mem_extreme_times(space):
    """Timeline points at the ends of int64 (a hostile file): read without
    overflow; those before the clock's 0 left out of the exports."""
    pts = [[-2**63, 0, 5, 5, 5, 2**63 - 1], [-1, 1, 6, 6, 6, 6], [2**63 - 2, 1, 7, 7, 7, 7]]
    mem_leak_eval(space, timelines=timeline_json([
        {"allocator_name": "GPU_0_pjrt_buffers", "pid": PID, "points": pts}]))


def mem_hostile_stats(space):
    """Events whose sizes, bytes in use and group ids are at the ends of
    int64 (a hostile file): reported without overflow, group ids too far
    apart for steps left for the steps' ranges."""
    mem_leak_eval(space)
    p = next(p for p in space.planes if p.name == "/host:CPU")
    names = {v.id: v.name for v in p.stat_metadata.values()}
    for k, e in enumerate(p.lines[0].events):
        for st in e.stats:
            if names[st.metadata_id] in ("allocation_bytes", "bytes_allocated"):
                st.int64_value = 2**63 - 1 - k
            elif names[st.metadata_id] == "group_id":
                st.int64_value = 0 if k % 2 else 2**63 - 1


CASES = {"mem_leak_eval": mem_leak_eval, "mem_steps_only": mem_steps_only,
         "mem_bad_timeline": mem_bad_timeline, "mem_extreme_times": mem_extreme_times,
         "mem_hostile_stats": mem_hostile_stats}

if __name__ == "__main__":
    for name, fn in CASES.items():
        space = pb2.XSpace()
        space.hostnames.append("synth")
        fn(space)
        with open(os.path.join(sys.argv[1], name + ".xplane.pb"), "wb") as f:
            f.write(space.SerializeToString())
